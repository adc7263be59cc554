"""Between skopt's spans (1-based lines, columns in code points) and LSP positions (0-based,
columns in the code units the client chose: UTF-16 unless it asked for another)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from skopt.grammar.source import Span


def lines_of(text: str) -> list[str]:
    """Lines as the grammar counts them: split at newlines only."""
    return text.split("\n")


def span_range(span: Span, lines: Sequence[str], codec: PositionCodec) -> types.Range:
    """The range of a span; a whole-file span is the start of the file."""
    if span.is_whole_file:
        return types.Range(types.Position(0, 0), types.Position(0, 0))
    start = ServerTextPosition(span.line - 1, span.col - 1)
    end = ServerTextPosition(span.end_line - 1, span.end_col - 1)
    return types.Range(
        codec.position_to_client_units(lines, start), codec.position_to_client_units(lines, end)
    )


def point_at(
    position: types.Position, lines: Sequence[str], codec: PositionCodec
) -> tuple[int, int]:
    """The 1-based line and code-point column of a client position."""
    at = codec.position_from_client_units(lines, position)
    return at.line + 1, at.character + 1


def document_end(lines: Sequence[str], codec: PositionCodec) -> types.Position:
    return types.Position(len(lines) - 1, codec.client_num_units(lines[-1]))


def path_of(uri: str) -> str:
    return to_fs_path(uri) or uri


def uri_of(path: str) -> str:
    return Path(_absolute(path)).as_uri()


def uri_for(path: str, open_uris: Sequence[str]) -> str:
    """The URI of a file: the client's own when it is open, so that both name it alike."""
    absolute = _absolute(path)
    same = (uri for uri in open_uris if _absolute(path_of(uri)) == absolute)
    return next(same, None) or uri_of(path)


def _absolute(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


def span_text(span: Span, text: str) -> str:
    """The text a span covers."""
    lines = lines_of(text)[span.line - 1 : span.end_line]
    if not lines:
        return ""
    if len(lines) == 1:
        return lines[0][span.col - 1 : span.end_col - 1]
    return "\n".join([lines[0][span.col - 1 :], *lines[1:-1], lines[-1][: span.end_col - 1]])
