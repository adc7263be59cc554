"""Loading a recipe with its imports: files → one merged list of top-level blocks.

Imports resolve against the folder of the importing file. Blocks meet by kind and name
(`model target`, `train`); the importing file overrides the imported one key by key, nested
blocks merging the same way (like `_base_` inheritance). Later imports override earlier ones.
Import cycles, missing files and names declared twice in one file are diagnostics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skopt.compiler.schema import JOBS
from skopt.grammar import ast
from skopt.grammar.parse import parse
from skopt.grammar.source import Diagnostic, Span, error, read_source, read_text

LANGUAGE_VERSION = 1


@dataclass
class Scope:
    """Everything read for one recipe: the merged blocks, every source text, diagnostics."""

    root: str
    # texts that stand in for files, by resolved path: an editor's unsaved buffers
    overlay: Mapping[str, str] = field(default_factory=dict)
    broken: bool = False  # a file could not be read or parsed: nothing further is checked
    blocks: list[ast.Block] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def load(path: str, overlay: Mapping[str, str] | None = None) -> Scope:
    """Read `path` and its imports; a file whose resolved path is in `overlay` is read from it."""
    scope = Scope(root=path, overlay=overlay or {})
    blocks = _load_file(Path(path), scope, stack=(), span=None)
    scope.blocks = blocks or []
    return scope


def _load_file(
    path: Path, scope: Scope, stack: tuple[Path, ...], span: Span | None
) -> list[ast.Block] | None:
    try:
        key = path.resolve()
    except (OSError, ValueError, RuntimeError) as exc:
        scope.broken = True
        where = span or Span.point(str(path))
        scope.diagnostics.append(error(f"cannot use the path {str(path)!r}", where, str(exc)))
        return None
    if key in stack:
        chain = " -> ".join(p.name for p in (*stack[stack.index(key) :], key))
        assert span is not None
        scope.diagnostics.append(
            error(f"import cycle: {chain}", span, "imports a file that imports this one")
        )
        scope.broken = True
        return None
    if span is not None and path.suffix != ".skopt":
        scope.broken = True
        scope.diagnostics.append(_not_a_recipe_import(path, span))
        return None
    text, problem = _read(path, key, scope)
    if problem is not None:
        scope.broken = True
        scope.diagnostics.append(_at_import(problem, path, span))
        if not problem.span.is_whole_file:
            scope.sources[str(path)] = text  # a recipe's own bad line, quoted
        return None
    scope.sources[str(path)] = text
    parsed = parse(text, str(path))
    scope.diagnostics.extend(parsed.diagnostics)
    if parsed.recipe is None:
        scope.broken = True
        return None
    recipe = parsed.recipe
    _check_header(recipe, scope)
    merged: list[ast.Block] = []
    for imp in recipe.imports:
        target = import_path(imp.path)
        imported = _load_file(target, scope, (*stack, key), imp.path.span)
        if imported is not None:
            merged = merge(merged, imported)
    own = _without_duplicates(recipe.blocks, scope.diagnostics)
    return merge(merged, own)


def _read(path: Path, key: Path, scope: Scope) -> tuple[str, Diagnostic | None]:
    buffer = scope.overlay.get(str(key))
    return read_source(path) if buffer is None else read_text(buffer, str(path))


def import_path(written: ast.Str) -> Path:
    """The file an import names: relative to the folder of the file that imports it."""
    path = Path(written.value)
    return path if path.is_absolute() else Path(written.span.path).parent / path


def _not_a_recipe_import(path: Path, span: Span) -> Diagnostic:
    # nothing of the file is read: an import of `.env` must not print a key into a CI log
    return error(
        f"an import names a .skopt recipe, not {path.name!r}",
        span,
        "not a .skopt file",
        help='import recipe files only, e.g. import "base.skopt"',
    )


def _at_import(problem: Diagnostic, path: Path, span: Span | None) -> Diagnostic:
    """A problem with an imported file as a whole is shown at the line that imports it."""
    if span is None or not problem.span.is_whole_file:
        return problem
    if not _exists(path):
        return error(f"imported file not found: {path}", span, "no such file")
    return error(problem.message, span, "imported here", problem.help)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _check_header(recipe: ast.Recipe, scope: Scope) -> None:
    header = recipe.header
    if header is not None and header.version.value != LANGUAGE_VERSION:
        scope.diagnostics.append(
            error(
                f"unsupported language version {header.version.text}",
                header.version.span,
                f"this skopt reads version {LANGUAGE_VERSION}",
                help=f"write 'skopt {LANGUAGE_VERSION}'",
            )
        )


def member_key(member: ast.Entry | ast.Block) -> str:
    """What two members must share to be 'the same' (an entry and a block may share one)."""
    if isinstance(member, ast.Entry):
        return member.key.name
    if member.name is not None:
        return f"{member.kind.name} {member.name.name}"
    return member.kind.name


def _without_duplicates(
    members: Iterable[ast.Block], diagnostics: list[Diagnostic]
) -> list[ast.Block]:
    kept: dict[str, ast.Block] = {}
    job: ast.Block | None = None
    for block in members:
        key = member_key(block)
        if block.kind.name in JOBS:
            if job is not None:
                diagnostics.append(two_jobs(block, job))
                continue
            job = block
        elif key in kept:
            first = kept[key].span
            diagnostics.append(
                error(
                    f"{block.label} is declared twice",
                    (block.name or block.kind).span,
                    "declared again here",
                    help=f"first declared at {first.line}:{first.col}",
                )
            )
            continue
        kept[key] = ast.Block(
            block.kind, block.name, _dedupe_body(block.body, diagnostics), block.span
        )
    return list(kept.values())


def two_jobs(block: ast.Block, first: ast.Block) -> Diagnostic:
    where = f"{first.span.path}:{first.span.line}:{first.span.col}"
    return error(
        "a recipe holds at most one job block (train or sleep)",
        block.kind.span,
        "second job block",
        help=f"the first is '{first.kind.name}' at {where}; split them into two recipes",
    )


def _dedupe_body(
    body: tuple[ast.Entry | ast.Block, ...], diagnostics: list[Diagnostic]
) -> tuple[ast.Entry | ast.Block, ...]:
    seen: dict[str, ast.Entry | ast.Block] = {}
    for member in body:
        key = member_key(member)
        if key in seen:
            first = seen[key].span
            where = member.key.span if isinstance(member, ast.Entry) else member.kind.span
            diagnostics.append(
                error(
                    f"'{key}' is set twice",
                    where,
                    "set again here",
                    help=f"first set at {first.line}:{first.col}",
                )
            )
            continue
        if isinstance(member, ast.Block):
            member = ast.Block(
                member.kind, member.name, _dedupe_body(member.body, diagnostics), member.span
            )
        seen[key] = member
    return tuple(seen.values())


def merge(base: list[ast.Block], override: list[ast.Block]) -> list[ast.Block]:
    """Blocks of `override` replace those of `base` key by key; new blocks are appended."""
    merged = {member_key(b): b for b in base}
    for block in override:
        key = member_key(block)
        merged[key] = _merge_block(merged[key], block) if key in merged else block
    return list(merged.values())


def _merge_block(base: ast.Block, override: ast.Block) -> ast.Block:
    members: dict[str, ast.Entry | ast.Block] = {member_key(m): m for m in base.body}
    for member in override.body:
        key = member_key(member)
        old = members.get(key)
        if isinstance(old, ast.Block) and isinstance(member, ast.Block):
            members[key] = _merge_block(old, member)
        else:
            members[key] = member
    return ast.Block(override.kind, override.name, tuple(members.values()), override.span)
