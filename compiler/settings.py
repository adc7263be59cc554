"""Checked blocks → the plan's resolved settings (defaults filled, units in base units)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from skopt.compiler.check import Resolved, api_key_env, provider_of
from skopt.compiler.plan import (
    Budget,
    EnvSettings,
    GateSettings,
    JudgeSettings,
    ModelSettings,
    Price,
    SleepGate,
    SleepSettings,
    SlowUpdateSettings,
    SourceSettings,
    SplitParts,
    TrainSettings,
)
from skopt.compiler.prices import lookup
from skopt.compiler.schema import DEFAULT_ROOTS
from skopt.compiler.types import Checked, Func


def show(value: Checked) -> str:
    """A checked value written back the way a recipe writes it."""
    if isinstance(value, Func):
        if not value.args:
            return value.name
        if len(value.args) == 1:
            return f"{value.name}({show(next(iter(value.args.values())))})"
        args = ", ".join(f"{k} = {show(v)}" for k, v in value.args.items())
        return f"{value.name}({args})"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def model_settings(model: Resolved) -> ModelSettings:
    provider = provider_of(model)
    effort = model.values["reasoning_effort"]
    return ModelSettings(
        name=model.name,
        provider=provider,
        model=model.text("name"),
        base_url=model.text("base_url"),
        api_key_env=api_key_env(model),
        temperature=model.number("temperature"),
        max_tokens=model.integer("max_tokens"),
        top_p=model.optional("top_p"),
        reasoning_effort=effort.name if isinstance(effort, Func) else None,
        concurrency=_concurrency(model, provider),
        rpm=_int_or_none(model.optional("rpm")),
        tpm=_int_or_none(model.optional("tpm")),
        timeout_s=model.number("timeout"),
        retries=model.integer("retries"),
        replay_from=model.text("from"),
        gguf=model.text("gguf"),
        price=_price(model, provider),
        latency_s=model.number("latency"),
    )


def _concurrency(model: Resolved, provider: str) -> int:
    """As written, else the default: 8, or 1 for a local model (its server answers one request
    at a time on all cores, so more in flight would only queue and time out there)."""
    if provider == "local" and not model.written("concurrency"):
        return 1
    return model.integer("concurrency")


def _int_or_none(value: float | None) -> int | None:
    return None if value is None else int(value)


def _price(model: Resolved, provider: str) -> Price | None:
    block = model.children.get("price")
    if block is None:
        return lookup(provider, model.text("name"))
    return Price(
        input_usd=block.number("input"),
        output_usd=block.number("output"),
        per=block.integer("per"),
        source="recipe",
    )


def env_settings(env: Resolved) -> EnvSettings:
    kind = env.values["kind"]
    assert isinstance(kind, Func)
    metric = env.values["metric"]
    if not isinstance(metric, Func):
        metric = Func(default_metric(kind.name))
    files = env.children.get("files")
    limit = env.children.get("limit")
    labels = env.values["labels"]
    return EnvSettings(
        name=env.name,
        kind=kind.name,
        kind_args={k: a for k, a in kind.args.items() if isinstance(a, str | int | float)},
        data=env.text("data"),
        files={k: f for k in ("train", "valid", "test") if files and (f := files.text(k))},
        fields={k: f for k in ("input", "answer", "context", "id") if (f := env.text(k))},
        labels=[str(x) for x in labels] if isinstance(labels, list) else env.text("labels"),
        metric=metric.name,
        metric_args={k: float(a) for k, a in metric.args.items() if isinstance(a, int | float)},
        split=None if files and "split" not in env.children else _split(env.children.get("split")),
        limit={
            k: n
            for k in ("train", "valid", "test")
            if limit and (n := limit.optional(k)) is not None
        },
        prompt=env.text("prompt"),
        answer_format=env.word("answer_format"),
        strict_format=env.flag("strict_format"),
        task=env.text("task"),
        timeout_s=env.number("timeout"),
        workers=env.integer("workers"),
    )


def default_metric(kind: str) -> str:
    return {"classify": "accuracy", "math": "numeric", "qa": "f1"}.get(kind, "exact")


def _split(split: Resolved | None) -> SplitParts:
    if split is None:
        return SplitParts(train=0.6, valid=0.2, test=0.2, seed=42)
    return SplitParts(
        train=split.number("train"),
        valid=split.number("valid"),
        test=split.number("test"),
        seed=split.integer("seed"),
        stratify=split.text("stratify"),
    )


def train_settings(job: Resolved, overrides: Mapping[str, Checked]) -> TrainSettings:
    t = job.with_values(overrides)
    return TrainSettings(
        target=str(t.values["target"]),
        optimizer=str(t.values["optimizer"]),
        env=str(t.values["env"]),
        skill=t.text("skill"),
        epochs=t.integer("epochs"),
        batch_size=t.integer("batch_size"),
        minibatch=t.integer("minibatch"),
        merge_batch=t.integer("merge_batch"),
        rollouts=t.integer("rollouts"),
        lr=show(t.values["lr"]),
        mode=t.word("mode"),
        reflect=t.word("reflect"),
        gate=_gate(job.children["gate"]),
        slow_update=_slow_update(job.children["slow_update"]) if t.flag("slow_update") else None,
        meta_skill=t.flag("meta_skill"),
        demonstrations=t.flag("demonstrations"),
        test=t.flag("test"),
        seed=t.integer("seed"),
        out=str(t.values["out"]),
        prompts=t.text("prompts"),
    )


def _gate(gate: Resolved) -> GateSettings:
    metric, samples = gate.values["metric"], gate.values["samples"]
    assert isinstance(metric, Func)
    weight = metric.args.get("w")
    return GateSettings(
        split=gate.word("split"),
        metric=metric.name,
        mixed_weight=float(weight) if isinstance(weight, int | float) else None,
        samples=samples if isinstance(samples, int) else None,
        repeats=gate.integer("repeats"),
        no_regression=gate.flag("no_regression"),
        min_delta=gate.number("min_delta"),
        confidence=gate.number("confidence"),
        tries=gate.integer("tries"),
    )


def _slow_update(slow: Resolved) -> SlowUpdateSettings:
    return SlowUpdateSettings(
        samples=slow.integer("samples"),
        gate=slow.flag("gate"),
        split=slow.word("split"),
    )


def sleep_settings(job: Resolved, recipe: str) -> SleepSettings:
    """A checked sleep block's settings. Paths are from the folder skopt runs in, as every path
    of a plan: `project` defaults to the recipe's folder, `within` to the project."""
    project = job.text("project") or os.path.dirname(recipe) or "."
    within = job.values["within"]
    since = job.values["since"]
    tasks = job.integer("max_tasks")
    sessions = job.values["max_sessions"]
    judge = job.values["judge"]
    assert isinstance(judge, Func)
    model = judge.args.get("model")
    return SleepSettings(
        sources=[_source(s) for s in _funcs(job.values["sources"])],
        project=project,
        within=None if isinstance(within, Func) else _within(job, project),
        since_s=None if isinstance(since, Func) else job.number("since"),
        lookback_s=job.number("lookback"),
        target=str(job.values["target"]),
        optimizer=str(job.values["optimizer"]),
        judge=JudgeSettings(kind=judge.name, model=model if isinstance(model, str) else None),
        skill=str(job.values["skill"]),
        holdout=job.number("holdout"),
        max_tasks=tasks,
        max_sessions=sessions if isinstance(sessions, int) else 3 * tasks,
        lr=job.integer("lr"),
        minibatch=job.integer("minibatch"),
        include=[k.name for k in _funcs(job.values["include"])],
        gate=_sleep_gate(job.children["gate"]),
        schedule=job.text("schedule"),
        out=str(job.values["out"]),
        seed=job.integer("seed"),
    )


def _funcs(value: Checked) -> list[Func]:
    return [v for v in value if isinstance(v, Func)] if isinstance(value, list) else []


def _source(source: Func) -> SourceSettings:
    root = source.args.get("root")
    written = root if isinstance(root, str) else os.path.expanduser(DEFAULT_ROOTS[source.name])
    return SourceSettings(kind=source.name, root=written)


def _within(job: Resolved, project: str) -> str:
    """As written (`~` expanded, a relative path from the recipe's folder), else the project.
    Not checked on disk: sessions may come from another machine's folders."""
    written = job.text("within")
    if written is None:
        return project
    path = os.path.expanduser(written)
    if os.path.isabs(path):
        return path
    return os.path.join(os.path.dirname(job.span_of("within").path), path)


def _sleep_gate(gate: Resolved) -> SleepGate:
    metric = gate.values["metric"]
    assert isinstance(metric, Func)
    weight = metric.args.get("w")
    return SleepGate(
        metric=metric.name,
        mixed_weight=float(weight) if isinstance(weight, int | float) else None,
        no_regression=gate.flag("no_regression"),
        min_delta=gate.number("min_delta"),
    )


def budget_settings(block: Resolved | None) -> Budget:
    if block is None:
        return Budget()
    return Budget(
        calls=_int_or_none(block.optional("calls")),
        usd=block.optional("usd"),
        tokens=_int_or_none(block.optional("tokens")),
        time_s=block.optional("time"),
    )
