"""Harvest (docs/sleep.md, A; transcripts README §8): the sessions of coding agents a night learns
from, read-only, leniently, redacted before they leave.

This package owns `Source` (what a recipe names: an agent kind and its root) and `harvest`,
which reads every source (one module per agent: `claude`, `codex`, `generic`), seals each
session through the one redacting funnel (draft.py), and keeps the sessions a night wants: not
skopt's own, not live, of the wanted kinds, inside the project, started at or after `since`.
What it passes over it counts by reason (`Skipped`); nothing in a transcript makes it raise.
"""

from __future__ import annotations

import os.path
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import Literal

from skopt.runtime.sleep.harvest import claude, codex, generic
from skopt.runtime.sleep.harvest.draft import SessionDraft, parse_time, seal
from skopt.runtime.sleep.harvest.jsonl import Tally
from skopt.runtime.sleep.redact import default_redactor
from skopt.runtime.sleep.sessions import Harvest, Kind, Session, Skipped

SourceKind = Literal["claude", "codex", "generic"]
DEFAULT_KINDS: tuple[Kind, ...] = ("interactive",)


@dataclass(frozen=True)
class Source:
    """What the recipe names; B's `SourceSettings` maps onto it."""

    kind: SourceKind
    root: Path  # ~/.claude, ~/.codex, or the generic file/folder


def harvest(
    sources: Sequence[Source],
    *,
    project: Path | None = None,
    since: datetime | None = None,
    kinds: Collection[Kind] = DEFAULT_KINDS,
    now: datetime | None = None,
) -> Harvest:
    """The wanted sessions of every source, redacted, in start order.

    `project`: only sessions whose cwd is it or below it (None: any cwd). `since`: only
    sessions started at or after it (naive: UTC). `now`: the clock the live check reads
    (default: the system's)."""
    now = now or datetime.now(UTC)
    tally = Tally()
    drafts = [d for source in sources for d in read(source, tally, now=now)]
    redactor = default_redactor()
    kept: list[Session] = []
    for draft in drafts:
        reason = passed_over(draft, project=project, since=_aware(since), kinds=kinds)
        if reason:
            tally.skip(reason)
        else:
            kept.append(seal(draft, redactor))
    kept.sort(key=_start_order)
    skipped = Skipped(counts=dict(sorted(tally.counts.items())))
    return Harvest(sessions=kept, files=tally.files, skipped=skipped)


def read(source: Source, tally: Tally, *, now: datetime) -> list[SessionDraft]:
    """A source's sessions as drafts, unfiltered and unredacted (what the file says)."""
    root = source.root.expanduser()
    if source.kind == "claude":
        return claude.drafts(root, tally, now=now)
    if source.kind == "codex":
        return codex.drafts(root, tally, now=now)
    return generic.drafts(root, tally)


def passed_over(
    draft: SessionDraft,
    *,
    project: Path | None,
    since: datetime | None,
    kinds: Collection[Kind],
) -> str | None:
    """Why a night does not want this session (the first reason that holds), or None."""
    if draft.kind == "self" and "self" not in kinds:
        return "self"
    if draft.live:
        return "live"
    if draft.kind not in kinds:
        return draft.kind
    if project is not None and not inside(draft.cwd, project):
        return "outside project"
    if since is not None and _started(draft) < since:
        return "too old"
    return None


def inside(cwd: str | None, project: Path) -> bool:
    """Whether `cwd` is `project` or below it, compared by path components (no file access:
    the cwd of a session is as it was recorded, perhaps on another machine)."""
    if not cwd:
        return False
    base = PurePath(_normal(project.expanduser().absolute()))
    parts = PurePath(_normal(PurePath(cwd))).parts
    return parts[: len(base.parts)] == base.parts


def _normal(path: PurePath) -> str:
    return os.path.normpath(str(path))


def _started(draft: SessionDraft) -> datetime:
    """When a session started; the file's time when the file says nothing readable."""
    return draft.started() or datetime.fromtimestamp(draft.mtime, UTC)


def _aware(moment: datetime | None) -> datetime | None:
    return moment.replace(tzinfo=UTC) if moment and moment.tzinfo is None else moment


def _start_order(session: Session) -> tuple[bool, datetime, str, str, str]:
    started = parse_time(session.started_at)
    return (
        started is None,
        started or datetime.min.replace(tzinfo=UTC),
        session.path,
        session.session_id,
        session.agent_id or "",
    )
