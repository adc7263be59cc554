"""What stands at a point of a recipe's text, on text that parses and on text mid-edit."""

from __future__ import annotations

from skopt.grammar import ast
from skopt.grammar.cursor import Cursor, at

TEXT = """skopt 1
import "base.skopt"
model m {
  provider = sim
  price { input = $1 }
}
train {
  lr = cosine(max = 4)
  mode =
  judge = rubric(model = c)
  include = [inter,
}
"""


def cursor(line: int, before: str) -> Cursor:
    """The cursor just after `before` on `line` (1-based)."""
    column = TEXT.split("\n")[line - 1].index(before) + len(before) + 1
    return at(TEXT, line, column, "r.skopt")


def test_places_and_enclosing_blocks() -> None:
    assert cursor(1, "").place == "statement"
    start = cursor(4, "  pro")
    assert (start.place, start.blocks) == ("member", ("model",))
    assert isinstance(start.word, ast.Name) and start.word.name == "provider"
    assert start.word.span.col == 3 and start.word.span.end_col == 11
    nested = cursor(5, "price { inp")
    assert (nested.place, nested.blocks) == ("member", ("model", "price"))
    value = cursor(4, "provider = s")
    assert (value.place, value.key) == ("value", "provider")


def test_mid_edit_values_calls_and_lists() -> None:
    empty = cursor(9, "mode =")
    assert (empty.place, empty.blocks, empty.key, empty.word) == ("value", ("train",), "mode", None)
    argument = cursor(10, "model = ")
    assert (argument.key, argument.call, argument.arg) == ("judge", "rubric", "model")
    assert isinstance(argument.word, ast.Name) and argument.word.name == "c"
    listed = cursor(11, "[inter,")
    assert (listed.place, listed.key, listed.call) == ("value", "include", None)
    closed = cursor(8, "cosine(max = 4)")
    assert (closed.key, closed.call) == ("lr", None)


def test_an_import_string_and_a_bad_character() -> None:
    imported = cursor(2, 'import "ba')
    assert imported.place == "import" and isinstance(imported.word, ast.Str)
    assert imported.word.value == "base.skopt"
    bad = 'model m {\n  name = "x" @ 1\n  pro\n}\n'  # a line with a bad character is left out
    after = at(bad, 3, 6, "r.skopt")
    assert (after.place, after.blocks) == ("member", ("model",))
    assert at(TEXT, 99, 1, "r.skopt").place == "other"
    assert at("model m {  # a pro\n}\n", 1, 18, "r.skopt").place == "other"  # in a comment
