"""Checked recipe → plan jobs: data and splits, the schedule, and the typed phase list.

The phase list is what the engine executes, in order: baseline, then per step rollout →
reflect → aggregate → select → update → gate, with slow update and meta skill before every
epoch from the second on, and the final test. Each phase carries its calls per role.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from skopt.compiler import phases as P
from skopt.compiler import synthetic
from skopt.compiler.check import Resolved
from skopt.compiler.cost import TokenModel, model_costs, phase_totals
from skopt.compiler.dataset import (
    DataError,
    Fields,
    Item,
    assignment_hash,
    batches,
    epoch_order,
    read_items,
    split_items,
)
from skopt.compiler.plan import (
    Aggregate,
    Baseline,
    EnvSettings,
    FinalTest,
    Gate,
    Job,
    MetaSkill,
    ModelSettings,
    Phase,
    Reflect,
    Rollout,
    Schedule,
    Select,
    SlowUpdate,
    SplitSizes,
    TrainSettings,
    Update,
)
from skopt.compiler.schedule import learning_rates
from skopt.compiler.settings import show
from skopt.compiler.types import Checked, Func
from skopt.grammar.source import Diagnostic, error, warning

NOISY_GATE = 10


@dataclass(frozen=True)
class Splits:
    train: list[Item]
    valid: list[Item]
    test: list[Item]

    def get(self, name: str) -> list[Item]:
        return {"train": self.train, "valid": self.valid, "test": self.test}[name]


def load_splits(env: EnvSettings, resolved: Resolved) -> Splits:
    """The env's items, split and limited. Raises DataError with a message for the user."""
    if env.kind == "synthetic":
        args = env.kind_args
        items = synthetic.items(int(args["rules"]), int(args["items"]), int(args["seed"]))
        parts = split_items(items, _parts(env), env.split.seed if env.split else 42)
    elif env.files:
        fields = _fields(env)
        parts = {name: read_items(Path(path), fields) for name, path in env.files.items()}
    else:
        assert env.data is not None
        items = read_items(Path(env.data), _fields(env))
        parts = split_items(items, _parts(env), env.split.seed if env.split else 42)
    limited = {
        name: parts.get(name, [])[: env.limit[name]] if name in env.limit else parts.get(name, [])
        for name in ("train", "valid", "test")
    }
    return Splits(limited["train"], limited["valid"], limited["test"])


def _parts(env: EnvSettings) -> dict[str, float]:
    split = env.split
    return (
        {"train": split.train, "valid": split.valid, "test": split.test}
        if split
        else {"train": 0.6, "valid": 0.2, "test": 0.2}
    )


def _fields(env: EnvSettings) -> Fields:
    f = env.fields
    return Fields(
        input=f.get("input", "input"),
        answer=f.get("answer", "answer"),
        context=f.get("context"),
        id=f.get("id"),
    )


def data_problem(exc: DataError, env: Resolved) -> Diagnostic:
    where = env.span_of("data") if env.written("data") else env.block.kind.span
    return error(f"cannot use the data of env '{env.name}': {exc}", where, "this data")


# -- sweeps ---------------------------------------------------------------------------------


def sweep_cells(axes: Mapping[str, tuple[list[Checked], object]]) -> list[dict[str, Checked]]:
    if not axes:
        return [{}]
    keys = list(axes)
    return [
        dict(zip(keys, combo, strict=True))
        for combo in itertools.product(*(axes[k][0] for k in keys))
    ]


def cell_name(overrides: Mapping[str, Checked]) -> str:
    return ", ".join(f"{k} = {show(v)}" for k, v in overrides.items()) or "main"


# -- the phase list ---------------------------------------------------------------------------


@dataclass
class JobInputs:
    train: TrainSettings
    splits: Splits
    target: ModelSettings
    optimizer: ModelSettings
    env: EnvSettings
    skill_text: str


def build_job(
    name: str,
    overrides: Mapping[str, Checked],
    inputs: JobInputs,
    diagnostics: list[Diagnostic],
    job_block: Resolved,
) -> Job:
    train, splits = inputs.train, inputs.splits
    gate_items = _gate_items(train, splits)
    if len(gate_items) < NOISY_GATE:
        diagnostics.append(_noisy_gate(train, len(gate_items), job_block))
    steps_per_epoch = max(1, math.ceil(len(splits.train) / train.batch_size)) if splits.train else 0
    total = steps_per_epoch * train.epochs
    lr_kind, lr_args = _schedule(job_block, overrides)
    rates = learning_rates(lr_kind, lr_args, total)
    tokens = TokenModel(
        inputs.target, inputs.optimizer, inputs.skill_text, inputs.env.answer_format, train.prompts
    )
    phase_list = _phases(train, splits, gate_items, rates, steps_per_epoch, tokens)
    role_calls = [(p.phase, rc) for p in phase_list for rc in p.calls]
    counters = {
        inputs.target.name: tokens.target_counter,
        inputs.optimizer.name: tokens.optimizer_counter,
    }
    models = {inputs.target.name: inputs.target, inputs.optimizer.name: inputs.optimizer}
    return Job(
        name=name,
        overrides={k: show(v) for k, v in overrides.items()},
        train=train,
        splits=SplitSizes(train=len(splits.train), valid=len(splits.valid), test=len(splits.test)),
        assignment_hash=assignment_hash(
            {"train": splits.train, "valid": splits.valid, "test": splits.test}
        ),
        schedule=Schedule(steps_per_epoch=steps_per_epoch, total_steps=total, lr=rates),
        phases=phase_list,
        totals=phase_totals(role_calls),
        models=model_costs([rc for _, rc in role_calls], models, counters),
        verdict=None,
    )


def _schedule(job_block: Resolved, overrides: Mapping[str, Checked]) -> tuple[str, dict[str, int]]:
    lr = overrides.get("lr", job_block.values["lr"])
    assert isinstance(lr, Func)
    return lr.name, {k: int(v) for k, v in lr.args.items() if isinstance(v, int)}


def _gate_items(train: TrainSettings, splits: Splits) -> list[Item]:
    items = splits.get(train.gate.split)
    return items[: train.gate.samples] if train.gate.samples else items


def _noisy_gate(train: TrainSettings, size: int, job_block: Resolved) -> Diagnostic:
    gate = job_block.children["gate"]
    where = gate.span_of("split") if gate.written("split") else job_block.block.kind.span
    return warning(
        f"the gate scores {size} {train.gate.split} items: gate decisions will be noisy",
        where,
        f"fewer than {NOISY_GATE} items",
        help="raise gate samples" if train.gate.samples else "give the split more items",
    )


def _phases(
    train: TrainSettings,
    splits: Splits,
    gate_items: list[Item],
    rates: list[int | None],
    steps_per_epoch: int,
    tokens: TokenModel,
) -> list[Phase]:
    gate_calls = len(gate_items) * train.gate.repeats
    gate_split = train.gate.split
    answer = tokens.expected_answer(splits.train or gate_items)
    out: list[Phase] = [
        Baseline(
            epoch=0,
            step=0,
            split=gate_split,
            items=len(gate_items),
            repeats=train.gate.repeats,
            calls=[tokens.target_calls(P.baseline_calls(gate_calls), gate_items, answer)],
        )
    ]
    step = 0
    for epoch in range(1, train.epochs + 1):
        if epoch > 1:
            out += _boundary(train, splits, epoch, step + 1, gate_items, gate_calls, tokens, answer)
        order = epoch_order(splits.train, train.seed, epoch)
        start = 0
        for size in batches(len(order), train.batch_size)[:steps_per_epoch]:
            step += 1
            batch = order[start : start + size]
            start += size
            out += _step(
                train, epoch, step, batch, rates[step - 1], gate_items, gate_calls, tokens, answer
            )
    if train.test:
        out.append(
            FinalTest(
                epoch=train.epochs + 1,
                step=step + 1,
                items=len(splits.test),
                calls=[
                    tokens.target_calls(P.final_test_calls(len(splits.test)), splits.test, answer)
                ],
            )
        )
    return out


def _step(
    train: TrainSettings,
    epoch: int,
    step: int,
    batch: list[Item],
    lr: int | None,
    gate_items: list[Item],
    gate_calls: int,
    tokens: TokenModel,
    answer: int,
) -> list[Phase]:
    shape = P.StepShape(
        trajectories=len(batch) * train.rollouts,
        minibatch=train.minibatch,
        merge_batch=train.merge_batch,
        reflect_successes=train.reflect == "all",
        mode=train.mode,
        autonomous=lr is None,
        gate_calls=gate_calls,
    )
    calls = P.explain_step(shape)
    trajectory = (
        sum(tokens.item_tokens(i) for i in batch) / max(1, len(batch)) + answer,
        tokens.target.max_tokens + max((tokens.item_tokens(i) for i in batch), default=0),
    )
    per_reflect = min(train.minibatch, shape.trajectories)
    opt_out = (tokens.expected_output("reflect"), tokens.optimizer.max_tokens)
    at = {"epoch": epoch, "step": step}
    return [
        Rollout(
            **at,
            items=len(batch),
            rollouts=train.rollouts,
            calls=[tokens.target_calls(calls["rollout", "target"], batch, answer)],
        ),
        Reflect(
            **at,
            trajectories=shape.trajectories,
            minibatch=train.minibatch,
            reflect=train.reflect,
            calls=[
                tokens.optimizer_calls(
                    "reflect",
                    calls["reflect", "optimizer"],
                    (per_reflect * trajectory[0], per_reflect * trajectory[1]),
                )
            ],
        ),
        Aggregate(
            **at,
            merge_batch=train.merge_batch,
            calls=[
                tokens.optimizer_calls(
                    "aggregate",
                    calls["aggregate", "optimizer"],
                    (train.merge_batch * opt_out[0], train.merge_batch * opt_out[1]),
                )
            ],
        ),
        Select(
            **at,
            lr=lr,
            calls=[
                tokens.optimizer_calls(
                    "select",
                    calls["select", "optimizer"],
                    (tokens.expected_output("aggregate"), tokens.optimizer.max_tokens),
                )
            ],
        ),
        Update(
            **at,
            mode=train.mode,
            calls=[
                tokens.optimizer_calls(
                    "update",
                    calls["update", "optimizer"],
                    (tokens.expected_output("select"), tokens.optimizer.max_tokens),
                )
            ],
        ),
        Gate(
            **at,
            split=train.gate.split,
            items=len(gate_items),
            repeats=train.gate.repeats,
            calls=[tokens.target_calls(calls["gate", "target"], gate_items, answer)],
        ),
    ]


def _boundary(
    train: TrainSettings,
    splits: Splits,
    epoch: int,
    step: int,
    gate_items: list[Item],
    gate_calls: int,
    tokens: TokenModel,
    answer: int,
) -> list[Phase]:
    out: list[Phase] = []
    slow = train.slow_update
    if slow is not None:
        samples = splits.get(slow.split)[: slow.samples]
        calls = P.slow_update_calls(len(samples), gate_calls, slow.gate)
        sample_items = samples + samples + (gate_items if slow.gate else [])
        per_sample = sum(tokens.item_tokens(i) for i in samples) + len(samples) * answer
        evidence = (2.0 * per_sample, 2.0 * (per_sample + len(samples) * tokens.target.max_tokens))
        out.append(
            SlowUpdate(
                epoch=epoch,
                step=step,
                samples=len(samples),
                gated=slow.gate,
                calls=[
                    tokens.target_calls(calls["target"], sample_items or samples, answer),
                    tokens.optimizer_calls("slow_update", calls["optimizer"], evidence),
                ],
            )
        )
    if train.meta_skill:
        summary = 4.0 * tokens.expected_output("reflect")
        out.append(
            MetaSkill(
                epoch=epoch,
                step=step,
                calls=[
                    tokens.optimizer_calls("meta_skill", P.meta_skill_calls(), (summary, summary))
                ],
            )
        )
    return out
