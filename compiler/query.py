"""What the schema says about one place in a recipe, and which blocks a reference may name.

The language server's questions — which keys and nested blocks a block takes, a key's type,
default and doc, the words a value may be, whether a value names a block — answered from
`schema` (and from the merged blocks that `scope.load` returns). Nothing is checked here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from skopt.compiler.schema import (
    REQUIRED,
    SWEEP_OPTIONS,
    SWEEPABLE,
    TOP_LEVEL,
    TRAIN,
    BlockSpec,
    Key,
)
from skopt.compiler.types import Bool, Choice, Func, ListOf, OneOf, Ref, Type, Unit
from skopt.grammar import ast
from skopt.grammar.literals import escape

# a sweep takes the sweepable train keys (a list of values each; train holds the default)
# and its own options
SWEEP_KEYS = BlockSpec(
    "sweep", {**{k: replace(TRAIN.keys[k], default=None) for k in SWEEPABLE}, **SWEEP_OPTIONS}
)
BOOLEANS = ("on", "off")


def block_spec(kinds: Sequence[str]) -> BlockSpec | None:
    """The spec of the innermost of the enclosing blocks `kinds` (outermost first)."""
    if not kinds:
        return None
    spec = SWEEP_KEYS if kinds[0] == "sweep" else TOP_LEVEL.get(kinds[0])
    for kind in kinds[1:]:
        spec = spec.children.get(kind) if spec else None
    return spec


def key_spec(kinds: Sequence[str], key: str) -> Key | None:
    spec = block_spec(kinds)
    return spec.keys.get(key) if spec else None


def value_type(key: Key, call: str | None = None, arg: str | None = None) -> Type | None:
    """The type of a value of `key`, or of the argument `arg` of its call `call`
    (a call of one parameter needs no argument name)."""
    if call is None:
        return key.type
    for choice in _alternatives(key.type):
        params = choice.calls.get(call) if isinstance(choice, Choice) else None
        if params is None:
            continue
        if arg is None:
            return next(iter(params.values())).type if len(params) == 1 else None
        return params[arg].type if arg in params else None
    return None


def _alternatives(type_: Type) -> Iterator[Type]:
    """The types a value may have: the options of a `OneOf`, the items of a list."""
    if isinstance(type_, OneOf):
        for option in type_.options:
            yield from _alternatives(option)
    elif isinstance(type_, ListOf):
        yield from _alternatives(type_.item)
    else:
        yield type_


def words(type_: Type) -> list[str]:
    """The words a value of `type_` may be: enum words, call names, on/off."""
    found: list[str] = []
    for option in _alternatives(type_):
        if isinstance(option, Choice):
            found += [*option.words, *option.calls]
        elif isinstance(option, Bool):
            found += BOOLEANS
    return list(dict.fromkeys(found))


def ref_kind(type_: Type) -> str | None:
    """The kind of block (`model`, `env`) that a value of `type_` names, if it names one."""
    return next((o.kind for o in _alternatives(type_) if isinstance(o, Ref)), None)


def declared(blocks: Sequence[ast.Block], kind: str) -> dict[str, ast.Block]:
    """The named blocks of one kind among merged top-level blocks, by name."""
    return {b.name.name: b for b in blocks if b.kind.name == kind and b.name is not None}


def default_text(key: Key) -> str:
    """A key's default as a recipe would write it: `cosine(max = 4, min = 2)`, `2min`, `60%`;
    "required", or "" for an optional key without one."""
    if key.default is REQUIRED:
        return "required"
    if key.default is None:
        return ""
    return _written(key.default, key.type)


def _written(value: object, type_: Type | None) -> str:
    unit = (
        next((o.unit for o in _alternatives(type_) if isinstance(o, Unit)), None) if type_ else None
    )
    match value:
        case bool():
            return "on" if value else "off"
        case Func(name=name, args=args):
            given = {k: v for k, v in args.items() if v is not None}
            inner = ", ".join(f"{k} = {_written(v, None)}" for k, v in given.items())
            return f"{name}({inner})" if given else name
        case list():
            return "[" + ", ".join(_written(v, type_) for v in value) + "]"
        case str():
            return escape(value)
        case int() | float() if unit is not None:
            return _quantity(float(value), unit)
        case float():
            return f"{value:g}"
    return str(value)


def _quantity(value: float, unit: str) -> str:
    if unit == "percent":
        return f"{value * 100:g}%"
    if unit == "money":
        return f"${value:g}"
    for size, suffix in ((3600, "h"), (60, "min")):
        if value >= size and value % size == 0:
            return f"{value / size:g}{suffix}"
    return f"{value:g}s"
