"""Two app processes behind nginx with deploy/nginx.conf (issue 44), driven in Chromium through the proxy: each
browser is kept on one replica by the route cookie, the page's websocket runs through the proxy, and a file
upload (an HTTP request beside the websocket, which only the session's own replica accepts) lands where it should.

nginx is Debian's (``apt-get install -y nginx``; ``.ci/run`` installs it). Outside CI a missing nginx skips these
tests; under CI (CI=true) it is an error.
"""
import os
import shutil
import urllib.request

import pytest
from playwright.sync_api import expect

from bench.app_server import start_app, start_proxy
from topologies import load
from topologies.files import to_json

from .helpers import metric, settle

NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
if NGINX is None and os.environ.get("CI"):
    raise RuntimeError("the proxy test needs nginx (apt-get install -y nginx)")
pytestmark = pytest.mark.skipif(NGINX is None, reason="no nginx; install Debian's nginx to run the proxy test")


@pytest.fixture(scope="module")
def replicas(tmp_path_factory):
    """(the proxy's URL, the two apps' host:port), the apps sharing one results cache folder."""
    cache = tmp_path_factory.mktemp("shared-results")
    os.chmod(cache, 0o700)
    started = []
    try:
        for _ in range(2):
            started.append(start_app(env={"TOPOLOGY_STUDIO_CACHE": str(cache)}))
        upstreams = [url.replace("http://localhost:", "127.0.0.1:") for _, url in started]
        proxy, url = start_proxy(upstreams, tmp_path_factory.mktemp("nginx"))
        started.append((proxy, url))
        yield url, upstreams
    finally:
        for proc, _ in started:
            proc.terminate()
            proc.wait(timeout=15)


def _replica(url: str, route: str | None = None) -> tuple[str, str]:
    """(the replica that answered, the route the proxy's cookie names) for a request with ``route`` as its
    cookie."""
    headers = {"Cookie": f"studio_route={route}"} if route else {}
    with urllib.request.urlopen(urllib.request.Request(url + "/_stcore/health", headers=headers), timeout=10) as r:
        (route,) = [c.split(";")[0].split("=", 1)[1] for c in r.headers.get_all("Set-Cookie", [])
                    if c.startswith("studio_route=")]
        return r.headers["X-Studio-Replica"], route


def test_the_proxy_hashes_a_route_to_one_replica_and_hands_new_browsers_a_route(replicas):
    url, upstreams = replicas
    for route in ("a", "b", "c"):
        assert len({_replica(url, route) for _ in range(5)}) == 1        # the same route, the same replica
    fresh = [_replica(url) for _ in range(24)]                             # no cookie: a random route, set
    assert {addr for addr, _ in fresh} == set(upstreams)                  # both replicas get new browsers
    assert len({route for _, route in fresh}) == len(fresh)              # each its own
    for addr, route in fresh[:4]:
        assert len(route) == 32 and _replica(url, route) == (addr, route)  # and keep them


def test_a_browser_stays_on_its_replica_through_the_websocket_and_an_upload(replicas, browser, tmp_path):
    url, upstreams = replicas
    routes = {}
    for k in range(64):
        routes.setdefault(_replica(url, f"route{k}")[0], f"route{k}")
        if len(routes) == 2:
            break
    assert set(routes) == set(upstreams)
    design = tmp_path / "five.json"
    design.write_text(to_json(load("uniring(1,5)")))
    for replica, route in routes.items():
        context = browser.new_context(viewport={"width": 1400, "height": 1100})
        context.add_cookies([{"name": "studio_route", "value": route, "url": url}])
        page = context.new_page()
        seen, frames = set(), []
        page.on("response", lambda r: seen.add(r.headers.get("x-studio-replica")))
        page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(ws.url)))
        page.goto(url + "/compose?expr=gkautz(2,12)")
        expect(metric(page, "Nodes")).to_have_text("12", timeout=60000)
        settle(page)
        assert frames and all(f.startswith(url.replace("http", "ws", 1)) for f in frames)   # through the proxy
        page.locator("input[type=file]").set_input_files(str(design))
        expect(metric(page, "Nodes")).to_have_text("5", timeout=60000)
        settle(page)
        assert not page.get_by_test_id("stException").count()
        assert seen == {replica}, f"a browser routed to {replica} was answered by {seen}"
        context.close()
