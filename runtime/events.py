"""The journal's records (SPEC §8): every fact of a run, as a typed event appended to
`events.jsonl` the moment it happens.

This module owns them. The call layer and the engine emit them through a sink; `skopt report`,
the live progress display and the TUI read them back (runtime/journal.py), and none keeps a
copy of its own. Each line of the journal is one event: `kind` says which, `v` the schema
version. Records are frozen pydantic models; `StepResult` is also the entry of a run's history
(`summary.json`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

Outcome = Literal["done", "budget", "interrupted", "failed"]


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Event(Record):
    v: int = SCHEMA_VERSION
    at: float = Field(default_factory=time.time)  # when it happened (seconds since the epoch)


# -- sessions ---------------------------------------------------------------------------------


class RunStarted(Event):
    """A session began: a new run, or `--resume` (which says where it resumed)."""

    kind: Literal["run_started"] = "run_started"
    recipe: str
    resumed: bool
    step: int  # the first step this session works on (0: the baseline)
    phase: int  # the index in the plan of the first phase this session runs
    steps: int  # steps planned
    skill: str  # the current skill


class RunFinished(Event):
    """A session ended, and how: done, budget (the run stopped before a step it could not
    pay), interrupted (Ctrl-C), failed (`detail` says what)."""

    kind: Literal["run_finished"] = "run_finished"
    outcome: Outcome
    detail: str = ""


# -- phases and calls -------------------------------------------------------------------------


class PhaseStarted(Event):
    kind: Literal["phase_started"] = "phase_started"
    phase: str
    step: int
    epoch: int


class PhaseFinished(Event):
    kind: Literal["phase_finished"] = "phase_finished"
    phase: str
    step: int
    epoch: int


class CallEvent(Event):
    """One call through the call layer: paid, answered from the cache, or failed."""

    kind: Literal["call"] = "call"
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
    shared: bool = False  # a cache hit that another cell of the sweep paid for


# -- what the optimizer proposed, and what became of it ---------------------------------------


class EditRecord(Record):
    op: Literal["add", "replace", "delete"]
    anchor: str | None
    content: str
    rationale: str
    support: int


class EditOutcome(Record):
    edit: EditRecord
    status: Literal["applied", "skipped"]
    reason: str


class OptimizerAnswer(Event):
    """One optimizer answer, usable or not (the raw text is kept when it was not)."""

    kind: Literal["optimizer_answer"] = "optimizer_answer"
    step: int
    task: str
    usable: bool
    repaired: bool
    reasked: bool
    problem: str
    raw: list[str]


class EditsProposed(Event):
    """One reflection's proposal: edits (or, in full_rewrite mode, a whole skill) from the
    trajectories it saw (`items`: their keys)."""

    kind: Literal["edits_proposed"] = "edits_proposed"
    step: int
    source: Literal["failures", "successes"]
    items: list[str]
    edits: list[EditRecord]
    rewrite: str | None = None


class EditFinding(Record):
    edit: EditRecord  # as repaired
    problems: list[str]  # none: usable
    repairs: list[str] = []  # examples given the evidence's expected answer


class EditsChecked(Event):
    """One reflection's edits checked against the skill and its evidence (runtime/edit_checks.py):
    `first` as proposed; `second` as proposed again when the reflection was asked with the
    problems listed (None: not asked, or its answer was not usable); `kept` the usable ones."""

    kind: Literal["edits_checked"] = "edits_checked"
    step: int
    source: Literal["failures", "successes"]
    first: list[EditFinding]
    second: list[EditFinding] | None = None
    kept: int


class CandidateBuilt(Event):
    """The step's candidate skill: the selected edits applied (each with its outcome), or a
    rewrite; `candidate` None when nothing changed or the candidate was refused."""

    kind: Literal["candidate_built"] = "candidate_built"
    step: int
    lr: int | None
    selected: list[EditRecord]
    outcomes: list[EditOutcome]
    candidate: str | None  # its hash
    skill: str | None  # its text
    refused: str = ""  # why it was refused (past the plan's size bound)
    source: str = "selected"  # which of the step's candidates (runtime/tries.py)


# -- scores and decisions ---------------------------------------------------------------------


class BaselineScored(Event):
    """The initial skill on the gate split: the score, and each item's hard score."""

    kind: Literal["baseline"] = "baseline"
    score: float
    items: dict[str, float]


class ItemScores(Record):
    before: float
    after: float


class GateResult(Record):
    """The gate's verdict on a step's candidate ("no candidate": nothing was scored)."""

    accepted: bool
    reason: str
    before: float | None = None
    after: float | None = None
    regressions: list[str] = []  # gate items that passed before and fail with the candidate
    candidate: str | None = None  # its hash
    source: str | None = None  # which of the step's candidates (runtime/tries.py); None: none
    shared_by: int | None = None  # the candidates the step could score, sharing the confidence


class GateDecided(Event):
    """The gate's verdict, with each gate item's hard score under the current skill (before)
    and the candidate (after)."""

    kind: Literal["gate_decided"] = "gate_decided"
    step: int
    decision: GateResult
    items: dict[str, ItemScores]


class StepResult(Record):
    """A finished step, as a run's history (`summary.json`) keeps it."""

    step: int
    epoch: int
    failures: int  # failed train rollouts
    decision: GateResult
    score: float  # the current skill's gate score after the step
    best: float


class StepFinished(Event):
    kind: Literal["step_finished"] = "step_finished"
    result: StepResult
    version: int  # the skill version written (skills/skill_vNNNN.md)
    skill: str  # the current skill after the step


class StepRecord(Record):
    """Everything a step did, kept in its folder (steps/NNNN/record.json)."""

    step: int
    epoch: int
    items: list[str]  # the train rollouts' keys
    failures: int
    patches: list[list[EditRecord]]  # each reflection's usable edits
    merged: list[EditRecord]
    lr: int | None
    selected: list[EditRecord]
    outcomes: list[EditOutcome]
    refused: str | None  # why the candidate was refused
    decision: GateResult
    tries: list[GateResult] = []  # every candidate the gate scored, in order (the last decides)


class EpochBoundary(Event):
    """What an epoch boundary phase produced before `step`: slow-update guidance (and whether
    it went into the skill), or the meta skill."""

    kind: Literal["epoch_boundary"] = "epoch_boundary"
    step: int
    epoch: int
    phase: Literal["slow_update", "meta_skill"]
    text: str | None  # None: nothing usable
    applied: bool
    note: str = ""  # why guidance was not applied
    skill: str  # the current skill after the phase


class BudgetStop(Event):
    kind: Literal["budget_stop"] = "budget_stop"
    limit: str
    before_step: int


class EarlyStop(Event):
    """A sweep's cell stopped by its early-stopping rule after `after_step` (runtime/early_stop.py):
    its other steps are skipped, its test is still scored."""

    kind: Literal["early_stop"] = "early_stop"
    after_step: int
    score: float


class FinalTestScored(Event):
    """The final test: the initial and the best skill on the test split."""

    kind: Literal["final_test"] = "final_test"
    initial: float
    best: float
    items: int


# -- sleep ------------------------------------------------------------------------------------


class NightMined(Event):
    """What a night harvested and mined: sessions read (and passed over, by reason), tasks
    mined, kept (deduplicated, judgeable, capped) and held out."""

    kind: Literal["night_mined"] = "night_mined"
    sessions: int
    skipped: dict[str, int]
    mined: int
    kept: int
    holdout: int


class TaskJudged(Event):
    """A replayed task's verdict, with the current skill or the night's candidate."""

    kind: Literal["task_judged"] = "task_judged"
    task: str
    split: Literal["train", "holdout"]
    skill: Literal["current", "candidate"]
    hard: float
    soft: float
    note: str


# -- sinks ------------------------------------------------------------------------------------


class EventSink(Protocol):
    def emit(self, event: Event) -> None: ...


class ListSink:
    """Keeps events in memory (tests, eval)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


class JsonlSink:
    """Appends one JSON line per event to a journal file, flushed at once."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("a", encoding="utf-8")

    def emit(self, event: Event) -> None:
        self._file.write(event.model_dump_json() + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()
