"""Text → AST. The one place where Lark is called and where its exceptions become diagnostics.

`parse` never raises on bad input: it returns the tree (or None) and every syntax error found,
each worded in the recipe's own terms (`expected '=' or '{'`), never a parser token name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from lark import (
    Lark,
    Token,
    Transformer,
    UnexpectedCharacters,
    UnexpectedInput,
    UnexpectedToken,
    v_args,
)
from lark.exceptions import LarkError, VisitError
from lark.parsers.lalr_interactive_parser import InteractiveParser
from lark.tree import Meta, Tree

from skopt.grammar import ast
from skopt.grammar.literals import (
    MAX_DIGITS,
    NumberTooLong,
    parse_number,
    parse_quantity,
    undent,
    unescape,
)
from skopt.grammar.source import Diagnostic, Span, error

_T = TypeVar("_T")
MAX_NESTING = 48
MAX_SYNTAX_ERRORS = 20

_comments: ContextVar[list[Token]] = ContextVar("_comments")


class TooDeep(LarkError):
    def __init__(self, token: Token) -> None:
        super().__init__("nesting too deep")
        self.token = token


class _Brackets:
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


def _keep_comment(tok: Token) -> Token:
    _comments.get().append(tok)
    return tok


def _build(lexer: str) -> Lark:
    grammar = (Path(__file__).parent / "skopt.lark").read_text()
    return Lark(
        grammar,
        parser="lalr",
        lexer=lexer,
        start=["start", "setting"],
        strict=True,
        propagate_positions=True,
        maybe_placeholders=True,
        postlex=_Brackets(),
        lexer_callbacks={"COMMENT": _keep_comment},
        cache=True,  # the tables are kept in a temporary file: later processes start faster
    )


@functools.cache
def _parser() -> Lark:
    return _build("contextual")


@functools.cache
def _lexer() -> Lark:
    """The same grammar with a standalone lexer, built once: it lexes for error recovery."""
    return _build("basic")


@dataclass(frozen=True, slots=True)
class Parsed:
    recipe: ast.Recipe | None
    diagnostics: tuple[Diagnostic, ...]


def parse(text: str, path: str) -> Parsed:
    """Parse recipe text; on syntax errors, report the error of every line (see `_Recovery`)."""
    token = _comments.set([])
    try:
        try:
            tree: object = _parser().parse(text, start="start")
        except (UnexpectedInput, TooDeep):
            _comments.get().clear()
            recovery = _Recovery(text, path)  # slower, but reports every line's error
            tree = recovery.run()
            if recovery.diagnostics:
                return Parsed(None, tuple(recovery.diagnostics))
        assert isinstance(tree, Tree)
        recipe = _ToAst(path).transform(tree)
        comments = tuple(ast.Comment(str(t), _token_span(t, path)) for t in _comments.get())
    except VisitError as exc:
        if isinstance(exc.orig_exc, _Failure):
            return Parsed(None, (exc.orig_exc.diagnostic,))
        raise
    finally:
        _comments.reset(token)
    assert isinstance(recipe, ast.Recipe)
    return Parsed(ast.Recipe(path, recipe.statements, comments), ())


_BRACES = ("LBRACE", "RBRACE")
_OPENERS, _CLOSERS = ("LBRACE", "LPAR", "LSQB"), ("RBRACE", "RPAR", "RSQB")


class _Recovery:
    """Feeds tokens to the LALR parser. On a syntax error it goes back to the state at the start
    of that line, replays only the line's braces (so block structure survives) and skips the
    rest of the line: one pass, each line's error reported once, no cascades."""

    def __init__(self, text: str, path: str) -> None:
        self.text, self.path = text, path
        self.parser = _parser().parse_interactive("", start="start")
        self.line_start = _snapshot(self.parser)  # the state after the last newline
        self.line_tokens: list[Token] = []  # fed since then
        self.depth = self.line_start_depth = 0  # brackets open among the tokens fed
        self.skip_line = 0
        self.last: Token | None = None
        self.diagnostics: list[Diagnostic] = []

    def run(self) -> object | None:
        for tok in _tokens(self.text, self.path, self.diagnostics):
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
            self.diagnostics.append(_unexpected_end(self.text, self.path, expected, "start"))
            return None

    def _feed(self, tok: Token) -> None:
        try:
            self.parser.feed_token(tok)
        except UnexpectedToken as exc:
            expected = _accepts(self.line_start, self.line_tokens)
            problem = _unexpected_token(
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
    return _without_separators(accepted)


@dataclass(frozen=True, slots=True)
class _LexProblem:
    line: int
    fatal: bool = False


def _tokens(text: str, path: str, diagnostics: list[Diagnostic]) -> Iterator[Token | _LexProblem]:
    """The token stream; a bad character is reported, its line blanked, and lexing goes on."""
    current, resume = text, 0
    while True:
        try:
            for tok in _lexer().lex(current, dont_ignore=False):
                if (tok.start_pos or 0) >= resume:
                    yield tok
            return
        except UnexpectedCharacters as exc:
            diagnostics.append(_unexpected_character(exc, text, path))
            yield _LexProblem(exc.line)
            current = _blank_line(current, exc.line)
            resume = exc.pos_in_stream or 0
        except TooDeep as exc:
            diagnostics.append(_too_deep(exc, path))
            yield _LexProblem(0, fatal=True)
            return


def parse_setting(text: str, path: str) -> tuple[ast.Value | None, tuple[Diagnostic, ...]]:
    """Parse the value of a `--set K=V` flag; spans are relative to `text`."""
    try:
        value = _run(text, path, "setting")
    except _Failure as failure:
        return None, (failure.diagnostic,)
    assert isinstance(
        value, ast.Str | ast.Number | ast.Quantity | ast.Name | ast.Call | ast.ListValue
    )
    return value, ()


class _Failure(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _run(text: str, path: str, start: str) -> object:
    """Parse and build the AST; every Lark error leaves as a `_Failure`."""
    try:
        return _ToAst(path).transform(_parser().parse(text, start=start))
    except (UnexpectedInput, TooDeep) as exc:
        raise _translate(exc, text, path, start) from None
    except VisitError as exc:
        if isinstance(exc.orig_exc, _Failure):
            raise exc.orig_exc from None
        raise


def _blank_line(text: str, line: int) -> str:
    """Blank out one line, keeping its braces so that block structure survives."""
    lines = text.split("\n")
    if 1 <= line <= len(lines):
        lines[line - 1] = "".join(c if c in "{}" else " " for c in lines[line - 1])
    return "\n".join(lines)


# -- Lark errors → diagnostics ---------------------------------------------------------------

_WORDS = {
    "NAME": "a name",
    "STRING": "a string",
    "LONG_STRING": "a string",
    "NUMBER": "a number",
    "QUANTITY": "a quantity",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "EQUAL": "'='",
    "COMMA": "','",
    "_NL": "a new line",
    "$END": "the end of the file",
}
_VALUE_STARTS = {"STRING", "LONG_STRING", "NUMBER", "QUANTITY", "LSQB"}


def _expected_words(expected: set[str]) -> str:
    names = set(expected)
    words: list[str] = []
    if len(names & _VALUE_STARTS) >= 3:
        names -= _VALUE_STARTS | {"NAME"}
        words.append("a value")
    words += sorted({_WORDS.get(n, n.lower()) for n in names}, key=_word_order)
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _word_order(word: str) -> tuple[int, str]:
    return (0 if word.startswith("'") else 1, word)


def _translate(exc: LarkError, text: str, path: str, start: str) -> _Failure:
    if isinstance(exc, TooDeep):
        return _Failure(_too_deep(exc, path))
    if isinstance(exc, UnexpectedCharacters):
        return _Failure(_unexpected_character(exc, text, path))
    assert isinstance(exc, UnexpectedToken)
    expected = _accepted(exc)
    if exc.token.type == "$END":
        return _Failure(_unexpected_end(text, path, expected, start))
    return _Failure(_unexpected_token(exc, expected, text, path, start, top_level=False))


def _too_deep(exc: TooDeep, path: str) -> Diagnostic:
    message = f"blocks, lists and calls nested deeper than {MAX_NESTING} levels"
    return error(message, _token_span(exc.token, path), "too deep")


def _unexpected_token(
    exc: UnexpectedToken,
    expected: set[str],
    text: str,
    path: str,
    start: str,
    top_level: bool,
) -> Diagnostic:
    tok = exc.token
    expected = expected or set(exc.expected)
    directive = _directive_problem(tok, expected, text, path) if top_level else None
    if directive is not None:
        return directive
    expected, help = _hint(tok, expected, top_level)
    found = _WORDS.get(tok.type, repr(str(tok)))
    if tok.type in ("NAME", "NUMBER", "QUANTITY", "STRING"):
        found = f"{_WORDS[tok.type]} '{_short(str(tok))}'"
    words = _expected_words(expected).replace("the end of the file", _END[start])
    return error(
        f"expected {words}, found {found}", _token_span(tok, path), "unexpected here", help
    )


_END = {"start": "the end of the file", "setting": "the end of the value"}
_VALUE_TOKENS = {"NUMBER", "QUANTITY", "STRING", "LONG_STRING", "LSQB"}


def _hint(tok: Token, expected: set[str], top_level: bool) -> tuple[set[str], str]:
    """What to suggest for the commonest slips; returns the expected set to report, and help."""
    if expected == {"LBRACE"} or ("EQUAL" in expected and tok.type in _VALUE_TOKENS):
        # after `key` or `kind name`: the writer most often meant `key = value`
        return {
            "EQUAL",
            "LBRACE",
        }, "write a setting as 'key = value', a block as 'kind name { ... }'"
    if tok.type == "EQUAL" and top_level:
        return expected, "settings go inside a block, e.g. 'train { epochs = 4 }'"
    if tok.type == "RBRACE" and top_level:
        return expected, "this '}' closes no block"
    return expected, ""


def _directive_problem(tok: Token, expected: set[str], text: str, path: str) -> Diagnostic | None:
    """`import base` or `skopt one`: a directive with the wrong kind of argument."""
    if expected != {"LBRACE"}:
        return None
    pos = tok.start_pos or 0
    line_text = text[text.rfind("\n", 0, pos) + 1 : (text.find("\n", pos) + 1 or len(text) + 1) - 1]
    words = line_text.split()
    if len(words) < 2 or words[0] not in ("import", "skopt"):
        return None
    wants = "a file name in quotes" if words[0] == "import" else "a version number"
    col = line_text.index(words[1], len(words[0])) + 1
    span = Span(path, tok.line or 1, col, tok.line or 1, col + len(words[1]))
    example = f'import "{words[1]}.skopt"' if words[0] == "import" else "skopt 1"
    return error(f"'{words[0]}' takes {wants}", span, "not valid here", f"write {example}")


def _accepted(exc: UnexpectedToken) -> set[str]:
    """The terminals the parser would really accept here (LALR lookaheads over-approximate)."""
    try:
        accepts = set(exc.interactive_parser.accepts())  # type: ignore[no-untyped-call]
    except LarkError:
        accepts = set()
    return _without_separators(accepts or set(exc.expected))


def _without_separators(names: set[str]) -> set[str]:
    """Between entries a newline or a comma may always come: naming them says nothing.
    (Inside ( ) and [ ], where newlines are layout, a comma is worth naming.)"""
    rest = names - {"_NL", "COMMA"} if "_NL" in names else names
    return rest or names


def _unexpected_end(text: str, path: str, expected: set[str], start: str) -> Diagnostic:
    opened = _open_brackets(text, len(text))
    if opened:
        tok = opened[-1]
        closer = {"LBRACE": "}", "LPAR": ")", "LSQB": "]"}[tok.type]
        return error(
            f"unexpected end of file: '{tok}' opened at {tok.line}:{tok.column} is never closed",
            _token_span(tok, path),
            f"add a matching '{closer}'",
        )
    lines = text.rstrip().split("\n")
    line, col = len(lines), len(lines[-1]) + 1
    span = Span(path, line, col, line, col + 1)
    where = "end of file" if start == "start" else "end of the value"
    return error(f"unexpected {where}: expected {_expected_words(expected)}", span)


def _open_brackets(text: str, upto: int) -> list[Token]:
    """The brackets still open before position `upto`, outermost first."""
    stack: list[Token] = []
    try:
        for tok in _lexer().lex(text[:upto], dont_ignore=False):
            if tok.type in ("LBRACE", "LPAR", "LSQB"):
                stack.append(tok)
            elif tok.type in ("RBRACE", "RPAR", "RSQB") and stack:
                stack.pop()
    except LarkError:
        pass
    return stack


def _unexpected_character(exc: UnexpectedCharacters, text: str, path: str) -> Diagnostic:
    span = Span(path, exc.line, exc.column, exc.line, exc.column + 1)
    pos = exc.pos_in_stream or 0
    char = text[pos] if pos < len(text) else ""
    if char == '"':
        return error("unterminated string", span, "this string has no closing quote")
    if char.isdigit() or char in "$-":
        word = _word_at(text, pos)
        return error(
            f"invalid number or quantity '{_short(word)}'",
            Span(path, exc.line, exc.column, exc.line, exc.column + len(word)),
            "not a number",
            help="quantities are written 60%, $0.15, 20k, 2M, 30s, 10min or 2h",
        )
    shown = char if char.isprintable() else f"\\u{ord(char):04x}" if char else "end of file"
    return error(f"unexpected character '{shown}'", span, "not allowed here")


def _word_at(text: str, pos: int) -> str:
    end = pos + 1
    while end < len(text) and (text[end].isalnum() or text[end] in "_.$%-"):
        end += 1
    return text[pos:end]


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _token_span(tok: Token, path: str) -> Span:
    line = tok.line or 1
    col = tok.column or 1
    end_line = tok.end_line or line
    end_col = tok.end_column or col + 1
    return Span(path, line, col, end_line, end_col)


def _meta_span(meta: Meta, path: str) -> Span:
    return Span(path, meta.line, meta.column, meta.end_line, meta.end_column)


# -- Lark tree → AST -------------------------------------------------------------------------


class _ToAst(Transformer[Token, object]):
    """Builds AST nodes; the directive words `skopt` and `import` are checked here."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def _span(self, tok: Token) -> Span:
        return _token_span(tok, self.path)

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
            raise _Failure(error(f"'{word}' takes {wants}", arg_span, "not valid here"))
        raise _Failure(
            error(
                f"expected '=' or '{{' after '{_short(str(word))}'",
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
            message = f"number too long: {_short(str(tok))}"
            raise _Failure(
                error(message, self._span(tok), f"at most {MAX_DIGITS} digits")
            ) from None
