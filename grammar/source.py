"""Source positions and diagnostics: the one error type of skopt, and its one renderer.

Every message skopt shows about a recipe — syntax, checks, `--set` flags, runtime failures
that trace to a recipe line — is a `Diagnostic` with a `Span`, rendered by `render`.
Colour is added by the UI layer, never here.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Span:
    """A region of one source: 1-based lines and columns, end exclusive."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int

    @staticmethod
    def point(path: str, line: int = 1, col: int = 1) -> Span:
        return Span(path, line, col, line, col + 1)

    @staticmethod
    def whole(path: str) -> Span:
        """The file as a whole, at no line: a file that cannot be read, or is not a recipe."""
        return Span(path, 0, 0, 0, 0)

    @property
    def is_whole_file(self) -> bool:
        return self.line == 0

    def to(self, other: Span) -> Span:
        """The span from the start of this one to the end of `other`."""
        return Span(self.path, self.line, self.col, other.end_line, other.end_col)


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: Severity
    message: str
    span: Span
    label: str = ""
    help: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.span.path, self.span.line, self.span.col, self.message)


def error(message: str, span: Span, label: str = "", help: str = "") -> Diagnostic:
    return Diagnostic(Severity.ERROR, message, span, label, help)


def warning(message: str, span: Span, label: str = "", help: str = "") -> Diagnostic:
    return Diagnostic(Severity.WARNING, message, span, label, help)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`did you mean 'x'?` for the closest choice, or '' when none is close."""
    close = difflib.get_close_matches(word, sorted(set(choices)), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else ""


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.is_error for d in diagnostics)


MAX_SHOWN_LINE = 200


def render(diagnostic: Diagnostic, sources: Mapping[str, str]) -> str:
    """Render one diagnostic in the SPEC §3 format, quoting the source line with carets."""
    span = diagnostic.span
    number = str(span.line)
    gutter = " " * len(number)
    head = f"{diagnostic.severity.value}: {diagnostic.message}"
    where = span.path if span.is_whole_file else f"{span.path}:{span.line}:{span.col}"
    lines = [head, f"{gutter}--> {where}"]
    text = sources.get(span.path)
    source_lines = text.splitlines() if text is not None else []
    if 1 <= span.line <= len(source_lines):
        shown, col = _window(source_lines[span.line - 1], span.col)
        width = span.end_col - span.col if span.end_line == span.line else len(shown) - col + 1
        carets = "^" * max(1, min(width, len(shown) - col + 2))
        label = f" {diagnostic.label}" if diagnostic.label else ""
        lines += [
            f"{gutter} |",
            f"{number} | {shown}",
            f"{gutter} | {' ' * (col - 1)}{carets}{label}",
        ]
    elif diagnostic.label:
        lines.append(f"{gutter} = note: {diagnostic.label}")
    if diagnostic.help:
        lines.append(f"{gutter} = help: {diagnostic.help}")
    return "\n".join(lines)


def _window(line: str, col: int) -> tuple[str, int]:
    """Cut very long lines around `col`; returns the shown text and the column within it."""
    line = line.replace("\t", " ")
    if len(line) <= MAX_SHOWN_LINE:
        return line, col
    start = max(0, col - 1 - MAX_SHOWN_LINE // 2)
    piece = line[start : start + MAX_SHOWN_LINE]
    prefix = "..." if start else ""
    return prefix + piece, col - start + len(prefix)


def render_all(diagnostics: Iterable[Diagnostic], sources: Mapping[str, str]) -> str:
    ordered = sorted(diagnostics, key=Diagnostic.sort_key)
    return "\n\n".join(render(d, sources) for d in ordered)


def read_source(path: Path) -> tuple[str, Diagnostic | None]:
    """A recipe file's text (a leading BOM dropped), or a diagnostic saying why it cannot be used.

    Invalid UTF-8 is reported at the first bad byte; the text returned then has the bad bytes
    replaced, so that the diagnostic can still quote the line. A file that does not start like
    a recipe (a `.env`, a key file, a binary) is reported as a whole and its text is not
    returned, so that no renderer can quote a line of it.
    """
    shown = str(path)
    try:
        data = path.read_bytes()
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return "", error(f"cannot read {shown}: {reason}", Span.whole(shown))
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        text, bad = data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        text, bad = data.decode("utf-8", "replace"), exc
    if not starts_like_a_recipe(text):
        return "", _not_a_recipe(shown, utf8=bad is None)
    if bad is None:
        return text, None
    before = data[: bad.start]
    line = before.count(b"\n") + 1
    col = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
    span = Span(shown, line, col, line, col + 1)
    return text, error("the file is not valid UTF-8", span, f"byte 0x{data[bad.start]:02x}")


def read_text(text: str, shown: str) -> tuple[str, Diagnostic | None]:
    """`read_source` for a recipe's text already in memory (an editor's unsaved buffer)."""
    text = text.removeprefix("\ufeff")
    if not starts_like_a_recipe(text):
        return "", _not_a_recipe(shown, utf8=True)
    return text, None


# What a recipe's first line of substance is: `skopt 1`, `import "..."`, or `kind [name] {`.
_RECIPE_START = re.compile(
    r"(?:skopt|import)(?:[ \t]|$)|[A-Za-z_][A-Za-z0-9_-]*(?:[ \t]+[A-Za-z_][A-Za-z0-9_-]*)?[ \t]*\{"
)


def starts_like_a_recipe(text: str) -> bool:
    """Whether the first line that is not blank or a comment starts the way a recipe can."""
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return _RECIPE_START.match(stripped) is not None
    return True  # nothing but comments: an empty library


def _not_a_recipe(shown: str, utf8: bool) -> Diagnostic:
    return error(
        f"{shown} is not a skopt recipe" + ("" if utf8 else " (nor valid UTF-8 text)"),
        Span.whole(shown),
        "its first line does not start like one; no line of it is shown",
        help="a recipe starts with 'skopt 1', an import, or a block such as 'model m { ... }'",
    )
