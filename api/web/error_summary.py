"""The list of a refused form's problems above it, each linking to its field (as the users
page has it): a person who cannot see the whole form, or uses a screen reader, learns every
problem at once and goes to each field from the list; the list takes the focus when the
page loads (``_error_summary.html``: ``role="alert"``, ``tabindex="-1"``, ``autofocus``)."""

from __future__ import annotations

from typing import Any


def error_summary(errors: dict[str, str], fields: list[tuple[str, str, str]]
                  ) -> list[dict[str, Any]]:
    """Each error in the form's order: ``fields`` is (error key, label, the id of the element
    to go to); an error of no field (key "") comes first, without a link."""
    items = [{"href": None, "label": "", "text": errors[""]}] if errors.get("") else []
    for key, label, target in fields:
        if errors.get(key):
            items.append({"href": f"#{target}", "label": label, "text": errors[key]})
    return items
