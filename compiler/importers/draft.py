"""A recipe under construction, and its rendering as canonical recipe text.

The importer builds `Block`s of settings whose values are already recipe text; `render`
writes them out, then parses the text and runs it through `grammar.format.format_recipe`, so
the output is canonical by construction (`skopt fmt --check` passes on it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from skopt.grammar.format import format_recipe
from skopt.grammar.literals import escape
from skopt.grammar.parse import parse


@dataclass
class Entry:
    key: str
    value: str
    note: str = ""  # a comment at the end of the line


@dataclass
class Block:
    head: str  # `model target`, `env searchqa`, `train`, `gate`
    members: list[Entry | Block] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # comment lines above the block

    def set(self, key: str, value: str, note: str = "") -> None:
        self.members.append(Entry(key, value, note))

    def put(self, key: str, value: str, note: str = "") -> None:
        """Set `key`, replacing a value set before."""
        for member in self.members:
            if isinstance(member, Entry) and member.key == key:
                member.value, member.note = value, note
                return
        self.set(key, value, note)

    def child(self, head: str) -> Block:
        block = Block(head)
        self.members.append(block)
        return block


def text(value: str) -> str:
    return escape(value)


def flag(value: bool) -> str:
    return "on" if value else "off"


def number(value: float) -> str:
    if isinstance(value, int) or (math.isfinite(value) and value == int(value)):
        return str(int(value))
    return repr(float(value))


def seconds(value: float) -> str:
    return f"{number(value)}s"


def percent(value: float) -> str:
    """`value` (a fraction) as a percent, to at most six decimals."""
    shown = f"{value * 100:.6f}".rstrip("0").rstrip(".")
    return f"{shown}%"


def call(name: str, *args: str, **named: str) -> str:
    parts = [*args, *(f"{k} = {v}" for k, v in named.items())]
    return f"{name}({', '.join(parts)})"


def render(header: list[str], blocks: list[Block], path: str) -> str:
    """The recipe text, canonical; raises if the importer built something that does not parse."""
    lines = ["skopt 1", *(f"# {line}" if line else "#" for line in header)]
    for block in blocks:
        lines.append("")
        _block(block, "", lines)
    source = "\n".join(lines) + "\n"
    parsed = parse(source, path)
    if parsed.recipe is None or parsed.diagnostics:
        problems = "; ".join(d.message for d in parsed.diagnostics)
        raise ValueError(f"the importer built a recipe that does not parse: {problems}")
    return format_recipe(parsed.recipe, source)


def _block(block: Block, indent: str, lines: list[str]) -> None:
    lines.extend(f"{indent}# {note}" for note in block.notes)
    lines.append(f"{indent}{block.head} {{")
    for member in block.members:
        if isinstance(member, Block):
            _block(member, indent + "  ", lines)
        else:
            note = f"  # {member.note}" if member.note else ""
            lines.append(f"{indent}  {member.key} = {member.value}{note}")
    lines.append(f"{indent}}}")
