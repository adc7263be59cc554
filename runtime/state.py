"""What a run carries from unit to unit: `State`, saved to state.json after every unit (what
`--resume` continues from), and `Step`, what the phases of the step under way hand each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

from skopt.runtime.bank import Amount
from skopt.runtime.edits import Edit, SizeLimit
from skopt.runtime.events import (
    BudgetStop,
    EarlyStop,
    EditOutcome,
    EditRecord,
    GateResult,
    StepResult,
)
from skopt.runtime.gate import Decision
from skopt.runtime.optimizer import Patch, Record
from skopt.runtime.scoring import Trajectory
from skopt.runtime.tries import NearMiss
from skopt.runtime.tries import Source as TrySource

Scores = dict[str, tuple[float, float]]  # item key -> (hard, soft)
Source = Literal["failures", "successes"]


class State(BaseModel):
    """Everything needed to continue a run after its last finished unit (state.json)."""

    model_config = ConfigDict(extra="forbid")

    next_phase: int = 0
    version: int = 0
    initial_skill: str = ""
    current_skill: str = ""
    best_skill: str = ""
    baseline_score: float = 0.0
    current_score: float = 0.0
    best_score: float = 0.0
    current_scores: Scores = {}
    epoch_start_skill: str = ""
    step_buffer: list[str] = []
    meta_skill: str = ""
    accepted_edits: list[EditRecord] = []  # this epoch's, for the meta skill
    rejected_edits: list[EditRecord] = []
    near_misses: list[NearMiss] = []  # refused candidates that fixed more than they broke
    history: list[StepResult] = []
    test: dict[str, float] = {}
    stopped: BudgetStop | None = None
    stopped_early: EarlyStop | None = None
    elapsed_s: float = 0.0
    spent: Amount = Amount()  # what the run had paid when this state was saved
    baseline_s: float = 0.0  # how long the baseline took: the pace a time budget plans with


@dataclass(frozen=True, slots=True)
class Tried:
    """One candidate a step scored: the gate's decision (and as the journal records it), where
    the candidate came from (runtime/tries.py), the edits that made it."""

    decision: Decision
    result: GateResult
    source: TrySource
    applied: list[EditRecord]


@dataclass
class Step:
    """What the phases of the step under way hand each other."""

    number: int
    epoch: int
    trajectories: list[Trajectory] = field(default_factory=list)
    patches: list[Patch] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)  # full_rewrite mode
    merged: list[Edit] = field(default_factory=list)
    merged_skill: str | None = None
    lr: int | None = None
    selected: list[Edit] = field(default_factory=list)
    outcomes: list[EditOutcome] = field(default_factory=list)
    refused: str | None = None
    candidate: str | None = None
    limit: SizeLimit | None = None  # the plan's bound on the skill's size, for every candidate
    tries: list[Tried] = field(default_factory=list)  # the candidates scored, in order
    answers: list[Record] = field(default_factory=list)  # the optimizer's, this step

    @property
    def failures(self) -> list[Trajectory]:
        return [t for t in self.trajectories if not t.passed]
