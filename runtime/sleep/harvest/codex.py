"""Codex CLI rollouts (transcripts README §3): `<root>/sessions/YYYY/MM/DD/rollout-*.jsonl` and
`<root>/archived_sessions/rollout-*.jsonl` as drafts.

This module owns the walk: both folders, `sessions/` first, a session read once by id (an
archived copy is a duplicate); sub-agent threads linked to their parent (the parent's
`spawn_agent` output names the child's id), whose calls and files are credited to the turn that
spawned them; a file changed in the last two minutes is live. Reading one rollout is
codex_rollout.py's job.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from skopt.runtime.sleep.harvest.codex_rollout import Rollout
from skopt.runtime.sleep.harvest.draft import SessionDraft, credit, relative
from skopt.runtime.sleep.harvest.jsonl import Tally, read_records

LIVE_WINDOW = timedelta(minutes=2)
FOLDERS = ("sessions", "archived_sessions")


def drafts(root: Path, tally: Tally, *, now: datetime) -> list[SessionDraft]:
    """Every session of a Codex home (`~/.codex`), or of a folder of rollouts."""
    folders = [root / name for name in FOLDERS if (root / name).is_dir()]
    if not folders and root.is_dir():
        folders = [root]
    if not folders:
        tally.skip("missing source")
        return []
    rollouts: dict[str, Rollout] = {}
    for folder in folders:
        for path in sorted(folder.rglob("rollout-*.jsonl")):
            rollout = _read(path, root, tally, now)
            if rollout is None:
                continue
            if rollout.draft.session_id in rollouts:
                tally.skip("duplicate")
                continue
            rollouts[rollout.draft.session_id] = rollout
    for rollout in rollouts.values():
        parent = rollouts.get(rollout.draft.parent_session_id or "")
        if parent is not None:
            _link(parent, rollout)
    return [rollout.draft for rollout in rollouts.values()]


def _read(path: Path, root: Path, tally: Tally, now: datetime) -> Rollout | None:
    records = read_records(path, tally)
    if records is None:
        return None
    draft = SessionDraft(agent="codex", session_id=path.stem, path=relative(path, root))
    rollout = Rollout(draft, tally=tally, events=any(r.get("type") == "event_msg" for r in records))
    for record in records:
        rollout.feed(record)
    if not rollout.threaded:
        tally.skip("empty session")
        return None
    rollout.finish()
    try:
        draft.mtime = path.stat().st_mtime
    except OSError:
        draft.mtime = 0.0
    draft.live = draft.mtime > (now - LIVE_WINDOW).timestamp()
    return rollout


def _link(parent: Rollout, child: Rollout) -> None:
    located = parent.spawns.get(child.draft.session_id)
    if located is not None and located[0] is not None:
        credit(located[0], located[1], child.draft)
    for path in child.draft.files_touched:
        parent.draft.touch(path)
