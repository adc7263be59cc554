"""Claude Code transcripts (transcripts README §2): `<root>/projects/**/*.jsonl` as drafts.

This module owns the walk and the file layouts: session files `<sessionId>.jsonl`; sub-agent
files beside them (`agent-<id>.jsonl`, 2.0.28 to 2.1.1) or under `<sessionId>/subagents/` with
a `.meta.json` (2.1.2+); inline sidechain records (1.x to 2.0.27); live sessions (the
`<root>/sessions/*.json` registry says busy, or the file changed in the last two minutes).
Sub-agent files are read first so that each session file can credit its sub-agents' calls and
files to the turn that spawned them; session files are read oldest first so that the records a
resumed or forked file copies (same `uuid`) count once. Reading a file's records is
claude_thread.py's job.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

from skopt.runtime.sleep.harvest.claude_thread import Thread
from skopt.runtime.sleep.harvest.draft import SessionDraft, credit, relative
from skopt.runtime.sleep.harvest.jsonl import Tally, read_json, read_records

LIVE_WINDOW = timedelta(minutes=2)
_NOT_TRANSCRIPTS = ("workflows",)  # sub-agent workflow journals under <sid>/subagents/


def drafts(root: Path, tally: Tally, *, now: datetime) -> list[SessionDraft]:
    """Every session of a Claude Code root (`~/.claude`, or its `projects` folder)."""
    projects = root / "projects" if (root / "projects").is_dir() else root
    if not projects.is_dir():
        tally.skip("missing source")
        return []
    files = [p for p in sorted(projects.rglob("*.jsonl")) if not _ignored(p, projects)]
    agents = [p for p in files if p.name.startswith("agent-")]
    mains = sorted((p for p in files if not p.name.startswith("agent-")), key=_mtime_then_name)
    busy = _busy_sessions(root)
    seen: set[str] = set()
    children = _subagents(agents, root, tally, seen)
    found: list[SessionDraft] = []
    for path in mains:
        thread = _read(path, root, tally, seen, subagent=False)
        if thread is None:
            continue
        for child in children.pop(thread.draft.session_id, []):
            _link(thread, child)
            found.append(child.draft)
        found.append(thread.draft)
    found.extend(child.draft for kids in children.values() for child in kids)
    for draft in found:
        draft.live = draft.session_id in busy or _recent(draft.mtime, now)
    return found


def _subagents(
    paths: list[Path], root: Path, tally: Tally, seen: set[str]
) -> dict[str, list[Thread]]:
    """Sub-agent threads by their parent's session id; warm-up and compaction agents dropped."""
    children: dict[str, list[Thread]] = defaultdict(list)
    for path in paths:
        if path.name.startswith("agent-acompact"):
            tally.files += 1
            tally.skip("compaction")
            continue
        thread = _read(path, root, tally, seen, subagent=True)
        if thread is None:
            continue
        if (thread.draft.subagent_prompt or "").strip() == "Warmup":
            tally.skip("warmup")
            continue
        meta = read_json(path.with_name(path.stem + ".meta.json")) or {}
        spawn = meta.get("toolUseId")
        thread.spawned_by = spawn if isinstance(spawn, str) else None
        children[thread.draft.session_id].append(thread)
    return children


def _read(path: Path, root: Path, tally: Tally, seen: set[str], *, subagent: bool) -> Thread | None:
    records = read_records(path, tally)
    if records is None:
        return None
    draft = SessionDraft(agent="claude-code", session_id=path.stem, path=relative(path, root))
    draft.mtime = _mtime_then_name(path)[0]
    thread = Thread(draft, subagent=subagent, seen=seen, tally=tally)
    for record in records:
        thread.feed(record)
    if not thread.threaded:
        tally.skip("empty session")
        return None
    thread.finish()
    return thread


def _link(parent: Thread, child: Thread) -> None:
    """A sub-agent's calls and files, credited to the turn whose call spawned it."""
    child.draft.parent_session_id = parent.draft.session_id
    spawn_id = child.spawned_by or parent.agent_calls.get(child.draft.agent_id or "")
    located = parent.calls.get(spawn_id or "")
    if located is not None:
        turn, call = located
        if turn is not None:
            credit(turn, call, child.draft)
    for path in child.draft.files_touched:
        parent.draft.touch(path)


def _busy_sessions(root: Path) -> set[str]:
    """Session ids the live registry (`<root>/sessions/<pid>.json`) marks busy."""
    registry = root / "sessions"
    busy: set[str] = set()
    if registry.is_dir():
        for entry in sorted(registry.glob("*.json")):
            data = read_json(entry) or {}
            if data.get("status") == "busy" and isinstance(data.get("sessionId"), str):
                busy.add(data["sessionId"])
    return busy


def _recent(mtime: float, now: datetime) -> bool:
    return mtime > (now - LIVE_WINDOW).timestamp()


def _ignored(path: Path, projects: Path) -> bool:
    """Not a transcript: a workflow journal, or `history.jsonl` when the root is scanned itself."""
    parts = path.relative_to(projects).parts
    return parts == ("history.jsonl",) or any(part in _NOT_TRANSCRIPTS for part in parts[:-1])


def _mtime_then_name(path: Path) -> tuple[float, str]:
    try:
        return path.stat().st_mtime, path.as_posix()
    except OSError:
        return 0.0, path.as_posix()
