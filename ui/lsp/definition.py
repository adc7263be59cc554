"""Go to definition: of a reference, the block it names; of an import, the file it names."""

from __future__ import annotations

from collections.abc import Mapping

from skopt.compiler.scope import import_path
from skopt.grammar import ast
from skopt.grammar.cursor import at
from skopt.grammar.source import Span
from skopt.ui.lsp.lookup import referenced, scope_at


def definition_span(
    text: str, path: str, line: int, col: int, overlay: Mapping[str, str]
) -> tuple[Span, str] | None:
    """Where the thing at the point is defined, with the text of that file (for positions)."""
    cursor = at(text, line, col, path)
    if cursor.place == "import" and isinstance(cursor.word, ast.Str):
        target = import_path(cursor.word)
        return (Span.point(str(target)), "") if target.is_file() else None
    if cursor.place != "value":
        return None
    scope = scope_at(path, text, line, overlay)
    block = referenced(cursor, scope)
    if block is None:
        return None
    where = (block.name or block.kind).span
    return where, scope.sources.get(where.path, "")
