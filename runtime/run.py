"""Carrying out a compiled plan's job in a run folder: a new run, or `--resume` of one.

A new run goes only into a folder that is absent or empty, and claims it (runtime/claim.py)
once its models can be reached; every session holds the folder's lock. The journal records
when each session started and how it ended (done, budget, interrupted, failed); the outcome
maps to the exit code in runtime/exits.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from skopt.compiler.plan import EnvSettings, Job, ModelSettings, Plan
from skopt.compiler.saved import PlanUnreadable, plan_text, read_plan
from skopt.compiler.splits import Splits, load_splits
from skopt.runtime.artifacts import RunFolder, read_json, write_atomic, write_json
from skopt.runtime.backends import Backend, backend_for
from skopt.runtime.cache import ResponseCache, copy_cache
from skopt.runtime.calls import CallLayer, usd
from skopt.runtime.claim import NotARunFolder, check_new, claim, locked, open_folder
from skopt.runtime.engine import Engine
from skopt.runtime.envs import EnvLoadError, env_for
from skopt.runtime.errors import (
    BudgetExhausted,
    CacheDamaged,
    CallFailed,
    LocalModelUnavailable,
    MissingKey,
    ReplayMiss,
)
from skopt.runtime.events import CallEvent, Event, JsonlSink, RunFinished, RunStarted
from skopt.runtime.exits import Exit, Outcome
from skopt.runtime.journal import read_journal
from skopt.runtime.ledger import Account, Cost, Ledger
from skopt.runtime.optimizer import Optimizer
from skopt.runtime.scoring import Scorer
from skopt.runtime.shared import Shared, paid_in
from skopt.runtime.state import State

# What ends a run as a runtime failure (exit 1): what finished stays resumable.
FAILURES: tuple[type[Exception], ...] = (
    MissingKey,
    LocalModelUnavailable,
    CacheDamaged,
    CallFailed,
    ReplayMiss,
    EnvLoadError,
)
Clock = Callable[[], float]


class Display(Protocol):
    """A live display: told every event of the journal as it is written."""

    def emit(self, event: Event) -> None: ...


class Sinks:
    """The journal and an optional live display, as one sink."""

    def __init__(self, journal: JsonlSink, show: Display | None) -> None:
        self.journal, self.show = journal, show

    def emit(self, event: Event) -> None:
        self.journal.emit(event)
        if self.show:
            self.show.emit(event)


def start(
    plan: Plan,
    folder: RunFolder,
    show: Display | None = None,
    no_cache: bool = False,
    unique: bool = False,
    clock: Clock = time.monotonic,
    cache_from: Path | None = None,
) -> Outcome:
    """A new run of the plan's (single) job in `folder`, which must be absent or empty (with
    `unique`, a taken name gets a suffix); `no_cache` asks every call anew; `cache_from`: an
    earlier run folder whose answers this run may use (free, as cache hits)."""
    return asyncio.run(start_job(plan, folder, show, no_cache, unique, clock, cache_from))


def resume(root: Path, show: Display | None = None, clock: Clock = time.monotonic) -> Outcome:
    """Continue the run at `root` after its last finished step (a finished run: a no-op)."""
    return asyncio.run(resume_job(root, show, clock))


async def start_job(
    plan: Plan,
    folder: RunFolder,
    show: Display | None = None,
    no_cache: bool = False,
    unique: bool = False,
    clock: Clock = time.monotonic,
    cache_from: Path | None = None,
    shared: Shared | None = None,
) -> Outcome:
    """`start` inside a running event loop: a sweep runs its cells this way, side by side,
    each drawing on the sweep's `shared` budget and cache."""
    job = plan.jobs[0]
    if not unique:
        check_new(folder.root)  # refuse before any model is loaded
    earlier = open_folder(cache_from, "run") if cache_from is not None else None
    state = initial_state(job)
    splits = load_splits(_env(plan, job))
    async with opened_backends(_models(plan, job)) as backends:
        folder = claim(folder.root, "run", unique)  # only now that the models can be reached
        with locked(folder):
            write_atomic(folder.root / "plan.json", plan_text(plan, folder.root / "plan.json"))
            write_json(folder.root / "lock.json", plan.hashes.model_dump())
            if earlier is not None:
                copy_cache(earlier.cache, folder.cache)
            return await _run(
                plan, job, folder, state, splits, backends, show, no_cache, clock, shared=shared
            )


async def resume_job(
    root: Path,
    show: Display | None = None,
    clock: Clock = time.monotonic,
    shared: Shared | None = None,
) -> Outcome:
    """`resume` inside a running event loop (a sweep's cell: on the sweep's `shared`)."""
    folder = open_folder(root, "run")
    with locked(folder):
        plan = plan_of(folder)
        job = plan.jobs[0]
        data = read_json(folder.state) if folder.state.exists() else None
        state = State.model_validate(data) if isinstance(data, dict) else initial_state(job)
        if state.next_phase >= len(job.phases) and (folder.root / "summary.json").exists():
            return ended(folder, state, job)  # nothing left to do: write nothing
        splits = load_splits(_env(plan, job))
        async with opened_backends(_models(plan, job)) as backends:
            return await _run(
                plan, job, folder, state, splits, backends, show, False, clock, True, shared
            )


def plan_of(folder: RunFolder) -> Plan:
    """The plan a run folder was started with."""
    try:
        return read_plan(folder.root / "plan.json")
    except PlanUnreadable as exc:
        raise NotARunFolder(f"{folder.root}: this run never started ({exc})") from None


def initial_state(job: Job) -> State:
    skill = Path(job.train.skill).read_text(encoding="utf-8") if job.train.skill else ""
    return State(
        initial_skill=skill, current_skill=skill, best_skill=skill, epoch_start_skill=skill
    )


def _env(plan: Plan, job: Job) -> EnvSettings:
    return next(e for e in plan.envs if e.name == job.train.env)


def _models(plan: Plan, job: Job) -> dict[str, ModelSettings]:
    return {m.name: m for m in plan.models if m.name in (job.train.target, job.train.optimizer)}


@contextlib.asynccontextmanager
async def opened_backends(models: dict[str, ModelSettings]) -> AsyncIterator[dict[str, Backend]]:
    """A backend per model, closed at the end (a local model's server is stopped); if one
    cannot be made, those already made are closed before the error goes on."""
    backends: dict[str, Backend] = {}
    try:
        for name, settings in models.items():
            backends[name] = backend_for(settings)
        yield backends
    finally:
        for backend in backends.values():
            await backend.aclose()


async def _run(
    plan: Plan,
    job: Job,
    folder: RunFolder,
    state: State,
    splits: Splits,
    backends: dict[str, Backend],
    show: Display | None,
    no_cache: bool,
    clock: Clock,
    resumed: bool = False,
    shared: Shared | None = None,
) -> Outcome:
    models = _models(plan, job)
    cache = ResponseCache(folder.cache, run=folder.id)
    journal = JsonlSink(folder.events)
    try:
        reconcile(folder, cache, models)
        bank, taker = (shared.bank, shared.taker) if shared else (None, "")
        ledger = Ledger(plan.budget, clock, bank, taker)
        await ledger.restore(*spent_so_far(folder), elapsed=state.elapsed_s)
        if shared is not None:  # what it paid for is the sweep's; a dead attempt's claims go
            await shared.answers.begin(taker, paid_in(cache))
        sinks = Sinks(journal, show)
        sinks.emit(_started(plan, job, state, resumed))
        answers = shared.answers if shared else None
        layer = CallLayer(
            models, backends, ledger, sinks, cache, read_cache=not no_cache, shared=answers
        )
        env = _env(plan, job)
        prompts = job.train.prompts
        scorer = Scorer(layer, env_for(env), job.train.target, prompts, env.prompt)
        labels = env.labels if isinstance(env.labels, list) else []
        optimizer = Optimizer(layer, job.train.optimizer, prompts, env.kind, labels)
        stopper = (
            functools.partial(shared.rungs.goes_on, taker) if shared and shared.rungs else None
        )
        engine = Engine(
            job,
            splits,
            folder,
            scorer,
            optimizer,
            _leaks(splits),
            state,
            sinks,
            stopper,
            input_name=env.fields.get("input", "input"),
        )
        return await _session(plan, job, folder, state, engine, sinks)
    finally:
        cache.close()
        journal.close()


def _started(plan: Plan, job: Job, state: State, resumed: bool) -> RunStarted:
    """Where this session starts: a resumed run says at which step and phase."""
    phases = job.phases
    step = phases[state.next_phase].step if state.next_phase < len(phases) else len(phases)
    return RunStarted(
        recipe=plan.recipe,
        resumed=resumed,
        step=step,
        phase=state.next_phase,
        steps=job.schedule.total_steps,
        skill=state.current_skill,
    )


async def _session(
    plan: Plan, job: Job, folder: RunFolder, state: State, engine: Engine, sinks: Sinks
) -> Outcome:
    """Run the engine and journal how the session ended."""
    try:
        with journaled_end(sinks):
            await engine.run()
    except BudgetExhausted as exc:  # not even the baseline and the final test can be paid
        sinks.emit(RunFinished(outcome="budget", detail=str(exc)))
        return Outcome(Exit.BUDGET, folder.root, f"stopped by the budget: {exc}")
    write_json(folder.root / "summary.json", summary(plan, job, state))
    write_atomic(folder.root / "best_skill.md", state.best_skill)
    outcome = ended(folder, state, job)
    word = "budget" if state.stopped else "done"
    sinks.emit(RunFinished(outcome=word, detail=stop_reason(state, job)))
    return outcome


@contextlib.contextmanager
def journaled_end(sinks: Sinks) -> Iterator[None]:
    """Journal how a session that ends by an exception ended: interrupted (Ctrl-C, or the UI's
    `q`) or failed (run.FAILURES); the exception goes on."""
    try:
        yield
    except (KeyboardInterrupt, asyncio.CancelledError):
        sinks.journal.emit(RunFinished(outcome="interrupted"))
        raise
    except FAILURES as exc:
        sinks.emit(RunFinished(outcome="failed", detail=str(exc)))
        raise


def ended(folder: RunFolder, state: State, job: Job) -> Outcome:
    """The outcome of a run that reached its end: done, or stopped by the budget."""
    best = f"best skill in {folder.root / 'best_skill.md'}"
    if state.stopped:
        return Outcome(Exit.BUDGET, folder.root, f"stopped: {stop_reason(state, job)}; {best}")
    return Outcome(Exit.OK, folder.root, f"done: {best}")


def stop_reason(state: State, job: Job) -> str:
    if not state.stopped:
        return ""
    step, total = state.stopped.before_step, job.schedule.total_steps
    return f"the {state.stopped.limit} budget cannot pay for step {step} of {total}"


def reconcile(folder: RunFolder, cache: ResponseCache, models: dict[str, ModelSettings]) -> None:
    """Journal every answer this run paid for that the journal lacks: a kill can fall between
    caching an answer and journaling it. Afterwards the journal counts every call paid."""
    journaled = {e.key for e in read_journal(folder.events).calls if e.ok and not e.cache_hit}
    torn = folder.events.exists() and not folder.events.read_bytes().endswith(b"\n")
    with folder.events.open("a", encoding="utf-8") as out:
        if torn and folder.events.stat().st_size:
            out.write("\n")  # end the line a kill tore
        for key, (model, role, phase), c in cache.paid():
            if key in journaled or model not in models:
                continue
            event = CallEvent(
                role=role,
                phase=phase,
                model=model,
                input_tokens=c.input_tokens,
                output_tokens=c.output_tokens,
                usd=usd(models[model], c.input_tokens, c.output_tokens),
                latency_s=c.latency_s,
                retries=0,
                cache_hit=False,
                ok=True,
                key=key,
            )
            out.write(event.model_dump_json() + "\n")


def spent_so_far(folder: RunFolder) -> tuple[Cost, dict[tuple[str, str], Account]]:
    """What earlier sessions of this run paid, from its journal (empty for a new run)."""
    spent = Cost()
    accounts: dict[tuple[str, str], Account] = {}
    for event in read_journal(folder.events).calls:
        if not event.ok or event.cache_hit:
            continue
        cost = Cost(1, event.input_tokens, event.output_tokens, event.usd or 0.0)
        spent += cost
        account = accounts.setdefault((event.role, event.phase), Account())
        account.cost += cost
        account.seconds += event.latency_s
    return spent, accounts


def _leaks(splits: Splits) -> set[str]:
    """Gold answers of valid and test items that no train item shares: never to be learned."""
    train = {a for item in splits.train for a in item.answers}
    return {a for item in (*splits.valid, *splits.test) for a in item.answers} - train


def summary(plan: Plan, job: Job, state: State) -> dict[str, Any]:
    decisions = [h.decision for h in state.history]
    models = _models(plan, job)
    stopped = state.stopped
    return {
        "recipe": plan.recipe,
        "simulation": any(m.provider == "sim" for m in models.values()),
        "steps": len(state.history),
        "accepted": sum(d.accepted for d in decisions),
        "rejected": sum(not d.accepted and d.reason != "no candidate" for d in decisions),
        "stopped": stopped.model_dump(include={"limit", "before_step"}) if stopped else None,
        "stopped_early": state.stopped_early.after_step if state.stopped_early else None,
        "gate": {
            "split": job.train.gate.split,
            "initial": state.baseline_score,
            "best": state.best_score,
            "final": state.current_score,
        },
        "test": state.test,
        "history": [h.model_dump() for h in state.history],
    }
