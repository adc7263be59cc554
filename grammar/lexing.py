"""The Lark side of the grammar: building the parser once, the post-lexer, and token spans.

The only module (with `parse`, `syntax_errors` and `to_ast`) that touches Lark.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from lark import Lark, Token
from lark.exceptions import LarkError

from skopt.grammar.source import Span

MAX_NESTING = 48

# the comments of the text being parsed, collected by the lexer (they never reach the parser)
comments: ContextVar[list[Token]] = ContextVar("comments")


class TooDeep(LarkError):
    def __init__(self, token: Token) -> None:
        super().__init__("nesting too deep")
        self.token = token


class Brackets:
    """Post-lexer: newlines inside ( ) and [ ] are layout, not separators; bounds nesting."""

    always_accept = ("_NL",)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        nesting = 0
        for tok in stream:
            if tok.type in ("LPAR", "LSQB"):
                depth += 1
            elif tok.type in ("RPAR", "RSQB"):
                depth = max(0, depth - 1)
            if tok.type in ("LPAR", "LSQB", "LBRACE"):
                nesting += 1
                if nesting > MAX_NESTING:
                    raise TooDeep(tok)
            elif tok.type in ("RPAR", "RSQB", "RBRACE"):
                nesting = max(0, nesting - 1)
            if tok.type == "_NL" and depth:
                continue
            yield tok


def keep_comment(tok: Token) -> Token:
    comments.get().append(tok)
    return tok


def build(lexer: str) -> Lark:
    grammar = (Path(__file__).parent / "skopt.lark").read_text()
    return Lark(
        grammar,
        parser="lalr",
        lexer=lexer,
        start=["start", "setting"],
        strict=True,
        propagate_positions=True,
        maybe_placeholders=True,
        postlex=Brackets(),
        lexer_callbacks={"COMMENT": keep_comment},
        cache=True,  # the tables are kept in a temporary file: later processes start faster
    )


@functools.cache
def parser() -> Lark:
    return build("contextual")


@functools.cache
def lexer() -> Lark:
    """The same grammar with a standalone lexer, built once: it lexes for error recovery."""
    return build("basic")


def token_span(tok: Token, path: str) -> Span:
    line = tok.line or 1
    col = tok.column or 1
    return Span(path, line, col, tok.end_line or line, tok.end_column or col + 1)
