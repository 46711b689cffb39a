"""`/docs` works without the internet: the page and everything it loads come from the
server (api/docs_ui.py, Swagger UI's files in api/static/swagger-ui/), checked over HTTP
and in a real browser whose every other host is unreachable; `/redoc` (CDN-only) is gone."""

from __future__ import annotations

import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from api.docs_ui import ASSETS_URL, SWAGGER_UI_DIR
from tests.api_kit import served
from tests.conftest import required_chromium


class _Links(HTMLParser):
    """Every URL a page names in ``src``/``href``, and the scripts' own text."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [value for name, value in attrs if name in ("src", "href") and value]
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def test_docs_and_every_asset_it_names_are_served_here(tmp_path):
    with served(f"sqlite:///{tmp_path / 'abate.sqlite3'}", tmp_path / "serve.log") as server:
        base = server.base
        page = httpx.get(f"{base}/docs", timeout=10)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        links = _Links()
        links.feed(page.text)
        # Only paths on this server: no scheme, no host (a CDN would need both).
        assert links.urls and all(urlsplit(url).netloc == "" and url.startswith("/")
                                  for url in links.urls), links.urls
        assert not re.search(r"https?://", " ".join(links.scripts)), links.scripts
        assert "'/openapi.json'" in page.text and '"validatorUrl": null' in page.text
        for url in links.urls:
            asset = httpx.get(urljoin(base, url), timeout=10)
            assert asset.status_code == 200, url
            assert asset.content == (SWAGGER_UI_DIR / Path(url).name).read_bytes(), url
        assert {Path(url).name for url in links.urls} == {
            "swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"}
        # ReDoc would load its script and fonts from CDNs: not offered at all.
        assert httpx.get(f"{base}/redoc", timeout=10).status_code == 404
        assert httpx.get(f"{base}{ASSETS_URL}/LICENSE", timeout=10).status_code == 200
        assert httpx.get(f"{base}{ASSETS_URL}/../app.py", timeout=10).status_code == 404


def test_the_swagger_ui_licence_travels_with_its_files():
    assert "Apache License" in (SWAGGER_UI_DIR / "LICENSE").read_text(encoding="utf-8")
    assert "SmartBear" in (SWAGGER_UI_DIR / "NOTICE").read_text(encoding="utf-8")


def _page_requests(net_log: Path) -> list[str]:
    """The URLs the page itself asked for (the document, then what it loaded), from
    Chromium's NetLog; the browser's own background calls are not the page's."""
    log = json.loads(net_log.read_text(encoding="utf-8"))
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params", {})
        if event["type"] == start_job and "url" in params and (
                params.get("request_type") == "main frame"
                or params.get("initiator", "not an origin") != "not an origin"):
            urls.append(params["url"])
    return urls


@pytest.mark.slow
def test_docs_renders_in_a_browser_that_reaches_no_other_host(tmp_path):
    """Chromium opens /docs with every host but this machine unresolvable (a village hall
    without the internet): Swagger UI draws every operation of /openapi.json, and the page
    asked for nothing that is not on the server."""
    chromium = required_chromium()
    with served(f"sqlite:///{tmp_path / 'abate.sqlite3'}", tmp_path / "serve.log") as server:
        base = server.base
        paths = set(httpx.get(f"{base}/openapi.json", timeout=10).json()["paths"])
        net_log = tmp_path / "net-log.json"
        shown = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-extensions",
             f"--user-data-dir={tmp_path / 'profile'}", f"--log-net-log={net_log}",
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
             "--virtual-time-budget=20000", "--dump-dom", f"{base}/docs"],
            capture_output=True, text=True, timeout=180)
    assert shown.returncode == 0, shown.stderr[-2000:]
    drawn = set(re.findall(r'class="opblock-summary-path" data-path="([^"]+)"', shown.stdout))
    assert drawn == paths, f"not drawn: {paths - drawn}"
    requested = _page_requests(net_log)
    assert f"{base}{ASSETS_URL}/swagger-ui-bundle.js" in requested
    assert f"{base}{ASSETS_URL}/swagger-ui.css" in requested
    assert f"{base}/openapi.json" in requested
    assert [url for url in requested if not url.startswith(f"{base}/")] == []
