"""`skopt run`: compile (or read a saved plan), choose the run folder, and run — with a line of
progress per phase and per step, or the terminal UI (`--tui`) — then the report and a summary
line."""

from __future__ import annotations

import asyncio
import functools
import shlex
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import click

from skopt.compiler.compile import stale
from skopt.compiler.plan import Plan
from skopt.compiler.saved import PlanUnreadable, read_plan
from skopt.runtime.exits import Exit, Outcome, codes_help
from skopt.runtime.sweep import Displays
from skopt.ui.console import compiled, fail, set_option, write_report
from skopt.ui.progress import Progress, summary_line

Work = Callable[[Displays | None], Coroutine[Any, Any, Outcome]]  # a run, given its displays


@click.command(
    epilog=codes_help(Exit.OK, Exit.FAILED, Exit.USAGE, Exit.BUDGET, Exit.STALE, Exit.INTERRUPTED)
)
@click.argument("recipe", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--resume", "resume_dir", type=click.Path(file_okay=False), help="Continue an interrupted run."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="The run folder: absent or empty (default: the recipe's out, a new folder).",
)
@set_option
@click.option(
    "--no-cache",
    "no_cache",
    is_flag=True,
    help="Ask every call anew (answers are still cached for --resume).",
)
@click.option(
    "--cache-from",
    "cache_from",
    type=click.Path(file_okay=False, exists=True),
    help="An earlier run folder whose answers this run may use (free, booked as cache hits).",
)
@click.option("--quiet", is_flag=True, help="No live progress; only the outcome.")
@click.option(
    "--tui",
    is_flag=True,
    help="Watch the run in the terminal UI; q or Ctrl-C stops it (resumable, exit 130).",
)
@click.option(
    "--parallel",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="A sweep's cells run at most this many at a time (local executor).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    help="Where a sweep's cells run (default: the recipe's sweep.executor, else local).",
)
@click.option(
    "--ray-address",
    "ray_address",
    help="The Ray cluster to join (default: RAY_ADDRESS, else one started for the sweep).",
)
def run(
    recipe: str | None,
    resume_dir: str | None,
    out: str | None,
    sets: tuple[str, ...],
    no_cache: bool,
    cache_from: str | None,
    quiet: bool,
    tui: bool,
    parallel: int,
    executor: str | None,
    ray_address: str | None,
) -> None:
    """Train: carry out a recipe's plan (or continue one with --resume).

    A new run writes only into a new or empty folder. A recipe with a sweep runs every cell,
    each in its own run folder OUT/cells/NN, and ends with a table comparing them (also in
    OUT/sweep.md); --resume OUT continues every unfinished cell. The cells run here (at most
    --parallel at a time) or, with --executor ray, on a Ray cluster; either way they share one
    budget and one response cache."""
    from skopt.runtime.claim import FolderRefused
    from skopt.runtime.errors import LocalModelUnavailable, MissingKey
    from skopt.runtime.executors import ExecutorUnavailable
    from skopt.runtime.launch import (
        destination,
        executor_of,
        launch_job,
        plan_at,
        relaunch_job,
    )
    from skopt.runtime.run import FAILURES

    started = time.monotonic()
    work: Work
    try:
        if resume_dir:
            if recipe or out or sets or no_cache or cache_from:
                raise click.UsageError(
                    "--resume continues a run as it was started: give it no RECIPE, --out,"
                    " --set, --no-cache or --cache-from"
                )
            root = Path(resume_dir)
            plan = plan_at(root)
            chosen = executor_of(plan, executor, parallel, ray_address)
            work = functools.partial(relaunch_job, root, parallel=parallel, executor=chosen)
        else:
            if recipe is None:
                raise click.UsageError("give a RECIPE, or --resume RUNDIR")
            saved = recipe.endswith(".json")
            plan = _saved_plan(recipe, sets) if saved else compiled(recipe, sets)
            if not plan.jobs:
                raise click.UsageError("this recipe has no train job to run")
            root, unique = destination(plan, out)
            chosen = executor_of(plan, executor, parallel, ray_address)
            _assemble_local_models(plan)
            earlier = Path(cache_from) if cache_from else None
            work = functools.partial(
                launch_job, plan, root, unique, no_cache=no_cache, parallel=parallel,
                cache_from=earlier, executor=chosen,
            )  # fmt: skip
        if plan is not None and tui:
            outcome = _with_tui(plan, work)
        else:
            outcome = asyncio.run(work(None if quiet else _displays))
    except (KeyboardInterrupt, asyncio.CancelledError):
        click.echo("interrupted: continue with skopt run --resume RUNDIR", err=True)
        sys.exit(Exit.INTERRUPTED)
    except (FolderRefused, ExecutorUnavailable) as exc:
        fail(str(exc), Exit.USAGE)
    except FAILURES as exc:
        if not isinstance(exc, MissingKey | LocalModelUnavailable):  # failed mid-run
            click.echo("what finished is kept: continue with skopt run --resume RUNDIR", err=True)
        fail(str(exc), Exit.FAILED)
    _end_of_run(outcome, time.monotonic() - started)


def _with_tui(
    plan: Plan, work: Callable[[Displays | None], Coroutine[Any, Any, Outcome]]
) -> Outcome:
    """Run in a thread of its own while the terminal UI shows it; q stops it as Ctrl-C does.
    What fails before the run starts (a missing key, a folder in use) fails as without the UI."""
    from skopt.runtime.launch import Background
    from skopt.runtime.sweep import cell_label, cell_plan
    from skopt.ui.tui.app import live_app
    from skopt.ui.tui.sources import PushSource

    if len(plan.jobs) == 1:
        sources = {"": PushSource(plan)}
    else:
        sources = {
            cell_label(plan, i): PushSource(cell_plan(plan, job)) for i, job in enumerate(plan.jobs)
        }
    runner = Background(lambda: work(lambda label, _: sources[label]))
    runner.start()
    click.echo("starting the run…", err=True)
    while runner.alive and not any(s.arrived for s in sources.values()):
        time.sleep(0.05)
    if runner.alive:
        app = live_app(plan, dict(sources), stop=runner.stop)
        app.run()
        runner.stop()  # however the UI was left, the run ends with it, resumably
    return runner.result()


def _displays(label: str, plan: Plan) -> Progress:
    return Progress(f"[{label}] " if label else "", plan)


def _end_of_run(outcome: Outcome, seconds: float) -> None:
    """A sweep's table, or a run's report.md and summary line; then the outcome's exit code."""
    from skopt.runtime.report import report as read_report
    from skopt.runtime.sweep import is_sweep

    table = outcome.folder / "sweep.md"
    if is_sweep(outcome.folder):
        if table.is_file():
            click.echo(table.read_text(encoding="utf-8"), nl=False)
        click.echo(outcome.message, err=True)
    else:
        write_report(outcome.folder)  # SPEC §5.3: every run folder ends with its report.md
        click.echo(outcome.message, err=True)
        click.echo(summary_line(read_report(outcome.folder), seconds), err=True)
    sys.exit(outcome.exit)


def _assemble_local_models(plan: Plan) -> None:
    """Assemble the weights of the catalog models a run uses (once per machine), with a
    progress bar, before the run starts."""
    from skopt.runtime.local.weights import weights_for

    used = {name for job in plan.jobs for name in (job.train.target, job.train.optimizer)}
    for model in plan.models:
        if model.provider == "local" and model.name in used and not model.gguf:
            bar = _Bar(f"assembling {model.model}")
            try:
                weights_for(model.model, None, bar)
            finally:
                bar.close()


class _Bar:
    """A progress callback that shows a bar on stderr once there is progress to show."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self._bar.__enter__()
        self._bar.update(done - self._bar.pos)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)


def _saved_plan(path: str, sets: tuple[str, ...]) -> Plan:
    """A plan saved with `skopt plan -o`; refused (exit 4) when its recipe changed since."""
    if sets:
        flags = " ".join(f"--set {shlex.quote(s)}" for s in sets)
        fail(
            f"--set cannot change a saved plan: it was compiled already. Make a new one with:"
            f" skopt plan RECIPE {flags} -o {shlex.quote(path)}",
            Exit.USAGE,
        )
    try:
        plan = read_plan(Path(path))
    except PlanUnreadable as exc:
        fail(str(exc), Exit.USAGE)
    reasons = stale(plan)
    if reasons:
        flags = "".join(f" --set {shlex.quote(s)}" for s in plan.sets)
        click.echo(f"the plan {path} is stale: " + "; ".join(reasons), err=True)
        click.echo(
            f"make it again with: skopt plan {shlex.quote(plan.recipe)}{flags}"
            f" -o {shlex.quote(path)}",
            err=True,
        )
        sys.exit(Exit.STALE)
    return plan
