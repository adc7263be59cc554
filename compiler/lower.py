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

from skopt.compiler import phases as P
from skopt.compiler.check import Resolved
from skopt.compiler.cost import TokenModel, combined, model_costs, phase_totals
from skopt.compiler.dataset import (
    DataError,
    Item,
    assignment_hash,
    batches,
    epoch_order,
)
from skopt.compiler.gate_bound import fewest_fixes, stated
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
    PhaseName,
    Reflect,
    RoleCalls,
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
from skopt.compiler.skill_size import INITIAL, Growth, SkillSize
from skopt.compiler.splits import Splits
from skopt.compiler.types import Checked, Func
from skopt.grammar.source import Diagnostic, error, warning

NOISY_GATE = 10
MAX_STEPS = 10_000  # far beyond any real run; keeps a typo (epochs = 10000) from a long plan


def total_steps(train: TrainSettings, splits: Splits) -> int:
    return steps_per_epoch(train, splits) * train.epochs


def steps_per_epoch(train: TrainSettings, splits: Splits) -> int:
    return math.ceil(len(splits.train) / train.batch_size)


def too_many_steps(train: TrainSettings, splits: Splits, job_block: Resolved) -> Diagnostic:
    where = job_block.span_of("epochs")
    steps = total_steps(train, splits)
    return error(
        f"the plan would have {steps:_} steps; skopt plans at most {MAX_STEPS:_}",
        where,
        "too many steps",
        help="fewer epochs, a larger batch_size, or limit { train = N } in the env",
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
    if fewest_fixes(train.gate.confidence, train.gate.tries) > len(gate_items):
        diagnostics.append(_deaf_gate(train, len(gate_items), job_block))
    per_epoch = steps_per_epoch(train, splits)
    total = per_epoch * train.epochs
    lr_kind, lr_args = _schedule(job_block, overrides)
    rates = learning_rates(lr_kind, lr_args, total)
    env = inputs.env
    tokens = TokenModel(
        inputs.target,
        inputs.optimizer,
        inputs.skill_text,
        env.answer_format,
        train.prompts,
        env.prompt,
    )
    phase_list = _phases(train, splits, gate_items, rates, per_epoch, tokens)
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
        schedule=Schedule(steps_per_epoch=per_epoch, total_steps=total, lr=rates),
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


def _deaf_gate(train: TrainSettings, size: int, job_block: Resolved) -> Diagnostic:
    gate = job_block.children["gate"]
    g = train.gate
    where = gate.span_of("confidence") if gate.written("confidence") else job_block.block.kind.span
    return warning(
        f"the gate can accept no candidate: at {stated(g.confidence, g.tries)} it needs "
        f"{fewest_fixes(g.confidence, g.tries)} items fixed with none broken, "
        f"and it scores {size}",
        where,
        "no step can be accepted",
        help="give the gate more items, lower gate confidence (0% turns the test off), "
        "or lower gate tries",
    )


def _phases(
    train: TrainSettings,
    splits: Splits,
    gate_items: list[Item],
    rates: list[int | None],
    steps_per_epoch: int,
    tokens: TokenModel,
) -> list[Phase]:
    write = _PhaseWriter(train, splits, gate_items, tokens)
    out: list[Phase] = [write.baseline()]
    step = 0
    for epoch in range(1, train.epochs + 1):
        if epoch > 1:
            out += write.boundary(epoch, step + 1)
        order = epoch_order(splits.train, train.seed, epoch)
        start = 0
        for size in batches(len(order), train.batch_size)[:steps_per_epoch]:
            step += 1
            out += write.step(epoch, step, order[start : start + size], rates[step - 1])
            start += size
    if train.test:
        out.append(write.final_test(train.epochs + 1, step + 1))
    return out


class _PhaseWriter:
    """Builds each typed phase with its calls per role: counts from `phases`, tokens from `cost`,
    the skill's size (what every call carries) from `skill_size`, step by step."""

    def __init__(
        self, train: TrainSettings, splits: Splits, gate_items: list[Item], tokens: TokenModel
    ) -> None:
        self.train, self.splits, self.gate_items, self.tokens = train, splits, gate_items, tokens
        self.gate_calls = len(gate_items) * train.gate.repeats
        self.answer = tokens.expected_answer(splits.train or gate_items)
        self.growth = Growth(
            initial=tokens.target_skill_tokens,
            reply=tokens.optimizer.max_tokens,
            mode=train.mode,
            slow_update=train.slow_update is not None,
        )
        self.skill = INITIAL  # the size of the current skill, as of the phase being written

    def _target(
        self, calls: P.Span3, items: list[Item], skill: SkillSize | None = None
    ) -> RoleCalls:
        size = self.skill if skill is None else skill
        return self.tokens.target_calls(calls, items, self.answer, size)

    def _most(self, skill: SkillSize) -> int:
        return skill.high(self.tokens.target_skill_tokens)

    def baseline(self) -> Phase:
        gate = self.train.gate
        calls = P.baseline_calls(self.gate_calls)
        return Baseline(
            epoch=0,
            step=0,
            split=gate.split,
            items=len(self.gate_items),
            repeats=gate.repeats,
            calls=[self._target(calls, self.gate_items)],
        )

    def step(self, epoch: int, step: int, batch: list[Item], lr: int | None) -> list[Phase]:
        t = self.train
        shape = P.StepShape(
            trajectories=len(batch) * t.rollouts,
            minibatch=t.minibatch,
            merge_batch=t.merge_batch,
            reflect_successes=t.reflect == "all",
            mode=t.mode,
            autonomous=lr is None,
            gate_calls=self.gate_calls,
            tries=t.gate.tries,
            demonstrations=t.demonstrations,
        )
        calls = P.explain_step(shape)
        evidence = self.tokens.step_evidence(
            batch, self.answer, min(t.minibatch, shape.trajectories), t.merge_batch
        )
        current, candidate = self.skill, self.growth.after_step(self.skill, lr)
        self.skill = candidate

        def optimizer(phase: PhaseName) -> list[RoleCalls]:
            rc = self.tokens.optimizer_calls(
                phase, calls[phase, "optimizer"], evidence[phase], current
            )
            return [rc]

        at = {"epoch": epoch, "step": step}
        return [
            Rollout(
                **at,
                items=len(batch),
                rollouts=t.rollouts,
                calls=[self._target(calls["rollout", "target"], batch, current)],
            ),
            Reflect(
                **at,
                trajectories=shape.trajectories,
                minibatch=t.minibatch,
                reflect=t.reflect,
                calls=optimizer("reflect"),
            ),
            Aggregate(**at, merge_batch=t.merge_batch, calls=optimizer("aggregate")),
            Select(**at, lr=lr, calls=optimizer("select")),
            Update(
                **at,
                mode=t.mode,
                max_skill_tokens=self._most(candidate),
                calls=optimizer("update"),
            ),
            Gate(
                **at,
                split=t.gate.split,
                items=len(self.gate_items),
                repeats=t.gate.repeats,
                calls=[self._target(calls["gate", "target"], self.gate_items, candidate)],
            ),
        ]

    def boundary(self, epoch: int, step: int) -> list[Phase]:
        """Slow update and meta skill, before every epoch from the second on."""
        out: list[Phase] = []
        slow = self.train.slow_update
        if slow is not None:
            samples = self.splits.get(slow.split)[: slow.samples]
            calls = P.slow_update_calls(len(samples), self.gate_calls, slow.gate)
            scored = samples + samples + (self.gate_items if slow.gate else [])
            evidence = self.tokens.slow_update_evidence(samples, self.answer)
            current, guided = self.skill, self.growth.after_slow_update(self.skill)
            self.skill = guided
            out.append(
                SlowUpdate(
                    epoch=epoch,
                    step=step,
                    samples=len(samples),
                    gated=slow.gate,
                    max_skill_tokens=self._most(guided),
                    calls=[
                        # both epochs' skills, and with a gate the guided one: at most `guided`
                        self._target(calls["target"], scored, guided),
                        self.tokens.optimizer_calls(
                            "slow_update", calls["optimizer"], evidence, current
                        ),
                    ],
                )
            )
        if self.train.meta_skill:
            evidence = self.tokens.meta_skill_evidence()
            meta = self.tokens.optimizer_calls("meta_skill", P.meta_skill_calls(), evidence)
            out.append(MetaSkill(epoch=epoch, step=step, calls=[meta]))
        return out

    def final_test(self, epoch: int, step: int) -> Phase:
        """The initial skill's pass, then the best skill's (any skill the run may have made)."""
        test = self.splits.test
        calls = P.final_test_calls(len(test))
        initial = self._target(P.Span3(calls.min, calls.min, calls.min), test, INITIAL)
        best = P.Span3(0, calls.expected - calls.min, calls.max - calls.min)
        return FinalTest(
            epoch=epoch,
            step=step,
            items=len(test),
            calls=[combined(initial, self._target(best, test))],
        )
