"""Reading a run's journal back: the typed events of `events.jsonl`, and what they say.

`read_journal` reads a whole file; `Follower` reads what a running run appends, as it grows
(the TUI follows a run in another terminal this way). A line that cannot be read — torn by a
kill, or from another version — is counted and skipped, never fatal.

A resumed run repeats the unfinished step it was stopped in, so a step's events can appear
twice: the views below keep the last of each.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import Field, TypeAdapter, ValidationError

from skopt.runtime.events import (
    BaselineScored,
    BudgetStop,
    CallEvent,
    CandidateBuilt,
    EarlyStop,
    EditsChecked,
    EditsProposed,
    EpochBoundary,
    Event,
    FinalTestScored,
    GateDecided,
    NightMined,
    OptimizerAnswer,
    PhaseFinished,
    PhaseStarted,
    RunFinished,
    RunStarted,
    StepFinished,
    TaskJudged,
)

AnyEvent = Annotated[
    RunStarted
    | RunFinished
    | PhaseStarted
    | PhaseFinished
    | CallEvent
    | OptimizerAnswer
    | EditsProposed
    | EditsChecked
    | CandidateBuilt
    | BaselineScored
    | GateDecided
    | StepFinished
    | EpochBoundary
    | BudgetStop
    | EarlyStop
    | FinalTestScored
    | NightMined
    | TaskJudged,
    Field(discriminator="kind"),
]
_EVENT: TypeAdapter[AnyEvent] = TypeAdapter(AnyEvent)
E = TypeVar("E", bound=Event)


def parse_line(line: str) -> Event | None:
    """The event on one journal line; None if it cannot be read as one."""
    try:
        return _EVENT.validate_json(line)
    except (ValidationError, ValueError):
        return None


@dataclass
class Journal:
    """A run's events in the order they happened, and how many lines could not be read."""

    events: list[Event] = field(default_factory=list)
    unreadable: int = 0
    _by_kind: dict[type[Event], list[tuple[int, Event]]] = field(default_factory=dict, repr=False)

    def add(self, lines: list[str]) -> None:
        """Take in journal lines (one event each)."""
        found = [parse_line(line) for line in lines if line.strip()]
        self.unreadable += sum(e is None for e in found)
        self.extend([e for e in found if e is not None])

    def extend(self, events: list[Event]) -> None:
        """Take in events, in the order they happened."""
        for position, event in enumerate(events, start=len(self.events)):
            self._by_kind.setdefault(type(event), []).append((position, event))
        self.events += events

    def of(self, kind: type[E]) -> list[E]:
        return [e for _, e in self._by_kind.get(kind, [])]  # type: ignore[misc]

    def of_kinds(self, *kinds: type[Event]) -> list[Event]:
        """The events of any of these kinds, in the order they happened."""
        return [e for _, e in heapq.merge(*(self._by_kind.get(k, []) for k in kinds))]

    def last(self, kind: type[E]) -> E | None:
        found = self.of(kind)
        return found[-1] if found else None

    @property
    def calls(self) -> list[CallEvent]:
        return self.of(CallEvent)

    @property
    def steps(self) -> list[StepFinished]:
        """Each finished step once (the last time it finished), in step order."""
        return list({e.result.step: e for e in self.of(StepFinished)}.values())

    def by_step(self, kind: type[E]) -> dict[int, E]:
        """The last event of `kind` of each step (events that carry a `step`)."""
        return {getattr(e, "step"): e for e in self.of(kind)}  # noqa: B009

    @property
    def ended(self) -> RunFinished | None:
        """How the last session ended; None while it runs, or if it was killed."""
        sessions = self.of_kinds(RunStarted, RunFinished)
        return sessions[-1] if sessions and isinstance(sessions[-1], RunFinished) else None

    def worked_s(self) -> float:
        """The seconds the sessions so far worked: each from its start to its last event (a
        killed session ends at its last event, not when the next one started)."""
        total, start, last = 0.0, None, 0.0
        for event in self.events:
            if isinstance(event, RunStarted):
                total += last - start if start is not None else 0.0
                start = event.at
            last = event.at
        return total + (last - start if start is not None else 0.0)

    @property
    def phase(self) -> PhaseStarted | None:
        """The phase under way (or the last one that started)."""
        return self.last(PhaseStarted)


def read_journal(path: Path) -> Journal:
    journal = Journal()
    if path.is_file():
        journal.add(path.read_text(encoding="utf-8", errors="replace").splitlines())
    return journal


class Follower:
    """Reads the lines a growing journal gains, whole lines only: a line still being written
    is left for the next read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.journal = Journal()
        self._offset = 0

    def poll(self) -> list[Event]:
        """The events appended since the last poll (also added to `journal`)."""
        try:
            with self.path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1
        if not end:
            return []
        self._offset += end
        before = len(self.journal.events)
        self.journal.add(data[:end].decode("utf-8", errors="replace").splitlines())
        return self.journal.events[before:]
