"""Every kind of action the worklist lists (what ``abate worklist --action`` may ask for).

Its own module so the worklist's filters offer the choices without building the rules
catalog (pydantic), which names them as the keys of a rule's ``acted_by``."""

from typing import Literal

ActionKind = Literal["serve_notice", "abate", "notice_after_abatement", "reinspect",
                     "issue_bill", "decide_appeal", "enter_tax_roll"]
