"""Screenshots of the web pages for docs/web.md: `abate serve --demo` on a free port, each
page route the app has (read from the app itself, so a new page is included) opened in
headless Chromium by a demo user whose role may see it, saved as PNG into docs/screenshots/
at 1280 px wide (the case and chart pages at 768 px too). With pdftoppm (poppler-utils), page 1 of a
notice and a bill issued on demo cases is rendered beside them.

    .venv/bin/python tests/screenshots.py

A route whose address needs a value this script does not know is skipped, named."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.abate_command import ABATE, abate_env  # noqa: E402
from tests.conftest import chromium_path  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
VILLAGE = "belleville"
ROLES = ("clerk", "auditor", "inspector", "attorney", "admin")  # who shows a page, first fit
SIGNED_OUT = {"page.sign_in"}
SHOWN_BY = {"page.home": "admin"}  # a clerk's home is straight its one village's worklist
TALLEST = 2400  # px of a long page kept (the top: what the page is about)


def page_routes(database_url: str) -> list[tuple[str, str]]:
    """(name, path) of every page the app serves with GET (its ``page.`` routes)."""
    from fastapi.routing import APIRoute

    os.environ["ABATE_DATABASE_URL"] = database_url
    from api.app import create_app

    app = create_app()

    def walk(routes: list[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
        for route in routes:
            if hasattr(route, "original_router"):  # an included router (FastAPI >= 0.16x)
                more = getattr(route.include_context, "prefix", "") or ""
                yield from walk(route.original_router.routes, prefix + more)
            elif hasattr(route, "routes") and not isinstance(route, APIRoute):
                yield from walk(getattr(route, "routes", []) or [], prefix)
            elif isinstance(route, APIRoute):
                yield prefix + route.path, route

    found = [(r.name, path) for path, r in walk(app.routes)
             if r.name.startswith("page.") and "GET" in r.methods]
    app.state.services.close()
    return found


def demo(database_url: str, port: int) -> tuple[subprocess.Popen, dict[str, str]]:
    """`abate serve --demo` and its users' tokens, read from its banner."""
    server = subprocess.Popen([ABATE, "serve", "--demo", "--port", str(port)],
                              env=abate_env(database_url, ABATE_WEB_SIGN_IN_LIMIT="1000/minute"),
                              stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    tokens: dict[str, str] = {}
    for line in server.stdout:
        found = re.match(r"\s+(demo\.[a-z.]+)\s+\S+\s+\S+\s+(abate_\S+)$", line.rstrip())
        if found:
            tokens[found.group(1)] = found.group(2)
        if line.rstrip().endswith("Ctrl-C stops it"):
            break
    else:
        raise SystemExit("abate serve --demo ended before its banner")
    return server, tokens


def user_for(name: str) -> str:
    from api.roles import PAGE_ROLES, may_page

    if name in SHOWN_BY:
        return SHOWN_BY[name]
    if name not in PAGE_ROLES:
        return "clerk"
    return next((r for r in ROLES if may_page(r, name)), "clerk")


def account(role: str) -> str:
    return "demo.admin" if role == "admin" else f"demo.{VILLAGE}.{role}"


def api(base: str, token: str, method: str, path: str, **kw: Any) -> httpx.Response:
    return httpx.request(method, f"{base}/api/v1/{VILLAGE}{path}", timeout=60,
                         headers={"Authorization": f"Bearer {token}"}, **kw)


def cases_with(base: str, token: str, status: str) -> list[str]:
    done = api(base, token, "GET", "/cases", params={"status": status, "limit": 20})
    done.raise_for_status()
    body = done.json()
    rows = body.get("cases", body.get("items", [])) if isinstance(body, dict) else body
    return [r["case_ref"] for r in rows]


def issue(base: str, token: str, case_ref: str, command: str) -> int:
    """Issue a document on a demo case (the demo's store is thrown away); its position."""
    now = dt.datetime.now(dt.timezone.utc).isoformat()
    done = api(base, token, "POST", f"/cases/{case_ref}/{command}", json={"at": now})
    done.raise_for_status()
    listed = api(base, token, "GET", f"/cases/{case_ref}/documents").json()["documents"]
    return listed[-1]["position"]


def main() -> None:
    chromium = chromium_path()
    if chromium is None:
        raise SystemExit("no Chromium: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        routes = page_routes(f"sqlite:///{Path(tmp) / 'routes.sqlite3'}")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server, tokens = demo(f"sqlite:///{Path(tmp) / 'demo.sqlite3'}", port)
        base = f"http://127.0.0.1:{port}"
        try:
            clerk = tokens[account("clerk")]
            inspector = tokens[account("inspector")]
            billed = cases_with(base, clerk, "billed")
            served = cases_with(base, clerk, "notice_served")
            shown_case = billed[0] if billed else served[0]
            documents = {}
            if billed:
                documents["bill"] = (billed[0], issue(base, clerk, billed[0],
                                                      "issue_bill_document"))
            if served:
                documents["notice"] = (served[0], issue(base, inspector, served[0],
                                                        "issue_notice_document"))
            values = {"municipality": VILLAGE, "case_ref": shown_case, "county": "Dane",
                      "tax_year": str(dt.date.today().year)}
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium,
                                                     headless=True, args=["--no-sandbox"])
                shoot(browser, base, tokens, routes, values)
                if shutil.which("pdftoppm"):
                    render_documents(browser, base, tokens, documents)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)


def shoot(browser: Any, base: str, tokens: dict[str, str], routes: list[tuple[str, str]],
          values: dict[str, str]) -> None:
    for name, path in routes:
        params = re.findall(r"{(\w+)(?::\w+)?}", path)
        if any(p not in values for p in params):
            print(f"skipped {name} {path}: no value for "
                  f"{', '.join(p for p in params if p not in values)}")
            continue
        url = base + re.sub(r"{(\w+)(?::\w+)?}", lambda m: values[m.group(1)], path)
        file_name = name.removeprefix("page.").replace(".", "-").replace("_", "-") or "home"
        widths = (1280, 768) if name in ("page.cases.show", "page.charts") else (1280,)
        for width in widths:
            context = browser.new_context(viewport={"width": width, "height": 900})
            tab = context.new_page()
            if name not in SIGNED_OUT:
                role = user_for(name)
                tab.goto(f"{base}/sign-in")
                tab.get_by_label("Token", exact=True).fill(tokens[account(role)])
                tab.get_by_role("button", name="Sign in with the token").click()
                tab.wait_for_load_state()
            answer = tab.request.get(url)
            if "text/html" not in answer.headers.get("content-type", ""):
                print(f"skipped {name} {path}: not a page "
                      f"({answer.headers.get('content-type')})")
                context.close()
                break
            tab.goto(url)
            tab.wait_for_load_state("networkidle")
            target = OUT / (file_name + ("" if width == 1280 else f"-{width}") + ".png")
            height = min(TALLEST, tab.evaluate("document.documentElement.scrollHeight"))
            tab.screenshot(path=str(target), full_page=True,
                           clip={"x": 0, "y": 0, "width": width, "height": height})
            print(f"{target.relative_to(ROOT)}  {url}  ({width} px)")
            context.close()


def render_documents(browser: Any, base: str, tokens: dict[str, str],
                     documents: dict[str, tuple[str, int]]) -> None:
    """Page 1 of each issued document as PNG (pdftoppm), as it prints."""
    context = browser.new_context()
    tab = context.new_page()
    tab.goto(f"{base}/sign-in")
    tab.get_by_label("Token", exact=True).fill(tokens[account("clerk")])
    tab.get_by_role("button", name="Sign in with the token").click()
    tab.wait_for_load_state()
    with tempfile.TemporaryDirectory() as tmp:
        for kind, (case_ref, position) in documents.items():
            answer = tab.request.get(f"{base}/{VILLAGE}/cases/{case_ref}/documents/{position}")
            if answer.headers.get("content-type") != "application/pdf":
                raise SystemExit(f"the {kind} of {case_ref} did not come as a PDF: "
                                 f"{answer.status} {answer.text()[:2000]}")
            pdf = Path(tmp) / f"{kind}.pdf"
            pdf.write_bytes(answer.body())
            subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1",
                            "-singlefile", str(pdf), str(OUT / f"document-{kind}")],
                           check=True)
            print(f"docs/screenshots/document-{kind}.png  page 1 of {case_ref}'s {kind}")
    context.close()


if __name__ == "__main__":
    main()
