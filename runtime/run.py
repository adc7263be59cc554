"""Carrying out a compiled plan: the run folder, the call layer, the env, the engine; and the
outcome (exit code) that `skopt run` reports. Also `--resume` of an interrupted run."""

from __future__ import annotations

import asyncio
import enum
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from skopt.compiler.plan import Job, ModelSettings, Plan
from skopt.compiler.splits import Splits, load_splits
from skopt.runtime.artifacts import RunFolder, read_json, write_atomic, write_json
from skopt.runtime.backends import Backend, backend_for
from skopt.runtime.cache import ResponseCache
from skopt.runtime.calls import CallLayer, usd
from skopt.runtime.engine import Engine, State
from skopt.runtime.envs import EnvLoadError, env_for
from skopt.runtime.errors import (
    BudgetExhausted,
    CacheDamaged,
    CallFailed,
    LocalModelUnavailable,
    MissingKey,
    ReplayMiss,
)
from skopt.runtime.events import CallEvent, JsonlSink
from skopt.runtime.ledger import Account, Cost, Ledger
from skopt.runtime.optimizer import Optimizer
from skopt.runtime.scoring import Scorer

# What ends a run as a runtime failure (exit 1): what finished stays resumable.
FAILURES: tuple[type[Exception], ...] = (
    MissingKey,
    LocalModelUnavailable,
    CacheDamaged,
    CallFailed,
    ReplayMiss,
    EnvLoadError,
)


class Exit(enum.IntEnum):
    DONE = 0
    FAILED = 1
    USAGE = 2
    BUDGET = 3
    STALE = 4
    INTERRUPTED = 130


@dataclass(frozen=True)
class Outcome:
    exit: Exit
    folder: Path
    message: str


def run_folder(plan: Plan, job: Job, out: str | None) -> RunFolder:
    if out:
        return RunFolder(Path(out))
    recipe = Path(plan.recipe).stem
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return RunFolder(Path(job.train.out.format(recipe=recipe, time=stamp)))


class Display(Protocol):
    """What a live display is told: every call, and every finished step."""

    def call(self, event: CallEvent) -> None: ...

    def step(self, record: dict[str, Any], total: int) -> None: ...


class _Sinks:
    """The journal and an optional live display, as one sink."""

    def __init__(self, journal: JsonlSink, show: Display | None) -> None:
        self.journal, self.show = journal, show

    def emit(self, event: CallEvent) -> None:
        self.journal.emit(event)
        if self.show:
            self.show.call(event)


def start(
    plan: Plan, folder: RunFolder, show: Display | None = None, no_cache: bool = False
) -> Outcome:
    """A new run of the plan's (single) job in `folder`; `no_cache` asks every call anew."""
    return asyncio.run(start_job(plan, folder, show, no_cache))


def resume(folder: RunFolder, show: Display | None = None) -> Outcome:
    """Continue the run in `folder` after its last finished step (a finished run: a no-op)."""
    return asyncio.run(resume_job(folder, show))


async def start_job(
    plan: Plan, folder: RunFolder, show: Display | None = None, no_cache: bool = False
) -> Outcome:
    """`start` inside a running event loop: a sweep runs its cells this way, side by side."""
    job = plan.jobs[0]
    skill = Path(job.train.skill).read_text(encoding="utf-8") if job.train.skill else ""
    state = State(
        initial_skill=skill, current_skill=skill, best_skill=skill, epoch_start_skill=skill
    )
    return await _run(plan, job, folder, state, show, no_cache)


async def resume_job(folder: RunFolder, show: Display | None = None) -> Outcome:
    """`resume` inside a running event loop."""
    plan = Plan.model_validate(read_json(folder.root / "plan.json"))
    data = read_json(folder.state) if folder.state.exists() else None
    if not isinstance(data, dict):
        return await start_job(plan, folder, show)
    return await _run(plan, plan.jobs[0], folder, State(**data), show)


async def _run(
    plan: Plan,
    job: Job,
    folder: RunFolder,
    state: State,
    show: Display | None,
    no_cache: bool = False,
) -> Outcome:
    models = {m.name: m for m in plan.models if m.name in (job.train.target, job.train.optimizer)}
    env_settings = next(e for e in plan.envs if e.name == job.train.env)
    splits = load_splits(env_settings)
    backends = await _open_backends(models)
    if not folder.state.exists():  # a new run: only now that its models can be reached
        folder.root.mkdir(parents=True, exist_ok=True)
        write_json(folder.root / "plan.json", plan.model_dump(mode="json"))
        write_json(folder.root / "lock.json", plan.hashes.model_dump())
    cache = ResponseCache(folder.cache)
    reconcile(folder, cache, models)
    ledger = Ledger(plan.budget)
    ledger.restore(*spent_so_far(folder), elapsed=state.elapsed_s)
    journal = JsonlSink(folder.events)
    layer = CallLayer(
        models, backends, ledger, _Sinks(journal, show), cache, read_cache=not no_cache
    )
    prompts = job.train.prompts
    scorer = Scorer(layer, env_for(env_settings), job.train.target, prompts, env_settings.prompt)
    engine = Engine(
        job,
        splits,
        folder,
        scorer,
        Optimizer(layer, job.train.optimizer, prompts),
        _leaks(splits),
        state,
        show.step if show else None,
    )
    try:
        await engine.run()
    except BudgetExhausted as exc:
        return Outcome(
            Exit.BUDGET,
            folder.root,
            f"stopped by the budget: {exc}; best skill in {folder.root / 'best_skill.md'}",
        )
    finally:
        await _close(backends, cache, journal)
    write_json(folder.root / "summary.json", summary(plan, job, state, models))
    write_atomic(folder.root / "best_skill.md", state.best_skill)
    return Outcome(Exit.DONE, folder.root, f"done: best skill in {folder.root / 'best_skill.md'}")


async def _open_backends(models: dict[str, ModelSettings]) -> dict[str, Backend]:
    """A backend per model; if one cannot be made, those already made are closed (a local
    model's server is stopped) before the error goes on."""
    backends: dict[str, Backend] = {}
    try:
        for name, settings in models.items():
            backends[name] = backend_for(settings)
    except BaseException:
        for backend in backends.values():
            await backend.aclose()
        raise
    return backends


async def _close(backends: dict[str, Backend], cache: ResponseCache, journal: JsonlSink) -> None:
    for backend in backends.values():
        await backend.aclose()
    cache.close()
    journal.close()


def reconcile(folder: RunFolder, cache: ResponseCache, models: dict[str, ModelSettings]) -> None:
    """Journal every answer the cache holds but the journal does not: a kill can fall between
    caching an answer and journaling it. Afterwards the journal counts every call paid."""
    journaled = {e["key"] for e in _journal(folder) if e.get("ok") and not e.get("cache_hit")}
    torn = folder.events.exists() and not folder.events.read_bytes().endswith(b"\n")
    with folder.events.open("a", encoding="utf-8") as out:
        if torn and folder.events.stat().st_size:
            out.write("\n")  # end the line a kill tore
        for key, (model, role, phase), c in cache.paid():
            if key in journaled or model not in models:
                continue
            cost = usd(models[model], c.input_tokens, c.output_tokens)
            event = CallEvent(
                role,
                phase,
                model,
                c.input_tokens,
                c.output_tokens,
                cost,
                c.latency_s,
                0,
                False,
                True,
                key=key,
            )
            out.write(json.dumps(asdict(event), sort_keys=True) + "\n")


def spent_so_far(folder: RunFolder) -> tuple[Cost, dict[tuple[str, str], Account]]:
    """What earlier sessions of this run paid, from its journal (empty for a new run)."""
    spent = Cost()
    accounts: dict[tuple[str, str], Account] = {}
    for event in _journal(folder):
        if not event.get("ok") or event.get("cache_hit"):
            continue
        cost = Cost(1, event["input_tokens"], event["output_tokens"], event.get("usd") or 0.0)
        spent += cost
        account = accounts.setdefault((event["role"], event["phase"]), Account())
        account.cost += cost
        account.seconds += event["latency_s"]
    return spent, accounts


def _journal(folder: RunFolder) -> list[dict[str, Any]]:
    """The journal's events; a line torn by a kill is skipped."""
    if not folder.events.exists():
        return []
    events = []
    for line in folder.events.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def _leaks(splits: Splits) -> set[str]:
    """Gold answers of valid and test items that no train item shares: never to be learned."""
    train = {a for item in splits.train for a in item.answers}
    return {a for item in (*splits.valid, *splits.test) for a in item.answers} - train


def summary(plan: Plan, job: Job, state: State, models: dict[str, ModelSettings]) -> dict[str, Any]:
    decisions = [h["decision"] for h in state.history]
    return {
        "recipe": plan.recipe,
        "simulation": any(m.provider == "sim" for m in models.values()),
        "steps": len(state.history),
        "accepted": sum(1 for d in decisions if d.get("accepted")),
        "rejected": sum(
            1 for d in decisions if not d.get("accepted") and d.get("reason") != "no candidate"
        ),
        "gate": {
            "split": job.train.gate.split,
            "initial": state.baseline_score,
            "best": state.best_score,
            "final": state.current_score,
        },
        "test": state.test,
        "history": state.history,
    }
