"""A sweep's cells as a table, followed live; `enter` opens a cell in the run monitor."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from skopt.ui.tui.monitor import POLL_S, MonitorScreen
from skopt.ui.tui.sources import Source
from skopt.ui.tui.view import RunView, run_view

COLUMNS = ("cell", "name", "status", "steps", "gate best", "test initial → best")


class SweepScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "open the cell", priority=True),
        Binding("j,down", "move(1)", "down", show=False),
        Binding("k,up", "move(-1)", "up", show=False),
        Binding("q", "quit_sweep", "quit"),
        Binding("ctrl+c", "quit_sweep", "quit", show=False, priority=True),
        Binding("question_mark", "app.help", "help"),
    ]

    def __init__(
        self,
        recipe: str,
        cells: dict[str, Source],
        on_quit: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.recipe, self.cells, self.on_quit, self.clock = recipe, cells, on_quit, clock

    def compose(self) -> ComposeResult:
        yield Static(f"sweep · {self.recipe} · {len(self.cells)} cells", id="head")
        yield DataTable(id="cells", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#cells", DataTable)
        table.add_columns(*COLUMNS)
        for label, source in self.cells.items():
            source.poll()
            table.add_row(*row(label, source, self._view(source)), key=label)
        table.focus()
        self.set_interval(POLL_S, self.follow)

    def _view(self, source: Source) -> RunView:
        return run_view(source.plan, source.journal, self.clock(), source.running())

    def follow(self) -> None:
        table = self.query_one("#cells", DataTable)
        for index, (label, source) in enumerate(self.cells.items()):
            if source.poll() or source.running():
                for column, value in enumerate(row(label, source, self._view(source))):
                    table.update_cell_at(Coordinate(index, column), value)

    def action_open(self) -> None:
        table = self.query_one("#cells", DataTable)
        label = list(self.cells)[table.cursor_row]
        self.app.push_screen(MonitorScreen(self.cells[label], self._back, self.clock))

    def _back(self) -> None:
        self.app.pop_screen()

    def action_move(self, by: int) -> None:
        table = self.query_one("#cells", DataTable)
        table.move_cursor(row=max(0, table.cursor_row + by))

    def action_quit_sweep(self) -> None:
        if self.on_quit is not None:
            self.on_quit()
        else:
            self.app.exit(0)


def row(label: str, source: Source, view: RunView) -> list[str]:
    best = view.results[-1].best if view.results else view.baseline
    test = f"{view.test.initial:.3f} → {view.test.best:.3f}" if view.test else "—"
    return [
        label,
        source.plan.jobs[0].name,
        view.status,
        f"{len(view.results)}/{view.steps}",
        "—" if best is None else f"{best:.3f}",
        test,
    ]
