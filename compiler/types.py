"""Value types of the recipe language: each checks one AST value and returns its Python value.

A type either returns the value or adds a diagnostic (with a did-you-mean where it helps) and
returns `INVALID`. Units are part of the type: money needs `$`, durations need `s`/`min`/`h`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeAlias

from skopt.compiler import cron
from skopt.grammar import ast
from skopt.grammar.source import Diagnostic, Span, did_you_mean, error


class _Invalid:
    def __repr__(self) -> str:
        return "INVALID"


INVALID = _Invalid()

Scalar = str | int | float | bool | None
Checked: TypeAlias = "Scalar | list[Checked] | Func | _Invalid"


@dataclass(frozen=True, slots=True)
class Func:
    """A checked call or enum word: `cosine(max = 4, min = 2)`, `f1`, `python("m:E")`."""

    name: str
    args: Mapping[str, Scalar] = field(default_factory=dict)


Sink = Callable[[Diagnostic], None]


class Type(Protocol):
    def describe(self) -> str: ...

    def check(self, value: ast.Value, report: Sink) -> Checked: ...


_UNIT_WORDS = {
    "count": "a count such as 20k",
    "percent": "a percent such as 60%",
    "money": "an amount such as $25",
    "duration": "a duration such as 30s, 10min or 2h",
}


def found(value: ast.Value) -> str:
    """How a person would name what they wrote."""
    match value:
        case ast.Str():
            return "a string"
        case ast.Number(value=int()):
            return f"the number {value.text}"
        case ast.Number():
            return f"the number {value.text}"
        case ast.Quantity(unit=unit):
            return f"{unit} {value.text}"
        case ast.Name(name=name):
            return f"'{name}'"
        case ast.Call(func=func):
            return f"a call of '{func.name}'"
        case ast.ListValue():
            return "a list"
    return "a value"


def _wrong(value: ast.Value, want: str, report: Sink, help: str = "") -> _Invalid:
    report(error(f"expected {want}, found {found(value)}", value.span, f"expected {want}", help))
    return INVALID


@dataclass(frozen=True)
class Int:
    min: int | None = None
    max: int | None = None

    def describe(self) -> str:
        return "a whole number"

    def check(self, value: ast.Value, report: Sink) -> Checked:
        if isinstance(value, ast.Number) and isinstance(value.value, int):
            number = value.value
        elif isinstance(value, ast.Quantity) and value.unit == "count":
            if not isinstance(value.value, int):
                return _wrong(value, self.describe(), report)
            number = value.value
        else:
            help = "a count is written 20k or 2M" if isinstance(value, ast.Quantity) else ""
            return _wrong(value, self.describe(), report, help)
        return _in_range(number, self.min, self.max, value, report)


@dataclass(frozen=True)
class Float:
    min: float | None = None
    max: float | None = None
    percent: bool = False  # a fraction key also takes `5%`

    def describe(self) -> str:
        return "a number"

    def check(self, value: ast.Value, report: Sink) -> Checked:
        if isinstance(value, ast.Number):
            number: float = value.value
        elif self.percent and isinstance(value, ast.Quantity) and value.unit == "percent":
            number = value.value
        else:
            return _wrong(value, self.describe(), report)
        return _in_range(number, self.min, self.max, value, report)


@dataclass(frozen=True)
class Unit:
    """A quantity with a unit: percent, money or duration; a bare number is a unit error."""

    unit: str
    min: float | None = 0
    max: float | None = None

    def describe(self) -> str:
        return _UNIT_WORDS[self.unit]

    def check(self, value: ast.Value, report: Sink) -> Checked:
        if isinstance(value, ast.Quantity) and value.unit == self.unit:
            return _in_range(value.value, self.min, self.max, value, report)
        if isinstance(value, ast.Number):
            report(
                error(
                    f"missing unit: expected {self.describe()}",
                    value.span,
                    "a bare number has no unit",
                    help=f"write {_with_unit(value, self.unit)}",
                )
            )
            return INVALID
        return _wrong(value, self.describe(), report)


def _with_unit(number: ast.Number, unit: str) -> str:
    if unit == "percent" and isinstance(number.value, float) and number.value <= 1:
        return f"{number.value * 100:g}%"  # a fraction written as 0.6 means 60%
    text = number.text
    return {"percent": f"{text}%", "money": f"${text}", "duration": f"{text}s"}.get(unit, text)


def _in_range(
    number: float, low: float | None, high: float | None, value: ast.Value, report: Sink
) -> Checked:
    if low is not None and number < low:
        report(
            error(
                f"{value_text(value)} is out of range",
                value.span,
                f"must be at least {_fmt(low, value)}",
            )
        )
        return INVALID
    if high is not None and number > high:
        report(
            error(
                f"{value_text(value)} is out of range",
                value.span,
                f"must be at most {_fmt(high, value)}",
            )
        )
        return INVALID
    return number


def value_text(value: ast.Value) -> str:
    return getattr(value, "text", None) or found(value)


def _fmt(bound: float, value: ast.Value) -> str:
    if isinstance(value, ast.Quantity) and value.unit == "percent":
        return f"{bound * 100:g}%"
    if isinstance(value, ast.Quantity) and value.unit == "money":
        return f"${bound:g}"
    return f"{bound:g}"


@dataclass(frozen=True)
class Str:
    def describe(self) -> str:
        return "a string"

    def check(self, value: ast.Value, report: Sink) -> Checked:
        if isinstance(value, ast.Str):
            return value.value
        return _wrong(value, self.describe(), report, 'strings are written in quotes: "..."')


@dataclass(frozen=True)
class PathTo:
    """A file or folder, relative to the recipe file that names it; it must exist.

    `kind` is "file", "dir", or "path" for either (a generic session source: a file or a
    folder of them)."""

    kind: str = "file"

    def describe(self) -> str:
        return "a file or folder path" if self.kind == "path" else f"a {self.kind} path"

    def check(self, value: ast.Value, report: Sink) -> Checked:
        if not isinstance(value, ast.Str):
            return _wrong(value, f'{self.describe()} in quotes, e.g. "data/items.jsonl"', report)
        try:
            path = resolve(value)
            exists = {"file": path.is_file, "dir": path.is_dir}.get(self.kind, path.exists)()
        except (OSError, ValueError, RuntimeError) as exc:
            report(error(f"cannot use the path {value.value!r}", value.span, str(exc)))
            return INVALID
        if not exists:
            message = (
                f"{value.value} is not a {'regular file' if self.kind == 'file' else 'folder'}"
                if path.exists()
                else f"{self.kind} not found: {value.value}"
            )
            report(error(message, value.span, f"looked for {path}"))
            return INVALID
        return str(path)


@dataclass(frozen=True)
class Cron(Str):
    """A cron expression in a string (`compiler/cron.py`); each problem points at its field."""

    def describe(self) -> str:
        return f"a cron expression in quotes, e.g. {cron.EXAMPLE}"

    def check(self, value: ast.Value, report: Sink) -> Checked:
        if not isinstance(value, ast.Str):
            return _wrong(value, self.describe(), report)
        found = cron.problems(value.value)
        for problem in found:
            where = _inside(value, problem.start, problem.length)
            report(error(problem.message, where, problem.label, problem.help))
        return INVALID if found else cron.normalized(value.value)


def _inside(value: ast.Str, start: int, length: int) -> Span:
    """The span of `length` characters at `start` of a string's value, where the text as written
    lets it be found (a one-line string without escapes), else the whole string."""
    span = value.span
    if value.text == value.value:  # a bare `--set` value: no quotes
        before = 0
    elif value.text == f'"{value.value}"' and "\\" not in value.text:
        before = 1
    else:
        return span
    if span.end_line != span.line:
        return span
    col = span.col + before + start
    return Span(span.path, span.line, col, span.line, col + max(1, length))


def resolve(value: ast.Str) -> Path:
    """A path as written in a recipe, resolved against the folder of the file that wrote it."""
    written = Path(value.value).expanduser()
    if written.is_absolute():
        return written
    return Path(value.span.path).parent / written


@dataclass(frozen=True)
class Bool:
    def describe(self) -> str:
        return "on or off"

    def check(self, value: ast.Value, report: Sink) -> Checked:
        if isinstance(value, ast.Name) and value.name in ("on", "true"):
            return True
        if isinstance(value, ast.Name) and value.name in ("off", "false"):
            return False
        help = (
            did_you_mean(value.name, ["on", "off", "true", "false"])
            if isinstance(value, ast.Name)
            else ""
        )
        return _wrong(value, "on or off", report, help)


@dataclass(frozen=True)
class Ref:
    """A reference to a declared block: its existence is checked with the whole recipe."""

    kind: str

    def describe(self) -> str:
        return f"the name of a {self.kind}"

    def check(self, value: ast.Value, report: Sink) -> Checked:
        if isinstance(value, ast.Name):
            return value.name
        return _wrong(value, self.describe(), report)


@dataclass(frozen=True)
class Param:
    type: Type
    required: bool = True
    default: Scalar = None


@dataclass(frozen=True)
class Choice:
    """Enum words and calls: `cosine(max = 4, min = 2)`, `f1`, `python("pkg.mod:Env")`."""

    words: tuple[str, ...] = ()
    calls: Mapping[str, Mapping[str, Param]] = field(default_factory=dict)
    what: str = "value"
    # a rule across arguments: returns (message, help) when a checked call breaks it
    rule: Callable[[Func], tuple[str, str] | None] | None = None

    def describe(self) -> str:
        names = [*self.words, *(f"{c}(...)" for c in self.calls)]
        return " | ".join(names)

    def check(self, value: ast.Value, report: Sink) -> Checked:
        options = [*self.words, *self.calls]
        if isinstance(value, ast.Name):
            if value.name in self.words:
                return Func(value.name)
            if value.name in self.calls:
                return self._check_call(ast.Call(value, (), value.span), report)
            return self._unknown(value.name, value, options, report)
        if isinstance(value, ast.Call):
            if value.func.name in self.calls:
                return self._check_call(value, report)
            if value.func.name in self.words:
                report(
                    error(
                        f"'{value.func.name}' takes no arguments",
                        value.span,
                        f"write just {value.func.name}",
                    )
                )
                return INVALID
            return self._unknown(value.func.name, value.func, options, report)
        return _wrong(value, f"one of: {self.describe()}", report)

    def _unknown(
        self, word: str, where: ast.Value, options: Sequence[str], report: Sink
    ) -> _Invalid:
        help = did_you_mean(word, options) or f"one of: {self.describe()}"
        report(error(f"unknown {self.what} '{word}'", where.span, f"not a known {self.what}", help))
        return INVALID

    def _check_call(self, call: ast.Call, report: Sink) -> Checked:
        params = self.calls[call.func.name]
        names = list(params)
        args: dict[str, Scalar] = {}
        ok = True
        for index, arg in enumerate(call.args):
            if arg.name is None:
                if index >= len(names) or any(a.name is not None for a in call.args[:index]):
                    report(
                        error(
                            f"too many arguments for '{call.func.name}'", arg.span, "not expected"
                        )
                    )
                    ok = False
                    continue
                key = names[index]
            else:
                key = arg.name.name
                if key not in params:
                    help = (
                        did_you_mean(key, names)
                        or f"'{call.func.name}' takes: {', '.join(names) or 'nothing'}"
                    )
                    report(
                        error(
                            f"unknown argument '{key}' of '{call.func.name}'",
                            arg.name.span,
                            "not known",
                            help,
                        )
                    )
                    ok = False
                    continue
            if key in args:
                report(error(f"argument '{key}' given twice", arg.span, "already given"))
                ok = False
                continue
            checked = params[key].type.check(arg.value, report)
            if checked is INVALID:
                ok = False
            args[key] = checked  # type: ignore[assignment]
        for key, param in params.items():
            if key in args:
                continue
            if param.required:
                report(
                    error(
                        f"'{call.func.name}' needs '{key}'",
                        call.span,
                        f"'{key}' is missing",
                        f"e.g. {call.func.name}({', '.join(f'{n} = ...' for n in names)})",
                    )
                )
                ok = False
            else:
                args[key] = param.default
        if not ok:
            return INVALID
        checked = Func(call.func.name, args)
        broken = self.rule(checked) if self.rule else None
        if broken:
            report(error(broken[0], call.span, "not a valid combination", broken[1]))
            return INVALID
        return checked


@dataclass(frozen=True)
class OneOf:
    """The first alternative that fits the shape of the value decides (paths vs enum words)."""

    options: tuple[Type, ...]

    def describe(self) -> str:
        return " or ".join(o.describe() for o in self.options)

    def check(self, value: ast.Value, report: Sink) -> Checked:
        for option in self.options:
            if fits_shape(option, value):
                return option.check(value, report)
        return _wrong(value, self.describe(), report)


def fits_shape(option: Type, value: ast.Value) -> bool:
    """Whether `value` has the shape that `option` takes (a string, a number, a word...)."""
    match option:
        case Str() | PathTo():
            return isinstance(value, ast.Str)
        case Int() | Float():
            return isinstance(value, ast.Number | ast.Quantity)
        case Choice() | Bool() | Ref():
            return isinstance(value, ast.Name | ast.Call)
        case ListOf():
            return isinstance(value, ast.ListValue)
    return True


@dataclass(frozen=True)
class ListOf:
    item: Type
    min_items: int = 1

    def describe(self) -> str:
        return f"a list of {self.item.describe()}"

    def check(self, value: ast.Value, report: Sink) -> Checked:
        if not isinstance(value, ast.ListValue):
            return _wrong(value, f"a list [...] of {self.item.describe()}", report)
        if len(value.items) < self.min_items:
            report(error("the list is empty", value.span, f"give at least {self.min_items} item"))
            return INVALID
        items = [self.item.check(v, report) for v in value.items]
        return INVALID if any(i is INVALID for i in items) else items
