"""Rendering pages: the Jinja2 templates (autoescaped), the filters that show times in the
village's zone, and the error page every failure of a page ends on (no traceback)."""

from __future__ import annotations

import datetime as dt
import re
from html import escape
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from cases.localtime import instant_of, table_time
from cases.money import dollars
from cases.vocabulary import DEADLINES, deadline_label, event_label, status_label

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))


def local_time(value: Any, tz: str) -> str:
    """``2026-12-02 20:00 CST``: every time a person reads is the village's local time."""
    return table_time(value, tz) if value else "-"


def countdown(value: Any, now: dt.datetime) -> str:
    """How long until ``value`` (or how long since), in days and hours: "in 3 d 4 h"."""
    if not value:
        return ""
    due = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    seconds = int((due - now).total_seconds())
    later, seconds = seconds >= 0, abs(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    text = f"{days} d {hours} h" if days else (f"{hours} h {minutes} min" if hours
                                                else f"{minutes} min")
    return f"in {text}" if later else f"overdue by {text}"


def words(name: Any) -> str:
    """``serve_notice`` as people read it: "serve notice"."""
    return str(name or "").replace("_", " ")


# The facts of the events that are amounts of money (cases.domain): shown as "$1,234.56".
MONEY_FACTS = frozenset({"amount", "total", "balance_after", "principal_after",
                         "forfeiture_amount", "principal", "balance", "paid"})
# A value that is a program's code (``certified_mail``, ``responsible_party``): said in words;
# never in what a person typed (a document reference ``photo_1`` is shown as it was given).
CODE = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)+")
TYPED_FACTS = frozenset({"documents", "findings", "notes", "description", "reason", "grounds",
                         "served_on", "citation_number", "case_ref", "name", "mailing_address",
                         "number", "item", "result", "attempted_by", "site_address",
                         "outcome", "command_id"})


def fact(value: Any, name: str = "", tz: str | None = None) -> str:
    """A recorded fact as a person reads it: ``owner: Ann Owner, 12 Vine St``, not a dict;
    ``name`` says which fact it is (an amount is shown in dollars, a deadline's name by its
    label, a code such as ``certified_mail`` in words); with ``tz``, a time is the
    village's local time; true/false is yes/no."""
    if isinstance(value, dict):
        return ", ".join(f"{words(k)} {fact(v, k, tz)}" for k, v in value.items()
                         if v not in (None, "", [], {}))
    if isinstance(value, list):
        return "; ".join(fact(v, name, tz) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if name in MONEY_FACTS:
        return dollars(value)
    if name == "name" and value in DEADLINES:
        return deadline_label(value)
    if isinstance(value, str) and name not in TYPED_FACTS and CODE.fullmatch(value):
        return words(value)
    instant = instant_of(value) if tz else None
    return table_time(instant, tz) if instant is not None and tz else str(value)


templates.env.filters["fact"] = fact
templates.env.filters["dollars"] = dollars
templates.env.filters["event_label"] = event_label
templates.env.filters["status_label"] = status_label
templates.env.filters["deadline_label"] = deadline_label
templates.env.filters["local"] = local_time
templates.env.filters["words"] = words
templates.env.globals["countdown"] = countdown


def page(request: Request, name: str, context: dict[str, Any], status: int = 200,
         *, look_up_user: bool = True) -> HTMLResponse:
    """``name`` rendered with what every page shows (the user, the CSRF token); without
    ``look_up_user`` the menu is the signed-out one (the accounts cannot be read)."""
    from api.web.session import csrf_token, set_csrf_cookie, signed_in_user

    user = signed_in_user(request) if look_up_user else None
    full = {"user": user, "csrf_token": csrf_token(request), **context}
    response = templates.TemplateResponse(request, name, full, status_code=status)
    set_csrf_cookie(request, response)
    response.headers["Cache-Control"] = "no-store"  # pages hold case data: not kept
    return response


TITLES = {400: "Bad request", 403: "Not allowed", 404: "Not found", 405: "Not allowed",
          422: "Not accepted", 429: "Too many attempts", 500: "Something went wrong",
          503: "Not available just now"}


REFERENCE_NOTE = ("(tell it to whoever runs Abate for you: the server's log has the details "
                  "under it)")


def error_page(request: Request, status: int, detail: str, reference: str | None = None,
               *, headers: dict[str, str] | None = None, look_up_user: bool = True,
               ) -> HTMLResponse:
    """A friendly page for a failure: what happened, in words, and where to go; for a
    failure of ours, the reference under which the server's log has the details. Without
    ``look_up_user`` (the records cannot be reached) the menu is the signed-out one."""
    try:
        response = page(request, "error.html", {"status": status,
                                                "title": TITLES.get(status, "Error"),
                                                "detail": detail, "reference": reference,
                                                "reference_note": REFERENCE_NOTE}, status,
                        look_up_user=look_up_user)
        response.headers.update(headers or {})
        return response
    except Exception:  # the error page itself must not fail into a traceback
        # (e.g. who is signed in cannot be looked up): the same words, without the menu
        shown = (f"<p class=error-reference>Reference: <code>{escape(reference)}</code> "
                 f"{REFERENCE_NOTE}</p>") if reference else ""
        return HTMLResponse(f"<!doctype html><html lang=en><title>{status}</title><main>"
                            f"<h1>{TITLES.get(status, 'Error')}</h1>"
                            f"<p class=error-detail>{escape(detail)}</p>{shown}"
                            "<p><a href=\"/\">Back to the start page</a></p></main>",
                            status_code=status, headers=headers)
