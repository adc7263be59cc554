"""What the runtime reports: typed events sent to a sink (the journal, the CLI, the TUI)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True, slots=True)
class CallEvent:
    role: str
    phase: str
    model: str
    input_tokens: int
    output_tokens: int
    usd: float | None  # None: no price known
    latency_s: float
    retries: int
    cache_hit: bool
    ok: bool
    error: str = ""
    key: str = ""  # the request's cache key (a hash): ties a paid call to its cached answer
    kind: str = "call"


@dataclass(frozen=True, slots=True)
class RunEvent:
    """A session of a run began or ended. `outcome` (on "finished"): done, budget,
    interrupted or failed; `detail` says which limit stopped it, or what failed."""

    status: str  # "started" | "resumed" | "finished"
    outcome: str = ""
    detail: str = ""
    kind: str = "run"


Event = CallEvent | RunEvent


class EventSink(Protocol):
    def emit(self, event: CallEvent) -> None: ...


class ListSink:
    """Keeps events in memory (tests, summaries)."""

    def __init__(self) -> None:
        self.events: list[CallEvent] = []

    def emit(self, event: CallEvent) -> None:
        self.events.append(event)


class JsonlSink:
    """Appends one JSON line per event to a journal file."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("a", encoding="utf-8")

    def emit(self, event: Event) -> None:
        self._file.write(json.dumps(asdict(event), sort_keys=True) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()
