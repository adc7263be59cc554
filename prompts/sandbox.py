"""The sandbox every prompt template renders in: a template formats text and does nothing else.

Templates come from a recipe's folder (`prompts = "dir"`, an env's `prompt`), and people run
`skopt check` and `skopt plan` on recipes they did not write. So rendering is confined:

- Jinja's `ImmutableSandboxedEnvironment`: no attribute walk reaches `__globals__`, `os` or
  `__subclasses__`, no method mutates a value; no globals at all (no `range`, `cycler`,
  `joiner`, `namespace`, `lipsum`, `dict`): a template sees only the variables it is given.
- Templates are `.j2` files inside the folders searched, never a path outside them.
- Bounded work: every loop iteration and call counts against `MAX_STEPS` per render; every
  piece of output (in macros and `set` blocks too) against `MAX_OUTPUT`; every value built by an
  operator, a filter or a method is at most `MAX_SIZE` (characters plus items), checked before
  it is built where its size can be told in advance (`'x' * n`, `2 ** n`, `~`, `indent`,
  `replace`, `join`), else right after. Filters and methods that pad to a width the template
  picks (`center`, `format`, `ljust`...) are not available, nor `random` (a prompt must be
  reproducible for the cache and `--resume`).
A breach raises `RenderLimit` or Jinja's `SecurityError`, both `TemplateError`s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined, TemplateNotFound, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.environment import Environment
from jinja2.exceptions import TemplateRuntimeError
from jinja2.filters import do_batch, do_indent, sync_do_slice
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_STEPS = 100_000  # loop iterations and calls of one render
MAX_OUTPUT = 4_000_000  # characters a render may output: about a million tokens
MAX_SIZE = MAX_OUTPUT  # characters plus items of any one value a template builds
MAX_INT_BITS = 4096  # `2 ** 10**9` would take minutes before any other check could run
MAX_WIDTH = 10_000  # of a `%` format's width or precision


class RenderLimit(TemplateRuntimeError):
    """A template that would take too long or build too much."""


class Budget:
    """The work one render may still do; a plan can share one across all of its renders."""

    def __init__(self, steps: int, parent: Budget | None = None, who: str = "it takes") -> None:
        self.limit, self.steps, self.output = steps, steps, MAX_OUTPUT
        self.parent, self.who = parent, who

    def tick(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise RenderLimit(f"{self.who} more than {self.limit:,} loop steps and calls")
        if self.parent is not None:
            self.parent.tick()

    def emit(self, size: int) -> None:
        self.output -= size
        if self.output < 0:
            raise RenderLimit(f"it writes more than {MAX_OUTPUT:,} characters")


BUDGET: ContextVar[Budget | None] = ContextVar("skopt_template_budget", default=None)


def _budget() -> Budget:
    budget = BUDGET.get()
    if budget is None:
        raise RenderLimit("templates render only through skopt.prompts")
    return budget


# -- sizes ----------------------------------------------------------------------------------


def weight(value: object, limit: int = MAX_SIZE) -> int:
    """Characters of the strings in `value` plus items of its sequences, counted until past
    `limit` (a shared item counts each time it appears: that is what printing it costs)."""
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, list | tuple | dict):
            total += len(item)
            if total <= limit:
                stack.extend(item.items() if isinstance(item, dict) else item)
    return total


def _fits(size: int, what: str) -> None:
    if size > MAX_SIZE:
        raise RenderLimit(f"{what} would be larger than {MAX_SIZE:,} characters or items")


def checked(value: Any) -> Any:
    """A value a filter or method returned, bounded; a lazy one is bounded as it is read."""
    if isinstance(value, str | list | tuple | dict):
        _fits(weight(value), "a value")
    elif isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > MAX_INT_BITS:
            raise RenderLimit(f"a number larger than {MAX_INT_BITS} bits")
    elif isinstance(value, Iterator):
        return _bounded(value)
    return value


def _bounded(items: Iterable[object]) -> Iterator[object]:
    total = 0
    for item in items:
        _budget().tick()
        total += weight(item)
        _fits(total, "a sequence")
        yield item


# -- operators --------------------------------------------------------------------------------

_FORMAT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _times(left: Any, right: Any) -> None:
    if isinstance(left, int) and isinstance(right, int):
        if left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise RenderLimit(f"a number larger than {MAX_INT_BITS} bits")
        return
    for seq, n in ((left, right), (right, left)):
        if isinstance(seq, str | list | tuple) and isinstance(n, int):
            _fits(weight(seq) * max(n, 0), "a repeated value")


def _power(base: Any, exponent: Any) -> None:
    big = isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1
    if big and exponent * base.bit_length() > MAX_INT_BITS:
        raise RenderLimit(f"a number larger than {MAX_INT_BITS} bits")


def _plus(left: Any, right: Any) -> None:
    if isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple):
        _fits(weight(left) + weight(right), "a joined value")


def _percent(left: Any, right: Any) -> None:
    if not isinstance(left, str):
        return
    for width, precision in _FORMAT_SPEC.findall(left):
        for number in (width, precision):
            if number == "*" or (number and int(number) > MAX_WIDTH):
                raise RenderLimit(f"a '%' format wider than {MAX_WIDTH}")


_OPERATOR_CHECKS: dict[str, Callable[[Any, Any], None]] = {
    "*": _times,
    "**": _power,
    "+": _plus,
    "%": _percent,
}


def join_bounded(pieces: Iterable[object]) -> str:
    """`a ~ b`: the pieces' size is known before they are joined."""
    texts = [str(piece) for piece in pieces]
    _fits(sum(len(t) for t in texts), "a joined string")
    return "".join(texts)


# -- filters ----------------------------------------------------------------------------------

# Filters whose result is at most a few times their input; each result is checked.
# fmt: off
_PLAIN_FILTERS = [
    "abs", "attr", "capitalize", "count", "d", "default", "dictsort", "e", "escape",
    "filesizeformat", "first", "float", "forceescape", "groupby", "int", "items", "last",
    "length", "list", "lower", "map", "max", "min", "pprint", "reject", "rejectattr", "reverse",
    "round", "safe", "select", "selectattr", "sort", "string", "striptags", "title", "tojson",
    "trim", "truncate", "unique", "upper", "urlencode", "urlize", "wordcount", "xmlattr",
]
# fmt: on


def _indent(s: str, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    pad = len(width) if isinstance(width, str) else width
    _fits(len(s) + (s.count("\n") + 1) * max(pad, 0), "an indented string")
    return do_indent(s, width, first, blank)


def _replace(s: str, old: str, new: str, count: int | None = None) -> str:
    s, old, new = str(s), str(old), str(new)
    times = s.count(old) if old else len(s) + 1
    times = times if count is None or count < 0 else min(times, count)
    _fits(len(s) + times * len(new), "a string after replace")
    return s.replace(old, new, -1 if count is None else count)


def _join(value: Iterable[object], d: str = "") -> str:
    texts = [str(item) for item in _bounded(value)]
    _fits(sum(map(len, texts)) + len(str(d)) * len(texts), "a joined string")
    return str(d).join(texts)


def _batch(value: Iterable[object], linecount: int, fill_with: object = None) -> Iterator[object]:
    _fits(linecount, "a batch")
    return do_batch(value, linecount, fill_with)


def _slice(value: Collection[object], slices: int, fill_with: object = None) -> Iterator[object]:
    _fits(slices, "a slice count")
    return sync_do_slice(value, slices, fill_with)


def _sum(iterable: Iterable[object], start: int | float = 0) -> object:
    if not isinstance(start, int | float):
        raise RenderLimit("sum adds numbers only")
    return sum(_bounded(iterable), start)  # type: ignore[arg-type]


def _checking(filter: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        _budget().tick()
        return checked(filter(*args, **kwargs))

    if hasattr(filter, "jinja_pass_arg"):  # pass_context and the like: keep asking for it
        run.jinja_pass_arg = filter.jinja_pass_arg  # type: ignore[attr-defined]
    return run


# -- the environment --------------------------------------------------------------------------

_LOOP = "skopt_loop"  # the filter every `{% for %}` iterates through


class _BoundedCode(CodeGenerator):
    """The compiled template counts its loop steps and its output (private Jinja hooks: the
    hostile-template tests fail if a Jinja release changes them)."""

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        for loop in node.find_all(nodes.For):
            loop.iter = nodes.Filter(loop.iter, _LOOP, [], [], None, None, lineno=loop.lineno)
        super().visit_Template(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.join_bounded((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")

    def _output_const_repr(self, group: Iterable[Any]) -> str:
        return f"environment.counted({super()._output_const_repr(group)})"

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        self.write("environment.counted(")
        super()._output_child_pre(node, frame, finalize)

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        super()._output_child_post(node, frame, finalize)
        self.write(")")


# str methods that pad or rebuild text to a size the template picks
_UNSAFE_STR_METHODS = frozenset(
    {
        "center", "expandtabs", "format", "format_map", "join", "ljust", "replace", "rjust",
        "translate", "zfill",
    }
)  # fmt: skip


class TemplateSandbox(ImmutableSandboxedEnvironment):
    code_generator_class = _BoundedCode
    intercepted_binops = frozenset(_OPERATOR_CHECKS)

    def __init__(self, folders: list[str]) -> None:
        super().__init__(
            loader=_TemplateFiles(folders),
            undefined=StrictUndefined,
            keep_trailing_newline=False,
            autoescape=False,
        )
        self.globals.clear()
        plain = {name: _checking(self.filters[name]) for name in _PLAIN_FILTERS}
        bounded: dict[str, Callable[..., Any]] = {
            "indent": _indent,
            "replace": _replace,
            "join": _join,
            "batch": _batch,
            "slice": _slice,
            "sum": _sum,
        }
        self.filters = {**plain, **{k: _checking(f) for k, f in bounded.items()}, _LOOP: _bounded}

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, str) and attr in _UNSAFE_STR_METHODS:
            return False
        return super().is_safe_attribute(obj, attr, value)

    def wrap_str_format(self, value: Any) -> None:
        return None  # `'{:>999999999}'.format(x)`: str.format is simply not available

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        _OPERATOR_CHECKS[operator](left, right)
        return super().call_binop(context, operator, left, right)

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        _budget().tick()
        return checked(super().call(context, obj, *args, **kwargs))

    @staticmethod
    def counted(piece: str) -> str:
        _budget().emit(len(piece))
        return piece

    join_bounded = staticmethod(join_bounded)


class _TemplateFiles(FileSystemLoader):
    """`.j2` files in the folders searched: an include cannot reach `.env` or leave them."""

    def get_source(
        self, environment: Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        if not template.endswith(".j2"):
            raise TemplateNotFound(template, "templates are .j2 files")
        source, filename, uptodate = super().get_source(environment, template)
        inside = any(
            Path(filename).resolve().is_relative_to(Path(folder).resolve())
            for folder in self.searchpath
        )
        if not inside:
            raise TemplateNotFound(template, "it leads outside its folder")
        return source, filename, uptodate
