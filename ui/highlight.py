"""Recipe highlighting: the Pygments lexer for `.skopt` files (SPEC §2), registered under the
`pygments.lexers` entry point so that `pygmentize`, Sphinx and rich find it by name.

The lexer follows the grammar's shape, not its vocabulary. The parser reads `skopt`, `model`
and `cosine` as plain names and lets the compiler give them meaning; likewise a word here is
a block kind, a block name, a key, a function or a value by what follows it (`NAME NAME {`,
`NAME =`, `NAME (`), so a new block kind or enum word needs no change in this file. Its
terminals are skopt.lark's, character for character (a test compares them); it imports no
Lark, so a highlighter never loads the parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from pygments.lexer import RegexLexer, bygroups, include
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

from skopt.grammar.ast import Unit
from skopt.grammar.literals import NumberTooLong, parse_number, parse_quantity

# skopt.lark's terminals
NAME = r"[A-Za-z_][A-Za-z0-9_-]*"
LONG_STRING = r'"""[\s\S]*?"""'
STRING = r'"(?:[^"\\\n]|\\.)*"'
_DIGITS = r"[0-9][0-9_]*(?:\.[0-9][0-9_]*)?"
_EXPONENT = r"(?:[eE][+-]?[0-9]+)?"
_END = r"(?![A-Za-z0-9_.$%])"
QUANTITY = rf"(?:-?{_DIGITS}{_EXPONENT}(?:%|k|M|min|s|h){_END}|\${_DIGITS}{_END})"
NUMBER = rf"-?{_DIGITS}{_EXPONENT}{_END}"
COMMENT = r"#[^\n]*"

# a quantity's token says its unit; styles that know only Number colour them all alike
QUANTITY_TOKENS: dict[Unit, _TokenType] = {
    "money": Number.Money,
    "percent": Number.Percent,
    "count": Number.Count,
    "duration": Number.Duration,
}
_HEADER = re.compile(r"\A(?:[ \t\f\r]*(?:#[^\n]*)?\n)*[ \t\f\r]*skopt[ \t]+[0-9]")

_Tokens = Iterator[tuple[int, _TokenType, str]]


def _number(text: str) -> _TokenType:
    return Number.Float if isinstance(parse_number(text), float) else Number.Integer


def _quantity(text: str) -> _TokenType:
    return QUANTITY_TOKENS[parse_quantity(text)[1]]


def _literal(
    kind_of: Callable[[str], _TokenType],
) -> Callable[[RegexLexer, re.Match[str]], _Tokens]:
    """A number or quantity as one token of the type the literal parser gives it."""

    def callback(lexer: RegexLexer, match: re.Match[str]) -> _Tokens:
        try:
            kind = kind_of(match.group())
        except NumberTooLong:  # the parser rejects it too: "number too long"
            kind = Error
        yield match.start(), kind, match.group()

    return callback


def _groups(*tokens: _TokenType) -> object:
    """One token per group of the match (Pygments' `bygroups`, which its stubs leave untyped)."""
    return bygroups(*tokens)  # type: ignore[no-untyped-call]


class SkoptLexer(RegexLexer):
    """Lexer for skopt recipes (`.skopt`): the language of skopt's training recipes."""

    name = "skopt"
    aliases = ["skopt"]  # noqa: RUF012 (Pygments reads these class attributes)
    filenames = ["*.skopt"]  # noqa: RUF012
    mimetypes = ["text/x-skopt"]  # noqa: RUF012

    tokens = {  # noqa: RUF012
        "root": [
            include("space"),
            (
                rf"({NAME})([ \t]+)({NAME})([ \t]*)(\{{)",
                _groups(Keyword.Declaration, Whitespace, Name.Class, Whitespace, Punctuation),
            ),
            (rf"({NAME})([ \t]*)(\{{)", _groups(Keyword.Declaration, Whitespace, Punctuation)),
            (rf"({NAME})([ \t]*)(=)", _groups(Name.Attribute, Whitespace, Operator)),
            (rf"{NAME}(?=[ \t]+(?:-?[0-9]|\"))", Keyword.Namespace),  # `skopt 1`, `import "x"`
            include("value"),
            (r"=", Operator),
            (r"[{}()\[\],]", Punctuation),
        ],
        "args": [  # inside ( ): newlines are layout, `name = value` is a keyword argument
            include("space"),
            (rf"({NAME})(\s*)(=)", _groups(Name.Variable, Whitespace, Operator)),
            (r"\)", Punctuation, "#pop"),
            include("value"),
            (r"=", Operator),
            (r"[{}\[\],]", Punctuation),
        ],
        "space": [
            (r"[ \t\f\r\n]+", Whitespace),
            (COMMENT, Comment.Single),
        ],
        "value": [
            (LONG_STRING, String.Double),
            (rf'(?={STRING})"', String.Double, "string"),
            (r'"[^\n]*', Error),  # an unterminated string: the parser stops at its quote too
            (QUANTITY, _literal(_quantity)),
            (NUMBER, _literal(_number)),
            (r"-?[0-9$][A-Za-z0-9_.$%]*", Error),  # `2ms`, `$x`: an invalid number or quantity
            (rf"({NAME})([ \t]*)(\()", _groups(Name.Function, Whitespace, Punctuation), "args"),
            (NAME, Name.Constant),  # an enum word, a boolean or a reference
        ],
        "string": [
            (r'\\["\\nt]', String.Escape),
            (r'[^"\\]+|\\.', String.Double),  # another backslash pair is kept as written
            (r'"', String.Double, "#pop"),
        ],
    }

    @staticmethod
    def analyse_text(text: str) -> float:
        """A file that opens (after comments) with the `skopt N` header is a recipe."""
        return 1.0 if _HEADER.match(text) else 0.0
