"""Running a night (`skopt sleep run` / `dry-run`): its folder, the call layer, the night, and
staging — as runtime/run.py does for training.

A night's folder is claimed like a run folder (kind "night") under the project's staging folder
(`out`, default `.skopt/sleep`), named by the time it started; a dry run uses a temporary folder
that is removed at the end, so it stages nothing. `sleep run` first continues the newest night of
the recipe that did not end (a killed night): on the same sessions and tasks, with every answer
it had paid for taken from its cache.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from skopt.compiler.plan import ModelSettings, Plan
from skopt.compiler.saved import plan_text
from skopt.runtime.artifacts import RunFolder, write_atomic
from skopt.runtime.cache import ResponseCache
from skopt.runtime.calls import CallLayer
from skopt.runtime.claim import claim, locked
from skopt.runtime.errors import BudgetExhausted
from skopt.runtime.events import JsonlSink, RunFinished, RunStarted
from skopt.runtime.exits import Exit, Outcome
from skopt.runtime.journal import read_journal
from skopt.runtime.ledger import Ledger
from skopt.runtime.run import (
    Display,
    Sinks,
    journaled_end,
    opened_backends,
    reconcile,
    spent_so_far,
)
from skopt.runtime.sleep.night import Night, NightRunner
from skopt.runtime.sleep.stage import Manifest, nights, rejected_before, report, stage


@dataclass(frozen=True)
class Slept:
    outcome: Outcome
    night: Night | None
    manifest: Manifest | None
    report: str = ""  # report.md's text (a dry run prints it: it stages nothing)


def staging(plan: Plan) -> Path:
    assert plan.sleep is not None
    s = plan.sleep.settings
    return Path(s.project) / s.out


def models(plan: Plan) -> dict[str, ModelSettings]:
    assert plan.sleep is not None
    s = plan.sleep.settings
    used = {s.target, s.optimizer, *([s.judge.model] if s.judge.model else [])}
    return {m.name: m for m in plan.models if m.name in used}


def sleep(plan: Plan, dry_run: bool, show: Display | None = None) -> Slept:
    return asyncio.run(sleep_job(plan, dry_run, show))


async def sleep_job(plan: Plan, dry_run: bool, show: Display | None = None) -> Slept:
    """A night of the plan's sleep job: a new one, or the killed one it continues."""
    stamp = time.strftime("%Y%m%d-%H%M%S")  # a night's name
    if dry_run:
        scratch = Path(tempfile.mkdtemp(prefix="skopt-sleep-dry-run-"))
        try:
            return await _night(plan, claim(scratch / stamp, "night"), True, show, False)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    unfinished = _unfinished(staging(plan))
    if unfinished is not None:
        return await _night(plan, unfinished, False, show, True)
    folder = claim(staging(plan) / stamp, "night", unique=True)
    write_atomic(folder.root / "plan.json", plan_text(plan, folder.root / "plan.json"))
    return await _night(plan, folder, False, show, False)


def _unfinished(root: Path) -> RunFolder | None:
    """The newest night, if it started and did not end: killed, interrupted, or failed (a
    missing key, a server down). A night stopped by the budget has ended."""
    found = nights(root)
    if not found:
        return None
    newest = RunFolder(found[-1])
    journal = read_journal(newest.events)
    ended = journal.ended
    over = ended is not None and ended.outcome in ("done", "budget")
    return newest if journal.events and not over else None


async def _night(
    plan: Plan, folder: RunFolder, dry_run: bool, show: Display | None, resumed: bool
) -> Slept:
    assert plan.sleep is not None
    used = models(plan)
    async with opened_backends(used) as backends:
        with locked(folder):
            cache = ResponseCache(folder.cache, run=folder.id)
            journal = JsonlSink(folder.events)
            try:
                reconcile(folder, cache, used)
                ledger = Ledger(plan.budget)
                worked = read_journal(folder.events).worked_s()
                await ledger.restore(*spent_so_far(folder), elapsed=worked)
                sinks = Sinks(journal, show)
                sinks.emit(
                    RunStarted(
                        recipe=plan.recipe,
                        resumed=resumed,
                        step=1,
                        phase=0,
                        steps=1,
                        skill=Path(plan.sleep.settings.skill).read_text(encoding="utf-8"),
                    )
                )
                layer = CallLayer(used, backends, ledger, sinks, cache)
                return await _session(plan, folder, layer, sinks, dry_run)
            finally:
                cache.close()
                journal.close()


def remembered(plan: Plan, folder: RunFolder) -> str:
    """The memory of earlier nights, as this night first read it (a resumed night reflects
    with the same)."""
    saved = folder.root / "memory.md"
    if not saved.is_file():
        write_atomic(saved, rejected_before(staging(plan), folder.root))
    return saved.read_text(encoding="utf-8")


async def _session(
    plan: Plan, folder: RunFolder, layer: CallLayer, sinks: Sinks, dry_run: bool
) -> Slept:
    assert plan.sleep is not None
    now = datetime.now(UTC)
    try:
        with journaled_end(sinks):
            night = await NightRunner(plan, folder, layer, sinks, remembered(plan, folder)).run(now)
    except BudgetExhausted as exc:
        sinks.emit(RunFinished(outcome="budget", detail=str(exc)))
        return Slept(Outcome(Exit.BUDGET, folder.root, f"stopped by the budget: {exc}"), None, None)
    live = Path(plan.sleep.settings.skill).resolve()
    staged = None if dry_run else stage(folder, night, live, now)
    sinks.emit(RunFinished(outcome="done"))
    d = night.decision
    verdict = "accepted" if d.accepted else "rejected"
    where = "nothing staged (dry run)" if dry_run else f"staged in {folder.root}"
    message = f"night {verdict} by the gate ({d.reason}); {where}"
    text = report(folder, night, live, dry_run)
    return Slept(Outcome(Exit.OK, folder.root, message), night, staged, text)
