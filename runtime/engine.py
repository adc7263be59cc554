"""The training loop: the plan's phases, in order, each dispatched to `visit_<phase>`.

The engine keeps the run's state (current and best skill, scores, step buffer, meta skill,
history) and writes it after every unit, so that `--resume` continues from the last finished
one; calls of an unfinished step are answered again from the response cache for free. Every
fact it learns is a typed event in the run's journal the moment it happens (runtime/events.py):
phases, proposals, candidates, gate decisions, finished steps, epoch boundaries, the test.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import asdict
from functools import cached_property

from skopt.compiler.dataset import Item, batches, epoch_order
from skopt.compiler.phases import minibatches
from skopt.compiler.plan import (
    Aggregate,
    Baseline,
    FinalTest,
    Gate,
    Job,
    MetaSkill,
    Phase,
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
from skopt.runtime.calls import gathered
from skopt.runtime.candidate import edit_record, guarded, outcomes, prompt_json, with_guidance
from skopt.runtime.edit_checks import Finding
from skopt.runtime.edits import Edit, SizeLimit, apply_edits
from skopt.runtime.errors import BudgetExhausted
from skopt.runtime.events import (
    BaselineScored,
    BudgetStop,
    CandidateBuilt,
    EarlyStop,
    EditFinding,
    EditRecord,
    EditsChecked,
    EditsProposed,
    EpochBoundary,
    EventSink,
    FinalTestScored,
    GateDecided,
    GateResult,
    ItemScores,
    PhaseFinished,
    PhaseStarted,
    StepFinished,
    StepRecord,
    StepResult,
)
from skopt.runtime.label_phrases import TrainPhrases
from skopt.runtime.merge import chunks, merge_candidates, merge_patches
from skopt.runtime.optimizer import Memory, Optimizer, Patch, Record
from skopt.runtime.scoring import Scorer, Trajectory, as_scores, skill_hash
from skopt.runtime.state import Scores, Source, State, Step, Tried
from skopt.runtime.tries import (
    NearMiss,
    counterweights,
    demonstrations,
    kept,
    left_out,
    phrase_rules,
    shared_by,
    with_near_misses,
)
from skopt.runtime.tries import Source as TrySource
from skopt.runtime.units import Units

# A sweep's early stopping, for one cell: (step, total steps, gate score) -> go on?
GoesOn = Callable[[int, int, float], Awaitable[bool]]


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
        journal: EventSink,
        stopper: GoesOn | None = None,
        input_name: str = "input",
    ) -> None:
        self.job, self.splits, self.folder = job, splits, folder
        self.input_name = input_name  # what the env's inputs are ("ticket"): rules name them
        self.stopper = stopper  # a sweep's early stopping: whether to go on after a step
        self.scorer, self.optimizer, self.leaks, self.state = scorer, optimizer, leaks, state
        self.journal = journal
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
        # Paid since the last save: calls of the unit this run resumes in, which the cache
        # answers again for free.
        paid = (self.ledger.spent.amount - self.state.spent).floor()
        await self.units.hold_final_test(self.state.next_phase, paid)
        while self.state.next_phase < len(phases):
            index = self.state.next_phase
            phase = phases[index]
            if self.units.starts(phase) and not await self._open(index):
                continue  # stopped by the budget: on to the final test
            if isinstance(phase, Rollout):
                self.step = Step(phase.step, phase.epoch)
            self.journal.emit(PhaseStarted(phase=phase.phase, step=phase.step, epoch=phase.epoch))
            await getattr(self, f"visit_{phase.phase}")(phase)
            if isinstance(phase, Reflect | Aggregate | Select | Update):
                self._step().answers += self.answers(phase.step)
            self.journal.emit(PhaseFinished(phase=phase.phase, step=phase.step, epoch=phase.epoch))
            self.state.next_phase = index + 1
            if isinstance(phase, Gate) and not await self._goes_on(phase.step):
                self._stop_early(phase.step)
            if self._finishes_unit(phase):
                self.save()
        await self.units.close()
        return self.state

    async def _open(self, index: int) -> bool:
        """Hold the budget of the unit that starts at `index`; False when it cannot be paid."""
        try:
            await self.units.open(index, self.state.baseline_s)
        except BudgetExhausted as exc:
            if isinstance(self.job.phases[index], Baseline):
                raise
            self._stop(index, exc.limit)
            return False
        return True

    def _stop(self, index: int, limit: str) -> None:
        """Record a budget stop before the step at `index` and go on to the final test."""
        phases = self.job.phases
        self.state.stopped = BudgetStop(limit=limit, before_step=phases[index].step)
        self.journal.emit(self.state.stopped)
        self.state.next_phase = next(
            (i for i, p in enumerate(phases) if isinstance(p, FinalTest)), len(phases)
        )
        self.save()

    async def _goes_on(self, step: int) -> bool:
        """Whether the early-stopping rule lets the run go on after `step` (always, alone)."""
        total = self.job.schedule.total_steps
        return self.stopper is None or await self.stopper(step, total, self.state.current_score)

    def _stop_early(self, step: int) -> None:
        """Skip the steps after `step`: on to the final test (the state is saved next)."""
        phases = self.job.phases
        self.state.stopped_early = EarlyStop(after_step=step, score=self.state.current_score)
        self.journal.emit(self.state.stopped_early)
        self.state.next_phase = next(
            (i for i, p in enumerate(phases) if isinstance(p, FinalTest)), len(phases)
        )

    def _finishes_unit(self, phase: Phase) -> bool:
        """State is saved after the baseline, each gate, each boundary phase and the test."""
        return not isinstance(phase, Rollout | Reflect | Aggregate | Select | Update)

    def save(self) -> None:
        self.state.elapsed_s = self.ledger.elapsed()  # the time budget counts every session
        self.state.spent = self.ledger.spent.amount
        write_atomic(self.folder.state, self.state.model_dump_json(indent=2) + "\n")

    # -- helpers --------------------------------------------------------------------------

    def gate_items(self) -> list[Item]:
        items = self.splits.get(self.train.gate.split)
        return items[: self.train.gate.samples] if self.train.gate.samples else items

    async def score_on_gate(self, skill: str, phase: str) -> Scores:
        trajectories = await self.scorer.rollout(
            skill, self.gate_items(), phase, self.train.gate.repeats
        )
        return as_scores(trajectories)

    def memory(self) -> Memory:
        return Memory(self.state.meta_skill, "\n".join(self.state.step_buffer[-20:]))

    def answers(self, step: int) -> list[Record]:
        """The optimizer's answers since the last call, each journaled."""
        found = list(self.optimizer.records)
        self.optimizer.records.clear()
        for r in found:
            self.journal.emit(r.event(step))
        return found

    # -- phases ---------------------------------------------------------------------------

    async def visit_baseline(self, phase: Baseline) -> None:
        s = self.state
        started = self.ledger.elapsed()
        scores = await self.score_on_gate(s.current_skill, "baseline")
        s.baseline_s = self.ledger.elapsed() - started
        s.current_scores = scores
        s.baseline_score = s.current_score = s.best_score = gating.metric(scores, self.train.gate)
        s.epoch_start_skill = s.current_skill
        self.journal.emit(
            BaselineScored(score=s.baseline_score, items={k: v[0] for k, v in scores.items()})
        )
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

    async def visit_reflect(self, phase: Reflect) -> None:
        step = self._step()
        successes = [t for t in step.trajectories if t.passed] if phase.reflect == "all" else []
        groups: list[tuple[Source, list[Trajectory]]] = [
            ("failures", g) for g in chunks(step.failures, phase.minibatch)
        ] + [("successes", g) for g in chunks(successes, phase.minibatch)]
        assert len(groups) == minibatches(len(step.failures), phase.minibatch) + minibatches(
            len(successes), phase.minibatch
        )
        skill, memory, max_edits = self.state.current_skill, self.memory(), self._max_edits()
        proposals: list[tuple[Source, list[Trajectory], list[Edit], str | None]]
        if self.train.mode == "full_rewrite":
            texts = await gathered(
                *(self.optimizer.reflect_full(skill, g, kind, memory) for kind, g in groups)
            )
            step.candidates = [t for t in texts if t]
            proposals = [(kind, g, [], text) for (kind, g), text in zip(groups, texts, strict=True)]
        else:
            patches = await gathered(
                *(self.optimizer.reflect(skill, g, kind, max_edits, memory) for kind, g in groups)
            )
            step.patches = [p for p in patches if p.edits]
            self._journal_checks(step.number)
            proposals = [
                (kind, g, p.edits, None) for (kind, g), p in zip(groups, patches, strict=True)
            ]
        for kind, group, edits, text in proposals:
            self.journal.emit(
                EditsProposed(
                    step=step.number,
                    source=kind,
                    items=[t.key for t in group],
                    edits=[edit_record(e) for e in edits],
                    rewrite=text,
                )
            )

    def _journal_checks(self, step: int) -> None:
        """The reflections' edit checks (runtime/edit_checks.py), in the order they were asked."""

        def found(findings: list[Finding]) -> list[EditFinding]:
            return [
                EditFinding(
                    edit=edit_record(f.edit), problems=list(f.problems), repairs=list(f.repairs)
                )
                for f in findings
            ]

        for c in (c for c in self.optimizer.checks if c.first):
            source: Source = "successes" if c.source == "successes" else "failures"
            second = found(c.second) if c.second is not None else None
            self.journal.emit(
                EditsChecked(
                    step=step, source=source, first=found(c.first), second=second, kept=len(c.kept)
                )
            )
        self.optimizer.checks.clear()

    def _max_edits(self) -> int:
        rates = [r for r in self.job.schedule.lr if r is not None]
        return max(rates) if rates else AUTONOMOUS_EDITS

    async def visit_aggregate(self, phase: Aggregate) -> None:
        step = self._step()
        skill, size, memory = self.state.current_skill, phase.merge_batch, self.memory()
        if self.train.mode == "full_rewrite":
            step.merged_skill = await merge_candidates(self.optimizer, skill, step.candidates, size)
            return
        merged: list[Patch] = []
        for source in ("failures", "successes"):  # apart, then together, failures first
            patches = [p for p in step.patches if p.source == source]
            one = await merge_patches(self.optimizer, skill, patches, size, memory)
            merged += [one] if one else []
        final = await merge_patches(self.optimizer, skill, merged, 2, memory)
        step.merged = final.edits if final else []

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
        step.lr = lr

    async def visit_update(self, phase: Update) -> None:
        step = self._step()
        skill = self.state.current_skill
        limit = step.limit = SizeLimit(phase.max_skill_tokens, self.skill_tokens.count)
        if phase.mode == "full_rewrite":
            step.candidate = self._guarded(skill, step.merged_skill)
        elif phase.mode == "rewrite" and step.selected:
            text = await self.optimizer.rewrite(skill, step.selected)
            step.candidate = self._guarded(skill, text)
        elif step.selected:
            applied = apply_edits(skill, step.selected, gold_answers=self.leaks, limit=limit)
            step.candidate = applied.skill
            step.outcomes = outcomes(applied)
        if step.candidate is not None and (refused := limit.refusal(step.candidate)):
            step.refused = refused  # a rewrite past the plan's bound: no candidate
            step.candidate = None
        if step.candidate == skill:
            step.candidate = None
        self.journal.emit(
            CandidateBuilt(
                step=step.number,
                lr=step.lr,
                selected=[edit_record(e) for e in step.selected],
                outcomes=step.outcomes,
                candidate=skill_hash(step.candidate) if step.candidate is not None else None,
                skill=step.candidate,
                refused=step.refused or "",
            )
        )

    def _guarded(self, skill: str, rewritten: str | None) -> str | None:
        """A rewrite past the rules every candidate passes; what they refused is recorded like
        a patch's skipped edits."""
        if not rewritten:
            return None
        applied = guarded(skill, rewritten, self.leaks)
        self._step().outcomes = outcomes(applied)
        return applied.skill

    async def visit_gate(self, phase: Gate) -> None:
        step = self._step()
        s = self.state
        decision = await self._try_candidates(step)
        # The step's own failures join the buffer only now: its reflection already saw them.
        s.step_buffer += [
            f"- failed: {t.item.input[:200]} (answered {t.answer[:80]!r})" for t in step.failures
        ][:5]
        s.version += 1
        self.folder.write_skill(s.version, s.current_skill)
        self._write_step(step, decision)
        result = StepResult(
            step=step.number,
            epoch=step.epoch,
            failures=len(step.failures),
            decision=decision,
            score=s.current_score,
            best=s.best_score,
        )
        s.history.append(result)
        self.journal.emit(StepFinished(result=result, version=s.version, skill=s.current_skill))

    async def _try_candidates(self, step: Step) -> GateResult:
        """Score the step's candidate, then the next ones (runtime/tries.py) while the gate
        rejects them, each at the confidence they share; the last decision is the step's. A
        step that accepts none keeps its best near miss for the steps after it."""
        s, tried = self.state, step.tries
        others = self._other_tries(step)
        shared = self._shared_by(step, others)
        if step.candidate is not None:
            applied = [o.edit for o in step.outcomes if o.status == "applied"]
            await self._decide(step, step.candidate, applied, "selected", step.selected, shared)
        for source, edits in self._next_tries(step, others):
            if (tried and tried[-1].decision.accepted) or len(tried) >= shared:
                break
            built = self._built(step, source, edits)
            if built is not None:
                await self._decide(step, *built, source, edits, shared)
        if not tried:
            return GateResult(accepted=False, reason="no candidate")
        last = tried[-1]
        if last.decision.accepted and last.source == "near_miss":
            s.near_misses = []  # they are in the skill now
        misses = [t for t in tried if t.decision.near_miss and t.source != "near_miss"]
        if misses and not last.decision.accepted and self.train.mode == "patch":
            best = max(misses, key=lambda t: len(t.decision.fixed) - len(t.decision.broken))
            s.near_misses = kept(
                s.near_misses,
                NearMiss(
                    step=step.number,
                    edits=best.applied,
                    fixed=list(best.decision.fixed),
                    broken=list(best.decision.broken),
                ),
            )
        return last.result

    def _other_tries(self, step: Step) -> list[tuple[TrySource, list[Edit]]]:
        """The step's candidates after its selected edits' that need no gate outcome to be
        made, as edits to the current skill: `next`, then `demonstrations`."""
        lr = step.lr if step.lr is not None else self._max_edits()
        others: list[tuple[TrySource, list[Edit]]] = []
        if self.train.mode == "patch":
            others.append(("next", left_out(step.merged, step.selected, lr)))
        if self.train.demonstrations:
            skill, labels = self.state.current_skill, self.optimizer.labels
            train, shown = self.splits.train, demonstrations(step.failures, lr, skill)
            rules = (
                phrase_rules(step.failures, self._phrases, self.input_name, skill) if labels else []
            )
            others.append(
                ("demonstrations", rules + shown + counterweights(shown, skill, train, labels))
            )
        return others

    @cached_property
    def _phrases(self) -> TrainPhrases:
        """Where each phrase of the train split occurs, for the rules (runtime/label_phrases.py)."""
        return TrainPhrases(self.splits.train)

    def _merges(self) -> bool:
        """Whether a near miss of this step can be merged with the pool's (patch mode)."""
        return self.train.mode == "patch" and bool(self.state.near_misses)

    def _shared_by(self, step: Step, others: list[tuple[TrySource, list[Edit]]]) -> int:
        """How many candidates the step can score, known before its first gate pass."""
        skill = self.state.current_skill
        made = [apply_edits(skill, e, gold_answers=self.leaks, limit=step.limit) for _, e in others]
        candidates = [step.candidate, *(m.skill for m in made)]
        return shared_by(skill, candidates, self._merges(), self.train.gate.tries)

    def _next_tries(
        self, step: Step, others: list[tuple[TrySource, list[Edit]]]
    ) -> Iterator[tuple[TrySource, list[Edit]]]:
        """The step's other candidates, as edits to the current skill, in the order tried. Read
        after each decision: the step's first near miss is followed by its edits merged with the
        pool's (once a step, in patch mode)."""
        merge = self._merges()
        for source, edits in [(None, []), *others]:  # None: the selected edits, tried already
            if source is not None:
                yield source, edits
            if merge and step.tries and step.tries[-1].decision.near_miss:
                merge = False
                yield "near_miss", with_near_misses(step.tries[-1].applied, self.state.near_misses)

    def _built(
        self, step: Step, source: TrySource, edits: list[Edit]
    ) -> tuple[str, list[EditRecord]] | None:
        """The current skill with `edits` applied, and the edits that applied, journaled; None
        when nothing new came of it (no edit applied, or a candidate this step already scored)."""
        if not edits:
            return None
        skill = self.state.current_skill
        applied = apply_edits(skill, edits, gold_answers=self.leaks, limit=step.limit)
        candidate, made = applied.skill, outcomes(applied)
        scored = {t.result.candidate for t in step.tries}
        new = candidate != skill and skill_hash(candidate) not in scored
        self.journal.emit(
            CandidateBuilt(
                step=step.number,
                lr=step.lr,
                selected=[edit_record(e) for e in edits],
                outcomes=made,
                candidate=skill_hash(candidate) if new else None,
                skill=candidate if new else None,
                source=source,
            )
        )
        return (candidate, [o.edit for o in made if o.status == "applied"]) if new else None

    async def _decide(
        self,
        step: Step,
        candidate: str,
        applied: list[EditRecord],
        source: TrySource,
        edits: list[Edit],
        shared: int,
    ) -> None:
        """Score a candidate (made by `edits`, of which `applied` applied) on the gate split,
        accept or reject it at the confidence `shared` candidates share, and add it to the
        step's tries."""
        s = self.state
        scores = await self.score_on_gate(candidate, "gate")
        verdict = gating.decide(s.current_scores, scores, self.train.gate, shared)
        decision = verdict.result(skill_hash(candidate), source, shared)
        step.tries.append(Tried(verdict, decision, source, applied))
        items = {
            key: ItemScores(before=s.current_scores.get(key, (0.0, 0.0))[0], after=hard)
            for key, (hard, _) in scores.items()
        }
        self.journal.emit(GateDecided(step=step.number, decision=decision, items=items))
        records = [edit_record(e) for e in edits]
        if verdict.accepted:
            self._accept(candidate, scores, verdict.after)
            s.accepted_edits += records
        else:
            s.rejected_edits += records
            s.step_buffer += [
                f"- rejected ({verdict.before:.3f} -> {verdict.after:.3f}): {e.content[:160]}"
                for e in edits
            ]

    def _write_step(self, step: Step, decision: GateResult) -> None:
        """The step's folder: its record, rollouts, candidate and optimizer answers."""
        record = StepRecord(
            step=step.number,
            epoch=step.epoch,
            items=[t.key for t in step.trajectories],
            failures=len(step.failures),
            patches=[[edit_record(e) for e in p.edits] for p in step.patches],
            merged=[edit_record(e) for e in step.merged],
            lr=step.lr,
            selected=[edit_record(e) for e in step.selected],
            outcomes=step.outcomes,
            refused=step.refused,
            decision=decision,
            tries=[t.result for t in step.tries],
        )
        folder = self.folder.step(step.number)
        write_atomic(folder / "record.json", record.model_dump_json(indent=2, exclude_none=True))
        write_json(folder / "rollouts.json", [t.record() for t in step.trajectories])
        if step.candidate is not None:
            write_atomic(folder / "candidate.md", step.candidate)
        write_json(folder / "optimizer.json", [asdict(r) for r in step.answers])

    def _accept(self, skill: str, scores: Scores, score: float) -> None:
        s = self.state
        s.current_skill, s.current_score, s.current_scores = skill, score, scores
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
        note = "" if guidance else "nothing usable"
        if candidate is not None and (refused := limit.refusal(candidate)):
            self.folder.write_step(phase.step, "slow_update_refused.json", {"reason": refused})
            note = refused
        elif candidate is not None and not phase.gated:
            s.current_skill = candidate  # force-applied; scores move with the next gate
        elif candidate is not None:
            scores = await self.score_on_gate(candidate, "slow_update")
            if gating.decide(s.current_scores, scores, self.train.gate).accepted:
                self._accept(candidate, scores, gating.metric(scores, self.train.gate))
            else:
                note = "rejected by the gate"
        self._boundary(phase, guidance, applied=candidate is not None and not note, note=note)

    def _with_guidance(self, step: int, guidance: str) -> str:
        applied = with_guidance(self.state.current_skill, guidance, self.leaks)
        refused = [o.model_dump() for o in outcomes(applied)]
        self.folder.write_step(step, "slow_update_outcomes.json", refused)
        return applied.skill

    async def visit_meta_skill(self, phase: MetaSkill) -> None:
        s = self.state
        history = {
            "accepted": [prompt_json(r) for r in s.accepted_edits],
            "rejected": [prompt_json(r) for r in s.rejected_edits],
            "scores": [h.score for h in s.history[-self.job.schedule.steps_per_epoch :]],
        }
        written = await self.optimizer.meta_skill(history, s.meta_skill)
        s.meta_skill = written or s.meta_skill
        self._boundary(phase, written, applied=written is not None)

    def _boundary(
        self, phase: SlowUpdate | MetaSkill, text: str | None, applied: bool, note: str = ""
    ) -> None:
        """Journal what a boundary phase produced; its optimizer answers go with the step it
        precedes."""
        answers = self.answers(phase.step)
        self.folder.write_step(phase.step, f"{phase.phase}.json", [asdict(r) for r in answers])
        self.journal.emit(
            EpochBoundary(
                step=phase.step,
                epoch=phase.epoch,
                phase=phase.phase,
                text=text,
                applied=applied,
                note=note,
                skill=self.state.current_skill,
            )
        )

    def _new_epoch(self) -> None:
        """The step buffer and the epoch's log start empty; slow update compares from here."""
        s = self.state
        s.epoch_start_skill = s.current_skill
        s.step_buffer, s.accepted_edits, s.rejected_edits = [], [], []

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
        self.journal.emit(
            FinalTestScored(initial=s.test["initial"], best=s.test["best"], items=len(test))
        )

    def _step(self) -> Step:
        assert self.step is not None
        return self.step


def _by_support(edits: list[Edit]) -> list[Edit]:
    return sorted(edits, key=lambda e: -e.support)


def _mean(trajectories: list[Trajectory]) -> float:
    return sum(t.hard for t in trajectories) / len(trajectories) if trajectories else 0.0
