"""The run monitor: a run's progress, spending, score curve, gate decisions, skill and diffs, and
the optimizer output that was not usable — followed live from its journal."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from skopt.runtime.events import StepResult
from skopt.ui.progress import clock_text
from skopt.ui.tui.sources import Source
from skopt.ui.tui.view import RunView, run_view
from skopt.ui.tui.widgets import Bars, ScoreChart, diff_text

POLL_S = 0.25
TABS = ("decisions", "skill", "previous", "initial", "optimizer")


class MonitorScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit_monitor", "quit"),
        Binding("ctrl+c", "quit_monitor", "quit", show=False, priority=True),
        Binding("1", "tab('decisions')", "decisions"),
        Binding("2", "tab('skill')", "skill"),
        Binding("3", "tab('previous')", "diff: previous"),
        Binding("4", "tab('initial')", "diff: initial"),
        Binding("5", "tab('optimizer')", "optimizer"),
        Binding("question_mark", "app.help", "help"),
    ]

    def __init__(
        self,
        source: Source,
        on_quit: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.source, self.on_quit, self.clock = source, on_quit, clock
        self.view: RunView | None = None
        self._rows = 0

    def compose(self) -> ComposeResult:
        yield Static(id="head")
        with Horizontal(id="top"):
            yield Bars(id="bars")
            yield ScoreChart(id="chart")
        with TabbedContent(initial="decisions"):
            with TabPane("decisions", id="decisions"):
                yield DataTable(id="table", cursor_type="row", zebra_stripes=True)
            with TabPane("skill", id="skill"), VerticalScroll():
                yield Static(id="skill-text")
            with TabPane("diff: previous", id="previous"), VerticalScroll():
                yield Static(id="previous-diff")
            with TabPane("diff: initial", id="initial"), VerticalScroll():
                yield Static(id="initial-diff")
            with TabPane("optimizer", id="optimizer"), VerticalScroll():
                yield Static(id="unusable")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#table", DataTable)
        table.add_columns("step", "epoch", "decision", "before → after", "reason")
        self.source.poll()
        self.show()
        self.set_interval(POLL_S, self.follow)

    def follow(self) -> None:
        """Take in new events; redraw when there are some, or every second while it runs."""
        if self.source.poll() or self.source.running():
            self.show()

    def show(self) -> None:
        view = run_view(self.source.plan, self.source.journal, self.clock(), self.source.running())
        self.view = view
        self.query_one("#head", Static).update(head(view))
        self.query_one(Bars).show(view)
        self.query_one(ScoreChart).show(view)
        self._decisions(view.results)
        self.query_one("#skill-text", Static).update(Text(view.skill))
        self.query_one("#previous-diff", Static).update(
            diff_text(view.previous, view.skill, "previous", "current")
        )
        self.query_one("#initial-diff", Static).update(
            diff_text(view.initial, view.skill, "initial", "current")
        )
        self.query_one("#unusable", Static).update(unusable(view))

    def _decisions(self, results: list[StepResult]) -> None:
        table = self.query_one("#table", DataTable)
        if len(results) < self._rows:  # a journal read again from its start
            table.clear()
            self._rows = 0
        for r in results[self._rows :]:
            d = r.decision
            verdict = "accepted" if d.accepted else "rejected" if d.before is not None else "—"
            change = "" if d.before is None else f"{d.before:.3f} → {d.after:.3f}"
            table.add_row(str(r.step), str(r.epoch), verdict, change, d.reason)
        self._rows = len(results)

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_quit_monitor(self) -> None:
        if self.on_quit is not None:
            self.on_quit()
        else:
            self.app.exit(0)


def head(view: RunView) -> Text:
    sim = " (simulation)" if view.simulation else ""
    status = view.status + (f": {view.detail}" if view.detail else "")
    done = f"{len(view.results)} of {view.steps} steps done"
    phase = f" · now: {view.phase.replace('_', ' ')}" if view.status == "running" else ""
    where = f"epoch {min(view.epoch, view.epochs)} · {done}" if view.results else done
    eta = f" · about {clock_text(view.eta_s)} left" if view.eta_s is not None else ""
    text = Text(f"{view.recipe}{sim}\n", style="bold")
    text.append(f"{status}", style=_status_style(view.status))
    text.append(f" · {where}{phase} · {clock_text(view.elapsed_s)} elapsed{eta}")
    return text


def _status_style(status: str) -> str:
    return {
        "running": "bold cyan",
        "finished": "bold green",
        "budget": "bold yellow",
        "failed": "bold red",
    }.get(status, "bold")


def unusable(view: RunView) -> Text:
    if not view.unusable:
        return Text("every optimizer answer so far was usable", style="grey62")
    text = Text()
    for a in view.unusable:
        text.append(f"step {a.step} · {a.task} · {a.problem}\n", style="bold")
        for raw in a.raw:
            text.append(raw[:2000] + ("…" if len(raw) > 2000 else "") + "\n\n", style="grey62")
    return text
