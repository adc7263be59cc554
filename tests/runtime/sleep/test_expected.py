"""Harvest against every reference transcript, compared field by field with expected.json: ids,
cwd, branch, version, entrypoint, kind, times, prompts (raw as read, and redacted as returned),
tool calls, models, responses and usage. Every session is asked for (all kinds, any project)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skopt.runtime.sleep.harvest import Source, harvest, read
from skopt.runtime.sleep.harvest.draft import SessionDraft
from skopt.runtime.sleep.harvest.jsonl import Tally
from skopt.runtime.sleep.redact import redact_text
from skopt.runtime.sleep.sessions import Harvest, Session
from tests.runtime.sleep.conftest import (
    ALL_KINDS,
    EXPECTED,
    FIXTURES,
    NOW,
    SECRETS,
    copy_transcripts,
    sources,
    strings,
)

FILES: dict[str, dict[str, Any]] = EXPECTED["files"]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_transcripts(tmp_path_factory.mktemp("expected"))


@pytest.fixture(scope="module")
def harvested(root: Path) -> Harvest:
    return harvest(sources(root), kinds=ALL_KINDS, now=NOW)


@pytest.fixture(scope="module")
def drafts(root: Path) -> list[tuple[Source, SessionDraft]]:
    return [(s, d) for s in sources(root) for d in read(s, Tally(), now=NOW)]


def key_of(source_kind: str, path: str, session_id: str) -> str:
    """expected.json's key for a session: the file under the fixtures folder (#id: generic)."""
    return f"generic/{path}#{session_id}" if source_kind == "generic" else f"{source_kind}/{path}"


def session_for(harvested: Harvest, key: str) -> Session:
    agents = {"claude-code": "claude", "codex": "codex", "generic": "generic"}
    found = [s for s in harvested.sessions if key_of(agents[s.agent], s.path, s.session_id) == key]
    assert len(found) == 1, key
    return found[0]


def draft_for(drafts: list[tuple[Source, SessionDraft]], key: str) -> SessionDraft:
    found = [d for s, d in drafts if key_of(s.kind, d.path, d.session_id) == key]
    assert len(found) == 1, key
    return found[0]


def test_expected_json_names_every_transcript_file() -> None:
    keys = {key.split("#")[0] for key in FILES}
    on_disk = {
        p.relative_to(FIXTURES).as_posix()
        for p in FIXTURES.rglob("*.jsonl")
        if p.name != "history.jsonl"  # typed prompts only: not a session source
    }
    assert keys == on_disk


@pytest.mark.parametrize("key", sorted(FILES))
def test_fields_match_expected(harvested: Harvest, key: str) -> None:
    want = FILES[key]
    session = session_for(harvested, key)
    got: dict[str, Any] = {
        "agent": session.agent,
        "session_id": session.session_id,
        "cwd": session.cwd,
        "git_branch": session.git_branch,
        "version": session.version,
        "entrypoint": session.entrypoint,
        "originator": session.entrypoint,
        "kind": session.kind,
        "agent_id": session.agent_id,
        "started_at": session.started_at,
        "ended_at": session.ended_at,
        "user_prompts_redacted": [turn.prompt for turn in session.turns],
        "tool_calls": session.tool_calls,
        "models": session.models,
        "api_responses": session.api_responses,
        "usage_dedup_by_message_id": session.usage,
        "total_token_usage": session.usage,
        "parent_session_id": session.parent_session_id,
        "subagent_prompt": session.subagent_prompt,
    }
    expected = {k: v for k, v in want.items() if k in got}
    if expected.get("subagent_prompt") is not None:
        expected["subagent_prompt"] = redact_text(expected["subagent_prompt"])
    assert {k: got[k] for k in expected} == expected
    assert len(expected) >= 9  # the comparison really covered the fields (generic has fewest)


@pytest.mark.parametrize("key", sorted(FILES))
def test_raw_prompts_match_expected(drafts: list[tuple[Source, SessionDraft]], key: str) -> None:
    want = FILES[key]
    draft = draft_for(drafts, key)
    assert draft.prompts == want["user_prompts"]
    assert draft.subagent_prompt == want.get("subagent_prompt")


@pytest.mark.parametrize("key", sorted(FILES))
def test_the_planted_secrets_are_really_read(
    drafts: list[tuple[Source, SessionDraft]], key: str
) -> None:
    # the secret test is only worth something if the harvester reads where the secrets are
    draft = draft_for(drafts, key)
    texts = strings([draft.subagent_prompt, [(t.prompt, t.answer) for t in draft.turns]])
    texts += [s for call in draft.own_calls for s in (call.input, call.output)]
    present = {name for name, literal in SECRETS.items() if any(literal in t for t in texts)}
    assert present == set(FILES[key]["fake_secrets_present"])


def test_sessions_come_in_start_order(harvested: Harvest) -> None:
    starts = [s.started_at for s in harvested.sessions]
    assert len(starts) == len(FILES)
    assert starts == sorted(starts, key=lambda s: s.replace("Z", "+00:00") if s else "")
    assert harvested.skipped.counts == {}
