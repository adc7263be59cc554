"""What stands at one point of a recipe's text, even mid-edit: for hover, completion, definition.

An editor asks about text that often does not parse (`mode = ` with no value yet), so this
reads tokens, not the tree: the text up to the end of the cursor's line is lexed (a line with a
bad character blanked, as the parser's recovery does) and the tokens before the cursor are
walked to find the enclosing blocks, the key whose value is being written, the call and
argument the cursor is inside, and the word under the cursor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lark import Token, UnexpectedCharacters
from lark.exceptions import LarkError

from skopt.grammar import ast
from skopt.grammar.lexing import comments, lexer, token_span
from skopt.grammar.literals import unescape
from skopt.grammar.syntax_errors import blank_line

# statement: where a top-level block or an import starts; member: where a key or a nested
# block starts; value: after `key =` (in a list or a call too); import: the string of an import
Place = Literal["statement", "member", "value", "import", "other"]
_WORDS = ("NAME", "STRING")


@dataclass(frozen=True, slots=True)
class Cursor:
    place: Place
    blocks: tuple[str, ...] = ()  # kinds of the enclosing blocks, outermost first
    key: str | None = None  # at a value: the key it is the value of
    call: str | None = None  # inside a call's arguments: the call's name
    arg: str | None = None  # ... and the argument's name, when written `name = `
    word: ast.Name | ast.Str | None = None  # the name or string under the cursor


@dataclass
class _Frame:
    """An open block (`name` its kind, "" at the top level), call (`name` its function) or
    list, as the walk meets them."""

    what: Literal["block", "call", "list"]
    name: str = ""
    head: list[Token] = field(default_factory=list)  # a block's tokens since the last separator
    key: str | None = None  # a block's key whose value is being written
    arg: str | None = None  # a call's argument being written


def at(text: str, line: int, col: int, path: str) -> Cursor:
    """The cursor at 1-based `line` and `col` (code points) of `text`."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return Cursor("other")
    line_start = sum(len(lines[n]) + 1 for n in range(line - 1))
    offset = line_start + min(col - 1, len(lines[line - 1]))
    try:  # what follows the cursor's line cannot change what stands at the cursor
        tokens, remarks = _tokens(text[: line_start + len(lines[line - 1])])
    except LarkError:  # nesting too deep: nothing useful to say
        return Cursor("other")
    if any((c.start_pos or 0) < offset <= (c.end_pos or 0) for c in remarks):
        return Cursor("other")  # in a comment
    return _walk(tokens, offset, path)


def _tokens(text: str) -> tuple[list[Token], list[Token]]:
    """The tokens and the comments of `text`; from a character no token takes, the rest of its
    line is blanked and lexing goes on (as the parser's recovery does)."""
    token = comments.set([])  # where the lexer keeps comments
    found: list[Token] = []
    resume = 0
    try:
        while True:
            try:
                for tok in lexer().lex(text, dont_ignore=False):
                    if (tok.start_pos or 0) >= resume:
                        found.append(tok)
                return found, comments.get()
            except UnexpectedCharacters as exc:
                text, resume = blank_line(text, exc.line), exc.pos_in_stream or 0
    finally:
        comments.reset(token)


def _walk(tokens: list[Token], offset: int, path: str) -> Cursor:
    stack = [_Frame("block")]
    previous: Token | None = None
    for tok in tokens:
        start, end = tok.start_pos or 0, tok.end_pos or 0
        if start > offset or (start == offset and tok.type not in _WORDS):
            break
        if tok.type in _WORDS and end >= offset:
            return _cursor(stack, _word(tok, path))
        _step(stack, tok, previous)
        previous = tok
    return _cursor(stack, None)


def _step(stack: list[_Frame], tok: Token, previous: Token | None) -> None:
    """Take one token before the cursor."""
    top = stack[-1]
    kind = tok.type
    if kind in ("LPAR", "LSQB"):
        is_call = kind == "LPAR" and previous is not None and previous.type == "NAME"
        name = str(previous) if is_call and previous is not None else ""
        stack.append(_Frame("call" if is_call else "list", name))
    elif kind in ("RPAR", "RSQB"):
        if len(stack) > 1 and top.what != "block":
            stack.pop()
    elif kind == "LBRACE":
        names = [str(t) for t in top.head if t.type == "NAME"]
        stack.append(_Frame("block", names[0] if names else "_"))
        top.head, top.key = [], None
    elif kind == "RBRACE":
        while len(stack) > 1 and stack.pop().what != "block":
            pass
        stack[-1].head, stack[-1].key = [], None
    elif kind == "_NL" or (kind == "COMMA" and top.what == "block"):
        top.head, top.key = [], None
    elif kind == "COMMA" and top.what == "call":
        top.arg = None
    elif kind == "EQUAL" and previous is not None and previous.type == "NAME":
        if top.what == "block" and len(top.head) == 1:
            top.key = str(previous)
        elif top.what == "call":
            top.arg = str(previous)
    elif top.what == "block":
        top.head.append(tok)


def _cursor(stack: list[_Frame], word: ast.Name | ast.Str | None) -> Cursor:
    blocks = tuple(f.name for f in stack[1:] if f.what == "block")
    block = next(f for f in reversed(stack) if f.what == "block")
    call = stack[-1] if stack[-1].what == "call" else None
    if block.key is not None:
        return Cursor(
            "value",
            blocks,
            block.key,
            call.name if call else None,
            call.arg if call else None,
            word,
        )
    if stack[-1].what != "block":
        return Cursor("other", blocks, word=word)
    head = [str(t) for t in block.head]
    if not head:
        return Cursor("member" if blocks else "statement", blocks, word=word)
    if head == ["import"] and not blocks and isinstance(word, ast.Str):
        return Cursor("import", blocks, word=word)
    return Cursor("other", blocks, word=word)


def _word(tok: Token, path: str) -> ast.Name | ast.Str:
    span = token_span(tok, path)
    if tok.type == "NAME":
        return ast.Name(str(tok), span)
    return ast.Str(unescape(str(tok)[1:-1]), str(tok), span)
