"""Lark's exceptions → diagnostics worded in the recipe's own terms (`expected '=' or '{'`),
never a parser token name. The one place where a syntax error gets its words."""

from __future__ import annotations

from lark import Token, UnexpectedCharacters, UnexpectedToken
from lark.exceptions import LarkError

from skopt.grammar.lexing import MAX_NESTING, TooDeep, lexer, token_span
from skopt.grammar.source import Diagnostic, Span, error


class SyntaxProblem(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def blank_line(text: str, line: int) -> str:
    """Blank out one line, keeping its braces so that block structure survives."""
    lines = text.split("\n")
    if 1 <= line <= len(lines):
        lines[line - 1] = "".join(c if c in "{}" else " " for c in lines[line - 1])
    return "\n".join(lines)


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


def translate(exc: LarkError, text: str, path: str, start: str) -> SyntaxProblem:
    if isinstance(exc, TooDeep):
        return SyntaxProblem(too_deep(exc, path))
    if isinstance(exc, UnexpectedCharacters):
        return SyntaxProblem(unexpected_character(exc, text, path))
    assert isinstance(exc, UnexpectedToken)
    expected = _accepted(exc)
    if exc.token.type == "$END":
        return SyntaxProblem(unexpected_end(text, path, expected, start))
    return SyntaxProblem(unexpected_token(exc, expected, text, path, start, top_level=False))


def too_deep(exc: TooDeep, path: str) -> Diagnostic:
    message = f"blocks, lists and calls nested deeper than {MAX_NESTING} levels"
    return error(message, token_span(exc.token, path), "too deep")


def unexpected_token(
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
        found = f"{_WORDS[tok.type]} '{short(str(tok))}'"
    words = _expected_words(expected).replace("the end of the file", _END[start])
    return error(f"expected {words}, found {found}", token_span(tok, path), "unexpected here", help)


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
    return without_separators(accepts or set(exc.expected))


def without_separators(names: set[str]) -> set[str]:
    """Between entries a newline or a comma may always come: naming them says nothing.
    (Inside ( ) and [ ], where newlines are layout, a comma is worth naming.)"""
    rest = names - {"_NL", "COMMA"} if "_NL" in names else names
    return rest or names


def unexpected_end(text: str, path: str, expected: set[str], start: str) -> Diagnostic:
    opened = _open_brackets(text, len(text))
    if opened:
        tok = opened[-1]
        closer = {"LBRACE": "}", "LPAR": ")", "LSQB": "]"}[tok.type]
        return error(
            f"unexpected end of file: '{tok}' opened at {tok.line}:{tok.column} is never closed",
            token_span(tok, path),
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
        for tok in lexer().lex(text[:upto], dont_ignore=False):
            if tok.type in ("LBRACE", "LPAR", "LSQB"):
                stack.append(tok)
            elif tok.type in ("RBRACE", "RPAR", "RSQB") and stack:
                stack.pop()
    except LarkError:
        pass
    return stack


def unexpected_character(exc: UnexpectedCharacters, text: str, path: str) -> Diagnostic:
    span = Span(path, exc.line, exc.column, exc.line, exc.column + 1)
    pos = exc.pos_in_stream or 0
    char = text[pos] if pos < len(text) else ""
    if char == '"':
        return error("unterminated string", span, "this string has no closing quote")
    if char.isdigit() or char in "$-":
        word = _word_at(text, pos)
        return error(
            f"invalid number or quantity '{short(word)}'",
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


def short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
