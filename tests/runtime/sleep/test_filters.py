"""What a night reads (docs/sleep.md A): by default only interactive sessions; only those whose cwd
is inside the project (by path components); only those started at or after `since`; never
skopt's own (any of its three marks) nor live ones; each session passed over counted once, by
its first reason."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from skopt.runtime.sleep.harvest import Source, harvest, inside
from skopt.runtime.sleep.marks import ORIGINATOR, sentinel_line
from skopt.runtime.sleep.sessions import Kind
from tests.runtime.sleep.conftest import ALL_KINDS, NOW, age, sources

INVOICER = "6f1c2a9e-3b47-4d2e-9a61-0c8b5e7d4f12"
LEGACY = "91e0b6a2-47dc-4f15-8a3b-c2d5e6f70819"
BILLING = "2d9a4f7c-5e81-4b36-8c0d-7f3e1a6b9c24"
CODEX_2025 = "019b2159-6d14-7417-ae47-49587691e897"
CODEX_TUI = "019feffa-b30e-7b74-8f34-251bcb968867"
CODEX_TUI_FILE = f"sessions/2026/08/11/rollout-2026-08-11T10-40-12-{CODEX_TUI}.jsonl"


def ids(transcripts: Path, **options: Any) -> list[str]:
    harvested = harvest(sources(transcripts), now=NOW, **options)
    return [s.session_id for s in harvested.sessions]


def counts(transcripts: Path, **options: Any) -> dict[str, int]:
    harvested = harvest(sources(transcripts), now=NOW, **options)
    return harvested.skipped.counts


def test_by_default_only_interactive_sessions(transcripts: Path) -> None:
    assert ids(transcripts) == [
        LEGACY,
        CODEX_2025,
        INVOICER,
        BILLING,
        "gen-2026-08-06-a",
        CODEX_TUI,
    ]
    assert counts(transcripts) == {"self": 1, "headless": 3, "subagent": 2}


def test_other_kinds_when_asked(transcripts: Path) -> None:
    headless = ids(transcripts, kinds=("headless",))
    assert headless == [
        "b52e07d4-91c3-4a8e-b6f0-2d7e19c4a5b3",
        "gen-2026-08-06-b",
        "019febfd-b356-7adf-a195-d64ad0c19c42",
    ]
    subagents: tuple[Kind, ...] = ("subagent",)
    harvested = harvest(sources(transcripts), kinds=subagents, now=NOW)
    assert [(s.session_id, s.agent_id) for s in harvested.sessions] == [
        (BILLING, "a3f9c2e17b04d8e51"),
        ("019feffa-e5a7-71bd-a097-a42f174efd90", "019feffa-e5a7-71bd-a097-a42f174efd90"),
    ]
    assert harvested.skipped.counts == {"self": 1, "interactive": 6, "headless": 3}


def test_self_made_sessions_are_skipped_unless_asked_for_by_name(transcripts: Path) -> None:
    every_other = ids(transcripts, kinds=("interactive", "headless", "subagent"))
    assert "e3b8c1d0-6a2f-4f9b-9e47-58d1c0a2b7e6" not in every_other
    assert len(every_other) == 11
    assert ids(transcripts, kinds=("self",)) == ["e3b8c1d0-6a2f-4f9b-9e47-58d1c0a2b7e6"]


def test_project_is_a_path_prefix_by_components(transcripts: Path) -> None:
    invoicer = [LEGACY, CODEX_2025, INVOICER, "gen-2026-08-06-a"]
    assert ids(transcripts, project=Path("/home/dana/src/invoicer")) == invoicer
    assert ids(transcripts, project=Path("/home/dana/src/billing-api/../invoicer/")) == invoicer
    assert counts(transcripts, project=Path("/home/dana/src/invoicer"))["outside project"] == 2
    assert len(ids(transcripts, project=Path("/home/dana/src"))) == 6
    assert ids(transcripts, project=Path("/home/dana/src/invoice")) == []  # a prefix of a name
    assert ids(transcripts, project=Path("/home/dana/src/invoicer/src")) == []  # below the cwd


def test_inside() -> None:
    assert inside("/home/dana/src/invoicer", Path("/home/dana/src/invoicer"))
    assert inside("/home/dana/src/invoicer/sub/dir", Path("/home/dana/src"))
    assert not inside("/home/dana/src/invoicer-old", Path("/home/dana/src/invoicer"))
    assert not inside(None, Path("/"))


def test_since_is_inclusive_and_naive_means_utc(transcripts: Path) -> None:
    since = datetime(2026, 8, 4, 13, 22, 44, 19000)  # naive: the billing session's start, UTC
    assert ids(transcripts, since=since) == [BILLING, "gen-2026-08-06-a", CODEX_TUI]
    assert counts(transcripts, since=since)["too old"] == 3
    assert ids(transcripts, since=since + timedelta(milliseconds=1))[0] == "gen-2026-08-06-a"


def test_live_claude_sessions_are_skipped(transcripts: Path) -> None:
    registry = transcripts / "claude" / "sessions"
    registry.mkdir()
    (registry / "4242.json").write_text(
        json.dumps({"pid": 4242, "sessionId": INVOICER, "status": "busy"})
    )
    (registry / "4343.json").write_text(
        json.dumps({"pid": 4343, "sessionId": LEGACY, "status": "idle"})
    )
    recent = (NOW - timedelta(seconds=30)).timestamp()
    billing = transcripts / "claude/projects/-home-dana-src-billing-api" / f"{BILLING}.jsonl"
    age(billing, recent)  # written to 30 s ago: its agent may still be at work
    age(transcripts / "codex" / CODEX_TUI_FILE, recent)
    assert ids(transcripts) == [LEGACY, CODEX_2025, "gen-2026-08-06-a"]
    assert counts(transcripts)["live"] == 3
    assert counts(transcripts, kinds=ALL_KINDS)["live"] == 3


def test_an_archived_copy_counts_once_and_archived_sessions_are_read(transcripts: Path) -> None:
    codex = transcripts / "codex"
    archive = codex / "archived_sessions"
    archive.mkdir()
    shutil.copy(codex / CODEX_TUI_FILE, archive)
    moved = next((codex / "sessions/2025/12/15").glob("rollout-*.jsonl"))
    shutil.move(moved, archive / moved.name)
    age(transcripts)
    assert ids(transcripts) == [
        LEGACY,
        CODEX_2025,
        INVOICER,
        BILLING,
        "gen-2026-08-06-a",
        CODEX_TUI,
    ]
    assert counts(transcripts)["duplicate"] == 1


def test_every_mark_of_skopt_makes_a_session_its_own(tmp_path: Path) -> None:
    lines = [
        {"v": 1, "session_id": "plain", "role": "user", "text": "fix it", "cwd": "/w"},
        {
            "v": 1,
            "session_id": "sentinel",
            "role": "user",
            "cwd": "/w",
            "text": sentinel_line("judge v1 task=t_1") + "\nIs this answer right?",
        },
        {
            "v": 1,
            "session_id": "scratch",
            "role": "user",
            "text": "run the tests",
            "cwd": "/var/folders/x1/T/skopt-replay-9f/work",
        },
    ]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    codex = tmp_path / "codex" / "sessions" / "2026" / "08" / "12"
    codex.mkdir(parents=True)
    meta = {
        "timestamp": "2026-08-12T01:00:00Z",
        "type": "session_meta",
        "payload": {
            "id": "c1",
            "timestamp": "2026-08-12T01:00:00Z",
            "cwd": "/w",
            "originator": ORIGINATOR,
            "source": "exec",
        },
    }
    prompt = {
        "timestamp": "2026-08-12T01:00:01Z",
        "type": "event_msg",
        "payload": {"type": "user_message", "message": "hello"},
    }
    (codex / "rollout-2026-08-12T03-00-00-c1.jsonl").write_text(
        json.dumps(meta) + "\n" + json.dumps(prompt) + "\n"
    )
    age(tmp_path)
    sources_ = [Source("generic", tmp_path / "g.jsonl"), Source("codex", tmp_path / "codex")]
    harvested = harvest(sources_, kinds=ALL_KINDS, now=NOW)
    kinds = {s.session_id: s.kind for s in harvested.sessions}
    assert kinds == {"plain": "interactive", "sentinel": "self", "scratch": "self", "c1": "self"}
    assert harvest(sources_, now=NOW).skipped.counts == {"self": 3}


def test_a_session_without_timestamps_is_as_old_as_its_file(tmp_path: Path) -> None:
    line = {"v": 1, "session_id": "undated", "role": "user", "text": "go", "cwd": "/w"}
    (tmp_path / "g.jsonl").write_text(json.dumps(line) + "\n")
    since = datetime(2026, 8, 1, tzinfo=UTC)
    age(tmp_path, (since - timedelta(days=1)).timestamp())
    assert harvest([Source("generic", tmp_path)], since=since, now=NOW).skipped.counts == {
        "too old": 1
    }
    age(tmp_path, (since + timedelta(days=1)).timestamp())
    [session] = harvest([Source("generic", tmp_path)], since=since, now=NOW).sessions
    assert session.started_at is None
