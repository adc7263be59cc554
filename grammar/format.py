"""`skopt fmt`: the canonical layout of a recipe, with every comment kept.

Two-space indents; `=` aligned within each run of settings; one statement or setting per line;
a block written on one line stays on one line while it fits, has no comments and no nested
blocks; at most one blank line kept where the author left one; lists that do not fit go one
item per line. Numbers and quantities keep their spelling (`1_000`, `20k`); `\"\"\"` strings are
kept verbatim. Formatting is idempotent and never changes what the recipe means.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from skopt.grammar import ast
from skopt.grammar.literals import escape
from skopt.grammar.source import Span

INDENT = "  "
WIDTH = 100


def format_recipe(recipe: ast.Recipe, source: str) -> str:
    writer = _Writer(list(recipe.comments), source.split("\n"))
    writer.statements(recipe.statements)
    return writer.text()


def value_text(value: ast.Value) -> str:
    """A value on one line."""
    match value:
        case ast.Str(text=text) if text.startswith('"""'):
            return text
        case ast.Str():
            return escape(value.value)
        case ast.Number(text=text) | ast.Quantity(text=text):
            return text
        case ast.Name(name=name):
            return name
        case ast.Call():
            args = ", ".join(_arg_text(a) for a in value.args)
            return f"{value.func.name}({args})"
        case ast.ListValue():
            return "[" + ", ".join(value_text(v) for v in value.items) + "]"
    raise TypeError(value)


def _arg_text(arg: ast.Arg) -> str:
    return f"{arg.name.name} = {value_text(arg.value)}" if arg.name else value_text(arg.value)


class _Writer:
    """Writes members in source order; comments, sorted, are taken from the front as it goes."""

    def __init__(self, comments: list[ast.Comment], source_lines: list[str]) -> None:
        self.comments = deque(sorted(comments, key=lambda c: (c.span.line, c.span.col)))
        self.source_lines = source_lines
        self.out: list[str] = []

    def text(self) -> str:
        for comment in self.comments:  # anything left after the last statement
            self.out.append(comment.text.rstrip())
        self.comments.clear()
        while self.out and not self.out[-1]:
            self.out.pop()
        return "\n".join(self.out) + "\n" if self.out else ""

    # -- comments and blank lines ---------------------------------------------------------

    def _take_before(self, line: int) -> list[ast.Comment]:
        taken = []
        while self.comments and self.comments[0].span.line < line:
            taken.append(self.comments.popleft())
        return taken

    def _take_on(self, end: Span) -> ast.Comment | None:
        """The comment that ends the line of `end`, unless other code stands between them."""
        if not self.comments or self.comments[0].span.line != end.end_line:
            return None
        comment = self.comments[0]
        between = self.source_lines[end.end_line - 1][end.end_col - 1 : comment.span.col - 1]
        if between.strip(" \t,{}"):
            return None  # e.g. `model a { }, model b {  # about b`: the comment is b's
        return self.comments.popleft()

    def _blank_before(self, line: int, previous_end: int | None) -> bool:
        """Did the author leave a blank line between the previous member and this line?"""
        if previous_end is None:
            return False
        return any(
            not self.source_lines[n - 1].strip()
            for n in range(previous_end + 1, line)
            if n - 1 < len(self.source_lines)
        )

    def _leading(self, start: int, previous_end: int | None, indent: str, blank: bool) -> None:
        """Comments before a member, keeping the author's blank lines; `blank` forces one."""
        comments = self._take_before(start)
        lines = [*(c.span.line for c in comments), start]
        befores = [previous_end, *lines]
        gaps = [self._blank_before(line, befores[i]) for i, line in enumerate(lines)]
        if blank and not any(gaps):
            gaps[0] = True
        for gap, comment in zip(gaps, [*comments, None], strict=True):
            if gap and self.out and self.out[-1] != "":
                self.out.append("")
            if comment is not None:
                self.out.append(indent + comment.text.rstrip())

    def _emit(self, line: str, end: Span) -> None:
        trailing = self._take_on(end)
        self.out.append(line + (f"  {trailing.text.rstrip()}" if trailing else ""))

    # -- statements, blocks, entries --------------------------------------------------------

    def statements(self, statements: Sequence[ast.Statement]) -> None:
        previous: ast.Statement | None = None
        for statement in statements:
            blank = isinstance(statement, ast.Block) or isinstance(previous, ast.Block)
            self._leading(
                statement.span.line, previous.span.end_line if previous else None, "", blank
            )
            if isinstance(statement, ast.Header):
                self._emit(f"skopt {statement.version.text}", statement.span)
            elif isinstance(statement, ast.Import):
                self._emit(f"import {escape(statement.path.value)}", statement.span)
            else:
                self.block(statement, "")
            previous = statement

    def block(self, block: ast.Block, indent: str) -> None:
        head = f"{indent}{block.kind.name}" + (f" {block.name.name}" if block.name else "")
        inline = self._inline(block, head)
        if inline is not None:
            self._emit(inline, block.span)
            return
        self._emit(head + " {", (block.name or block.kind).span)
        self.members(block.body, indent + INDENT, block.kind.span.line)
        closing = block.span.end_line
        for comment in self._take_before(closing):
            self.out.append(indent + INDENT + comment.text.rstrip())
        self._emit(indent + "}", block.span)

    def _inline(self, block: ast.Block, head: str) -> str | None:
        span = block.span
        # a block on one line holds no comment: a comment would run to the end of the line
        if span.line != span.end_line or any(isinstance(m, ast.Block) for m in block.body):
            return None
        body = ", ".join(
            f"{m.key.name} = {value_text(m.value)}" for m in block.body if isinstance(m, ast.Entry)
        )
        text = f"{head} {{ {body} }}" if body else f"{head} {{}}"
        return text if len(text) <= WIDTH and "\n" not in text else None

    def members(
        self, members: Sequence[ast.Entry | ast.Block], indent: str, previous_end: int
    ) -> None:
        width = 0
        end: int | None = previous_end
        for index, member in enumerate(members):
            if isinstance(member, ast.Entry) and (
                index == 0 or not self._run_continues(members[index - 1], member)
            ):
                width = self._run_width(members, index)
            self._leading(member.span.line, end, indent, blank=False)
            if isinstance(member, ast.Block):
                self.block(member, indent)
            else:
                self.entry(member, indent, width)
            end = member.span.end_line

    def _run_continues(self, previous: ast.Entry | ast.Block, member: ast.Entry) -> bool:
        return isinstance(previous, ast.Entry) and not self._blank_before(
            member.span.line, previous.span.end_line
        )

    def _run_width(self, members: Sequence[ast.Entry | ast.Block], start: int) -> int:
        width = 0
        for index in range(start, len(members)):
            member = members[index]
            if not isinstance(member, ast.Entry) or (
                index > start and not self._run_continues(members[index - 1], member)
            ):
                break
            width = max(width, len(member.key.name))
        return width

    def entry(self, entry: ast.Entry, indent: str, width: int) -> None:
        for comment in self._take_before(entry.span.end_line):
            self.out.append(indent + comment.text.rstrip())  # comments from inside a value
        head = f"{indent}{entry.key.name.ljust(width)} = "
        text = value_text(entry.value)
        if (
            isinstance(entry.value, ast.ListValue)
            and len(head + text) > WIDTH
            and entry.value.items
        ):
            self.out.append(head + "[")
            for item in entry.value.items:
                self.out.append(f"{indent}{INDENT}{value_text(item)},")
            self._emit(f"{indent}]", entry.span)
            return
        self._emit(head + text, entry.span)
