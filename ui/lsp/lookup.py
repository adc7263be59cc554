"""What the cursor stands on: the key it is at, and the block a reference there names.

The blocks come from `scope.load` over the open buffers (imports followed, merged); when the
buffer does not parse, the cursor's line (the one being typed) is left out and it is read again.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from skopt.compiler.query import declared, key_spec, ref_kind, value_type
from skopt.compiler.schema import Key
from skopt.compiler.scope import Scope, load
from skopt.grammar import ast
from skopt.grammar.cursor import Cursor
from skopt.grammar.syntax_errors import blank_line


def scope_at(path: str, text: str, line: int, overlay: Mapping[str, str]) -> Scope:
    own = str(Path(path).resolve())
    scope = load(path, {**overlay, own: text})
    if scope.broken:
        scope = load(path, {**overlay, own: blank_line(text, line)})
    return scope


def value_key(cursor: Cursor) -> Key | None:
    """The key whose value the cursor is in."""
    return key_spec(cursor.blocks, cursor.key) if cursor.key is not None else None


def named_kind(cursor: Cursor) -> str | None:
    """The kind of block (`model`, `env`) that the value at the cursor names, if it names one."""
    key = value_key(cursor)
    type_ = value_type(key, cursor.call, cursor.arg) if key else None
    return ref_kind(type_) if type_ else None


def referenced(cursor: Cursor, scope: Scope) -> ast.Block | None:
    """The block that the name under the cursor refers to, when it is a reference."""
    kind = named_kind(cursor)
    if kind is None or not isinstance(cursor.word, ast.Name):
        return None
    return declared(scope.blocks, kind).get(cursor.word.name)
