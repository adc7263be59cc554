"""Hover: a key's type, default and doc from the schema; a reference's block, quoted."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from skopt.compiler.query import block_spec, default_text
from skopt.compiler.schema import Key
from skopt.grammar import ast
from skopt.grammar.cursor import at
from skopt.grammar.source import Span
from skopt.ui.lsp.lookup import referenced, scope_at
from skopt.ui.lsp.positions import span_text


def hover_text(
    text: str, path: str, line: int, col: int, overlay: Mapping[str, str]
) -> tuple[str, Span] | None:
    """Markdown about what stands at the point, and the span it is about."""
    cursor = at(text, line, col, path)
    word = cursor.word
    if not isinstance(word, ast.Name):
        return None
    if cursor.place == "member":
        spec = block_spec(cursor.blocks)
        key = spec.keys.get(word.name) if spec else None
        return (key_text(word.name, cursor.blocks[-1], key), word.span) if key else None
    if cursor.place != "value":
        return None
    scope = scope_at(path, text, line, overlay)
    block = referenced(cursor, scope)
    if block is None:
        return None
    where = f"{Path(block.span.path).name}:{block.span.line}"
    quoted = span_text(block.span, scope.sources.get(block.span.path, ""))
    return (
        f"**{block.kind.name} {word.name}** · declared at {where}\n\n```skopt\n{quoted}\n```",
        word.span,
    )


def key_text(name: str, block: str, key: Key) -> str:
    default = default_text(key)
    shown = default if default == "required" else f"default `{default}`" if default else "optional"
    return f"**{name}** · {block} key\n\n{key.type.describe()} · {shown}\n\n{key.doc}"
