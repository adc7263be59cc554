"""The Python API: skopt's commands as typed functions, for scripts, notebooks and benchmarks.

A thin facade over the compiler and the runtime, the pieces the command line uses: `compile`
is `skopt check`/`skopt plan` (a recipe with errors raises one `RecipeError`, whose `str()` is
what `skopt check` prints for its diagnostics, without colour); `run` and `resume` are
`skopt run` and `skopt run --resume` (the same run folders, under the same rules); `evaluate`
is `skopt eval`; `open_run` reads a run folder back as `skopt report` does. Nothing here prints:
a run tells an optional `progress` callback every event its journal records.

Errors: `RecipeError`; `FolderRefused` (and its `NotARunFolder`, `FolderInUse`) for a folder
skopt will not use; `ExecutorUnavailable`; `CannotEvaluate` and `EvalFailed` from `evaluate`;
and the runtime failures that end a run (`MissingKey`, `LocalModelUnavailable` before it
starts; `CacheDamaged`, `CallFailed`, `ReplayMiss`, `EnvLoadError` once it runs: what finished
is kept, and `resume` continues it). Ctrl-C leaves a run as `skopt run` does: interrupted,
journaled, resumable.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from skopt.compiler.compile import compile_recipe
from skopt.compiler.plan import Plan
from skopt.grammar.source import Diagnostic, render_all
from skopt.runtime.artifacts import RunFolder, read_json
from skopt.runtime.claim import FolderInUse, FolderRefused, NotARunFolder
from skopt.runtime.envs import EnvLoadError
from skopt.runtime.errors import (
    CacheDamaged,
    CallFailed,
    LocalModelUnavailable,
    MissingKey,
    ReplayMiss,
)
from skopt.runtime.evaluate import CannotEvaluate, EvalFailed, Evaluation
from skopt.runtime.evaluate import evaluate as evaluate_skill
from skopt.runtime.events import Event
from skopt.runtime.executors import ExecutorUnavailable
from skopt.runtime.exits import OUTCOMES, Exit, Outcome
from skopt.runtime.journal import Journal
from skopt.runtime.launch import destination, executor_of, launch_job, plan_at, relaunch_job
from skopt.runtime.report import Report, Scores, Status, read_run, report, report_of
from skopt.runtime.run import plan_of
from skopt.runtime.state import State
from skopt.runtime.sweep import Displays, cell_folder, is_sweep

__all__ = [
    "CacheDamaged",
    "CallFailed",
    "CannotEvaluate",
    "Diagnostic",
    "EnvLoadError",
    "EvalFailed",
    "Evaluation",
    "ExecutorUnavailable",
    "Exit",
    "FolderInUse",
    "FolderRefused",
    "Journal",
    "LocalModelUnavailable",
    "MissingKey",
    "NotARunFolder",
    "Plan",
    "RecipeError",
    "ReplayMiss",
    "Report",
    "RunRecord",
    "RunResult",
    "Scores",
    "compile",
    "evaluate",
    "open_run",
    "resume",
    "run",
]

PathLike = str | os.PathLike[str]
# Told every event of a run's journal as it is written: the cell's label ("01", … in a sweep;
# "" for a single run) and the event.
Progress = Callable[[str, Event], None]
ExecutorName = Literal["local", "ray"]
Split = Literal["test", "valid", "train"]  # runtime/evaluate.py's SPLITS
Harness = Literal["plain", "deploy"]  # runtime/evaluate.py's HARNESSES


class RecipeError(Exception):
    """A recipe that does not compile. `diagnostics` holds every error and warning in source
    order, `sources` the texts they quote; `str()` renders them as `skopt check` prints them
    (without colour), so that a script can show exactly what the command line would."""

    def __init__(self, diagnostics: Sequence[Diagnostic], sources: Mapping[str, str]) -> None:
        self.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
        self.sources = dict(sources)
        super().__init__(render_all(self.diagnostics, self.sources))


@dataclass(frozen=True)
class RunResult:
    """How a run (or a sweep) that `run` or `resume` carried out ended. `calls` counts every
    call the run made (cache hits and failures included), `paid_calls` those paid for; `usd`
    is None when a model of the run has no known price. A sweep has no `scores` of its own:
    each of its `cells` has them."""

    folder: Path
    exit: Exit
    message: str
    status: Status
    scores: Scores | None
    calls: int
    paid_calls: int
    usd: float | None
    cells: tuple[RunResult, ...] = ()

    @property
    def ok(self) -> bool:
        return self.exit is Exit.OK


@dataclass(frozen=True)
class RunRecord:
    """A run folder read back, finished or not (interrupted, failed, still running): its plan,
    its journal (the typed events in order), the report made from them, and the engine's
    saved state (None before the first step was saved)."""

    folder: Path
    plan: Plan
    journal: Journal
    report: Report
    state: State | None

    @property
    def status(self) -> Status:
        return self.report.status

    @property
    def scores(self) -> Scores:
        return self.report.scores

    @property
    def events(self) -> list[Event]:
        return self.journal.events

    @property
    def summary(self) -> dict[str, Any] | None:
        """summary.json, which a run writes when it reaches its end (None before)."""
        data = _read_json(self.folder / "summary.json")
        return data if isinstance(data, dict) else None

    @property
    def best_skill(self) -> str | None:
        path = self.folder / "best_skill.md"
        return path.read_text(encoding="utf-8") if path.is_file() else None


def compile(path: PathLike, sets: Sequence[str] = ()) -> Plan:
    """The plan of the recipe at `path`, with `sets` as `--set KEY=VALUE` overrides; a recipe
    with errors raises RecipeError (warnings alone do not: `skopt check` shows them)."""
    if isinstance(sets, str):
        raise TypeError("sets is a list of KEY=VALUE strings, not one string")
    result = compile_recipe(os.fspath(path), tuple(sets))
    if result.plan is None:
        raise RecipeError(result.diagnostics, result.sources)
    return result.plan


def run(
    plan: Plan,
    out: PathLike | None = None,
    *,
    no_cache: bool = False,
    cache_from: PathLike | None = None,
    parallel: int = 2,
    executor: ExecutorName | None = None,
    ray_address: str | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Run the plan's job (or every cell of its sweep) in a new run folder: `out`, which must
    be absent or empty (FolderRefused otherwise), or by default the recipe's `out` (a new
    folder, suffixed if its name is taken). The options are `skopt run`'s flags."""
    if not plan.jobs:
        raise ValueError("this plan has no train job to run")
    root, unique = destination(plan, os.fspath(out) if out is not None else None)
    chosen = executor_of(plan, executor, parallel, ray_address)
    earlier = Path(cache_from) if cache_from is not None else None
    work = launch_job(
        plan, root, unique, _displays(progress), no_cache, parallel, earlier, executor=chosen
    )
    return _result(asyncio.run(work))


def resume(
    folder: PathLike,
    *,
    parallel: int = 2,
    executor: ExecutorName | None = None,
    ray_address: str | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Continue the interrupted (or failed) run or sweep in `folder` after its last finished
    step, as `skopt run --resume` does; a finished run is left as it is."""
    root = Path(folder)
    chosen = executor_of(plan_at(root), executor, parallel, ray_address)
    return _result(asyncio.run(relaunch_job(root, _displays(progress), parallel, chosen)))


def evaluate(
    plan: Plan, skill: str | os.PathLike[str], split: Split = "test", harness: Harness = "plain"
) -> Evaluation:
    """Score one skill with the plan's target model on a split of its env, as `skopt eval`
    does (nothing is written). `skill` is the skill's text, or a path to its file; `harness`
    is how the target sees it: plain (as training shows it) or deploy (as a user deploys it)."""
    text = Path(skill).read_text(encoding="utf-8") if isinstance(skill, os.PathLike) else skill
    return evaluate_skill(plan, text, split, harness)


def open_run(folder: PathLike) -> RunRecord:
    """The run folder at `folder` read back (NotARunFolder if it is not one; a sweep's cells
    are run folders, its root is not)."""
    root = Path(folder)
    plan, journal = read_run(root)
    return RunRecord(root, plan, journal, report_of(root, plan, journal), _state(root))


def _displays(progress: Progress | None) -> Displays | None:
    if progress is None:
        return None
    return lambda label, _plan: _Told(label, progress)


@dataclass(frozen=True)
class _Told:
    """A run's live display that hands each event to a `progress` callback."""

    label: str
    tell: Progress

    def emit(self, event: Event) -> None:
        self.tell(self.label, event)


def _result(outcome: Outcome) -> RunResult:
    if not is_sweep(outcome.folder):
        return _of_report(report(outcome.folder), outcome.exit, outcome.message)
    plan = plan_of(RunFolder(outcome.folder))
    cells = tuple(_cell(cell_folder(outcome.folder, plan, i).root) for i in range(len(plan.jobs)))
    usd = [c.usd for c in cells]
    return RunResult(
        folder=outcome.folder,
        exit=outcome.exit,
        message=outcome.message,
        status=_STATUS.get(outcome.exit, "failed"),
        scores=None,
        calls=sum(c.calls for c in cells),
        paid_calls=sum(c.paid_calls for c in cells),
        usd=None if None in usd else sum(u or 0.0 for u in usd),
        cells=cells,
    )


# A sweep's status, from its exit (its worst cell's).
_STATUS: dict[Exit, Status] = {Exit.OK: "finished", Exit.BUDGET: "budget"}


def _cell(root: Path) -> RunResult:
    """A sweep's cell, from its run folder (one that never started has none)."""
    try:
        made = report(root)
    except NotARunFolder:
        return RunResult(root, Exit.FAILED, "never started", "not started", None, 0, 0, 0.0)
    word = "done" if made.status == "finished" else made.status
    return _of_report(made, OUTCOMES.get(word, Exit.FAILED), made.ended or word)


def _of_report(made: Report, code: Exit, message: str) -> RunResult:
    priced = [u.usd for u in made.usage]
    return RunResult(
        folder=Path(made.folder),
        exit=code,
        message=message,
        status=made.status,
        scores=made.scores,
        calls=sum(u.calls for u in made.usage),
        paid_calls=sum(u.calls - u.cache_hits - u.failed for u in made.usage),
        usd=None if None in priced else sum(u or 0.0 for u in priced),
    )


def _state(root: Path) -> State | None:
    data = _read_json(RunFolder(root).state)
    try:
        return State.model_validate(data) if isinstance(data, dict) else None
    except ValueError:  # from another version of skopt: the journal still tells the run
        return None


def _read_json(path: Path) -> object:
    """A JSON file of the run folder; None when it is not there (yet) or cannot be read."""
    try:
        return read_json(path)
    except (OSError, ValueError):
        return None
