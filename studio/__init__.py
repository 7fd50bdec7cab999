"""The interfaces: the CLI (``python -m studio``), Streamlit pages and widgets, plotly figures."""
