"""Every kind of action the worklist lists (what ``abate worklist --action`` may ask for).

Its own module so the worklist's filters offer the choices without building the rules
catalog (pydantic), which names them as the keys of a rule's ``acted_by``."""

from typing import Literal

ActionKind = Literal["serve_notice", "abate", "notice_after_abatement", "reinspect",
                     "issue_bill", "decide_appeal", "enter_tax_roll", "name_statute"]

# Kinds with no due time: never overdue, never "due by" a day (``due_at`` is when the need
# arose). ``name_statute``: a charge whose rule leaves its statute not set waits for the
# village attorney to name it (cases/statute.py); nothing about it is late.
UNDATED = ("name_statute",)
