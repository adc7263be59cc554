"""The Textual app, and the screens it opens with: the run monitor (`skopt tui`), a sweep's
table, per-change review (`skopt review`), or a run of this process (`skopt run --tui`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.screen import Screen

from skopt.compiler.plan import Plan
from skopt.runtime.adopt import proposal
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.claim import read_marker
from skopt.runtime.run import plan_of
from skopt.runtime.sweep import cell_folder, cell_label
from skopt.ui.tui.help import HelpScreen
from skopt.ui.tui.monitor import MonitorScreen
from skopt.ui.tui.review import ReviewScreen
from skopt.ui.tui.sources import FolderSource, Source
from skopt.ui.tui.sweep import SweepScreen

Clock = Callable[[], float]


class SkoptApp(App[int]):
    CSS_PATH = "skopt.tcss"
    TITLE = "skopt"

    def __init__(self, first: Screen[Any]) -> None:
        super().__init__()
        self.first = first

    def on_mount(self) -> None:
        self.push_screen(self.first)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.screen))


def monitor_app(root: Path, clock: Clock = time.time) -> SkoptApp:
    """A run folder in the monitor, or a sweep folder as its table (NotARunFolder if neither)."""
    marker = read_marker(root)
    if marker is not None and marker["kind"] == "sweep":
        plan = plan_of(RunFolder(root))
        cells: dict[str, Source] = {
            cell_label(plan, i): FolderSource(cell_folder(root, plan, i).root)
            for i in range(len(plan.jobs))
            if read_marker(cell_folder(root, plan, i).root) is not None
        }
        return SkoptApp(SweepScreen(plan.recipe, cells, clock=clock))
    return SkoptApp(MonitorScreen(FolderSource(root), clock=clock))


def review_app(root: Path) -> SkoptApp:
    return SkoptApp(ReviewScreen(root, proposal(root)))


def live_app(plan: Plan, cells: dict[str, Source], stop: Callable[[], None]) -> SkoptApp:
    """A run of this process: `q` (or Ctrl-C) stops it, as Ctrl-C does without the UI, and
    leaves."""

    def leave() -> None:
        stop()
        app.exit()

    first: Screen[Any] = (
        MonitorScreen(next(iter(cells.values())), on_quit=leave)
        if len(cells) == 1
        else SweepScreen(plan.recipe, cells, on_quit=leave)
    )
    app = SkoptApp(first)
    return app
