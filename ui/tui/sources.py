"""Where a screen's journal comes from: a run folder's `events.jsonl`, followed as it grows (a run
in another terminal, or one that ended), or the events a run in this process hands its display
(`skopt run --tui`). Either way the screens read the same typed events, in a `Journal`.
"""

from __future__ import annotations

import threading
from collections import deque
from pathlib import Path
from typing import Protocol

from skopt.compiler.plan import Plan
from skopt.runtime.claim import holder, open_folder
from skopt.runtime.events import Event
from skopt.runtime.journal import Follower, Journal
from skopt.runtime.run import plan_of


class Source(Protocol):
    plan: Plan

    @property
    def journal(self) -> Journal: ...

    def poll(self) -> bool:
        """Take in what arrived since the last poll; whether anything did."""
        ...

    def running(self) -> bool: ...


class FolderSource:
    """A run folder, its journal followed."""

    def __init__(self, root: Path) -> None:
        self.folder = open_folder(root, "run")  # NotARunFolder: a sentence, never a traceback
        self.plan = plan_of(self.folder)
        self._follower = Follower(self.folder.events)

    @property
    def journal(self) -> Journal:
        return self._follower.journal

    def poll(self) -> bool:
        return bool(self._follower.poll())

    def running(self) -> bool:
        return holder(self.folder) is not None


class PushSource:
    """A run in this process: its display (any thread) hands over every event as it is
    journaled; the screen takes them in on its own thread."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self._journal = Journal()
        self._arrived: deque[Event] = deque()
        self._lock = threading.Lock()

    def emit(self, event: Event) -> None:
        with self._lock:
            self._arrived.append(event)

    @property
    def arrived(self) -> bool:
        """Whether the run has said anything yet."""
        with self._lock:
            return bool(self._arrived or self._journal.events)

    @property
    def journal(self) -> Journal:
        return self._journal

    def poll(self) -> bool:
        with self._lock:
            arrived, self._arrived = list(self._arrived), deque()
        self._journal.extend(arrived)
        return bool(arrived)

    def running(self) -> bool:
        return self._journal.ended is None
