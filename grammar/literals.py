"""Literal values: numbers, suffixed quantities and the two string forms (SPEC §2.1)."""

from __future__ import annotations

import textwrap

from skopt.grammar.ast import Unit

# suffix -> (unit, multiplier); `min` is tried before `s` and the others
SUFFIXES: dict[str, tuple[Unit, int | float]] = {
    "min": ("duration", 60),
    "%": ("percent", 0.01),
    "k": ("count", 1_000),
    "M": ("count", 1_000_000),
    "s": ("duration", 1),
    "h": ("duration", 3600),
}

_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}


MAX_DIGITS = 30


class NumberTooLong(ValueError):
    pass


def parse_number(text: str) -> int | float:
    clean = text.replace("_", "")
    if len(clean) > MAX_DIGITS:
        raise NumberTooLong(text)
    if any(c in clean for c in ".eE"):
        return float(clean)
    return int(clean)


def parse_quantity(text: str) -> tuple[int | float, Unit]:
    if text.startswith("$"):
        return parse_number(text[1:]), "money"
    for suffix, (unit, factor) in SUFFIXES.items():
        if text.endswith(suffix):
            number = parse_number(text[: -len(suffix)])
            value = number * factor
            if unit == "percent":
                value = round(value, 12)
            elif isinstance(value, float) and value.is_integer():
                value = int(value)
            return value, unit
    raise ValueError(f"not a quantity: {text}")


def unescape(body: str) -> str:
    """Resolve `\\" \\\\ \\n \\t`; any other backslash pair is kept as written."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def escape(value: str) -> str:
    """The quoted `"..."` form of a string value."""
    body = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{body}"'


def undent(body: str) -> str:
    """A `\"\"\"...\"\"\"` body: no escapes, first newline dropped, common indentation removed."""
    if body.startswith("\n"):
        body = body[1:]
    elif body.startswith("\r\n"):
        body = body[2:]
    return textwrap.dedent(body)
