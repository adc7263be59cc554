"""Damaged transcripts (transcripts README §8.7): a truncated last line, unknown record types,
binary junk, invalid JSON, a folder named like a transcript, a file in another encoding, an
unreadable file, an empty file and a file with no conversation are skipped and counted; the
rest of every file still reads exactly as expected.json says, and nothing raises."""

from __future__ import annotations

import json
import os
from pathlib import Path

from skopt.runtime.sleep.harvest import harvest
from skopt.runtime.sleep.harvest.jsonl import Tally, read_records
from skopt.runtime.sleep.sessions import Harvest
from tests.runtime.sleep.conftest import ALL_KINDS, EXPECTED, NOW, age, sources

CLAUDE = "claude/projects/-home-dana-src-invoicer/6f1c2a9e-3b47-4d2e-9a61-0c8b5e7d4f12.jsonl"
CODEX = "codex/sessions/2025/12/15/rollout-2025-12-15T10-31-07-019b2159-6d14-7417-ae47-49587691e897.jsonl"  # noqa: E501
SUBAGENT = (
    "claude/projects/-home-dana-src-billing-api/2d9a4f7c-5e81-4b36-8c0d-7f3e1a6b9c24/"
    "subagents/agent-a3f9c2e17b04d8e51.jsonl"
)
GENERIC = "generic/sessions.jsonl"
JUNK = b"\x00\xff\xfe\x9c binary junk \x80\x81\n"


def insert(path: Path, lines: list[bytes], at: int) -> None:
    """`lines` put in before line `at` of `path`."""
    old = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*old[:at], *lines, *old[at:]]))


def truncate_last_line(path: Path) -> None:
    data = path.read_bytes().rstrip(b"\n")
    last = data.rfind(b"\n")
    path.write_bytes(data[: last + 1 + (len(data) - last) // 2])


def prompts(harvested: Harvest) -> dict[str, list[str]]:
    return {f"{s.path}#{s.agent_id}": [t.prompt for t in s.turns] for s in harvested.sessions}


def test_damage_is_skipped_and_counted(transcripts: Path) -> None:
    clean = harvest(sources(transcripts), kinds=ALL_KINDS, now=NOW)
    claude, codex = transcripts / CLAUDE, transcripts / CODEX
    truncate_last_line(claude)
    truncate_last_line(codex)
    unknown_claude = json.dumps({"type": "hologram", "uuid": "u-1", "beam": [1, 2]}).encode()
    unknown_codex = json.dumps({"timestamp": "2025-12-15T09:31:08Z", "type": "teleport"}).encode()
    insert(claude, [unknown_claude + b"\n", JUNK, b"{not json\n", b"[1, 2]\n"], at=3)
    insert(codex, [unknown_codex + b"\n", JUNK, b'{"timestamp": \n'], at=4)
    insert(transcripts / SUBAGENT, [b"\xc3\x28 invalid utf-8\n"], at=1)
    insert(transcripts / GENERIC, [b'{"v": 2, "session_id": "x", "role": "user"}\n', JUNK], at=2)
    projects = transcripts / "claude" / "projects" / "-home-dana-src-damaged"
    projects.mkdir()
    (projects / "0a0a0a0a-folder.jsonl").mkdir()  # a folder named like a transcript
    (projects / "1b1b1b1b-utf16.jsonl").write_bytes('{"type": "user"}\n'.encode("utf-16"))
    (projects / "2c2c2c2c-empty.jsonl").write_bytes(b"")
    (projects / "3d3d3d3d-title.jsonl").write_bytes(b'{"type": "ai-title", "aiTitle": "t"}\n')
    locked = projects / "4e4e4e4e-locked.jsonl"
    locked.write_bytes(JUNK)  # junk too, so that it is unreadable even to root
    locked.chmod(0)
    age(transcripts)

    damaged = harvest(sources(transcripts), kinds=ALL_KINDS, now=NOW)

    assert damaged.skipped.counts == {
        "truncated line": 2,
        "unknown record": 3,
        "bad line": 7,
        "unreadable file": 3,
        "empty file": 1,
        "empty session": 1,
    }
    assert damaged.files == clean.files + 5
    assert prompts(damaged) == prompts(clean)
    claude_session = next(s for s in damaged.sessions if s.path.endswith(CLAUDE.split("/")[-1]))
    want = EXPECTED["files"][CLAUDE]
    assert claude_session.tool_calls == want["tool_calls"]
    assert claude_session.usage == want["usage_dedup_by_message_id"]
    assert claude_session.title is None  # the truncated last line was the title
    os.chmod(locked, 0o644)


def test_lines_are_judged_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\r\n\n  \n' + JUNK + b'"just a string"\n{"b": 2}\n{"c":')
    tally = Tally()
    assert read_records(path, tally) == [{"a": 1}, {"b": 2}]
    assert tally.counts == {"bad line": 2, "truncated line": 1}
    assert tally.files == 1


def test_a_missing_source_is_counted(tmp_path: Path) -> None:
    harvested = harvest(sources(tmp_path / "nowhere"), now=NOW)
    assert harvested.sessions == []
    assert harvested.skipped.counts == {"missing source": 3}
