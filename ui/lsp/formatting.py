"""Document formatting: `skopt fmt`'s `format_recipe`, as one edit of the whole document."""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from skopt.grammar.format import format_recipe
from skopt.grammar.parse import parse
from skopt.ui.lsp.positions import document_end, lines_of


def format_edits(text: str, path: str, codec: PositionCodec) -> list[types.TextEdit] | None:
    """One edit replacing the whole text; none when it is canonical, null when it does not
    parse (its diagnostics say why)."""
    parsed = parse(text, path)
    if parsed.recipe is None:
        return None
    formatted = format_recipe(parsed.recipe, text)
    if formatted == text:
        return []
    whole = types.Range(types.Position(0, 0), document_end(lines_of(text), codec))
    return [types.TextEdit(range=whole, new_text=formatted)]
