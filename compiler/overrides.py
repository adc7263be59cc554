"""`--set KEY=VALUE` flags: parsed like source, applied to the merged blocks before checking.

The flags form a small source of their own, `<command line>`, one `--set ...` per line, so a
bad flag gets the same diagnostic as a bad recipe line, with carets under the flag.

A key that takes a string or a path takes the bare text after `=` as its value (a URL or
`skills/x.md` needs no quotes, which the shell would strip anyway); quoted text is still read
as source. Values of every other type are parsed and checked like source.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from skopt.compiler.schema import TOP_LEVEL, BlockSpec
from skopt.compiler.scope import member_key
from skopt.compiler.types import OneOf, PathTo, Str, Type, Unit, fits_shape
from skopt.grammar import ast
from skopt.grammar.parse import parse_setting
from skopt.grammar.source import Diagnostic, Span, did_you_mean, error

COMMAND_LINE = "<command line>"
PREFIX = "--set "


def command_line_source(sets: Sequence[str]) -> str:
    return "\n".join(PREFIX + flag for flag in sets)


def apply_sets(
    blocks: list[ast.Block], sets: Sequence[str]
) -> tuple[list[ast.Block], list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    for index, flag in enumerate(sets):
        line = index + 1
        key, eq, text = flag.partition("=")
        col = len(PREFIX) + 1
        if not eq or not key.strip():
            diagnostics.append(
                error(
                    "expected --set KEY=VALUE",
                    Span(COMMAND_LINE, line, col, line, col + len(flag)),
                    "no key before '='" if eq else "no '=' here",
                    help="e.g. --set target.temperature=0.2",
                )
            )
            continue
        if any(not part.strip() for part in key.split(".")):
            where = Span(COMMAND_LINE, line, col, line, col + len(key))
            diagnostics.append(error(f"empty name in --set key '{key}'", where, "write BLOCK.KEY"))
            continue
        path = _path(key, line, col)
        flag_value = _FlagValue(key, text, line, _key_type(blocks, [n.name for n in path]))
        value = flag_value.read(diagnostics)
        if value is not None:
            blocks = _set(blocks, path, value, diagnostics)
    return blocks, diagnostics


class _FlagValue:
    """The text after `=` of one flag, read according to the type of the key it sets."""

    def __init__(self, key: str, text: str, line: int, type: Type | None) -> None:
        self.key, self.text, self.line, self.type = key, text, line, type
        self.offset = len(PREFIX) + len(key) + 1  # the columns before the value

    def read(self, diagnostics: list[Diagnostic]) -> ast.Value | None:
        if _is_money(self.type) and not self.text.strip().startswith("$"):
            diagnostics.append(self._money_without_dollar())
            return None
        if not self.text.strip():
            where = Span(COMMAND_LINE, self.line, self.offset + 1, self.line, self.offset + 2)
            diagnostics.append(
                error(f"--set {self.key}= needs a value", where, "no value after '='")
            )
            return None
        if self.type is not None and _takes_text(self.type) and not self._quoted():
            return self._text_or_other(self.type)
        value, problems = self._parse()
        diagnostics.extend(problems)
        return value

    def _quoted(self) -> bool:
        return self.text.lstrip().startswith('"')

    def _parse(self) -> tuple[ast.Value | None, tuple[Diagnostic, ...]]:
        # padded so that the value's spans fall on its own line and columns of the flags
        padded = "\n" * (self.line - 1) + " " * self.offset + self.text
        return parse_setting(padded, COMMAND_LINE)

    def _text_or_other(self, type: Type) -> ast.Value:
        """The bare text, unless the key also takes another shape that the text parses as
        (`skill = empty`, `labels = [a, b]`)."""
        if isinstance(type, OneOf):
            value, problems = self._parse()
            others = [o for o in type.options if not _is_text(o)]
            if value is not None and not problems and any(fits_shape(o, value) for o in others):
                return value
        return self._bare()

    def _bare(self) -> ast.Str:
        text = self.text.strip()
        col = self.offset + 1 + len(self.text) - len(self.text.lstrip())
        return ast.Str(text, text, Span(COMMAND_LINE, self.line, col, self.line, col + len(text)))

    def _money_without_dollar(self) -> Diagnostic:
        """A shell turns an unquoted or double-quoted `$25` into `5` ($2 is a parameter), and
        `$5` into nothing: say so, with the spelling that survives the shell."""
        arrived = self.text.strip()
        amount = arrived if re.fullmatch(r"[0-9][0-9_]*(\.[0-9_]+)?", arrived) else "25"
        col = self.offset + 1
        where = Span(COMMAND_LINE, self.line, col, self.line, col + max(1, len(self.text)))
        return error(
            f"missing unit: --set {self.key} takes an amount such as $25",
            where,
            f"'{arrived}' arrived without '$'" if arrived else "nothing arrived after '='",
            help=(
                "the shell ate '$…' (an unquoted or double-quoted $25 arrives as 5, $5 as "
                f"nothing): write the flag in single quotes, --set '{self.key}=${amount}'"
            ),
        )


def _is_money(type: Type | None) -> bool:
    return isinstance(type, Unit) and type.unit == "money"


def _is_text(type: Type) -> bool:
    return isinstance(type, Str | PathTo)


def _takes_text(type: Type) -> bool:
    options = type.options if isinstance(type, OneOf) else (type,)
    return any(_is_text(o) for o in options)


def _key_type(blocks: list[ast.Block], path: Sequence[str]) -> Type | None:
    """The type of the key that `BLOCK.[CHILD.]KEY` names, when the path leads to one."""
    if len(path) < 2:
        return None
    spec: BlockSpec | None
    index = _find_block(blocks, path[0])
    if index is not None:
        spec = TOP_LEVEL.get(blocks[index].kind.name)
    else:
        spec = TOP_LEVEL.get(path[0])
        spec = spec if spec is not None and not spec.named else None
    for child in path[1:-1]:
        spec = spec.children.get(child) if spec is not None else None
    key = spec.keys.get(path[-1]) if spec is not None else None
    return key.type if key is not None else None


def _path(key: str, line: int, col: int) -> list[ast.Name]:
    names = []
    for part in key.split("."):
        names.append(ast.Name(part.strip(), Span(COMMAND_LINE, line, col, line, col + len(part))))
        col += len(part) + 1
    return names


def _set(
    blocks: list[ast.Block], path: list[ast.Name], value: ast.Value, diagnostics: list[Diagnostic]
) -> list[ast.Block]:
    head, rest = path[0], path[1:]
    if not rest:
        diagnostics.append(
            error(
                "--set needs BLOCK.KEY",
                head.span,
                "which block?",
                help=f"e.g. --set train.{head.name}=...",
            )
        )
        return blocks
    index = _find_block(blocks, head.name)
    if index is None:
        if head.name in TOP_LEVEL and not TOP_LEVEL[head.name].named:
            blocks = [*blocks, ast.Block(head, None, (), head.span)]
            index = len(blocks) - 1
        else:
            names = [b.name.name if b.name else b.kind.name for b in blocks]
            help = did_you_mean(head.name, names) or f"blocks here: {', '.join(names)}"
            diagnostics.append(
                error(
                    f"no block '{head.name}' to set", head.span, "not declared in this recipe", help
                )
            )
            return blocks
    updated = _set_in(blocks[index], rest, value)
    return [*blocks[:index], updated, *blocks[index + 1 :]]


def _find_block(blocks: list[ast.Block], head: str) -> int | None:
    for index, block in enumerate(blocks):
        if (block.name and block.name.name == head) or (
            block.name is None and block.kind.name == head
        ):
            return index
    return None


def _set_in(block: ast.Block, path: list[ast.Name], value: ast.Value) -> ast.Block:
    name, rest = path[0], path[1:]
    body = list(block.body)
    if not rest:
        entry = ast.Entry(name, value, name.span.to(value.span))
        body = [m for m in body if member_key(m) != name.name] + [entry]
        return ast.Block(block.kind, block.name, tuple(body), block.span)
    for index, member in enumerate(body):
        if isinstance(member, ast.Block) and member.name is None and member.kind.name == name.name:
            body[index] = _set_in(member, rest, value)
            break
    else:
        body.append(_set_in(ast.Block(name, None, (), name.span), rest, value))
    return ast.Block(block.kind, block.name, tuple(body), block.span)
