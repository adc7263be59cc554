"""The recipe's syntax tree: frozen nodes, each with the span it came from.

Spans and spellings (`1_000` or `1000`, a quoted or a triple-quoted string) are excluded from
equality, so two trees compare equal when they mean the same thing: `parse(fmt(x)) == parse(x)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from skopt.grammar.source import Span

Unit = Literal["count", "percent", "money", "duration"]


@dataclass(frozen=True, slots=True)
class Str:
    value: str
    text: str = field(compare=False)  # as written, quotes included
    span: Span = field(compare=False)


@dataclass(frozen=True, slots=True)
class Number:
    value: int | float
    text: str = field(compare=False)
    span: Span = field(compare=False)


@dataclass(frozen=True, slots=True)
class Quantity:
    """`60%`, `$0.15`, `20k`, `2M`, `30s`, `10min`, `2h`; `value` is in base units."""

    value: int | float
    unit: Unit
    text: str = field(compare=False)
    span: Span = field(compare=False)


@dataclass(frozen=True, slots=True)
class Name:
    """An identifier used as a value: an enum word, a boolean, or a reference."""

    name: str
    span: Span = field(compare=False)


@dataclass(frozen=True, slots=True)
class Arg:
    name: Name | None
    value: Value
    span: Span = field(compare=False)


@dataclass(frozen=True, slots=True)
class Call:
    func: Name
    args: tuple[Arg, ...]
    span: Span = field(compare=False)


@dataclass(frozen=True, slots=True)
class ListValue:
    items: tuple[Value, ...]
    span: Span = field(compare=False)


Value = Str | Number | Quantity | Name | Call | ListValue


@dataclass(frozen=True, slots=True)
class Entry:
    key: Name
    value: Value
    span: Span = field(compare=False)


@dataclass(frozen=True, slots=True)
class Block:
    kind: Name
    name: Name | None
    body: tuple[Entry | Block, ...]
    span: Span = field(compare=False)

    @property
    def label(self) -> str:
        """How a person names this block: `model 'target'`, `train`."""
        return f"{self.kind.name} '{self.name.name}'" if self.name else self.kind.name


@dataclass(frozen=True, slots=True)
class Header:
    version: Number
    span: Span = field(compare=False)


@dataclass(frozen=True, slots=True)
class Import:
    path: Str
    span: Span = field(compare=False)


@dataclass(frozen=True, slots=True)
class Comment:
    text: str
    span: Span = field(compare=False)


Statement = Header | Import | Block


@dataclass(frozen=True, slots=True)
class Recipe:
    path: str
    statements: tuple[Statement, ...]
    comments: tuple[Comment, ...] = field(default=(), compare=False)

    @property
    def header(self) -> Header | None:
        return next((s for s in self.statements if isinstance(s, Header)), None)

    @property
    def imports(self) -> tuple[Import, ...]:
        return tuple(s for s in self.statements if isinstance(s, Import))

    @property
    def blocks(self) -> tuple[Block, ...]:
        return tuple(s for s in self.statements if isinstance(s, Block))
