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
    doc: str = ""  # one line, shown on hover by the language server


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
        "calls": Key(Int(min=1), doc="the most model calls the job may make"),
        "usd": Key(MONEY, doc="the most the job may spend, in dollars"),
        "tokens": Key(Int(min=1), doc="the most tokens (input and output) the job may use"),
        "time": Key(DURATION, doc="the longest the job may run"),
    },
)

MODEL = BlockSpec(
    "model",
    {
        "provider": Key(
            Choice(words=PROVIDERS, what="provider"),
            REQUIRED,
            "which backend answers: openai, anthropic, local, sim or replay",
        ),
        "name": Key(Str(), doc="the provider's model name (required except for sim)"),
        "base_url": Key(Str(), doc="the endpoint of an OpenAI-compatible server"),
        "api_key_env": Key(
            Str(), doc="the environment variable that holds the API key (never the key itself)"
        ),
        "temperature": Key(Float(min=0, max=2), 0, "the sampling temperature"),
        "max_tokens": Key(Int(min=1), 4096, "the most tokens one answer may have"),
        "top_p": Key(
            Float(min=0, max=1), doc="nucleus sampling: the probability mass sampled from"
        ),
        "reasoning_effort": Key(
            Choice(words=("none", "minimal", "low", "medium", "high"), what="reasoning effort"),
            doc="how hard a reasoning model thinks before it answers",
        ),
        "concurrency": Key(
            Int(min=1, max=10_000), 8, "how many calls to this model may be in flight at once"
        ),
        "rpm": Key(Int(min=1), doc="a rate limit: the most requests per minute"),
        "tpm": Key(Int(min=1), doc="a rate limit: the most tokens per minute"),
        "timeout": Key(DURATION, 120.0, "how long one call may take before it is retried"),
        "retries": Key(Int(min=0, max=100), 5, "how many times a failed call is retried"),
        "from": Key(
            PathTo("dir"), doc="a folder of a recorded run whose answers a replay model gives"
        ),
        "gguf": Key(
            PathTo("file"), doc="a GGUF weights file for a local model, instead of the bundled one"
        ),
        "latency": Key(DURATION, 0.0, "sim only: how long each simulated call takes"),
    },
    children={
        "price": BlockSpec(
            "price",
            {
                "input": Key(MONEY, REQUIRED, "the price of `per` input tokens"),
                "output": Key(MONEY, REQUIRED, "the price of `per` output tokens"),
                "per": Key(Int(min=1), 1_000_000, "how many tokens the prices are for"),
            },
        )
    },
    named=True,
)

ENV = BlockSpec(
    "env",
    {
        "kind": Key(
            ENV_KIND,
            REQUIRED,
            "what the env's tasks are: qa, classify, math, synthetic(...) or python(entry)",
        ),
        "data": Key(
            PathTo("file"), doc="the items: a .jsonl, .json array or .csv file, split by `split`"
        ),
        "input": Key(Str(), "input", "the field of an item that holds the task"),
        "answer": Key(Str(), "answer", "the field of an item that holds the expected answer"),
        "context": Key(Str(), doc="the field of an item that holds context shown with the task"),
        "labels": Key(
            OneOf((ListOf(Str()), Str())),
            doc="the labels of a classify env: a list, or the field that holds them",
        ),
        "id": Key(Str(), doc="the field of an item that identifies it"),
        "metric": Key(
            METRIC,
            doc="how an answer is scored: exact, f1, contains, numeric(tol), verbatim or accuracy",
        ),
        "prompt": Key(
            PathTo("file"), doc="a Jinja2 template that replaces the built-in rollout prompt"
        ),
        "answer_format": Key(
            Choice(words=("tag", "last_line", "raw"), what="answer format"),
            Func("tag"),
            "where the answer is read: tag (the last <answer>…</answer>), last_line or raw",
        ),
        "strict_format": Key(
            Bool(),
            False,
            "on: an output that ignores the answer format scores 0 (off: read its last line)",
        ),
        "task": Key(
            Str(),
            doc="the one-line task statement `skopt eval --harness deploy` puts after the skill",
        ),
        "timeout": Key(DURATION, 120.0, "how long scoring one item may take"),
        "workers": Key(Int(min=1, max=1024), 8, "how many items are scored at once"),
    },
    children={
        "files": BlockSpec(
            "files", {s: Key(PathTo("file"), doc=f"the items of the {s} split") for s in SPLITS}
        ),
        "split": BlockSpec(
            "split",
            {
                "train": Key(PERCENT, 0.6, "the share of the items used for training"),
                "valid": Key(PERCENT, 0.2, "the share of the items the gate scores on"),
                "test": Key(PERCENT, 0.2, "the share of the items scored once at the end"),
                "seed": Key(Int(min=0), 42, "the seed of the shuffle that splits the items"),
                "stratify": Key(
                    Str(),
                    doc="the field whose values every split holds in their share of the items",
                ),
            },
        ),
        "limit": BlockSpec(
            "limit", {s: Key(Int(min=0), doc=f"the most {s} items used") for s in SPLITS}
        ),
    },
    named=True,
)

GATE = BlockSpec(
    "gate",
    {
        "split": Key(SPLIT_NAME, Func("valid"), "the split the gate scores on (never test)"),
        "metric": Key(GATE_METRIC, Func("hard"), "what the gate compares: hard, soft or mixed(w)"),
        "samples": Key(
            SAMPLES, Func("all"), "how many items of the split the gate scores: all or a number"
        ),
        "repeats": Key(Int(min=1, max=100), 1, "how many times each gate item is scored"),
        "no_regression": Key(
            Bool(), False, "refuse an edit that breaks an item the current skill passes"
        ),
        "min_delta": Key(
            Float(min=0, max=1, percent=True),
            0.0,
            "how much better a candidate must score to be accepted",
        ),
        "confidence": Key(
            Float(min=0, max=0.999, percent=True),
            0.9,
            "how sure the gate must be (a one-sided sign test) that a candidate is better",
        ),
        "tries": Key(
            Int(min=1, max=10),
            3,
            "how many candidates one step may score when the gate rejects the first "
            "(the sign test's confidence is shared among them)",
        ),
    },
    implied=True,
)
SLOW_UPDATE = BlockSpec(
    "slow_update",
    {
        "samples": Key(Int(min=1), 20, "how many items the epoch-end slow update looks at"),
        "gate": Key(Bool(), False, "gate the slow update's edit like a step's"),
        "split": Key(
            SPLIT_NAME, Func("train"), "the split the slow update samples from (never test)"
        ),
    },
    implied=True,
)

TRAIN = BlockSpec(
    "train",
    {
        "target": Key(Ref("model"), REQUIRED, "the model that uses the skill (a declared model)"),
        "optimizer": Key(
            Ref("model"),
            REQUIRED,
            "the model that reflects on failures and edits the skill (a declared model)",
        ),
        "env": Key(
            Ref("env"),
            doc="the env the skill is trained on (may be left out when one env is declared)",
        ),
        "skill": Key(
            OneOf((PathTo("file"), Choice(words=("empty",), what="skill"))),
            REQUIRED,
            "the skill file to train, or `empty` to start from a blank one",
        ),
        "epochs": Key(Int(min=1, max=10_000), 4, "how many passes over the training split"),
        "batch_size": Key(Int(min=1), 40, "how many training items each step rolls out"),
        "minibatch": Key(Int(min=1), 8, "how many trajectories each reflection call reads"),
        "merge_batch": Key(Int(min=2), 8, "how many proposed edits one merge call combines"),
        "rollouts": Key(Int(min=1, max=100), 1, "how many times each item is rolled out per step"),
        "lr": Key(
            SCHEDULE,
            Func("cosine", {"max": 4, "min": 2}),
            "edits per step: constant(n), linear(max, min), cosine(max, min) or autonomous",
        ),
        "mode": Key(
            Choice(words=("patch", "rewrite", "full_rewrite"), what="update mode"),
            Func("patch"),
            "how the skill is edited: patch, rewrite or full_rewrite",
        ),
        "reflect": Key(
            Choice(words=("all", "failures"), what="reflect setting"),
            Func("all"),
            "which trajectories are reflected on: all or failures",
        ),
        "slow_update": Key(
            Bool(), True, "an epoch-end update from a wider sample (on, off, or a block)"
        ),
        "meta_skill": Key(Bool(), True, "keep a meta skill of editing lessons across epochs"),
        "demonstrations": Key(
            Bool(),
            False,
            "let a step also try worked examples of its failed train items as a candidate",
        ),
        "test": Key(Bool(), True, "score the test split once at the end"),
        "seed": Key(Int(min=0), 42, "the seed of the run's sampling"),
        "out": Key(
            Str(), "runs/{recipe}/{time}", "the run folder; {recipe} and {time} are filled in"
        ),
        "prompts": Key(
            PathTo("dir"), doc="a folder whose templates override the built-in ones by file name"
        ),
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
        "metric": Key(
            GATE_METRIC, Func("hard"), "what the night's gate compares: hard, soft or mixed(w)"
        ),
        "no_regression": Key(
            Bool(), True, "refuse an edit that breaks a held-out task that passes"
        ),
        "min_delta": Key(
            Float(min=0, max=1, percent=True),
            0.0,
            "how much better the held-out score must be to stage the edits",
        ),
    },
    implied=True,
)

SLEEP = BlockSpec(
    "sleep",
    {
        "sources": Key(
            ListOf(SOURCE),
            [Func("claude", {"root": None}), Func("codex", {"root": None})],
            "where past sessions are read: claude, codex, generic(root)",
        ),
        "project": Key(
            PathTo("dir"),  # default: the recipe's folder
            doc="the project whose sessions are learned from; nights are staged in it",
        ),
        "within": Key(  # default: the project
            WITHIN, doc="only sessions whose working folder is inside this one (or any)"
        ),
        "since": Key(
            SINCE, Func("last"), "which sessions: last (since the last night) or a duration"
        ),
        "lookback": Key(DURATION, 72 * 3600.0, "how far back the first night looks"),
        "target": Key(
            Ref("model"),
            REQUIRED,
            "the model that replays the tasks with the skill (a declared model)",
        ),
        "optimizer": Key(
            Ref("model"), REQUIRED, "the model that proposes edits (a declared model)"
        ),
        "judge": Key(
            JUDGE, Func("rules"), "how replays are judged: rules, exact or rubric(model = m)"
        ),
        "skill": Key(PathTo("file"), REQUIRED, "the live skill file the night proposes edits to"),
        "holdout": Key(
            Unit("percent", 0.01, 0.99), 0.34, "the share of tasks held out for the gate"
        ),
        "max_tasks": Key(Int(min=2), 40, "the most tasks mined in one night"),
        "max_sessions": Key(  # default: 3 × max_tasks
            Int(min=1), doc="the most sessions read in one night (default: 3 × max_tasks)"
        ),
        "lr": Key(Int(min=1), 4, "the most edits one night proposes"),
        "minibatch": Key(Int(min=1), 5, "how many failures each reflect call reads"),
        "include": Key(
            ListOf(Choice(words=SESSION_KINDS, what="session kind")),
            [Func("interactive")],
            "which kinds of session are read: interactive, headless",
        ),
        "schedule": Key(Cron(), doc="when the night runs: a 5-field cron string"),
        "out": Key(Str(), ".skopt/sleep", "where nights are staged, relative to the project"),
        "seed": Key(Int(min=0), 42, "the seed of the held-out split and the sampling"),
    },
    children={"gate": SLEEP_GATE, "budget": BUDGET},
)

# `sweep` takes train keys with lists of values, checked against TRAIN, and these options.
SWEEP = BlockSpec("sweep", {})
SWEEP_OPTIONS = {
    "executor": Key(
        Choice(words=("local", "ray"), what="executor"),
        Func("local"),
        "where the cells run: local or ray",
    ),
    "stop": Key(
        Choice(
            calls={
                "asha": {
                    "grace": Param(Int(min=1), required=False, default=1),
                    "reduction": Param(Int(min=2, max=100), required=False, default=2),
                }
            },
            what="stop rule",
        ),
        doc="early stopping of weak cells: asha(grace, reduction)",
    ),
}

TOP_LEVEL: dict[str, BlockSpec] = {b.kind: b for b in (MODEL, ENV, TRAIN, BUDGET, SLEEP, SWEEP)}
JOBS = ("train", "sleep")
SWEEPABLE = tuple(k for k in TRAIN.keys if k not in ("target", "optimizer", "env", "out"))


def default_of(key: Key) -> Checked:
    return None if key.default is REQUIRED else key.default  # type: ignore[return-value]
