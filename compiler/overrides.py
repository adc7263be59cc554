"""`--set KEY=VALUE` flags: parsed like source, applied to the merged blocks before checking.

The flags form a small source of their own, `<command line>`, one `--set ...` per line, so a
bad flag gets the same diagnostic as a bad recipe line, with carets under the flag.
"""

from __future__ import annotations

from collections.abc import Sequence

from skopt.compiler.schema import TOP_LEVEL
from skopt.compiler.scope import member_key
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
                    "no '=' here",
                    help="e.g. --set target.temperature=0.2",
                )
            )
            continue
        offset = len(PREFIX) + len(key) + 1
        if not text.strip():
            where = Span(COMMAND_LINE, line, offset + 1, line, offset + 2)
            diagnostics.append(error(f"--set {key}= needs a value", where, "no value after '='"))
            continue
        if any(not part.strip() for part in key.split(".")):
            where = Span(COMMAND_LINE, line, col, line, col + len(key))
            diagnostics.append(error(f"empty name in --set key '{key}'", where, "write BLOCK.KEY"))
            continue
        value, problems = parse_setting("\n" * index + " " * offset + text, COMMAND_LINE)
        diagnostics.extend(problems)
        if value is None:
            continue
        path = _path(key, line, col)
        blocks = _set(blocks, path, value, diagnostics)
    return blocks, diagnostics


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
    index = _find_block(blocks, head)
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


def _find_block(blocks: list[ast.Block], head: ast.Name) -> int | None:
    for index, block in enumerate(blocks):
        if (block.name and block.name.name == head.name) or (
            block.name is None and block.kind.name == head.name
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
