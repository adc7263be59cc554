"""Running a sweep: every cell of the grid is one ordinary run, on an executor (this process,
or a Ray cluster: runtime/executors/), all on the sweep's one budget and one response cache
(runtime/shared.py) and, with `stop = asha(...)`, its early stopping (runtime/early_stop.py).

The sweep root holds the whole plan (`plan.json`, one job per cell), `sweep.json` and
`sweep.md` (the comparison table, one row per cell), the sweep's `cache.sqlite`, and
`cells/01/`, `cells/02/`, … — each a normal run folder whose `plan.json` holds only its own
job, so that `skopt run --resume` and `skopt report` work on a cell unchanged. A folder is a
sweep root when its marker says so. The table is written before any cell starts and again
whenever a cell ends, each row from the cell's journal (as `skopt report` reads it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skopt.compiler.plan import Job, Plan
from skopt.compiler.saved import plan_text
from skopt.runtime.artifacts import RunFolder, write_atomic, write_json
from skopt.runtime.bank import Amount
from skopt.runtime.cache import ResponseCache
from skopt.runtime.claim import NotARunFolder, claim, locked, open_folder, read_marker
from skopt.runtime.executors import Cell, Executor, executor_for
from skopt.runtime.exits import Exit, Outcome
from skopt.runtime.report import Report, report
from skopt.runtime.run import FAILURES, Display, plan_of, spent_so_far
from skopt.runtime.shared import Paid, paid_in

# A runtime failure fails one cell, not the whole sweep: the others go on (run.FAILURES).
CELL_FAILURES = FAILURES

# The sweep's exit is its worst cell's: a failure outranks a budget stop, which outranks done.
SEVERITY = {Exit.OK: 0, Exit.BUDGET: 1, Exit.FAILED: 2}

# A live display for a run, given its label (a cell's "01"; "" for a single run) and plan.
Displays = Callable[[str, Plan], Display | None]


def is_sweep(root: Path) -> bool:
    marker = read_marker(root)
    return marker is not None and marker["kind"] == "sweep"


def cell_plan(plan: Plan, job: Job) -> Plan:
    """The plan a cell's run folder holds: the sweep's plan with only that cell's job."""
    return plan.model_copy(update={"jobs": [job]})


def cell_label(plan: Plan, index: int) -> str:
    return f"{index + 1:0{max(2, len(str(len(plan.jobs))))}d}"


def cell_folder(root: Path, plan: Plan, index: int) -> RunFolder:
    return RunFolder(root / "cells" / cell_label(plan, index))


async def sweep_job(
    plan: Plan,
    root: Path,
    show: Displays | None = None,
    parallel: int = 2,
    unique: bool = False,
    no_cache: bool = False,
    executor: Executor | None = None,
) -> Outcome:
    """A new run of every cell of the sweep in `root` (absent or empty; with `unique`, a taken
    name gets a suffix), on `executor` (default: this process, at most `parallel` at a time)."""
    folder = claim(root, "sweep", unique)
    with locked(folder):
        write_atomic(folder.root / "plan.json", plan_text(plan, folder.root / "plan.json"))
        chosen = executor or executor_for("local", parallel)
        return await _cells(plan, folder.root, show, chosen, no_cache=no_cache)


async def resume_sweep_job(
    root: Path,
    show: Displays | None = None,
    parallel: int = 2,
    executor: Executor | None = None,
) -> Outcome:
    """Continue every unfinished cell of the sweep at `root` (a finished cell: a no-op)."""
    folder = open_folder(root, "sweep")
    with locked(folder):
        chosen = executor or executor_for("local", parallel)
        return await _cells(plan_of(folder), root, show, chosen, resuming=True)


def run_sweep(
    plan: Plan,
    root: Path,
    show: Displays | None = None,
    parallel: int = 2,
    unique: bool = False,
    no_cache: bool = False,
    executor: Executor | None = None,
) -> Outcome:
    return asyncio.run(sweep_job(plan, root, show, parallel, unique, no_cache, executor))


def resume_sweep(
    root: Path,
    show: Displays | None = None,
    parallel: int = 2,
    executor: Executor | None = None,
) -> Outcome:
    return asyncio.run(resume_sweep_job(root, show, parallel, executor))


async def _cells(
    plan: Plan,
    root: Path,
    show: Displays | None,
    executor: Executor,
    resuming: bool = False,
    no_cache: bool = False,
) -> Outcome:
    outcomes: dict[int, Outcome] = {}
    write_table(plan, root, outcomes)
    cells = [
        Cell(
            index=i,
            label=cell_label(plan, i),
            folder=cell_folder(root, plan, i),
            plan=cell_plan(plan, job),
            no_cache=no_cache,
            display=show(cell_label(plan, i), cell_plan(plan, job)) if show else None,
        )
        for i, job in enumerate(plan.jobs)
    ]
    async with executor.opened(plan, root) as runner:
        for cell in cells:  # what the cells spent and paid for before is the sweep's
            if resuming and read_marker(cell.folder.root) is not None:
                await runner.book(cell.label, *_before(cell.folder))

        async def one(cell: Cell) -> None:
            try:
                outcome = await runner.run(cell)
            except CELL_FAILURES as exc:
                outcome = Outcome(Exit.FAILED, cell.folder.root, str(exc))
            outcomes[cell.index] = outcome
            write_table(plan, root, outcomes)

        await asyncio.gather(*(one(cell) for cell in cells))
    worst = max((o.exit for o in outcomes.values()), key=SEVERITY.__getitem__, default=Exit.OK)
    words = {Exit.OK: "done", Exit.BUDGET: "stopped by the budget", Exit.FAILED: "failed"}
    counts = [
        f"{n} {w}" for e, w in words.items() if (n := sum(o.exit is e for o in outcomes.values()))
    ]
    table = root / "sweep.md"
    message = f"sweep of {len(plan.jobs)} cells: {', '.join(counts)}; the table is in {table}"
    return Outcome(worst, root, message)


def _before(folder: RunFolder) -> tuple[Amount, list[tuple[str, Paid]]]:
    """What a cell of a resumed sweep spent (its journal) and paid for (its cache)."""
    cache = ResponseCache(folder.cache, run=folder.id) if folder.cache.exists() else None
    try:
        return spent_so_far(folder)[0].amount, paid_in(cache) if cache else []
    finally:
        if cache is not None:
            cache.close()


def write_table(plan: Plan, root: Path, outcomes: dict[int, Outcome]) -> None:
    rows = [row(plan, root, i, outcomes.get(i)) for i in range(len(plan.jobs))]
    write_json(root / "sweep.json", {"recipe": plan.recipe, "cells": rows})
    write_atomic(root / "sweep.md", as_markdown(plan.recipe, rows))


def row(plan: Plan, root: Path, index: int, outcome: Outcome | None) -> dict[str, Any]:
    """One cell's line of the table, from its run folder's journal (and this session's
    outcome)."""
    job = plan.jobs[index]
    folder = cell_folder(root, plan, index)
    made = _report(folder.root)
    if outcome is not None:
        status = {Exit.OK: "done", Exit.BUDGET: "budget"}.get(outcome.exit, "failed")
    elif made is None:
        status = "not started"
    else:
        status = {"finished": "done", "budget": "budget"}.get(made.status, "unfinished")
    if status == "done" and made is not None and made.stopped_early is not None:
        status = f"stopped early (step {made.stopped_early})"
    usage = made.usage if made else []
    return {
        "cell": cell_label(plan, index),
        "name": job.name,
        "overrides": job.overrides,
        "folder": str(folder.root.relative_to(root)),
        "status": status,
        "exit": int(outcome.exit) if outcome else None,
        "message": outcome.message if outcome else None,
        "steps": made.steps_done if made else 0,
        "steps_planned": job.schedule.total_steps,
        "accepted": made.accepted if made else 0,
        "rejected": made.rejected if made else 0,
        "gate_best": made.scores.best if made else None,
        "test_initial": made.scores.test_initial if made else None,
        "test_best": made.scores.test_best if made else None,
        "paid_calls": sum(u.calls - u.cache_hits - u.failed for u in usage),
        "shared_calls": sum(u.shared_hits for u in usage),
        "usd": sum(u.usd or 0.0 for u in usage),
    }


def _report(folder: Path) -> Report | None:
    """A cell's report; None for a cell that never started."""
    try:
        return report(folder)
    except NotARunFolder:
        return None


def as_markdown(recipe: str, rows: list[dict[str, Any]]) -> str:
    head = (
        "| cell | name | steps | accepted | rejected | gate best | test initial → best"
        " | paid calls | from the sweep's cache | status |"
    )
    lines = [f"# sweep · {recipe} · {len(rows)} cells", "", head, "|" + "---|" * 10]
    for r in rows:
        test = (
            f"{_score(r['test_initial'])} → {_score(r['test_best'])}"
            if r["test_best"] is not None
            else "—"
        )
        cells = [
            r["cell"],
            r["name"].replace("|", "\\|"),
            f"{r['steps']}/{r['steps_planned']}",
            str(r["accepted"]),
            str(r["rejected"]),
            _score(r["gate_best"]),
            test,
            str(r["paid_calls"]),
            str(r["shared_calls"]),
            r["status"],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    failures = [r for r in rows if r["status"] == "failed"]
    if failures:
        lines += ["", *(f"- cell {r['cell']} failed: {r['message']}" for r in failures)]
    return "\n".join(lines) + "\n"


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"
