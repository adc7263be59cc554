"""The training loop: the plan's phases, in order, each dispatched to `visit_<phase>`.

The engine keeps the run's state (current and best skill, scores, step buffer, meta skill,
history) and writes it after every step, so that `--resume` continues from the last finished
step; calls of an unfinished step are answered again from the response cache for free.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from skopt.compiler.dataset import Item, batches, epoch_order
from skopt.compiler.phases import minibatches
from skopt.compiler.plan import (
    Aggregate,
    Baseline,
    FinalTest,
    Gate,
    Job,
    MetaSkill,
    Reflect,
    Rollout,
    Select,
    SlowUpdate,
    Update,
)
from skopt.compiler.skill_size import AUTONOMOUS_EDITS
from skopt.compiler.splits import Splits
from skopt.compiler.tokens import counter_for
from skopt.runtime import gate as gating
from skopt.runtime.artifacts import RunFolder, write_atomic, write_json
from skopt.runtime.edits import (
    SLOW_UPDATE,
    Applied,
    Edit,
    SizeLimit,
    apply_edits,
    find_regions,
    replace_region,
    without_leaks,
)
from skopt.runtime.errors import BudgetExhausted
from skopt.runtime.merge import chunks, merge_candidates, merge_patches
from skopt.runtime.optimizer import Memory, Optimizer, Patch, edit_json
from skopt.runtime.scoring import Scorer, Trajectory, as_scores, skill_hash
from skopt.runtime.units import Units


@dataclass
class State:
    """Everything needed to continue a run after its last finished step."""

    next_phase: int = 0
    version: int = 0
    initial_skill: str = ""
    current_skill: str = ""
    best_skill: str = ""
    baseline_score: float = 0.0
    current_score: float = 0.0
    best_score: float = 0.0
    current_scores: dict[str, list[float]] = field(default_factory=dict)
    epoch_start_skill: str = ""
    step_buffer: list[str] = field(default_factory=list)
    meta_skill: str = ""
    epoch_log: dict[str, list[Any]] = field(
        default_factory=lambda: {"accepted": [], "rejected": []}
    )
    history: list[dict[str, Any]] = field(default_factory=list)
    test: dict[str, float] = field(default_factory=dict)
    stopped: dict[str, Any] | None = None  # a budget stop: which limit, before which step
    elapsed_s: float = 0.0
    baseline_s: float = 0.0  # how long the baseline took: the pace a time budget plans with


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
    selected: list[Edit] = field(default_factory=list)
    candidate: str | None = None
    record: dict[str, Any] = field(default_factory=dict)


class Engine:
    def __init__(
        self,
        job: Job,
        splits: Splits,
        folder: RunFolder,
        scorer: Scorer,
        optimizer: Optimizer,
        leaks: set[str],
        state: State,
        on_step: Callable[[dict[str, Any], int], None] | None = None,
    ) -> None:
        self.on_step = on_step
        self.job, self.splits, self.folder = job, splits, folder
        self.scorer, self.optimizer, self.leaks, self.state = scorer, optimizer, leaks, state
        self.train = job.train
        self.ledger = scorer.layer.ledger
        self.models = dict(scorer.layer.models)
        self.step: Step | None = None
        self.units = Units(job, self.ledger, self.models)
        target = self.models[self.train.target]
        self.skill_tokens = counter_for(target.provider, target.model)  # as the plan counts

    async def run(self) -> State:
        """Visit the phases from where the state stands. A step that the rest of the budget
        cannot pay is not started: the run goes on to the final test, whose worst case was
        held from the start, and records why it stopped."""
        phases = self.job.phases
        self.units.hold_final_test(self.state.next_phase)
        while self.state.next_phase < len(phases):
            index = self.state.next_phase
            phase = phases[index]
            if self.units.starts(phase) and not self._open(index):
                continue  # stopped by the budget: on to the final test
            if isinstance(phase, Rollout):
                self.step = Step(phase.step, phase.epoch)
            await getattr(self, f"visit_{phase.phase}")(phase)
            self.state.next_phase = index + 1
            if self._finishes_unit(index):
                self.save()
        self.units.close()
        return self.state

    def _open(self, index: int) -> bool:
        """Hold the budget of the unit that starts at `index`; False when it cannot be paid."""
        try:
            self.units.open(index, self.state.baseline_s)
        except BudgetExhausted as exc:
            if isinstance(self.job.phases[index], Baseline):
                raise
            self._stop(index, exc.limit)
            return False
        return True

    def _stop(self, index: int, limit: str) -> None:
        """Record a budget stop before the step at `index` and go on to the final test."""
        phases = self.job.phases
        self.state.stopped = {"limit": limit, "before_step": phases[index].step}
        self.state.next_phase = next(
            (i for i, p in enumerate(phases) if isinstance(p, FinalTest)), len(phases)
        )
        self.save()

    def _finishes_unit(self, index: int) -> bool:
        """State is saved after the baseline, each gate, each boundary phase and the test."""
        return not isinstance(
            self.job.phases[index], Rollout | Reflect | Aggregate | Select | Update
        )

    def save(self) -> None:
        self.state.elapsed_s = self.ledger.elapsed()  # the time budget counts every session
        write_json(self.folder.state, asdict(self.state))

    # -- scoring helpers ------------------------------------------------------------------

    def gate_items(self) -> list[Item]:
        items = self.splits.get(self.train.gate.split)
        return items[: self.train.gate.samples] if self.train.gate.samples else items

    async def score_on_gate(self, skill: str, phase: str) -> dict[str, tuple[float, float]]:
        trajectories = await self.scorer.rollout(
            skill, self.gate_items(), phase, self.train.gate.repeats
        )
        return as_scores(trajectories)

    def memory(self) -> Memory:
        return Memory(self.state.meta_skill, "\n".join(self.state.step_buffer[-20:]))

    # -- phases ---------------------------------------------------------------------------

    async def visit_baseline(self, phase: Baseline) -> None:
        s = self.state
        started = self.ledger.elapsed()
        scores = await self.score_on_gate(s.current_skill, "baseline")
        s.baseline_s = self.ledger.elapsed() - started
        s.current_scores = {k: list(v) for k, v in scores.items()}
        s.baseline_score = s.current_score = s.best_score = gating.metric(scores, self.train.gate)
        s.epoch_start_skill = s.current_skill
        self.folder.write_skill(0, s.current_skill)
        self.folder.write_best(s.best_skill)

    async def visit_rollout(self, phase: Rollout) -> None:
        step = self._step()
        order = epoch_order(self.splits.train, self.train.seed, phase.epoch)
        in_epoch = phase.step - (phase.epoch - 1) * self.job.schedule.steps_per_epoch
        if in_epoch == 1 and phase.epoch > 1:
            self._new_epoch()
        start = sum(batches(len(order), self.train.batch_size)[: in_epoch - 1])
        batch = order[start : start + phase.items]
        step.trajectories = await self.scorer.rollout(
            self.state.current_skill, batch, "rollout", phase.rollouts, remember=False
        )
        failed = [t for t in step.trajectories if not t.passed]
        step.record = {
            "step": phase.step,
            "epoch": phase.epoch,
            "items": [t.key for t in step.trajectories],
            "failures": len(failed),
        }

    async def visit_reflect(self, phase: Reflect) -> None:
        step = self._step()
        failures = [t for t in step.trajectories if not t.passed]
        successes = [t for t in step.trajectories if t.passed] if phase.reflect == "all" else []
        groups = [("failures", g) for g in chunks(failures, phase.minibatch)] + [
            ("successes", g) for g in chunks(successes, phase.minibatch)
        ]
        assert len(groups) == minibatches(len(failures), phase.minibatch) + minibatches(
            len(successes), phase.minibatch
        )
        skill, memory, max_edits = self.state.current_skill, self.memory(), self._max_edits()
        if self.train.mode == "full_rewrite":
            texts = await asyncio.gather(
                *(self.optimizer.reflect_full(skill, g, kind, memory) for kind, g in groups)
            )
            step.candidates = [t for t in texts if t]
        else:
            patches = await asyncio.gather(
                *(self.optimizer.reflect(skill, g, kind, max_edits, memory) for kind, g in groups)
            )
            step.patches = [p for p in patches if p.edits]
        step.record["patches"] = [[edit_json(e) for e in p.edits] for p in step.patches]

    def _max_edits(self) -> int:
        rates = [r for r in self.job.schedule.lr if r is not None]
        return max(rates) if rates else AUTONOMOUS_EDITS

    async def visit_aggregate(self, phase: Aggregate) -> None:
        step = self._step()
        skill, size, memory = self.state.current_skill, phase.merge_batch, self.memory()
        if self.train.mode == "full_rewrite":
            step.merged_skill = await merge_candidates(self.optimizer, skill, step.candidates, size)
            return
        merged = []
        for source in ("failures", "successes"):  # apart, then together, failures first
            patches = [p for p in step.patches if p.source == source]
            merged += (
                [m]
                if (m := await merge_patches(self.optimizer, skill, patches, size, memory))
                else []
            )
        final = await merge_patches(self.optimizer, skill, merged, 2, memory)
        step.merged = final.edits if final else []
        step.record["merged"] = [edit_json(e) for e in step.merged]

    async def visit_select(self, phase: Select) -> None:
        step = self._step()
        edits = step.merged
        if not edits or self.train.mode == "full_rewrite":
            step.selected = edits
            return
        lr = phase.lr
        if lr is None:
            chosen = await self.optimizer.learning_rate(
                self.state.current_skill, edits, self.memory()
            )
            lr = chosen if chosen is not None else 0
        if lr == 0:
            step.selected = []
        elif len(edits) > lr:
            picked = await self.optimizer.select(self.state.current_skill, edits, lr, self.memory())
            step.selected = [edits[i] for i in picked] if picked else _by_support(edits)[:lr]
        else:
            step.selected = list(edits)
        step.record["lr"] = lr
        step.record["selected"] = [edit_json(e) for e in step.selected]

    async def visit_update(self, phase: Update) -> None:
        step = self._step()
        skill = self.state.current_skill
        limit = SizeLimit(phase.max_skill_tokens, self.skill_tokens.count)
        if phase.mode == "full_rewrite":
            step.candidate = self._guarded(skill, _keep_regions(skill, step.merged_skill))
        elif phase.mode == "rewrite" and step.selected:
            text = await self.optimizer.rewrite(skill, step.selected)
            step.candidate = self._guarded(skill, _keep_regions(skill, text))
        elif step.selected:
            applied = apply_edits(skill, step.selected, gold_answers=self.leaks, limit=limit)
            step.candidate = applied.skill
            step.record["outcomes"] = _outcomes(applied)
        if step.candidate is not None and (refused := limit.refusal(step.candidate)):
            step.record["refused"] = refused  # a rewrite past the plan's bound: no candidate
            step.candidate = None
        if step.candidate == skill:
            step.candidate = None

    def _guarded(self, skill: str, rewritten: str | None) -> str | None:
        """A rewritten skill less the lines that would leak a gold answer (the leakage guard
        of patches, for whole skills); what was refused is recorded like a patch's edits."""
        if not rewritten:
            return None
        guarded = without_leaks(skill, rewritten, self.leaks)
        self._step().record["outcomes"] = _outcomes(guarded)
        return guarded.skill

    async def visit_gate(self, phase: Gate) -> None:
        step = self._step()
        s = self.state
        if step.candidate is None:
            step.record["decision"] = {"accepted": False, "reason": "no candidate"}
        else:
            scores = await self.score_on_gate(step.candidate, "gate")
            current = {k: (v[0], v[1]) for k, v in s.current_scores.items()}
            decision = gating.decide(current, scores, self.train.gate)
            step.record["decision"] = asdict(decision) | {"candidate": skill_hash(step.candidate)}
            if decision.accepted:
                self._accept(step.candidate, scores, decision.after)
                s.epoch_log["accepted"] += [edit_json(e) for e in step.selected]
            else:
                s.epoch_log["rejected"] += [edit_json(e) for e in step.selected]
                s.step_buffer += [
                    f"- rejected ({decision.before:.3f} -> {decision.after:.3f}): {e.content[:160]}"
                    for e in step.selected
                ]
        # The step's own failures join the buffer only now: its reflection already saw them.
        s.step_buffer += [
            f"- failed: {t.item.input[:200]} (answered {t.answer[:80]!r})"
            for t in step.trajectories
            if not t.passed
        ][:5]
        s.version += 1
        self.folder.write_skill(s.version, s.current_skill)
        self.folder.write_step(phase.step, "record.json", step.record)
        self.folder.write_step(
            phase.step, "rollouts.json", [_trajectory(t) for t in step.trajectories]
        )
        if step.candidate is not None:
            write_atomic(self.folder.step(phase.step) / "candidate.md", step.candidate)
        self.folder.write_step(
            phase.step, "optimizer.json", [asdict(r) for r in self.optimizer.records]
        )
        self.optimizer.records.clear()
        s.history.append(
            {k: step.record[k] for k in ("step", "epoch", "failures") if k in step.record}
            | {"decision": step.record["decision"], "score": s.current_score, "best": s.best_score}
        )
        if self.on_step:
            self.on_step(s.history[-1], self.job.schedule.total_steps)

    def _accept(self, skill: str, scores: dict[str, tuple[float, float]], score: float) -> None:
        s = self.state
        s.current_skill, s.current_score = skill, score
        s.current_scores = {k: list(v) for k, v in scores.items()}
        if score > s.best_score:
            s.best_skill, s.best_score = skill, score
            self.folder.write_best(skill)

    async def visit_slow_update(self, phase: SlowUpdate) -> None:
        s = self.state
        slow = self.train.slow_update
        assert slow is not None
        samples = self.splits.get(slow.split)[: phase.samples]
        before = await self.scorer.rollout(s.epoch_start_skill, samples, "slow_update")
        after = await self.scorer.rollout(s.current_skill, samples, "slow_update")
        pairs = [
            {
                "input": b.item.input,
                "expected": list(b.item.answers),
                "before": {"output": b.output, "score": b.hard},
                "after": {"output": a.output, "score": a.hard},
            }
            for b, a in zip(before, after, strict=True)
        ]
        guidance = await self.optimizer.slow_update(s.current_skill, pairs)
        candidate = self._with_guidance(phase.step, guidance) if guidance else None
        limit = SizeLimit(phase.max_skill_tokens, self.skill_tokens.count)
        if candidate is not None and (refused := limit.refusal(candidate)):
            self.folder.write_step(phase.step, "slow_update_refused.json", {"reason": refused})
        elif candidate is not None:
            if not phase.gated:
                s.current_skill = candidate  # force-applied; scores move with the next gate
            else:
                scores = await self.score_on_gate(candidate, "slow_update")
                current = {k: (v[0], v[1]) for k, v in s.current_scores.items()}
                if gating.decide(current, scores, self.train.gate).accepted:
                    self._accept(candidate, scores, gating.metric(scores, self.train.gate))
        self._boundary_records(phase)

    def _with_guidance(self, step: int, guidance: str) -> str:
        """The current skill with `guidance` in its protected region, past the leakage guard:
        slow update may compare on the valid split, whose answers the guidance must not copy."""
        skill = self.state.current_skill
        guarded = without_leaks(skill, replace_region(skill, SLOW_UPDATE, guidance), self.leaks)
        self.folder.write_step(step, "slow_update_outcomes.json", _outcomes(guarded))
        return guarded.skill

    async def visit_meta_skill(self, phase: MetaSkill) -> None:
        s = self.state
        history = {
            "accepted": s.epoch_log["accepted"],
            "rejected": s.epoch_log["rejected"],
            "scores": [h["score"] for h in s.history[-self.job.schedule.steps_per_epoch :]],
        }
        s.meta_skill = await self.optimizer.meta_skill(history, s.meta_skill) or s.meta_skill
        self._boundary_records(phase)

    def _boundary_records(self, phase: SlowUpdate | MetaSkill) -> None:
        """The boundary's optimizer calls, kept with the step they precede."""
        records = [asdict(r) for r in self.optimizer.records]
        self.folder.write_step(phase.step, f"{phase.phase}.json", records)
        self.optimizer.records.clear()

    def _new_epoch(self) -> None:
        """The step buffer and the epoch's log start empty; slow update compares from here."""
        s = self.state
        s.epoch_start_skill = s.current_skill
        s.step_buffer = []
        s.epoch_log = {"accepted": [], "rejected": []}

    async def visit_final_test(self, phase: FinalTest) -> None:
        s = self.state
        test = self.splits.test
        initial = await self.scorer.rollout(s.initial_skill, test, "final_test")
        best = (
            initial
            if s.best_skill == s.initial_skill
            else await self.scorer.rollout(s.best_skill, test, "final_test")
        )
        s.test = {"initial": _mean(initial), "best": _mean(best)}

    def _step(self) -> Step:
        assert self.step is not None
        return self.step


def _outcomes(applied: Applied) -> list[dict[str, Any]]:
    return [
        {"edit": edit_json(o.edit), "status": o.status, "reason": o.reason}
        for o in applied.outcomes
    ]


def _by_support(edits: list[Edit]) -> list[Edit]:
    return sorted(edits, key=lambda e: -e.support)


def _keep_regions(old: str, new: str | None) -> str | None:
    """A rewritten skill keeps the protected slow-update region of the old one, verbatim."""
    if new is None:
        return None
    regions = [r for r in find_regions(old) if r.name == SLOW_UPDATE]
    return (
        replace_region(new, SLOW_UPDATE, old[regions[0].body_start : regions[0].body_end])
        if regions
        else new
    )


def _trajectory(t: Trajectory) -> dict[str, Any]:
    return {
        "item": t.item.id,
        "repeat": t.repeat,
        "output": t.output,
        "answer": t.answer,
        "hard": t.hard,
        "soft": t.soft,
    }


def _mean(trajectories: list[Trajectory]) -> float:
    return sum(t.hard for t in trajectories) / len(trajectories) if trajectories else 0.0
