"""Checked blocks → the plan's resolved settings (defaults filled, units in base units)."""

from __future__ import annotations

from collections.abc import Mapping

from skopt.compiler.check import Resolved, api_key_env, provider_of
from skopt.compiler.plan import (
    Budget,
    EnvSettings,
    GateSettings,
    ModelSettings,
    Price,
    SlowUpdateSettings,
    SplitParts,
    TrainSettings,
)
from skopt.compiler.prices import lookup
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


def _word(value: Checked) -> str:
    assert isinstance(value, Func), value
    return value.name


def _opt_str(value: Checked) -> str | None:
    return value if isinstance(value, str) else None


def _opt_int(value: Checked) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _opt_float(value: Checked) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def model_settings(model: Resolved) -> ModelSettings:
    v = model.values
    provider = provider_of(model)
    return ModelSettings(
        name=model.name,
        provider=provider,  # type: ignore[arg-type]
        model=_opt_str(v["name"]),
        base_url=_opt_str(v["base_url"]),
        api_key_env=api_key_env(model),
        temperature=float(v["temperature"]),  # type: ignore[arg-type]
        max_tokens=int(v["max_tokens"]),  # type: ignore[arg-type]
        top_p=_opt_float(v["top_p"]),
        reasoning_effort=_word(v["reasoning_effort"]) if v["reasoning_effort"] else None,
        concurrency=int(v["concurrency"]),  # type: ignore[arg-type]
        rpm=_opt_int(v["rpm"]),
        tpm=_opt_int(v["tpm"]),
        timeout_s=float(v["timeout"]),  # type: ignore[arg-type]
        retries=int(v["retries"]),  # type: ignore[arg-type]
        replay_from=_opt_str(v["from"]),
        gguf=_opt_str(v["gguf"]),
        price=_price(model, provider),
    )


def _price(model: Resolved, provider: str) -> Price | None:
    block = model.children.get("price")
    if block is not None:
        per = int(block.values["per"])  # type: ignore[arg-type]
        return Price(
            input_usd=float(block.values["input"]),  # type: ignore[arg-type]
            output_usd=float(block.values["output"]),  # type: ignore[arg-type]
            per=per,
            source="recipe",
        )
    return lookup(provider, _opt_str(model.values["name"]))


def env_settings(env: Resolved) -> EnvSettings:
    v = env.values
    kind = v["kind"]
    assert isinstance(kind, Func)
    metric = v["metric"] if isinstance(v["metric"], Func) else Func(default_metric(kind.name))
    split = env.children.get("split")
    limit = env.children.get("limit")
    files = env.children.get("files")
    labels = v["labels"]
    return EnvSettings(
        name=env.name,
        kind=kind.name,
        kind_args={k: a for k, a in kind.args.items() if isinstance(a, str | int | float)},
        data=_opt_str(v["data"]),
        files={k: f for k, f in (files.values.items() if files else ()) if isinstance(f, str)},
        fields={k: f for k in ("input", "answer", "context", "id") if isinstance(f := v[k], str)},
        labels=labels if isinstance(labels, str | list) else None,  # type: ignore[arg-type]
        metric=metric.name,
        metric_args={k: float(a) for k, a in metric.args.items() if isinstance(a, int | float)},
        split=_split(split) if split or not files else None,
        limit={k: n for k, n in (limit.values.items() if limit else ()) if isinstance(n, int)},
        prompt=_opt_str(v["prompt"]),
        answer_format=_word(v["answer_format"]),
        timeout_s=float(v["timeout"]),  # type: ignore[arg-type]
        workers=int(v["workers"]),  # type: ignore[arg-type]
    )


def default_metric(kind: str) -> str:
    return {"classify": "accuracy", "math": "numeric", "qa": "f1"}.get(kind, "exact")


def _split(split: Resolved | None) -> SplitParts:
    if split is None:
        return SplitParts(train=0.6, valid=0.2, test=0.2, seed=42)
    v = split.values
    return SplitParts(train=float(v["train"]), valid=float(v["valid"]), test=float(v["test"]), seed=int(v["seed"]))  # type: ignore[arg-type]


def train_settings(job: Resolved, overrides: Mapping[str, Checked]) -> TrainSettings:
    v = {**job.values, **overrides}
    skill = v["skill"]
    return TrainSettings(
        target=str(v["target"]),
        optimizer=str(v["optimizer"]),
        env=str(v["env"]),
        skill=skill if isinstance(skill, str) else None,
        epochs=int(v["epochs"]),  # type: ignore[arg-type]
        batch_size=int(v["batch_size"]),  # type: ignore[arg-type]
        minibatch=int(v["minibatch"]),  # type: ignore[arg-type]
        merge_batch=int(v["merge_batch"]),  # type: ignore[arg-type]
        rollouts=int(v["rollouts"]),  # type: ignore[arg-type]
        lr=show(v["lr"]),
        mode=_word(v["mode"]),  # type: ignore[arg-type]
        reflect=_word(v["reflect"]),  # type: ignore[arg-type]
        gate=_gate(job.children["gate"]),
        slow_update=_slow_update(job.children["slow_update"]) if v["slow_update"] is True else None,
        meta_skill=bool(v["meta_skill"]),
        test=bool(v["test"]),
        seed=int(v["seed"]),  # type: ignore[arg-type]
        out=str(v["out"]),
        prompts=_opt_str(v["prompts"]),
    )


def _gate(gate: Resolved) -> GateSettings:
    v = gate.values
    metric, samples = v["metric"], v["samples"]
    assert isinstance(metric, Func)
    weight = metric.args.get("w")
    return GateSettings(
        split=_word(v["split"]),  # type: ignore[arg-type]
        metric=metric.name,  # type: ignore[arg-type]
        mixed_weight=float(weight) if isinstance(weight, int | float) else None,
        samples=samples if isinstance(samples, int) else None,
        repeats=int(v["repeats"]),  # type: ignore[arg-type]
        no_regression=bool(v["no_regression"]),
        min_delta=float(v["min_delta"]),  # type: ignore[arg-type]
    )


def _slow_update(slow: Resolved) -> SlowUpdateSettings:
    v = slow.values
    return SlowUpdateSettings(
        samples=int(v["samples"]),  # type: ignore[arg-type]
        gate=bool(v["gate"]),
        split=_word(v["split"]),  # type: ignore[arg-type]
    )


def budget_settings(block: Resolved | None) -> Budget:
    if block is None:
        return Budget()
    v = block.values
    return Budget(
        calls=_opt_int(v["calls"]),
        usd=_opt_float(v["usd"]),
        tokens=_opt_int(v["tokens"]),
        time_s=_opt_float(v["time"]),
    )
