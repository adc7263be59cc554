"""The generic JSONL skopt proposes for any other agent (transcripts README §6) as drafts.

This module owns that format: one event per line, file order is session order, sessions may
interleave in a file. `v` (1), `session_id` and `role` are required: `user` (a real human
prompt: it opens a turn), `assistant` (its `text` is the turn's answer so far) or `tool`
(`tool {name, input, output, is_error}`); `ts`, `cwd`, `git_branch`, `agent`, `model` and
`headless` are optional, the first non-null value of each wins. Unknown fields are ignored; a
line that breaks the format is counted as an unknown record. The source's root is one file or
a folder of `*.jsonl` files.
"""

from __future__ import annotations

from pathlib import Path

from skopt.runtime.sleep.harvest import tool_text
from skopt.runtime.sleep.harvest.draft import CallDraft, SessionDraft, TurnDraft, relative
from skopt.runtime.sleep.harvest.jsonl import JsonObject, Tally, read_records
from skopt.runtime.sleep.marks import is_self_made

VERSION = 1
ROLES = frozenset({"user", "assistant", "tool"})


def drafts(root: Path, tally: Tally) -> list[SessionDraft]:
    """Every session in a generic file, or in every `*.jsonl` file under a folder."""
    if root.is_dir():
        files, base = sorted(root.rglob("*.jsonl")), root
    elif root.exists():
        files, base = [root], root.parent
    else:
        tally.skip("missing source")
        return []
    found: list[SessionDraft] = []
    for path in files:
        found.extend(_file(path, base, tally))
    return found


def _file(path: Path, base: Path, tally: Tally) -> list[SessionDraft]:
    records = read_records(path, tally)
    if records is None:
        return []
    sessions: dict[str, _Session] = {}
    for record in records:
        session_id, role = record.get("session_id"), record.get("role")
        if record.get("v") != VERSION or not isinstance(session_id, str) or role not in ROLES:
            tally.skip("unknown record")
            continue
        if session_id not in sessions:
            draft = SessionDraft(agent="generic", session_id=session_id, path=relative(path, base))
            sessions[session_id] = _Session(draft)
        sessions[session_id].feed(record)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = 0.0
    for session in sessions.values():
        session.draft.mtime = mtime
        session.finish()
    return [session.draft for session in sessions.values()]


class _Session:
    def __init__(self, draft: SessionDraft) -> None:
        self.draft = draft
        self.turn: TurnDraft | None = None
        self.headless: bool | None = None

    def feed(self, record: JsonObject) -> None:
        draft = self.draft
        draft.stamp(record.get("ts"))
        draft.cwd = draft.cwd or _text(record.get("cwd"))
        draft.git_branch = draft.git_branch or _text(record.get("git_branch"))
        draft.entrypoint = draft.entrypoint or _text(record.get("agent"))
        draft.use_model(record.get("model"))
        if self.headless is None and isinstance(record.get("headless"), bool):
            self.headless = record["headless"]
        role, text = record["role"], record.get("text")
        if role == "user" and isinstance(text, str):
            self.turn = TurnDraft(prompt=text.strip())
            draft.turns.append(self.turn)
        elif role == "assistant":
            draft.api_responses += 1
            if self.turn is not None and isinstance(text, str) and text.strip():
                self.turn.answer = text
        elif role == "tool" and isinstance(record.get("tool"), dict):
            self._tool(record["tool"])

    def _tool(self, tool: JsonObject) -> None:
        name = tool.get("name")
        raw = tool.get("input")
        line = tool_text.command_line(raw.get("command")) if isinstance(raw, dict) else None
        text = raw if isinstance(raw, str) else line or tool_text.compact_json(raw)
        output = tool.get("output")
        call = CallDraft(
            name=name if isinstance(name, str) else "tool",
            input=text,
            output=output if isinstance(output, str) else _json_or_empty(output),
            is_error=tool.get("is_error") is True,
        )
        self.draft.call(call, turn=self.turn)

    def finish(self) -> None:
        draft = self.draft
        if is_self_made(cwd=draft.cwd, texts=draft.prompts):
            draft.kind = "self"
        else:
            draft.kind = "headless" if self.headless else "interactive"


def _json_or_empty(value: object) -> str:
    return "" if value is None else tool_text.compact_json(value)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
