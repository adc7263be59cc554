"""The ways `skopt run` runs: a new run or sweep of a plan, or `--resume` of either; in the
foreground, or (`--tui`) in a thread of its own while the terminal UI keeps the main thread.

A new run goes to `--out` (absent or an empty folder) or, by default, to the job's `out`
(`runs/{recipe}/{time}`), which takes a suffix when the name is taken (two runs started in the
same second).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from skopt.compiler.plan import Plan
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.claim import FolderRefused, check_new, open_folder
from skopt.runtime.executors import Executor, ExecutorUnavailable, executor_for
from skopt.runtime.exits import Outcome
from skopt.runtime.run import Clock, plan_of, resume_job, start_job
from skopt.runtime.sweep import Displays, is_sweep, resume_sweep_job, sweep_job

Work = Callable[[], Coroutine[Any, Any, Outcome]]


def destination(plan: Plan, out: str | None) -> tuple[Path, bool]:
    """Where a new run of `plan` goes, and whether a taken name gets a suffix (a default
    name does; `--out` must be absent or empty, else FolderRefused)."""
    if out:
        check_new(Path(out))
        return Path(out), False
    recipe = Path(plan.recipe).stem
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(plan.jobs[0].train.out.format(recipe=recipe, time=stamp)), True


def executor_of(
    plan: Plan, name: str | None, parallel: int, address: str | None
) -> Executor | None:
    """The executor of a sweep: `name`, else the recipe's `sweep.executor`, else local (None
    for a single run, which runs here; asking it for one is refused: ExecutorUnavailable)."""
    chosen = name or (plan.sweep.executor if plan.sweep else None) or "local"
    if len(plan.jobs) < 2:
        if name == "ray" or address:
            raise ExecutorUnavailable("--executor and --ray-address apply to a sweep's cells")
        return None
    return executor_for("ray" if chosen == "ray" else "local", parallel, address)


async def launch_job(
    plan: Plan,
    root: Path,
    unique: bool,
    show: Displays | None = None,
    no_cache: bool = False,
    parallel: int = 2,
    cache_from: Path | None = None,
    clock: Clock = time.monotonic,
    executor: Executor | None = None,
) -> Outcome:
    """A new run of the plan: its job, or every cell of its sweep (`cache_from`: an earlier
    run folder whose answers a single run may use, free)."""
    if len(plan.jobs) == 1:
        display = show("", plan) if show else None
        folder = RunFolder(root)
        return await start_job(plan, folder, display, no_cache, unique, clock, cache_from)
    if cache_from is not None:
        raise FolderRefused("--cache-from takes one run's cache: a sweep's cells have their own")
    return await sweep_job(plan, root, show, parallel, unique, no_cache, executor)


def plan_at(root: Path) -> Plan:
    """The plan of the run or sweep at `root` (FolderRefused if it is neither)."""
    return plan_of(open_folder(root))


async def relaunch_job(
    root: Path,
    show: Displays | None = None,
    parallel: int = 2,
    executor: Executor | None = None,
) -> Outcome:
    """Continue the run or sweep at `root` (refused with a sentence if it is neither)."""
    if is_sweep(root):
        return await resume_sweep_job(root, show, parallel, executor)
    plan = plan_of(open_folder(root, "run"))
    return await resume_job(root, show("", plan) if show else None)


class Background:
    """A run (or sweep) in a thread of its own; `stop` ends it as Ctrl-C does: the run journals
    that it was interrupted and stays resumable."""

    def __init__(self, work: Work) -> None:
        self._work = work
        self._loop = asyncio.new_event_loop()
        self._task: asyncio.Task[Outcome] | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="skopt-run", daemon=True)
        self.outcome: Outcome | None = None
        self.error: BaseException | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._task = self._loop.create_task(self._work())
        self._ready.set()
        try:
            self.outcome = self._loop.run_until_complete(self._task)
        except BaseException as exc:
            self.error = exc
        finally:
            self._loop.close()

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        """Cancel the run and wait until it has ended (cleanly: its journal says so)."""
        if self._task is not None and self.alive:
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join()

    def result(self) -> Outcome:
        """The outcome, once the run has ended; what ended it otherwise, raised."""
        self._thread.join()
        if self.error is not None:
            raise self.error
        assert self.outcome is not None
        return self.outcome
