"""Per-change review of a run's proposal: accept or reject each change, see the live file as it
would be after adopting, and adopt (runtime/adopt.py does the writing, as `skopt adopt`)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.coordinate import Coordinate
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Static

from skopt.runtime.adopt import (
    AdoptRefused,
    Change,
    Proposal,
    adopt,
    headline,
    preview,
    receipts,
)
from skopt.ui.tui.widgets import diff_text


class ReviewScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "move(1)", "down"),
        Binding("k,up", "move(-1)", "up"),
        Binding("a", "decide(True)", "accept"),
        Binding("r", "decide(False)", "reject"),
        Binding("space", "flip", "toggle"),
        Binding("enter", "details", "details", priority=True),
        Binding("A", "adopt", "adopt"),
        Binding("q", "app.exit", "quit"),
        Binding("question_mark", "app.help", "help"),
    ]

    def __init__(self, folder: Path, p: Proposal) -> None:
        super().__init__()
        self.folder, self.proposal = folder, p
        adopted = {n for a in receipts(folder) for n in a.changes}
        self.adopted = adopted
        # Every change starts accepted (the gate accepted its step), but what was adopted before.
        self.accepted = {c.number for c in p.changes} - adopted

    def compose(self) -> ComposeResult:
        yield Static(id="review-head")
        with Horizontal(id="review"):
            yield DataTable(id="changes", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="after"):
                yield Static(id="preview")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#changes", DataTable)
        table.add_columns("#", "", "from", "change", "support", "fixed", "broke")
        for c in self.proposal.changes:
            table.add_row(*self._cells(c), key=str(c.number))
        table.focus()
        self.show()

    def _cells(self, c: Change) -> list[str | Text]:
        mark = (
            Text("adopted", style="grey62")
            if c.number in self.adopted
            else Text("✓ accept", style="green")
            if c.number in self.accepted
            else Text("✗ reject", style="red")
        )
        return [str(c.number), mark, c.source, headline(c), str(c.support), str(len(c.fixed)),
                str(len(c.broke))]  # fmt: skip

    def show(self) -> None:
        p = self.proposal
        live = self.live_text()
        after, problems = preview(p, sorted(self.accepted), live)
        head = Text(f"review · {self.folder} · live file {p.live or '(none: skill = empty)'}\n")
        head.append(
            f"{len(p.changes)} changes · {len(self.accepted)} accepted"
            + (f" · {len(self.adopted)} adopted before" if self.adopted else ""),
            style="bold",
        )
        for problem in problems:
            head.append(f"\n! {problem}", style="bold red")
        self.query_one("#review-head", Static).update(head)
        self.query_one("#preview", Static).update(
            diff_text(live, after, "live file", "after adopting the accepted changes")
        )

    def live_text(self) -> str:
        path = Path(self.proposal.live) if self.proposal.live else None
        try:
            return path.read_text(encoding="utf-8") if path else ""
        except (OSError, UnicodeDecodeError):
            return ""

    def current(self) -> Change | None:
        table = self.query_one("#changes", DataTable)
        if not self.proposal.changes:
            return None
        return self.proposal.changes[table.cursor_row]

    def _redraw_row(self, c: Change) -> None:
        table = self.query_one("#changes", DataTable)
        for column, value in enumerate(self._cells(c)):
            table.update_cell_at(Coordinate(c.number - 1, column), value)
        self.show()

    def action_move(self, by: int) -> None:
        table = self.query_one("#changes", DataTable)
        table.move_cursor(row=max(0, table.cursor_row + by))

    def action_decide(self, accept: bool) -> None:
        c = self.current()
        if c is None or c.number in self.adopted:
            return
        if accept:
            self.accepted.add(c.number)
        else:
            self.accepted.discard(c.number)
        self._redraw_row(c)

    def action_flip(self) -> None:
        c = self.current()
        if c is not None:
            self.action_decide(c.number not in self.accepted)

    def action_details(self) -> None:
        c = self.current()
        if c is not None:
            self.app.push_screen(DetailsScreen(c))

    def action_adopt(self) -> None:
        try:
            done = adopt(self.folder, sorted(self.accepted))
        except AdoptRefused as exc:
            self.notify(str(exc), title="nothing adopted", severity="error", timeout=10)
            return
        self.adopted |= set(done.changes)
        self.accepted -= set(done.changes)
        for c in self.proposal.changes:
            self._redraw_row(c)
        self.notify(
            f"adopted {len(done.changes)} change(s) into {done.live}; backup {done.backup}",
            title="adopted",
            timeout=10,
        )


class DetailsScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,enter,q", "app.pop_screen", "close")]

    def __init__(self, change: Change) -> None:
        super().__init__()
        self.change = change

    def compose(self) -> ComposeResult:
        c = self.change
        text = Text(f"change {c.number} · {c.source} · support {c.support}\n", style="bold")
        text.append(f"why: {c.rationale or '(no rationale given)'}\n")
        text.append(f"fixed on the gate: {', '.join(c.fixed) or 'none'}\n", style="green")
        text.append(f"broke on the gate: {', '.join(c.broke) or 'none'}\n\n", style="red")
        text.append_text(diff_text(c.block.replaced, c.block.replacement, "before", "after"))
        with VerticalScroll(id="details"):
            yield Static(text)
        yield Footer()
