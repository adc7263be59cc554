"""The Pygments lexer: found through its entry point, lossless on any text, and in agreement
with the parser on every recipe of the repository (each word's token type is what the syntax
tree says the word is; an Error token exactly where the parser's lexer fails)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import (
    get_lexer_by_name,
    get_lexer_for_filename,
    get_lexer_for_mimetype,
    guess_lexer_for_filename,
)
from pygments.token import (
    Comment,
    Error,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Whitespace,
    _TokenType,
)

from skopt.grammar.lexing import lexer as lark_lexer
from skopt.grammar.literals import NumberTooLong, parse_number, parse_quantity
from skopt.ui import highlight as skopt_highlight
from skopt.ui.highlight import QUANTITY_TOKENS, SkoptLexer
from tests.conftest import RECIPES
from tests.test_layers import loaded_after
from tests.ui.recipe_words import RECIPE_FILES, lexical_errors, name, source, words

TOKEN_OF = {
    "directive": Keyword.Namespace,
    "block-kind": Keyword.Declaration,
    "block-name": Name.Class,
    "key": Name.Attribute,
    "argument": Name.Variable,
    "function": Name.Function,
    "word": Name.Constant,
    "comment": Comment.Single,
    "string": String.Double,
    "long-string": String.Double,
    "integer": Number.Integer,
    "float": Number.Float,
    **QUANTITY_TOKENS,
}
# the token types that stand for a whole word: each starts exactly where the tree has one
WORD_TOKENS = (Keyword, Name, Number, Comment)

Tokens = list[tuple[int, _TokenType, str]]


def tokens(text: str) -> Tokens:
    return list(SkoptLexer().get_tokens_unprocessed(text))


def offset(text: str, line: int, col: int) -> int:
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    return starts[line - 1] + col - 1


def position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def test_pygments_finds_the_lexer_by_name_file_name_mimetype_and_content() -> None:
    assert isinstance(get_lexer_by_name("skopt"), SkoptLexer)
    assert isinstance(get_lexer_for_filename("recipes/demo.skopt"), SkoptLexer)
    assert isinstance(get_lexer_for_mimetype("text/x-skopt"), SkoptLexer)
    text = (RECIPES / "demo.skopt").read_text()
    assert isinstance(guess_lexer_for_filename("demo.skopt", text), SkoptLexer)


def test_the_header_makes_a_text_a_recipe() -> None:
    # guess_lexer itself cannot pick skopt for a recipe with an `import`: Python's own guess
    # claims any text with "import " in it, and built-in lexers are asked first
    assert SkoptLexer.analyse_text((RECIPES / "demo.skopt").read_text()) == 1.0
    assert SkoptLexer.analyse_text("# a library\n\nskopt 1\nmodel m { provider = sim }\n") == 1.0
    assert SkoptLexer.analyse_text("import os\nprint(1)\n") == 0.0
    assert SkoptLexer.analyse_text("model m { provider = sim }\n") == 0.0


def test_loading_the_lexer_through_pygments_loads_no_parser() -> None:
    modules = loaded_after(
        "from pygments.lexers import get_lexer_by_name; get_lexer_by_name('skopt')"
    )
    assert "skopt.ui.highlight" in modules  # the entry point really loaded it
    assert "lark" not in modules and "textual" not in modules


@pytest.mark.parametrize(
    "terminal", ["NAME", "LONG_STRING", "STRING", "QUANTITY", "NUMBER", "COMMENT"]
)
def test_the_terminals_are_the_grammars(terminal: str) -> None:
    # Lark reads `\n` in a terminal as a newline character: written back as an escape here
    lark = {t.name: t.pattern.value.replace("\n", "\\n") for t in lark_lexer().terminals}
    assert getattr(skopt_highlight, terminal) == lark[terminal]


def test_specific_words_get_specific_tokens() -> None:
    text = 'skopt 1\nimport "base.skopt"\ntrain {\n  lr = cosine(max = 4, min = 2)\n}\n'
    significant = [(t, v) for _, t, v in tokens(text) if t is not Whitespace]
    assert significant == [
        (Keyword.Namespace, "skopt"),
        (Number.Integer, "1"),
        (Keyword.Namespace, "import"),
        (String.Double, '"'),
        (String.Double, "base.skopt"),
        (String.Double, '"'),
        (Keyword.Declaration, "train"),
        (Punctuation, "{"),
        (Name.Attribute, "lr"),
        (Operator, "="),
        (Name.Function, "cosine"),
        (Punctuation, "("),
        (Name.Variable, "max"),
        (Operator, "="),
        (Number.Integer, "4"),
        (Punctuation, ","),
        (Name.Variable, "min"),
        (Operator, "="),
        (Number.Integer, "2"),
        (Punctuation, ")"),
        (Punctuation, "}"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("model target {", [(Keyword.Declaration, "model"), (Name.Class, "target")]),
        ('name = "a\\"b\\tc\\q"', [(Name.Attribute, "name"), (Operator, "=")]),
        ("usd = $25", [(Name.Attribute, "usd"), (Operator, "="), (Number.Money, "$25")]),
        ("noise = 5%", [(Name.Attribute, "noise"), (Operator, "="), (Number.Percent, "5%")]),
        ("calls = 2k", [(Name.Attribute, "calls"), (Operator, "="), (Number.Count, "2k")]),
        ("time = 10min", [(Name.Attribute, "time"), (Operator, "="), (Number.Duration, "10min")]),
        ("tol = 1e-6", [(Name.Attribute, "tol"), (Operator, "="), (Number.Float, "1e-6")]),
        (
            "mode = patch # why",
            [(Name.Attribute, "mode"), (Operator, "="), (Name.Constant, "patch")],
        ),
        ("labels = [yes, no]", [(Name.Attribute, "labels"), (Operator, "="), (Punctuation, "[")]),
    ],
)
def test_an_entry_starts_with_the_expected_tokens(
    text: str, expected: list[tuple[_TokenType, str]]
) -> None:
    significant = [(t, v) for _, t, v in tokens(text) if t is not Whitespace]
    assert significant[: len(expected)] == expected


def test_escapes_and_comments() -> None:
    found = [(t, v) for _, t, v in tokens('x = "a\\"b\\q" # c\n') if t is not Whitespace]
    assert found[2:] == [
        (String.Double, '"'),
        (String.Double, "a"),
        (String.Escape, '\\"'),
        (String.Double, "b"),
        (String.Double, "\\q"),  # not an escape: kept as written (literals.unescape)
        (String.Double, '"'),
        (Comment.Single, "# c"),
    ]


@pytest.mark.parametrize("path", RECIPE_FILES, ids=name)
def test_the_tokens_put_together_are_the_text(path: Path) -> None:
    text = source(path)
    lexer = get_lexer_by_name("skopt", stripnl=False, ensurenl=False)
    assert "".join(value for _, value in lexer.get_tokens(text)) == text


ACCEPTED = [p for p in RECIPE_FILES if words(source(p)) is not None]
REJECTED = [p for p in RECIPE_FILES if p not in ACCEPTED]


def test_the_recipes_and_golden_cases_are_all_here() -> None:
    examples = {p.name for p in ACCEPTED if p.parent == RECIPES}
    assert {"demo.skopt", "base.skopt", "quickstart.skopt", "sweep.skopt"} <= examples
    assert len(ACCEPTED) > 100  # ok/, warn/, sets/ and the semantic bad/ cases parse
    assert sum(1 for p in REJECTED if lexical_errors(source(p))) >= 5


@pytest.mark.parametrize("path", ACCEPTED, ids=name)
def test_every_word_of_a_parsed_recipe_gets_its_token(path: Path) -> None:
    text = source(path)
    found = tokens(text)
    assert [v for _, t, v in found if t is Error] == []
    at = {index: (kind, value) for index, kind, value in found}
    expected = {}
    for word in words(text) or []:
        index = offset(text, word.line, word.col)
        kind, value = at[index]
        assert kind is TOKEN_OF[word.kind], (word, kind)
        if kind not in String:  # a string's first token is its opening quote
            assert value == word.text, word
        expected[index] = kind
    # and the other way round: no word token where the tree has no word
    spare = {
        position(text, i): (t, v)
        for i, t, v in found
        if any(t in w for w in WORD_TOKENS) and i not in expected
    }
    assert spare == {}


@pytest.mark.parametrize("path", REJECTED, ids=name)
def test_error_tokens_stand_exactly_where_the_parser_fails_to_lex(path: Path) -> None:
    text = source(path)
    errors = {position(text, i) for i, t, _ in tokens(text) if t is Error}
    diagnosed = {(d.span.line, d.span.col) for d in lexical_errors(text)}
    assert diagnosed <= errors
    assert {line for line, _ in errors} == {line for line, _ in diagnosed}


@given(st.text(st.characters(codec="utf-8"), max_size=200))
def test_any_text_lexes_losslessly(text: str) -> None:
    assert "".join(value for _, _, value in tokens(text)) == text


@given(st.from_regex(skopt_highlight.QUANTITY, fullmatch=True))
def test_every_quantity_the_grammar_accepts_is_one_token_of_its_unit(text: str) -> None:
    try:
        expected = QUANTITY_TOKENS[parse_quantity(text)[1]]
    except NumberTooLong:
        expected = Error  # the parser rejects it too
    assert [(t, v) for _, t, v in tokens(text)] == [(expected, text)]


@given(st.from_regex(skopt_highlight.NUMBER, fullmatch=True))
def test_every_number_the_grammar_accepts_is_one_number_token(text: str) -> None:
    try:
        parse_number(text)
        expected = Number.Float if any(c in text for c in ".eE") else Number.Integer
    except NumberTooLong:
        expected = Error
    assert [(t, v) for _, t, v in tokens(text)] == [(expected, text)]


def test_the_html_formatter_renders_a_recipe() -> None:
    html = highlight((RECIPES / "demo.skopt").read_text(), SkoptLexer(), HtmlFormatter())
    assert '<span class="nc">rules</span>' in html  # a block name, as Name.Class
    assert 'class="err"' not in html
