"""Codex specifics (transcripts README §3): prompts from one side only, answers from one side
only, calls of every era with their exit codes, the user's refusal, files from patch headers,
tokens from the last cumulative count, a sub-agent thread's calls credited to the turn that
spawned it, mid-2025 rollouts without an envelope."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skopt.runtime.sleep.harvest import Source, harvest
from skopt.runtime.sleep.sessions import Harvest, Session
from tests.runtime.sleep.conftest import ALL_KINDS, NOW, age

PARENT = "019feffa-b30e-7b74-8f34-251bcb968867"


def by_id(harvested: Harvest, session_id: str) -> Session:
    return next(s for s in harvested.sessions if s.session_id == session_id)


def test_the_fixture_rollouts_in_detail(transcripts: Path) -> None:
    harvested = harvest([Source("codex", transcripts / "codex")], kinds=ALL_KINDS, now=NOW)
    tui_2025 = by_id(harvested, "019b2159-6d14-7417-ae47-49587691e897")
    assert len(tui_2025.turns) == 2  # the response_item copies of the prompts are not turns
    assert tui_2025.turns[0].answer.startswith("Added `--format csv`")  # one side only
    pip = tui_2025.turns[0].tools[2]
    assert (pip.input, pip.is_error, pip.rejected) == ("python -m pip install pytest", True, False)
    assert tui_2025.files_touched == ["src/invoicer/export.py", "tests/test_export.py"]
    assert tui_2025.api_responses == 4  # a repeated total is the same response
    parent = by_id(harvested, PARENT)
    assert [c.name for c in parent.turns[0].tools] == [
        "exec_command",
        "spawn_agent",
        "exec_command",
        "wait",
        "apply_patch",
    ]
    assert parent.turns[0].tools[2].input.startswith("rg -n")  # the child's call, credited
    assert parent.files_touched == ["app/middleware.py"]
    child = by_id(harvested, "019feffa-e5a7-71bd-a097-a42f174efd90")
    assert (child.kind, child.parent_session_id, child.turns) == ("subagent", PARENT, [])


def line(kind: str, payload: dict[str, Any], second: int = 0) -> dict[str, Any]:
    return {"timestamp": f"2025-06-01T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def write(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_shell_calls_of_2025_and_a_refusal(tmp_path: Path) -> None:
    meta = {
        "id": "s1",
        "timestamp": "2025-06-01T10:00:00Z",
        "cwd": "/w",
        "originator": "codex_cli_rs",
        "cli_version": "0.40.0",
        "source": "cli",
    }
    call = {
        "type": "function_call",
        "name": "shell",
        "call_id": "c1",
        "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q"], "workdir": "/w"}),
    }
    output = {
        "type": "function_call_output",
        "call_id": "c1",
        "output": json.dumps(
            {"output": "1 failed", "metadata": {"exit_code": 1, "duration_seconds": 0.3}}
        ),
    }
    refused = {
        "type": "function_call",
        "name": "shell",
        "call_id": "c2",
        "arguments": json.dumps({"command": ["rm", "-rf", "build dir"]}),
    }
    refusal = {
        "type": "function_call_output",
        "call_id": "c2",
        "output": "exec command rejected by user",
    }
    write(
        tmp_path / "sessions/2025/06/01/rollout-2025-06-01T12-00-00-s1.jsonl",
        [
            line("session_meta", meta),
            line(
                "event_msg",
                {"type": "user_message", "message": "run the tests", "kind": "plain"},
                1,
            ),
            line(
                "event_msg", {"type": "user_message", "message": "queued note", "kind": "other"}, 1
            ),
            line("event_msg", {"type": "token_count", "info": None}, 2),
            line("response_item", call, 2),
            line("response_item", output, 3),
            line("response_item", refused, 4),
            line("response_item", refusal, 5),
            line("response_item", {"type": "future_item", "x": 1}, 5),
            line("event_msg", {"type": "agent_message", "message": "twice?"}, 6),
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "once"}],
                },
                6,
            ),
        ],
    )
    age(tmp_path)
    harvested = harvest([Source("codex", tmp_path)], now=NOW)
    [session] = harvested.sessions
    [turn] = session.turns
    assert turn.prompt == "run the tests" and turn.answer == "once"
    assert [(c.input, c.output, c.is_error, c.rejected) for c in turn.tools] == [
        ("pytest -q", "1 failed", True, False),
        ("rm -rf 'build dir'", "exec command rejected by user", True, True),
    ]
    assert (session.api_responses, session.usage) == (0, {})
    assert harvested.skipped.counts == {}


def test_a_mid_2025_rollout_without_envelope(tmp_path: Path) -> None:
    items: list[dict[str, Any]] = [
        {"id": "old1", "timestamp": "2025-06-02T08:00:00.000Z", "instructions": None},
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>",
                }
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>x</INSTRUCTIONS>",
                }
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "fix the flaky test"}],
        },
        {
            "type": "function_call",
            "name": "shell",
            "call_id": "c1",
            "arguments": json.dumps({"command": ["bash", "-lc", "pytest -x"]}),
        },
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": json.dumps({"output": "ok", "metadata": {"exit_code": 0}}),
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "fixed"}],
        },
    ]
    write(tmp_path / "sessions/rollout-2025-06-02-old1.jsonl", items)
    age(tmp_path)
    [session] = harvest([Source("codex", tmp_path)], now=NOW).sessions
    assert session.session_id == "old1" and session.started_at == "2025-06-02T08:00:00.000Z"
    assert [(t.prompt, [c.input for c in t.tools], t.answer) for t in session.turns] == [
        ("fix the flaky test", ["pytest -x"], "fixed")
    ]
