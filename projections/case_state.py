"""The state of each case right after each event, as the domain computes it.

Views see every event together with the case's state after it, built by the
event's own ``apply`` (the same code that builds the aggregate), so a view can
never disagree with the domain about a status, a balance or a deadline.

That state is a pure function of (case, version), and the event store can
always rebuild it (snapshots make that cheap), so views keep no copy of it in
their own tables. The runner keeps recent states in memory: catching up applies
each event once to a cached state, and only a case that is not cached at the
version just before the event is loaded from the store. A page that rolls back
may leave a cached state ahead of what a view committed; the version check turns
that into a reload, never into a wrong state.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cases.domain import Case
    from cases.store import CaseStore
    from cases.store_reader import StoreReader

DEFAULT_MAX_CASES = 20_000


class CaseStateCache:
    """Case states by id, least recently used dropped first."""

    def __init__(self, store: CaseStore | StoreReader, max_cases: int = DEFAULT_MAX_CASES):
        self.store = store
        self.max_cases = max_cases
        self._states: OrderedDict[int, Case] = OrderedDict()
        self.loads = 0  # states that had to come from the event store (for benchmarks)

    def advance(self, event: Any) -> Case:
        """The case's state after ``event``, from its state just before it."""
        key = event.originator_id.int  # an int hashes in C; a UUID's hash and == are Python
        states = self._states
        if event.originator_version == 1:
            case = event.mutate(None)
            states[key] = case
        else:
            case = states.get(key)
            if case is None or case.version != event.originator_version - 1:
                case = self.store.get_case(event.originator_id,
                                           version=event.originator_version - 1)
                self.loads += 1
                states.pop(key, None)
                states[key] = case
            else:
                states.move_to_end(key)
            # ``event.mutate(case)`` less its two checks, which the lines above make
            # (this case's state, at the version just before): the same apply, version and
            # time, without comparing UUIDs in Python for every event.
            event.apply(case)
            case.version = event.originator_version
            case.modified_on = event.timestamp
        if len(states) > self.max_cases:
            states.popitem(last=False)
        return case
