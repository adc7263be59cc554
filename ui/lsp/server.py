"""The server's wiring: pygls features that hand the open buffers to the modules beside this.

Every change re-checks every open recipe (a library changed in one buffer changes what the
recipes that import it say) and publishes per file; a file that had diagnostics from a recipe
and has none now is cleared.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from skopt.compiler.lock import version
from skopt.ui.lsp.completion import complete
from skopt.ui.lsp.definition import definition_span
from skopt.ui.lsp.diagnostics import diagnose
from skopt.ui.lsp.formatting import format_edits
from skopt.ui.lsp.hover import hover_text
from skopt.ui.lsp.positions import lines_of, path_of, point_at, span_range, uri_for


class SkoptServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "skopt", version(), text_document_sync_kind=types.TextDocumentSyncKind.Full
        )
        self.published: set[str] = set()  # the URIs that were last given diagnostics

    def overlay(self) -> dict[str, str]:
        """The open buffers, by resolved path: what the compiler reads instead of the files."""
        return {
            str(Path(path_of(uri)).resolve()): doc.source
            for uri, doc in self.workspace.text_documents.items()
        }

    def refresh(self) -> None:
        """Check every open recipe; publish each file's diagnostics (those of all the recipes
        that read it, once each), the open documents' last, with their versions."""
        documents = dict(self.workspace.text_documents)
        overlay, codec = self.overlay(), self.workspace.position_codec
        merged: dict[str, list[types.Diagnostic]] = {}
        for uri in documents:
            for target, found in diagnose(uri, overlay, list(documents), codec).items():
                bucket = merged.setdefault(target, [])
                bucket += [d for d in found if d not in bucket]
        for stale in self.published - merged.keys():
            merged[stale] = []
        self.published = {uri for uri, found in merged.items() if found}
        for target in sorted(merged, key=lambda uri: uri in documents):
            doc = documents.get(target)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=target, diagnostics=merged[target], version=doc.version if doc else None
                )
            )

    def point(self, doc: TextDocument, position: types.Position) -> tuple[int, int]:
        return point_at(position, lines_of(doc.source), self.workspace.position_codec)


server = SkoptServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: SkoptServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.refresh()


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: SkoptServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.refresh()


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: SkoptServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.refresh()


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: SkoptServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.refresh()  # a closed file's diagnostics stay only while an open recipe reads it


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: SkoptServer, params: types.HoverParams) -> types.Hover | None:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    line, col = ls.point(doc, params.position)
    found = hover_text(doc.source, path_of(doc.uri), line, col, ls.overlay())
    if found is None:
        return None
    markdown, span = found
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
        range=span_range(span, lines_of(doc.source), ls.workspace.position_codec),
    )


@server.feature(
    types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["=", "(", "["])
)
def completion(ls: SkoptServer, params: types.CompletionParams) -> types.CompletionList:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    line, col = ls.point(doc, params.position)
    items = complete(doc.source, path_of(doc.uri), line, col, ls.overlay())
    return types.CompletionList(is_incomplete=False, items=items)


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def definition(ls: SkoptServer, params: types.DefinitionParams) -> types.Location | None:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    line, col = ls.point(doc, params.position)
    found = definition_span(doc.source, path_of(doc.uri), line, col, ls.overlay())
    if found is None:
        return None
    span, text = found
    codec = ls.workspace.position_codec
    target = uri_for(span.path, list(ls.workspace.text_documents))
    return types.Location(target, span_range(span, lines_of(text), codec))


@server.feature(types.TEXT_DOCUMENT_FORMATTING)
def formatting(
    ls: SkoptServer, params: types.DocumentFormattingParams
) -> list[types.TextEdit] | None:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    return format_edits(doc.source, path_of(doc.uri), ls.workspace.position_codec)


def serve() -> None:
    """Serve on standard input and output until the client says exit."""
    server.start_io()
