"""Text → AST. `parse` never raises on bad input: it returns the tree (or None) and every
syntax error found, one per line, in one pass."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from lark import Token, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.exceptions import LarkError, VisitError
from lark.parsers.lalr_interactive_parser import InteractiveParser
from lark.tree import Tree

from skopt.grammar import ast
from skopt.grammar.lexing import TooDeep, comments, lexer, parser, token_span
from skopt.grammar.source import Diagnostic
from skopt.grammar.syntax_errors import (
    SyntaxProblem,
    blank_line,
    too_deep,
    translate,
    unexpected_character,
    unexpected_end,
    unexpected_token,
    without_separators,
)
from skopt.grammar.to_ast import ToAst

MAX_SYNTAX_ERRORS = 20


@dataclass(frozen=True, slots=True)
class Parsed:
    recipe: ast.Recipe | None
    diagnostics: tuple[Diagnostic, ...]


def parse(text: str, path: str) -> Parsed:
    """Parse recipe text; on syntax errors, report the error of every line (see `_Recovery`)."""
    token = comments.set([])
    try:
        try:
            tree: object = parser().parse(text, start="start")
        except (UnexpectedInput, TooDeep):
            comments.get().clear()
            recovery = _Recovery(text, path)  # slower, but reports every line's error
            tree = recovery.run()
            if recovery.diagnostics:
                return Parsed(None, tuple(recovery.diagnostics))
        assert isinstance(tree, Tree)
        recipe = ToAst(path).transform(tree)
        found = tuple(ast.Comment(str(t), token_span(t, path)) for t in comments.get())
    except VisitError as exc:
        if isinstance(exc.orig_exc, SyntaxProblem):
            return Parsed(None, (exc.orig_exc.diagnostic,))
        raise
    finally:
        comments.reset(token)
    assert isinstance(recipe, ast.Recipe)
    return Parsed(ast.Recipe(path, recipe.statements, found), ())


_BRACES = ("LBRACE", "RBRACE")
_OPENERS, _CLOSERS = ("LBRACE", "LPAR", "LSQB"), ("RBRACE", "RPAR", "RSQB")


@dataclass(frozen=True, slots=True)
class _LexProblem:
    line: int
    fatal: bool = False


class _Recovery:
    """Feeds tokens to the LALR parser. On a syntax error it goes back to the state at the start
    of that line, replays only the line's braces (so block structure survives) and skips the
    rest of the line: one pass, each line's error reported once, no cascades."""

    def __init__(self, text: str, path: str) -> None:
        self.text, self.path = text, path
        self.lexed = text  # the text as lexed: lines with a bad character blanked
        self.parser = parser().parse_interactive("", start="start")
        self.line_start = _snapshot(self.parser)  # the state after the last newline
        self.line_tokens: list[Token] = []  # fed since then
        self.depth = self.line_start_depth = 0  # brackets open among the tokens fed
        self.skip_line = 0
        self.last: Token | None = None
        self.diagnostics: list[Diagnostic] = []

    def run(self) -> object | None:
        for tok in self._tokens():
            if len(self.diagnostics) >= MAX_SYNTAX_ERRORS:
                return None
            if isinstance(tok, _LexProblem):
                if tok.fatal:
                    return None
                self._skip(tok.line)
            elif tok.line == self.skip_line:
                if tok.type in _BRACES:
                    self._replay_brace(tok)
            else:
                self._feed(tok)
        try:
            tree: object = self.parser.feed_eof(self.last)  # type: ignore[no-untyped-call]
            return tree
        except UnexpectedToken:
            expected = _accepts(self.line_start, self.line_tokens)
            # the lexed text: an unterminated string must not hide the brackets after it
            self.diagnostics.append(unexpected_end(self.lexed, self.path, expected, "start"))
            return None

    def _feed(self, tok: Token) -> None:
        try:
            self.parser.feed_token(tok)
        except UnexpectedToken as exc:
            expected = _accepts(self.line_start, self.line_tokens)
            problem = unexpected_token(
                exc, expected, self.text, self.path, "start", self.depth == 0
            )
            self.diagnostics.append(problem)
            self._skip(tok.line or 0)
            if tok.type in _BRACES:
                self._replay_brace(tok)
            return
        self.last = tok
        self.line_tokens.append(tok)
        self._count(tok)
        if tok.type == "_NL":
            self.line_start, self.line_start_depth = _snapshot(self.parser), self.depth
            self.line_tokens = []

    def _count(self, tok: Token) -> None:
        self.depth += (tok.type in _OPENERS) - (tok.type in _CLOSERS)

    def _skip(self, line: int) -> None:
        braces = [t for t in self.line_tokens if t.type in _BRACES]
        self.parser, self.depth = _snapshot(self.line_start), self.line_start_depth
        self.line_tokens, self.skip_line = [], line
        for brace in braces:
            self._replay_brace(brace)

    def _replay_brace(self, tok: Token) -> None:
        """Open (as a block of no kind) or close a block, where the parser can take it."""
        if tok.type == "RBRACE" and self.depth == 0:
            return  # closes nothing
        probe = _snapshot(self.parser)
        try:
            if tok.type == "LBRACE":
                probe.feed_token(Token.new_borrow_pos("NAME", "_", tok))
            probe.feed_token(tok)
        except UnexpectedToken:
            return
        self.parser = probe
        self._count(tok)

    def _tokens(self) -> Iterator[Token | _LexProblem]:
        """The token stream; a bad character is reported, its line blanked, and lexing goes on."""
        resume = 0
        while True:
            try:
                for tok in lexer().lex(self.lexed, dont_ignore=False):
                    if (tok.start_pos or 0) >= resume:
                        yield tok
                return
            except UnexpectedCharacters as exc:
                self.diagnostics.append(unexpected_character(exc, self.text, self.path))
                yield _LexProblem(exc.line)
                self.lexed = blank_line(self.lexed, exc.line)
                resume = exc.pos_in_stream or 0
            except TooDeep as exc:
                self.diagnostics.append(too_deep(exc, self.path))
                yield _LexProblem(0, fatal=True)
                return


def _snapshot(parser: InteractiveParser) -> InteractiveParser:
    # values are shared, not deep-copied: the parser never mutates a finished subtree
    copied: InteractiveParser = parser.copy(deepcopy_values=False)  # type: ignore[no-untyped-call]
    return copied


def _accepts(line_start: InteractiveParser, fed: list[Token]) -> set[str]:
    """What the parser accepts after `fed` (exact, unlike the LALR lookahead sets)."""
    probe = _snapshot(line_start)
    try:
        for tok in fed:
            probe.feed_token(tok)
        accepted: set[str] = probe.accepts()  # type: ignore[no-untyped-call]
    except LarkError:
        return set()
    return without_separators(accepted)


def parse_setting(text: str, path: str) -> tuple[ast.Value | None, tuple[Diagnostic, ...]]:
    """Parse the value of a `--set K=V` flag; spans are relative to `text`."""
    try:
        value = _run(text, path, "setting")
    except SyntaxProblem as failure:
        return None, (failure.diagnostic,)
    assert isinstance(
        value, ast.Str | ast.Number | ast.Quantity | ast.Name | ast.Call | ast.ListValue
    )
    return value, ()


def _run(text: str, path: str, start: str) -> object:
    """Parse and build the AST; every Lark error leaves as a `SyntaxProblem`."""
    try:
        return ToAst(path).transform(parser().parse(text, start=start))
    except (UnexpectedInput, TooDeep) as exc:
        raise translate(exc, text, path, start) from None
    except VisitError as exc:
        if isinstance(exc.orig_exc, SyntaxProblem):
            raise exc.orig_exc from None
        raise
