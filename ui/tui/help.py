"""`?`: the keys of the screen underneath, and what they do."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Static


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "app.pop_screen", "close")
    ]

    def __init__(self, under: Screen[object]) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        table = Table(title="keys", show_header=False, box=None, padding=(0, 2))
        for binding in self.under.BINDINGS:
            if isinstance(binding, Binding) and binding.show:
                keys = binding.key.replace("question_mark", "?").replace(",", " / ")
                table.add_row(keys, binding.description)
        with VerticalScroll(id="help"):
            yield Static(table)
        yield Footer()
