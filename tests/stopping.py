"""A stop asked for while a sweep's or a catch-up's first batch is under way: the event
reads as set from its second check on (the first is made before the first batch)."""

from __future__ import annotations

import threading


class StopAfterFirstCheck(threading.Event):
    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def is_set(self) -> bool:
        self.asked += 1
        if self.asked > 1:
            self.set()
        return super().is_set()
