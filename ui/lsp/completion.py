"""Completion: block kinds, the keys and nested blocks of the enclosing block, the words a
value may be, and the names of the declared models and envs where a value names one."""

from __future__ import annotations

from collections.abc import Mapping

from lsprotocol import types

from skopt.compiler.query import block_spec, declared, value_type, words
from skopt.compiler.schema import TOP_LEVEL
from skopt.grammar import ast
from skopt.grammar.cursor import Cursor, at
from skopt.ui.lsp.lookup import named_kind, scope_at, value_key

Kind = types.CompletionItemKind


def complete(
    text: str, path: str, line: int, col: int, overlay: Mapping[str, str]
) -> list[types.CompletionItem]:
    cursor = at(text, line, col, path)
    if cursor.place == "statement":
        return [_item(kind, Kind.Module, "block") for kind in [*TOP_LEVEL, "import"]]
    if cursor.place == "member":
        return _members(cursor)
    if cursor.place == "value" and not isinstance(cursor.word, ast.Str):  # not in a string
        return _values(cursor, path, text, line, overlay)
    return []


def _members(cursor: Cursor) -> list[types.CompletionItem]:
    spec = block_spec(cursor.blocks)
    if spec is None:
        return []
    keys = [
        _item(name, Kind.Property, key.type.describe(), key.doc, f"{name} = ")
        for name, key in spec.keys.items()
    ]
    return keys + [_item(kind, Kind.Module, f"{kind} {{ ... }}") for kind in spec.children]


def _values(
    cursor: Cursor, path: str, text: str, line: int, overlay: Mapping[str, str]
) -> list[types.CompletionItem]:
    key = value_key(cursor)
    type_ = value_type(key, cursor.call, cursor.arg) if key else None
    if type_ is None:
        return []
    items = [_item(word, Kind.EnumMember, type_.describe()) for word in words(type_)]
    kind = named_kind(cursor)
    if kind is not None:
        names = declared(scope_at(path, text, line, overlay).blocks, kind)
        items += [_item(name, Kind.Reference, f"{kind} {name}") for name in names]
    return items


def _item(
    label: str, kind: types.CompletionItemKind, detail: str, doc: str = "", insert: str = ""
) -> types.CompletionItem:
    return types.CompletionItem(
        label=label,
        kind=kind,
        detail=detail,
        documentation=doc or None,
        insert_text=insert or None,
    )
