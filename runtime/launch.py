"""The ways `skopt run` runs: a new run or sweep of a plan, or `--resume` of either.

A new run goes to `--out` (absent or an empty folder) or, by default, to the job's `out`
(`runs/{recipe}/{time}`), which takes a suffix when the name is taken (two runs started in the
same second).
"""

from __future__ import annotations

import time
from pathlib import Path

from skopt.compiler.plan import Plan
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.claim import FolderRefused, check_new, open_folder
from skopt.runtime.exits import Outcome
from skopt.runtime.run import plan_of, resume, start
from skopt.runtime.sweep import Displays, is_sweep, resume_sweep, run_sweep


def destination(plan: Plan, out: str | None) -> tuple[Path, bool]:
    """Where a new run of `plan` goes, and whether a taken name gets a suffix (a default
    name does; `--out` must be absent or empty, else FolderRefused)."""
    if out:
        check_new(Path(out))
        return Path(out), False
    recipe = Path(plan.recipe).stem
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(plan.jobs[0].train.out.format(recipe=recipe, time=stamp)), True


def launch(
    plan: Plan,
    root: Path,
    unique: bool,
    show: Displays | None = None,
    no_cache: bool = False,
    parallel: int = 2,
    cache_from: Path | None = None,
) -> Outcome:
    """A new run of the plan: its job, or every cell of its sweep (`cache_from`: an earlier
    run folder whose answers a single run may use, free)."""
    if len(plan.jobs) == 1:
        display = show("", plan) if show else None
        return start(plan, RunFolder(root), display, no_cache, unique, cache_from=cache_from)
    if cache_from is not None:
        raise FolderRefused("--cache-from takes one run's cache: a sweep's cells have their own")
    return run_sweep(plan, root, show, parallel, unique, no_cache)


def relaunch(root: Path, show: Displays | None = None, parallel: int = 2) -> Outcome:
    """Continue the run or sweep at `root` (refused with a sentence if it is neither)."""
    if is_sweep(root):
        return resume_sweep(root, show, parallel)
    plan = plan_of(open_folder(root, "run"))
    return resume(root, show("", plan) if show else None)
