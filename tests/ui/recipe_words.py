"""What the parser says each word of a recipe is, from the syntax tree's spans: the expectation
that both highlighters (the Pygments lexer and the TextMate grammar) are tested against."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from skopt.grammar import ast
from skopt.grammar.parse import parse
from skopt.grammar.source import Diagnostic
from tests.conftest import ROOT

# every recipe of the repository: the examples and the golden cases with their helper files
RECIPE_FILES = sorted(
    p for folder in ("recipes", "tests") for p in (ROOT / folder).rglob("*.skopt") if p.is_file()
)
# the parser's diagnostics that its lexer raises: a highlighter must mark exactly these
LEXICAL = ("unexpected character", "unterminated string", "invalid number", "number too long")


@dataclass(frozen=True)
class Word:
    line: int  # 1-based, as in a Span
    col: int
    text: str  # as written (a string's quotes included)
    kind: str  # directive, block-kind, block-name, key, argument, function, word, comment,
    # string, long-string, integer, float, money, percent, count, duration


def source(path: Path) -> str:
    """The file's text; the golden cases that are not UTF-8 read with replacement characters."""
    return path.read_bytes().decode("utf-8", "replace")


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def lexical_errors(text: str) -> list[Diagnostic]:
    return [d for d in parse(text, "x").diagnostics if d.message.startswith(LEXICAL)]


def words(text: str) -> list[Word] | None:
    """Every word of a recipe the parser accepts, in no particular order; None if it rejects it."""
    parsed = parse(text, "x")
    if parsed.recipe is None:
        return None
    found = [Word(c.span.line, c.span.col, c.text, "comment") for c in parsed.recipe.comments]
    for statement in parsed.recipe.statements:
        found.extend(_statement(statement))
    return found


def _word(node: ast.Name, kind: str) -> Word:
    return Word(node.span.line, node.span.col, node.name, kind)


def _statement(statement: ast.Statement) -> Iterator[Word]:
    if isinstance(statement, ast.Header):
        yield Word(statement.span.line, statement.span.col, "skopt", "directive")
        yield from _value(statement.version)
    elif isinstance(statement, ast.Import):
        yield Word(statement.span.line, statement.span.col, "import", "directive")
        yield from _value(statement.path)
    else:
        yield from _block(statement)


def _block(block: ast.Block) -> Iterator[Word]:
    yield _word(block.kind, "block-kind")
    if block.name is not None:
        yield _word(block.name, "block-name")
    for member in block.body:
        if isinstance(member, ast.Block):
            yield from _block(member)
        else:
            yield _word(member.key, "key")
            yield from _value(member.value)


def _value(value: ast.Value) -> Iterator[Word]:
    span = value.span
    if isinstance(value, ast.Str):
        kind = "long-string" if value.text.startswith('"""') else "string"
        yield Word(span.line, span.col, value.text, kind)
    elif isinstance(value, ast.Number):
        kind = "integer" if isinstance(value.value, int) else "float"
        yield Word(span.line, span.col, value.text, kind)
    elif isinstance(value, ast.Quantity):
        yield Word(span.line, span.col, value.text, value.unit)
    elif isinstance(value, ast.Name):
        yield _word(value, "word")
    elif isinstance(value, ast.Call):
        yield _word(value.func, "function")
        for arg in value.args:
            if arg.name is not None:
                yield _word(arg.name, "argument")
            yield from _value(arg.value)
    else:
        for item in value.items:
            yield from _value(item)
