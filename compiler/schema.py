"""What each block of a recipe may contain: keys, their types and defaults (SPEC §2.4).

This table is the single source for checking, for `skopt plan`'s resolved settings and for
the help shown in diagnostics. Defaults are Python values as `types` would return them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from skopt.compiler.types import (
    Bool,
    Checked,
    Choice,
    Cron,
    Float,
    Func,
    Int,
    ListOf,
    OneOf,
    Param,
    PathTo,
    Ref,
    Str,
    Type,
    Unit,
)

REQUIRED = object()


@dataclass(frozen=True)
class Key:
    type: Type
    default: object = None  # REQUIRED, None (optional, no value) or the default value


@dataclass(frozen=True)
class BlockSpec:
    kind: str
    keys: Mapping[str, Key]
    children: Mapping[str, BlockSpec] = field(default_factory=dict)
    named: bool = False  # model and env blocks carry a name; the others take none
    # keys that may be written either as `key = value` or as a nested block (`slow_update`)
    either: tuple[str, ...] = ()
    implied: bool = False  # as a child: present with its defaults when not written


PROVIDERS = ("openai", "anthropic", "local", "sim", "replay")
SPLITS = ("train", "valid", "test")


def _min_not_above_max(lr: Func) -> tuple[str, str] | None:
    high, low = lr.args.get("max"), lr.args.get("min")
    if isinstance(high, int) and isinstance(low, int) and low > high:
        return (
            f"min > max in {lr.name}(max = {high}, min = {low})",
            f"swap them: {lr.name}(max = {low}, min = {high})",
        )
    return None


SCHEDULE = Choice(
    rule=_min_not_above_max,
    words=("autonomous",),
    calls={
        "constant": {"n": Param(Int(min=1))},
        "linear": {"max": Param(Int(min=1)), "min": Param(Int(min=1))},
        "cosine": {"max": Param(Int(min=1)), "min": Param(Int(min=1))},
    },
    what="learning-rate schedule",
)
METRIC = Choice(
    words=("exact", "f1", "contains", "verbatim", "accuracy"),
    calls={"numeric": {"tol": Param(Float(min=0), required=False, default=1e-6)}},
    what="metric",
)
GATE_METRIC = Choice(
    words=("hard", "soft"),
    calls={"mixed": {"w": Param(Float(min=0, max=1, percent=True))}},
    what="gate metric",
)
ENV_KIND = Choice(
    words=("qa", "classify", "math"),
    calls={
        "synthetic": {
            "rules": Param(Int(min=1, max=1000), required=False, default=8),
            "items": Param(Int(min=1, max=100_000), required=False, default=120),
            "noise": Param(Float(min=0, max=1, percent=True), required=False, default=0.05),
            "seed": Param(Int(min=0), required=False, default=1),
        },
        "python": {"entry": Param(Str())},
    },
    what="env kind",
)
SPLIT_NAME = Choice(words=SPLITS, what="split")
SAMPLES = OneOf((Choice(words=("all",), what="sample count"), Int(min=1)))
SOURCE = Choice(
    words=("claude", "codex"), calls={"generic": {"path": Param(Str())}}, what="session source"
)

PERCENT = Unit("percent", 0, 1)
MONEY = Unit("money")
DURATION = Unit("duration", 0.001)

BUDGET = BlockSpec(
    "budget",
    {
        "calls": Key(Int(min=1)),
        "usd": Key(MONEY),
        "tokens": Key(Int(min=1)),
        "time": Key(DURATION),
    },
)

MODEL = BlockSpec(
    "model",
    {
        "provider": Key(Choice(words=PROVIDERS, what="provider"), REQUIRED),
        "name": Key(Str()),
        "base_url": Key(Str()),
        "api_key_env": Key(Str()),
        "temperature": Key(Float(min=0, max=2), 0),
        "max_tokens": Key(Int(min=1), 4096),
        "top_p": Key(Float(min=0, max=1)),
        "reasoning_effort": Key(
            Choice(words=("none", "minimal", "low", "medium", "high"), what="reasoning effort")
        ),
        "concurrency": Key(Int(min=1, max=10_000), 8),
        "rpm": Key(Int(min=1)),
        "tpm": Key(Int(min=1)),
        "timeout": Key(DURATION, 120.0),
        "retries": Key(Int(min=0, max=100), 5),
        "from": Key(PathTo("dir")),
        "gguf": Key(PathTo("file")),
        "latency": Key(DURATION, 0.0),  # sim only: how long each simulated call takes
    },
    children={
        "price": BlockSpec(
            "price",
            {
                "input": Key(MONEY, REQUIRED),
                "output": Key(MONEY, REQUIRED),
                "per": Key(Int(min=1), 1_000_000),
            },
        )
    },
    named=True,
)

ENV = BlockSpec(
    "env",
    {
        "kind": Key(ENV_KIND, REQUIRED),
        "data": Key(PathTo("file")),
        "input": Key(Str(), "input"),
        "answer": Key(Str(), "answer"),
        "context": Key(Str()),
        "labels": Key(OneOf((ListOf(Str()), Str()))),
        "id": Key(Str()),
        "metric": Key(METRIC),
        "prompt": Key(PathTo("file")),
        "answer_format": Key(
            Choice(words=("tag", "last_line", "raw"), what="answer format"), Func("tag")
        ),
        "timeout": Key(DURATION, 120.0),
        "workers": Key(Int(min=1, max=1024), 8),
    },
    children={
        "files": BlockSpec("files", {s: Key(PathTo("file")) for s in SPLITS}),
        "split": BlockSpec(
            "split",
            {
                "train": Key(PERCENT, 0.6),
                "valid": Key(PERCENT, 0.2),
                "test": Key(PERCENT, 0.2),
                "seed": Key(Int(min=0), 42),
            },
        ),
        "limit": BlockSpec("limit", {s: Key(Int(min=0)) for s in SPLITS}),
    },
    named=True,
)

GATE = BlockSpec(
    "gate",
    {
        "split": Key(SPLIT_NAME, Func("valid")),
        "metric": Key(GATE_METRIC, Func("hard")),
        "samples": Key(SAMPLES, Func("all")),
        "repeats": Key(Int(min=1, max=100), 1),
        "no_regression": Key(Bool(), False),
        "min_delta": Key(Float(min=0, max=1, percent=True), 0.0),
    },
    implied=True,
)
SLOW_UPDATE = BlockSpec(
    "slow_update",
    {
        "samples": Key(Int(min=1), 20),
        "gate": Key(Bool(), False),
        "split": Key(SPLIT_NAME, Func("train")),
    },
    implied=True,
)

TRAIN = BlockSpec(
    "train",
    {
        "target": Key(Ref("model"), REQUIRED),
        "optimizer": Key(Ref("model"), REQUIRED),
        "env": Key(Ref("env")),
        "skill": Key(OneOf((PathTo("file"), Choice(words=("empty",), what="skill"))), REQUIRED),
        "epochs": Key(Int(min=1, max=10_000), 4),
        "batch_size": Key(Int(min=1), 40),
        "minibatch": Key(Int(min=1), 8),
        "merge_batch": Key(Int(min=2), 8),
        "rollouts": Key(Int(min=1, max=100), 1),
        "lr": Key(SCHEDULE, Func("cosine", {"max": 4, "min": 2})),
        "mode": Key(
            Choice(words=("patch", "rewrite", "full_rewrite"), what="update mode"), Func("patch")
        ),
        "reflect": Key(Choice(words=("all", "failures"), what="reflect setting"), Func("all")),
        "slow_update": Key(Bool(), True),
        "meta_skill": Key(Bool(), True),
        "test": Key(Bool(), True),
        "seed": Key(Int(min=0), 42),
        "out": Key(Str(), "runs/{recipe}/{time}"),
        "prompts": Key(PathTo("dir")),
    },
    children={"gate": GATE, "slow_update": SLOW_UPDATE, "budget": BUDGET},
    either=("slow_update",),
)

# -- sleep (SPEC §7; the keys and why: docs/decisions.md) ---------------------------------------

# Where each agent keeps its sessions when the recipe names no root (expanded for the user).
DEFAULT_ROOTS = {"claude": "~/.claude", "codex": "~/.codex"}
SOURCE = Choice(
    calls={
        "claude": {"root": Param(PathTo("dir"), required=False)},
        "codex": {"root": Param(PathTo("dir"), required=False)},
        "generic": {"root": Param(PathTo("path"))},
    },
    what="session source",
)
WITHIN = OneOf((Str(), Choice(words=("any",), what="within setting")))
SINCE = OneOf((Choice(words=("last",), what="since setting"), DURATION))
JUDGE = Choice(
    words=("rules", "exact"), calls={"rubric": {"model": Param(Ref("model"))}}, what="judge"
)
SESSION_KINDS = ("interactive", "headless")

SLEEP_GATE = BlockSpec(
    "gate",
    {
        "metric": Key(GATE_METRIC, Func("hard")),
        "no_regression": Key(Bool(), True),
        "min_delta": Key(Float(min=0, max=1, percent=True), 0.0),
    },
    implied=True,
)

SLEEP = BlockSpec(
    "sleep",
    {
        "sources": Key(
            ListOf(SOURCE), [Func("claude", {"root": None}), Func("codex", {"root": None})]
        ),
        "project": Key(PathTo("dir")),  # default: the recipe's folder
        "within": Key(WITHIN),  # default: the project
        "since": Key(SINCE, Func("last")),
        "lookback": Key(DURATION, 72 * 3600.0),
        "target": Key(Ref("model"), REQUIRED),
        "optimizer": Key(Ref("model"), REQUIRED),
        "judge": Key(JUDGE, Func("rules")),
        "skill": Key(PathTo("file"), REQUIRED),
        "holdout": Key(Unit("percent", 0.01, 0.99), 0.34),
        "max_tasks": Key(Int(min=2), 40),
        "max_sessions": Key(Int(min=1)),  # default: 3 × max_tasks
        "lr": Key(Int(min=1), 4),
        "minibatch": Key(Int(min=1), 5),
        "include": Key(
            ListOf(Choice(words=SESSION_KINDS, what="session kind")), [Func("interactive")]
        ),
        "schedule": Key(Cron()),
        "out": Key(Str(), ".skopt/sleep"),
        "seed": Key(Int(min=0), 42),
    },
    children={"gate": SLEEP_GATE, "budget": BUDGET},
)

# `sweep` takes train keys with lists of values, checked against TRAIN, and these options.
SWEEP = BlockSpec("sweep", {})
SWEEP_OPTIONS = {
    "executor": Key(Choice(words=("local", "ray"), what="executor"), Func("local")),
    "stop": Key(
        Choice(
            calls={
                "asha": {
                    "grace": Param(Int(min=1), required=False, default=1),
                    "reduction": Param(Int(min=2, max=100), required=False, default=2),
                }
            },
            what="stop rule",
        )
    ),
}

TOP_LEVEL: dict[str, BlockSpec] = {b.kind: b for b in (MODEL, ENV, TRAIN, BUDGET, SLEEP, SWEEP)}
JOBS = ("train", "sleep")
SWEEPABLE = tuple(k for k in TRAIN.keys if k not in ("target", "optimizer", "env", "out"))


def default_of(key: Key) -> Checked:
    return None if key.default is REQUIRED else key.default  # type: ignore[return-value]
