# Topology Studio: the Streamlit app on port 8501.
#   docker build -t topology-studio . && docker run -p 8501:8501 topology-studio
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    BROWSER_PATH=/usr/bin/chromium

# Debian's chromium renders figures to PNG/SVG for kaleido (never a downloaded browser); DejaVu gives its text
# the glyphs the papers' notation needs (Π, □, ×).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*

# The app runs as an unprivileged user; the code stays owned by root and read-only to it.
RUN groupadd --gid 1000 studio \
 && useradd --uid 1000 --gid studio --create-home --shell /usr/sbin/nologin studio \
 && install -d -m 0700 -o studio -g studio /var/cache/topology-studio
# (deploy/compose.yaml mounts one results cache volume there for every replica: a new named volume takes this
# folder's owner and mode, which the results cache requires to be the app's user's alone)

WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .

USER studio
EXPOSE 8501

# Streamlit answers "ok" on /_stcore/health once the server is up (urllib: the slim image has no curl).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request, sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).status != 200)"

CMD ["streamlit", "run", "app.py", \
     "--server.address", "0.0.0.0", "--server.port", "8501", "--server.headless", "true", \
     "--browser.gatherUsageStats", "false"]
