"""One night of `skopt sleep` (SPEC §7): harvest → mine → split → replay → judge → reflect →
propose → gate, in a night folder of its own (`stage.py` stages what it found). Its phases and
their calls are the ones the plan counts (compiler/night_calls.py).

A night is one unit of the budget: its worst case (the plan's) is held before anything is asked,
and every call draws from that hold, so a night never spends past its budget. What it harvested
and mined, and the live skill it started from, are saved in its folder (redacted), so a killed
night resumes on the same tasks; every answer it had is in its response cache, so it pays for
none twice (SPEC §5.4). The journal records the night as training's does (phases, calls, the
optimizer's answers, the proposal, the candidate, the gate's decision) plus what was mined and
each task's verdict.
"""

from __future__ import annotations

import json
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import TypeAdapter

from skopt.compiler.plan import GateSettings, Plan, SleepSettings
from skopt.compiler.tokens import counter_for
from skopt.prompts import render
from skopt.runtime.artifacts import RunFolder, write_atomic
from skopt.runtime.calls import CallLayer, gathered
from skopt.runtime.candidate import edit_record, outcomes
from skopt.runtime.edits import Applied, Edit, SizeLimit
from skopt.runtime.errors import BudgetExhausted
from skopt.runtime.events import (
    CandidateBuilt,
    EditsProposed,
    EventSink,
    GateDecided,
    GateResult,
    ItemScores,
    NightMined,
    PhaseFinished,
    PhaseStarted,
    TaskJudged,
)
from skopt.runtime.gate import decide, metric
from skopt.runtime.merge import chunks
from skopt.runtime.optimizer import Record, edit_json, one_per_line, parse_edits
from skopt.runtime.request import Message, Request, Role
from skopt.runtime.scoring import skill_hash
from skopt.runtime.sleep import judge as judging
from skopt.runtime.sleep.evidence import digest, failure, task_text
from skopt.runtime.sleep.harvest import Source, harvest
from skopt.runtime.sleep.learned import with_edits
from skopt.runtime.sleep.redact import redact_text, redact_tree
from skopt.runtime.sleep.sessions import Harvest, Session
from skopt.runtime.sleep.tasks import Task, dedupe, heuristic_task, judgeable, model_tasks, split
from skopt.runtime.structured import Structured, ask_json
from skopt.runtime.units import worst

T = TypeVar("T")
TASKS = TypeAdapter(list[Task])
Skill = Literal["current", "candidate"]


@dataclass(frozen=True)
class Scored:
    task: Task
    answer: str
    verdict: judging.Verdict


@dataclass(frozen=True)
class Proposal:
    """A proposed edit (its support: how many minibatches proposed it), the failed train tasks
    it was proposed for, and whether it went into the candidate."""

    edit: Edit
    tasks: tuple[str, ...]
    status: str = "proposed"  # then "applied" or "skipped" (did not fit, or no held-out task)
    reason: str = ""  # how it was applied, or why it was skipped

    def joined(self, tasks: Sequence[str]) -> Proposal:
        support = replace(self.edit, support=self.edit.support + 1)
        return Proposal(support, tuple(dict.fromkeys([*self.tasks, *tasks])), self.status)

    def with_status(self, status: str, reason: str) -> Proposal:
        return replace(self, status=status, reason=reason)


@dataclass
class Night:
    """What a night found: its sessions, tasks, scores, proposal and the gate's decision."""

    harvest: Harvest
    tasks: list[Task]
    skill: str  # the live skill when the night started
    baseline: list[Scored]  # held-out tasks with the current skill
    train: list[Scored]
    edits: list[Proposal]  # at most lr, applied to the candidate where they fit
    candidate: str | None
    tried: list[Scored]  # held-out tasks with the candidate
    decision: GateResult


class NightRunner:
    def __init__(
        self, plan: Plan, folder: RunFolder, layer: CallLayer, journal: EventSink, memory: str = ""
    ) -> None:
        assert plan.sleep is not None
        self.memory = memory  # what earlier nights tried and their gate rejected
        self.job = plan.sleep
        self.s = self.job.settings
        self.folder, self.layer, self.journal = folder, layer, journal
        target = layer.models[self.s.target]
        bound = self.job.max_skill_tokens
        counter = counter_for(target.provider, target.model)
        self.limit = SizeLimit(bound, counter.count) if bound is not None else None

    async def run(self, now: datetime) -> Night:
        ledger = self.layer.ledger
        # A resumed night has paid for part of its worst case already (what it asks again, its
        # cache answers for free): it holds the rest.
        rest = worst(self.job.phases, self.layer.models) - ledger.spent.amount
        ledger.open = await ledger.hold(rest.floor())
        found = self.harvested(now)
        tasks = await self.phase("mine", self.mined(found))
        skill = self.base()
        held = [t for t in tasks if t.split == "holdout"]
        train = [t for t in tasks if t.split == "train"]
        answers = await self.phase("replay", self.replay(skill, [*held, *train], "replay"))
        scored = await self.phase("judge", self.judge([*held, *train], answers, "current"))
        baseline, trained = scored[: len(held)], scored[len(held) :]
        failures = [s for s in trained if not s.verdict.passed]
        proposed = await self.phase("reflect", self.reflect(skill, failures))
        candidate, applied = self.propose(skill, proposed) if held else (None, None)
        tried = await self.phase("gate", self.tried(candidate, held)) if candidate else []
        decision = self.decide(baseline, tried, candidate)
        await ledger.drop(ledger.open)
        unheld = ("skipped", "no held-out task to gate on")
        ends = (
            [(o.status, o.reason) for o in applied.outcomes]
            if applied
            else [unheld] * len(proposed)
        )
        edits = [p.with_status(*end) for p, end in zip(proposed, ends, strict=True)]
        return Night(found, tasks, skill, baseline, trained, edits, candidate, tried, decision)

    async def phase(self, name: str, work: Coroutine[object, object, T]) -> T:
        """A phase of the night, journaled; none starts once the time budget is used up."""
        try:
            await self.layer.ledger.check_time()
        except BudgetExhausted:
            work.close()  # never to run
            raise
        self.journal.emit(PhaseStarted(phase=name, step=1, epoch=1))
        result = await work
        self.journal.emit(PhaseFinished(phase=name, step=1, epoch=1))
        return result

    async def ask(self, template: str, phase: str, role: Role, **values: object) -> object:
        """An optimizer's or judge's JSON answer (asked again once when unusable), journaled."""
        model = self.s.judge.model if role == "judge" else self.s.optimizer
        assert model is not None
        prompt = render(template, None, **values)
        request = Request(model, (Message("user", prompt),), role, phase)
        answer: Structured = await ask_json(self.layer, request)
        task = template.removesuffix(".j2")
        raw = tuple(redact_text(a) for a in answer.answers)  # a model may repeat a secret
        usable = answer.value is not None
        record = Record(task, usable, answer.repaired, answer.reasked, answer.problem, raw)
        self.journal.emit(record.event(1))
        return redact_tree(answer.value)

    # -- harvest and mine: saved in the folder, so that a resumed night works on the same -----

    def harvested(self, now: datetime) -> Harvest:
        saved = self.folder.root / "sessions.json"
        if saved.is_file():
            return Harvest.model_validate_json(saved.read_text(encoding="utf-8"))
        found = sessions_to_mine(self.s, now)
        write_atomic(saved, found.model_dump_json(indent=2))
        return found

    async def mined(self, found: Harvest) -> list[Task]:
        saved = self.folder.root / "tasks.json"
        if saved.is_file():
            return TASKS.validate_json(saved.read_text(encoding="utf-8"))
        per_session = await gathered(*(self.mine_one(s) for s in found.sessions))
        every = [t for tasks in per_session for t in tasks]
        kept = judgeable(dedupe(every), self.s.judge.kind)[: self.s.max_tasks]
        tasks = split(kept, self.s.holdout, self.s.seed)
        self.journal.emit(
            NightMined(
                sessions=len(found.sessions),
                skipped=found.skipped.counts,
                mined=len(every),
                kept=len(tasks),
                holdout=sum(t.split == "holdout" for t in tasks),
            )
        )
        write_atomic(saved, TASKS.dump_json(tasks, indent=2).decode())
        return tasks

    async def mine_one(self, session: Session) -> list[Task]:
        """The optimizer's tasks for a session, or the heuristic one when it gave none."""
        value = await self.ask("sleep_mine.j2", "mine", "optimizer", session=digest(session))
        fallback = heuristic_task(session)
        return model_tasks(value, session) or ([fallback] if fallback else [])

    def base(self) -> str:
        """The live skill as the night found it (saved: a resumed night starts from it)."""
        saved = self.folder.root / "base.md"
        if not saved.is_file():
            write_atomic(saved, Path(self.s.skill).read_text(encoding="utf-8"))
        return saved.read_text(encoding="utf-8")

    # -- replay and judge -------------------------------------------------------------------

    async def replay(self, skill: str, tasks: Sequence[Task], phase: str) -> list[str]:
        def request(task: Task) -> Request:
            user = render("sleep_replay.j2", task=task_text(task))
            messages = (Message("system", skill), Message("user", user))
            return Request(self.s.target, messages, "target", phase)

        done = await gathered(*(self.layer.call(request(t)) for t in tasks))
        return [redact_text(c.text) for c in done]

    async def judge(
        self, tasks: Sequence[Task], answers: Sequence[str], skill: Skill
    ) -> list[Scored]:
        phase = "judge" if skill == "current" else "gate"
        pairs = list(zip(tasks, answers, strict=True))
        verdicts = await gathered(*(self.verdict(t, a, phase) for t, a in pairs))
        scored = [Scored(t, a, v) for (t, a), v in zip(pairs, verdicts, strict=True)]
        for s in scored:
            self.journal.emit(
                TaskJudged(
                    task=s.task.id,
                    split=s.task.split or "train",
                    skill=skill,
                    hard=s.verdict.hard,
                    soft=s.verdict.soft,
                    note=s.verdict.note,
                )
            )
        return scored

    async def verdict(self, task: Task, answer: str, phase: str) -> judging.Verdict:
        kind = self.s.judge.kind
        if kind == "rules":
            return judging.by_rules(task, answer)
        if kind == "exact":
            return judging.by_reference(task, answer)
        rubric = task.rubric or ""
        value = await self.ask(
            "sleep_judge.j2", phase, "judge", task=task_text(task), rubric=rubric, answer=answer
        )
        return judging.by_rubric(value) or judging.Verdict(
            0.0, 0.0, "the judge's answer was not usable"
        )

    # -- propose and gate -------------------------------------------------------------------

    async def reflect(self, skill: str, failures: Sequence[Scored]) -> list[Proposal]:
        """Edits from minibatches of failures, each with the failed tasks it was proposed for
        (the same edit from two minibatches: support 2); more than lr: the optimizer selects."""
        found: dict[tuple[str, str | None, str], Proposal] = {}
        for group in chunks(list(failures), self.s.minibatch):
            lines = "\n".join(failure(s.task, s.answer, s.verdict.note) for s in group)
            value = await self.ask(
                "sleep_reflect.j2",
                "reflect",
                "optimizer",
                skill=skill,
                failures=lines,
                lr=self.s.lr,
                memory=self.memory,
            )
            edits = parse_edits(value)[: self.s.lr]
            ids = [s.task.id for s in group]
            self.journal.emit(
                EditsProposed(
                    step=1, source="failures", items=ids, edits=[edit_record(e) for e in edits]
                )
            )
            for edit in edits:
                key = (edit.op, edit.anchor, edit.content)
                had = found.get(key)
                found[key] = had.joined(ids) if had else Proposal(edit, tuple(ids))
        proposed = list(found.values())
        if len(proposed) <= self.s.lr:
            return proposed
        return await self.select(skill, proposed)

    async def select(self, skill: str, proposed: list[Proposal]) -> list[Proposal]:
        edits = [p.edit for p in proposed]
        evidence = one_per_line({"edits": [edit_json(e, i) for i, e in enumerate(edits)]})
        value = await self.ask(
            "select.j2", "reflect", "optimizer", skill=skill, evidence=evidence, lr=self.s.lr,
            meta_skill="", step_buffer="",
        )  # fmt: skip
        chosen = value.get("selected") if isinstance(value, dict) else None
        picked = (
            [i for i in dict.fromkeys(chosen) if isinstance(i, int) and 0 <= i < len(edits)]
            if isinstance(chosen, list)
            else []
        )
        kept = [proposed[i] for i in picked[: self.s.lr]]
        return kept or sorted(proposed, key=lambda p: -p.edit.support)[: self.s.lr]

    def propose(self, skill: str, proposed: Sequence[Proposal]) -> tuple[str | None, Applied]:
        edits = [p.edit for p in proposed]
        applied = with_edits(skill, edits, self.limit)
        candidate = applied.skill if applied.skill != skill else None
        self.journal.emit(
            CandidateBuilt(
                step=1,
                lr=self.s.lr,
                selected=[edit_record(e) for e in edits],
                outcomes=outcomes(applied),
                candidate=skill_hash(candidate) if candidate else None,
                skill=candidate,
            )
        )
        return candidate, applied

    async def tried(self, candidate: str, held: Sequence[Task]) -> list[Scored]:
        answers = await self.replay(candidate, held, "gate")
        return await self.judge(held, answers, "candidate")

    def decide(
        self, baseline: Sequence[Scored], tried: Sequence[Scored], candidate: str | None
    ) -> GateResult:
        gate = GateSettings(
            split="valid",
            metric=self.s.gate.metric,
            mixed_weight=self.s.gate.mixed_weight,
            samples=None,
            repeats=1,
            no_regression=self.s.gate.no_regression,
            min_delta=self.s.gate.min_delta,
            confidence=0.0,  # a handful of held-out tasks: no_regression and review guard a night
        )
        before = {s.task.id: (s.verdict.hard, s.verdict.soft) for s in baseline}
        if candidate is None:
            if not baseline:
                return GateResult(accepted=False, reason="no held-out task to gate on")
            reason = "no candidate: no proposed edit applied"
            return GateResult(accepted=False, reason=reason, before=metric(before, gate))
        after = {s.task.id: (s.verdict.hard, s.verdict.soft) for s in tried}
        result = decide(before, after, gate).result(skill_hash(candidate))
        items = {k: ItemScores(before=before[k][0], after=after[k][0]) for k in after}
        self.journal.emit(GateDecided(step=1, decision=result, items=items))
        return result


def sessions_to_mine(s: SleepSettings, now: datetime) -> Harvest:
    """The sessions a night at `now` mines: harvested from the recipe's sources (read-only,
    redacted), the newest `max_sessions` of them."""
    found = harvest(
        [Source(source.kind, Path(source.root).expanduser()) for source in s.sources],
        project=Path(s.within) if s.within else None,
        since=since(s, now),
        kinds=tuple(s.include),
        now=now,
    )
    return found.model_copy(update={"sessions": found.sessions[-s.max_sessions :]})


def since(s: SleepSettings, now: datetime) -> datetime:
    """From when sessions are harvested: `since` ago, or since the last night (the first night
    looks back `lookback`)."""
    if s.since_s is not None:
        return now - timedelta(seconds=s.since_s)
    last = last_night(Path(s.project) / s.out)
    return last if last is not None else now - timedelta(seconds=s.lookback_s)


def last_night(staging: Path) -> datetime | None:
    """When the last staged night of this recipe harvested (`since = last`)."""
    try:
        data = json.loads((staging / "state.json").read_text(encoding="utf-8"))
        return datetime.fromisoformat(data["last_harvest"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
