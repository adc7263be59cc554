"""Lark's parse tree → skopt's AST (`ast.py`), with spans; directive words are checked here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from lark import Token, Transformer, v_args
from lark.tree import Meta

from skopt.grammar import ast
from skopt.grammar.lexing import token_span
from skopt.grammar.literals import (
    MAX_DIGITS,
    NumberTooLong,
    parse_number,
    parse_quantity,
    undent,
    unescape,
)
from skopt.grammar.source import Span, error
from skopt.grammar.syntax_errors import SyntaxProblem, short

_T = TypeVar("_T")


def _meta_span(meta: Meta, path: str) -> Span:
    return Span(path, meta.line, meta.column, meta.end_line, meta.end_column)


class ToAst(Transformer[Token, object]):
    """Builds AST nodes; the directive words `skopt` and `import` are checked here."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def _span(self, tok: Token) -> Span:
        return token_span(tok, self.path)

    def _name(self, tok: Token) -> ast.Name:
        return ast.Name(str(tok), self._span(tok))

    def start(self, children: list[ast.Statement | None]) -> ast.Recipe:
        return ast.Recipe(self.path, tuple(c for c in children if c is not None))

    def setting(self, children: list[ast.Value]) -> ast.Value:
        return children[0]

    @v_args(meta=True)
    def directive(self, meta: Meta, children: list[object]) -> ast.Header | ast.Import:
        word, arg = children
        assert isinstance(word, Token)
        span = _meta_span(meta, self.path)
        if word == "skopt" and isinstance(arg, ast.Number):
            return ast.Header(arg, span)
        if word == "import" and isinstance(arg, ast.Str):
            return ast.Import(arg, span)
        arg_span = arg.span  # type: ignore[attr-defined]
        if word in ("skopt", "import"):
            wants = "a version number" if word == "skopt" else "a file name in quotes"
            raise SyntaxProblem(error(f"'{word}' takes {wants}", arg_span, "not valid here"))
        raise SyntaxProblem(
            error(
                f"expected '=' or '{{' after '{short(str(word))}'",
                arg_span,
                "unexpected here",
                help="top-level statements are 'skopt 1', 'import \"file\"' and blocks",
            )
        )

    @v_args(meta=True)
    def block(self, meta: Meta, children: list[object]) -> ast.Block:
        kind, name, *body = children
        assert isinstance(kind, Token)
        return ast.Block(
            self._name(kind),
            self._name(name) if isinstance(name, Token) else None,
            tuple(m for m in body if m is not None),  # type: ignore[misc]
            _meta_span(meta, self.path),
        )

    @v_args(meta=True)
    def entry(self, meta: Meta, children: list[object]) -> ast.Entry:
        key, value = children
        assert isinstance(key, Token)
        return ast.Entry(self._name(key), value, _meta_span(meta, self.path))  # type: ignore[arg-type]

    def name(self, children: list[Token]) -> ast.Name:
        return self._name(children[0])

    @v_args(meta=True)
    def call(self, meta: Meta, children: list[object]) -> ast.Call:
        func, *args = children
        assert isinstance(func, Token)
        real = tuple(a for a in args if isinstance(a, ast.Arg))
        return ast.Call(self._name(func), real, _meta_span(meta, self.path))

    @v_args(meta=True)
    def arg(self, meta: Meta, children: list[ast.Value]) -> ast.Arg:
        return ast.Arg(None, children[0], _meta_span(meta, self.path))

    @v_args(meta=True)
    def kwarg(self, meta: Meta, children: list[object]) -> ast.Arg:
        key, value = children
        assert isinstance(key, Token)
        return ast.Arg(self._name(key), value, _meta_span(meta, self.path))  # type: ignore[arg-type]

    @v_args(meta=True)
    def list(self, meta: Meta, children: list[ast.Value | None]) -> ast.ListValue:
        items = tuple(c for c in children if c is not None)
        return ast.ListValue(items, _meta_span(meta, self.path))

    def STRING(self, tok: Token) -> ast.Str:
        return ast.Str(unescape(str(tok)[1:-1]), str(tok), self._span(tok))

    def LONG_STRING(self, tok: Token) -> ast.Str:
        return ast.Str(undent(str(tok)[3:-3]), str(tok), self._span(tok))

    def NUMBER(self, tok: Token) -> ast.Number:
        return ast.Number(self._number(tok, parse_number), str(tok), self._span(tok))

    def QUANTITY(self, tok: Token) -> ast.Quantity:
        value, unit = self._number(tok, parse_quantity)
        return ast.Quantity(value, unit, str(tok), self._span(tok))

    def _number(self, tok: Token, read: Callable[[str], _T]) -> _T:
        try:
            return read(str(tok))
        except NumberTooLong:
            message = f"number too long: {short(str(tok))}"
            raise SyntaxProblem(
                error(message, self._span(tok), f"at most {MAX_DIGITS} digits")
            ) from None
