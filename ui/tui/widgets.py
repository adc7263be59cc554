"""The monitor's and the review's pieces: spending bars, the score chart, a diff."""

from __future__ import annotations

import difflib

from rich.text import Text
from textual.widgets import Static
from textual_plotext import PlotextPlot

from skopt.ui.tui.view import Bar, RunView

WIDTH = 24  # cells of a bar


def bar_line(bar: Bar) -> Text:
    """Two lines: `calls  ██████░░░░  412 of budget 600`, then the plan's range. Filled towards
    the budget (or the plan's maximum); red once past the plan's maximum."""
    limit = bar.limit
    fill = 0 if not limit else min(WIDTH, round(WIDTH * bar.actual / limit))
    over = bar.high is not None and bar.actual > bar.high
    line = Text(f"{bar.label:<7}")
    line.append("█" * fill, style="red" if over else "green")
    line.append("░" * (WIDTH - fill), style="grey37")
    line.append(f"  {_amount(bar.label, bar.actual)}")
    if bar.budget is not None:
        line.append(f" of budget {_amount(bar.label, bar.budget)}")
    plan = (
        f"plan {_amount(bar.label, bar.low)} – {_amount(bar.label, bar.high)}"
        if bar.low is not None and bar.high is not None
        else "plan: unknown (no price)"
    )
    line.append(f"\n{'':7}{plan}", style="grey62")
    return line


def _amount(label: str, value: float | None) -> str:
    if value is None:
        return "?"
    return f"${value:,.4f}" if label == "usd" else f"{round(value):,}"


class Bars(Static):
    def show(self, view: RunView) -> None:
        self.update(Text("\n").join(bar_line(b) for b in view.bars))


class ScoreChart(PlotextPlot):
    """The gate score after each step and the best so far, from the baseline (step 0); the
    test scores of the initial and the best skill in the title once the run has them."""

    def show(self, view: RunView) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        steps = [0, *(r.step for r in view.results)]
        base = view.baseline if view.baseline is not None else 0.0
        if view.baseline is not None:
            plt.plot(steps, [base, *(r.score for r in view.results)], label="gate", marker="dot")
            plt.plot(steps, [base, *(r.best for r in view.results)], label="best", marker="dot")
        test = f" · test {view.test.initial:.3f} → {view.test.best:.3f}" if view.test else ""
        plt.title(f"gate score per step{test}")
        plt.xlim(0, max(1, view.steps))
        plt.xticks(_ticks(view.steps))
        plt.ylim(0, 1)
        self.refresh()


def _ticks(steps: int) -> list[float]:
    """Whole steps on the x axis, at most about ten of them."""
    every = max(1, -(-steps // 10))
    return [float(s) for s in range(0, steps + 1, every)]


def diff_text(old: str, new: str, before: str, after: str) -> Text:
    """A unified diff, coloured; a sentence when there is no difference."""
    lines = list(
        difflib.unified_diff(old.splitlines(), new.splitlines(), before, after, lineterm="", n=2)
    )
    if not lines:
        return Text(f"no difference between {before} and {after}", style="grey62")
    text = Text()
    for line in lines:
        style = (
            "bold"
            if line.startswith(("---", "+++"))
            else "cyan"
            if line.startswith("@@")
            else "green"
            if line.startswith("+")
            else "red"
            if line.startswith("-")
            else ""
        )
        text.append(line + "\n", style=style)
    return text
