"""Small sessions and generic transcripts written by hand, for the tests of mining, judging and
whole nights (the reference transcripts are for harvest)."""

from __future__ import annotations

import json
from pathlib import Path

from skopt.runtime.sleep.sessions import Session, ToolCall, Turn


def session(*prompts: str, failed_first: bool = False, sid: str = "s1") -> Session:
    """A Claude session in /home/dana/src/app with one turn per prompt; `failed_first`: the
    agent's call in the first turn failed."""
    call = ToolCall(name="Bash", input="pip install httpx", output="error", is_error=True,
                    rejected=False)  # fmt: skip
    turns = [
        Turn(prompt=p, tools=[call] if failed_first and i == 0 else [], answer="done")
        for i, p in enumerate(prompts)
    ]
    return Session(
        agent="claude-code", session_id=sid, path=f"{sid}.jsonl", cwd="/home/dana/src/app",
        git_branch="main", version=None, entrypoint="cli", agent_id=None, kind="interactive",
        started_at="2026-08-01T10:00:00Z", ended_at=None, models=[], turns=turns,
        tool_calls=[], api_responses=0, usage={}, files_touched=[],
    )  # fmt: skip


def generic(folder: Path, sessions: dict[str, list[str]]) -> Path:
    """A generic JSONL transcript in `folder`: for each session id, its user prompts in order
    (the agent answers "ok" to each), in /home/dana/src/app."""
    lines = []
    for sid, prompts in sessions.items():
        for i, prompt in enumerate(prompts):
            lines.append({"v": 1, "session_id": sid, "ts": f"2026-08-01T10:0{i}:00Z",
                          "role": "user", "text": prompt, "cwd": "/home/dana/src/app"})  # fmt: skip
            lines.append({"v": 1, "session_id": sid, "ts": f"2026-08-01T10:0{i}:30Z",
                          "role": "assistant", "text": "ok"})  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sessions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
