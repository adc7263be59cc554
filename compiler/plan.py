"""The plan: the checked, lowered contract between the compiler and the runtime (a leaf module).

Frozen pydantic models with `extra="forbid"` and a schema version. `phases` is the ordered list
of typed phases the engine will execute (a discriminated union on `phase`); `skopt plan`
counts calls by walking exactly this list, and the runtime dispatches it to `visit_<phase>`.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

Role = Literal["target", "optimizer", "judge"]  # "judge": sleep's rubric judge
PhaseName = Literal[
    "baseline",
    "rollout",
    "reflect",
    "aggregate",
    "select",
    "update",
    "gate",
    "slow_update",
    "meta_skill",
    "final_test",
]
PHASE_ORDER: tuple[PhaseName, ...] = get_args(PhaseName)  # the order phases run in


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# -- resolved settings ----------------------------------------------------------------------


class Price(Frozen):
    input_usd: float
    output_usd: float
    per: int
    source: str  # "recipe", "table <date>", or "free" for models that cost nothing


class ModelSettings(Frozen):
    name: str
    provider: Literal["openai", "anthropic", "local", "sim", "replay"]
    model: str | None
    base_url: str | None
    api_key_env: str | None
    temperature: float
    max_tokens: int
    top_p: float | None
    reasoning_effort: str | None
    concurrency: int
    rpm: int | None
    tpm: int | None
    timeout_s: float
    retries: int
    replay_from: str | None
    gguf: str | None
    price: Price | None
    latency_s: float = 0.0  # sim only: each simulated call waits this long


class SplitParts(Frozen):
    train: float
    valid: float
    test: float
    seed: int
    stratify: str | None = None  # the field whose values every split holds in proportion


class EnvSettings(Frozen):
    name: str
    kind: str
    kind_args: dict[str, str | int | float]
    data: str | None
    files: dict[str, str]
    fields: dict[str, str]
    labels: list[str] | str | None
    metric: str
    metric_args: dict[str, float]
    split: SplitParts | None
    limit: dict[str, int]
    prompt: str | None
    answer_format: str
    strict_format: bool  # an output that ignores the answer format reads no answer
    task: str | None  # the deploy harness's task statement; None: one made from the kind
    timeout_s: float
    workers: int


class GateSettings(Frozen):
    split: Literal["train", "valid"]
    metric: Literal["hard", "soft", "mixed"]
    mixed_weight: float | None
    samples: int | None  # None: all items of the split
    repeats: int
    no_regression: bool
    min_delta: float
    confidence: float  # the sign test's (compiler/gate_bound.py); 0: off
    tries: int = 1  # candidates one step may score; they share the sign test's 1 - confidence


class SlowUpdateSettings(Frozen):
    samples: int
    gate: bool
    split: Literal["train", "valid"]


class Budget(Frozen):
    calls: int | None = None
    usd: float | None = None
    tokens: int | None = None
    time_s: float | None = None


class TrainSettings(Frozen):
    target: str
    optimizer: str
    env: str
    skill: str | None  # None: start from an empty skill
    epochs: int
    batch_size: int
    minibatch: int
    merge_batch: int
    rollouts: int
    lr: str  # as written, e.g. "cosine(max = 4, min = 2)"
    mode: Literal["patch", "rewrite", "full_rewrite"]
    reflect: Literal["all", "failures"]
    gate: GateSettings
    slow_update: SlowUpdateSettings | None
    meta_skill: bool
    demonstrations: bool
    test: bool
    seed: int
    out: str
    prompts: str | None


# -- counts ---------------------------------------------------------------------------------


class Count(Frozen):
    """A count the algorithm fixes (min == max) or a range that depends on outcomes."""

    min: int
    expected: float
    max: int


class RoleCalls(Frozen):
    role: Role
    model: str
    calls: Count
    input_tokens: Count
    output_tokens: Count
    input_exact: bool  # counted with the model's own tokenizer


# -- phases ---------------------------------------------------------------------------------


class _Phase(Frozen):
    epoch: int  # 1..epochs; 0 for the baseline, epochs + 1 for the final test
    step: int  # global step 1..T; epoch-boundary phases carry the step they precede;
    # 0 for the baseline, T + 1 for the final test
    calls: list[RoleCalls]


class Baseline(_Phase):
    phase: Literal["baseline"] = "baseline"
    split: str
    items: int
    repeats: int


class Rollout(_Phase):
    phase: Literal["rollout"] = "rollout"
    items: int
    rollouts: int


class Reflect(_Phase):
    phase: Literal["reflect"] = "reflect"
    trajectories: int
    minibatch: int
    reflect: Literal["all", "failures"]


class Aggregate(_Phase):
    phase: Literal["aggregate"] = "aggregate"
    merge_batch: int


class Select(_Phase):
    phase: Literal["select"] = "select"
    lr: int | None  # None: chosen by the optimizer (autonomous)


class Update(_Phase):
    phase: Literal["update"] = "update"
    mode: Literal["patch", "rewrite", "full_rewrite"]
    # The most target tokens the candidate skill may count: the runtime refuses an edit or a
    # rewrite that would exceed it, so the plan's maxima hold (compiler/skill_size.py).
    max_skill_tokens: int


class Gate(_Phase):
    phase: Literal["gate"] = "gate"
    split: str
    items: int
    repeats: int


class SlowUpdate(_Phase):
    phase: Literal["slow_update"] = "slow_update"
    samples: int
    gated: bool
    max_skill_tokens: int  # as for Update: guidance that would exceed it is refused


class MetaSkill(_Phase):
    phase: Literal["meta_skill"] = "meta_skill"


class FinalTest(_Phase):
    phase: Literal["final_test"] = "final_test"
    items: int


Phase = Annotated[
    Baseline
    | Rollout
    | Reflect
    | Aggregate
    | Select
    | Update
    | Gate
    | SlowUpdate
    | MetaSkill
    | FinalTest,
    Field(discriminator="phase"),
]


# -- the plan -------------------------------------------------------------------------------


class SplitSizes(Frozen):
    train: int
    valid: int
    test: int


class Schedule(Frozen):
    steps_per_epoch: int
    total_steps: int
    lr: list[int | None]


class Tokens(Frozen):
    tokenizer: str  # e.g. "o200k_base", or "estimate"
    exact: bool


class PhaseTotal(Frozen):
    phase: PhaseName
    role: Role
    calls: Count
    input_tokens: Count
    output_tokens: Count
    input_exact: bool


class Usd(Frozen):
    min: float
    expected: float
    max: float


class ModelCost(Frozen):
    model: str
    calls: Count
    input_tokens: Count
    output_tokens: Count
    tokens: Tokens
    usd: Usd | None  # None: no price known — shown as unknown, never $0


class Verdict(Frozen):
    fits: bool
    covered_steps: int
    total_steps: int
    limits: list[str]  # which limits bind, e.g. ["usd"]
    unchecked: list[str]  # limits that cannot be checked before running, with the reason


class Job(Frozen):
    """One training job: a recipe without a sweep has one; a sweep has one per cell."""

    name: str
    overrides: dict[str, str]
    train: TrainSettings
    splits: SplitSizes
    assignment_hash: str
    schedule: Schedule
    phases: list[Phase]
    totals: list[PhaseTotal]
    models: list[ModelCost]
    verdict: Verdict | None


# -- sleep (SPEC §7): one night -------------------------------------------------------------


class SourceSettings(Frozen):
    kind: Literal["claude", "codex", "generic"]
    root: str  # the agent's folder (~ expanded), or the generic file or folder


class JudgeSettings(Frozen):
    kind: Literal["rules", "exact", "rubric"]
    model: str | None  # the rubric judge's model; None for rules and exact (judged locally)


class SleepGate(Frozen):
    metric: Literal["hard", "soft", "mixed"]
    mixed_weight: float | None
    no_regression: bool
    min_delta: float


class SleepSettings(Frozen):
    sources: list[SourceSettings]
    project: str  # where nights are staged (a folder; paths are from where skopt runs)
    within: str | None  # only sessions whose cwd is inside it; None: any cwd
    since_s: float | None  # None: since the last night (the first one looks back `lookback_s`)
    lookback_s: float
    target: str
    optimizer: str
    judge: JudgeSettings
    skill: str  # the live file
    holdout: float
    max_tasks: int
    max_sessions: int
    lr: int  # edits per night
    minibatch: int  # failures per reflect call
    include: list[Literal["interactive", "headless"]]
    gate: SleepGate
    schedule: str | None  # a 5-field cron expression, single-spaced
    out: str  # relative to `project` (or absolute)
    seed: int


SleepPhaseName = Literal["mine", "replay", "judge", "reflect", "gate"]
SLEEP_PHASE_ORDER: tuple[SleepPhaseName, ...] = get_args(SleepPhaseName)


class SleepPhase(Frozen):
    phase: SleepPhaseName
    calls: list[RoleCalls]  # empty: the phase calls no model (a local judge; see night_calls)


class SleepJob(Frozen):
    """One night's worst case: the phases in the order they run, with their calls per role."""

    settings: SleepSettings
    phases: list[SleepPhase]
    models: list[ModelCost]
    verdict: Verdict | None
    # The most target tokens a candidate skill may count (the live file, the LEARNED markers and
    # lr edits of one optimizer reply each): the runtime refuses an edit that would pass it, so
    # the plan's maxima hold (compiler/sleep_bounds.py). None only in plans made without it.
    max_skill_tokens: int | None = None


class AshaStop(Frozen):
    """Early stopping of a sweep's cells (ASHA): at steps grace, grace·reduction, …, a cell
    goes on only while its gate score is among the best 1/reduction of the cells that reached
    that step before it."""

    grace: int
    reduction: int


class SweepSettings(Frozen):
    executor: Literal["local", "ray"] = "local"
    stop: AshaStop | None = None
    # The whole sweep against its budget (one budget for every cell): fits, or how many whole
    # cells its worst case covers (covered_steps/total_steps count cells here).
    verdict: Verdict | None = None


class Hashes(Frozen):
    recipe: str
    data: str
    split: str
    skill: str
    prompts: str
    prices: str
    models: str
    skopt: str


class Plan(Frozen):
    schema_version: int = SCHEMA_VERSION
    skopt_version: str
    recipe: str
    sets: list[str]  # the --set flags it was compiled with
    job_kind: Literal["train", "sleep", "none"]
    models: list[ModelSettings]
    envs: list[EnvSettings]
    budget: Budget
    jobs: list[Job]
    hashes: Hashes
    sleep: SleepJob | None = None  # the night of a sleep recipe (job_kind "sleep")
    sweep: SweepSettings | None = None  # a recipe with a `sweep` block
