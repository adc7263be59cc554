"""Diagnostics as you type: `compile_recipe` over the open buffers, grouped by the file each
diagnostic is in (an imported file's under its own URI), in the client's positions."""

from __future__ import annotations

from collections.abc import Mapping

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from skopt.compiler.compile import compile_recipe
from skopt.grammar.source import Diagnostic, Severity
from skopt.ui.lsp.positions import lines_of, path_of, span_range, uri_for

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
}


def diagnose(
    uri: str, overlay: Mapping[str, str], open_uris: list[str], codec: PositionCodec
) -> dict[str, list[types.Diagnostic]]:
    """What `skopt check` says of the recipe at `uri` (one of `open_uris`), by URI; every
    file read is a key, so that a file whose problems are fixed is cleared."""
    compiled = compile_recipe(path_of(uri), overlay=overlay)
    found: dict[str, list[types.Diagnostic]] = {}
    for path in compiled.sources:
        found.setdefault(uri_for(path, open_uris), [])
    for diagnostic in compiled.diagnostics:
        path = diagnostic.span.path
        lines = lines_of(compiled.sources.get(path, ""))
        found.setdefault(uri_for(path, open_uris), []).append(to_lsp(diagnostic, lines, codec))
    return found


def to_lsp(diagnostic: Diagnostic, lines: list[str], codec: PositionCodec) -> types.Diagnostic:
    """The message is `skopt check`'s; its caret label and help follow on their own lines."""
    notes = [diagnostic.label] if diagnostic.label else []
    notes += [f"help: {diagnostic.help}"] if diagnostic.help else []
    return types.Diagnostic(
        range=span_range(diagnostic.span, lines, codec),
        message="\n".join([diagnostic.message, *notes]),
        severity=_SEVERITY[diagnostic.severity],
        source="skopt",
    )
