"""One Codex rollout read line by line, in file order, into a draft (transcripts README §3.2 to
§3.7).

This module owns the reading of `{timestamp, type, payload}` lines: `session_meta` (id, start,
cwd, originator, version, source, branch; the first one only: a fork repeats its parent's),
`turn_context` (the model), prompts from `event_msg user_message` only (the `response_item` copy
also carries injected context), answers from one side only (the assistant `response_item`
messages), calls and outputs by `call_id` (`shell`, `shell_command`, `exec_command`,
`local_shell_call`, `apply_patch` and any other function or custom tool), files touched from
patch headers, tokens from the last cumulative `token_count` (one response per new total), and
the kind: skopt's own, a sub-agent thread, headless (`codex exec`, the SDK, MCP) or interactive.

Rollouts of mid-2025 (no envelope, no `event_msg`) are read too: a bare first line is the
session's meta, bare items are response items, and their user messages (injected context left
out) are the prompts.
"""

from __future__ import annotations

import json
import re
from typing import Any

from skopt.runtime.sleep.harvest import tool_text
from skopt.runtime.sleep.harvest.draft import CallDraft, SessionDraft, TurnDraft
from skopt.runtime.sleep.harvest.jsonl import JsonObject, Tally
from skopt.runtime.sleep.marks import is_self_made

KNOWN = frozenset(
    {
        "session_meta",
        "turn_context",
        "response_item",
        "event_msg",
        "compacted",
        "world_state",
        "inter_agent_communication",
    }
)
ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
    }
)
HEADLESS_ORIGINATORS = frozenset({"codex_exec", "codex_sdk_ts"})
HEADLESS_SOURCES = frozenset({"exec", "mcp"})
_INJECTED = (
    "# AGENTS.md instructions",
    "<environment_context>",
    "<user_instructions>",
    "<skill>",
    "<codex_internal_context",
    "<permissions instructions>",
)
_REQUEST = "## My request for Codex:"
_PATCHED = re.compile(
    r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.MULTILINE
)
_REJECTED = re.compile(r"rejected by (?:the )?user|aborted by user", re.IGNORECASE)


class Rollout:
    """The reading of one rollout; `draft` is the result once `finish` ran."""

    def __init__(self, draft: SessionDraft, *, tally: Tally, events: bool) -> None:
        self.draft = draft
        self.tally = tally
        self.events = events  # prompts from event_msg (else from bare user messages, mid-2025)
        self.threaded = False
        self.meta: dict[str, Any] | None = None
        self.turn: TurnDraft | None = None
        self.calls: dict[str, tuple[TurnDraft | None, CallDraft]] = {}  # by call_id
        self.spawns: dict[str, tuple[TurnDraft | None, CallDraft]] = {}  # by child thread id
        self.totals: list[dict[str, int]] = []
        self.prompts: list[str] = []  # every user message, for the sub-agent and self checks

    def feed(self, record: JsonObject) -> None:
        kind, payload = _envelope(record)
        if kind not in KNOWN or not isinstance(payload, dict):
            self.tally.skip("unknown record")
            return
        self.draft.stamp(record.get("timestamp"))
        if kind == "session_meta":
            self.meta = self.meta or payload
        elif kind == "turn_context":
            self.draft.use_model(payload.get("model"))
            self.draft.cwd = self.draft.cwd or _text(payload.get("cwd"))
        elif kind == "event_msg":
            self._event(payload)
        elif kind == "response_item":
            self._item(payload)

    def finish(self) -> None:
        draft, meta = self.draft, self.meta or {}
        draft.session_id = _text(meta.get("id")) or draft.session_id
        draft.started_at = _text(meta.get("timestamp")) or draft.started_at
        draft.cwd = _text(meta.get("cwd")) or draft.cwd
        draft.entrypoint = _text(meta.get("originator"))
        draft.version = _text(meta.get("cli_version"))
        git = meta.get("git")
        draft.git_branch = _text(git.get("branch")) if isinstance(git, dict) else None
        if self.totals:
            draft.usage = dict(self.totals[-1])
        draft.api_responses = len(self.totals)
        source = meta.get("source")
        subagent = isinstance(source, dict) or meta.get("thread_source") == "subagent"
        if subagent:
            draft.agent_id = draft.session_id
            draft.parent_session_id = _text(meta.get("parent_thread_id")) or _spawner(source)
            draft.subagent_prompt = self.prompts[0] if self.prompts else None
            draft.turns = []
        if is_self_made(cwd=draft.cwd, texts=self.prompts, originator=draft.entrypoint):
            draft.kind = "self"
        elif subagent:
            draft.kind = "subagent"
        elif draft.entrypoint in HEADLESS_ORIGINATORS or _text(source) in HEADLESS_SOURCES:
            draft.kind = "headless"
        else:
            draft.kind = "interactive"

    # -- events -----------------------------------------------------------------------------------

    def _event(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "user_message":
            self.threaded = True
            message = payload.get("message")
            if isinstance(message, str) and payload.get("kind", "plain") == "plain":
                self._prompt(message)
        elif kind == "token_count":
            self._tokens(payload.get("info"))

    def _prompt(self, text: str) -> None:
        self.prompts.append(text)
        self.turn = TurnDraft(prompt=text.strip())
        self.draft.turns.append(self.turn)

    def _tokens(self, info: object) -> None:
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if not isinstance(total, dict):
            return  # null before the first response
        counts = {k: v for k, v in total.items() if isinstance(v, int) and not isinstance(v, bool)}
        if not self.totals or counts != self.totals[-1]:
            self.totals.append(counts)  # the same total repeated is the same response

    # -- response items ---------------------------------------------------------------------------

    def _item(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message":
            self._message(item)
        elif kind in ("function_call", "custom_tool_call"):
            self._call(item)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(item)
        elif kind == "local_shell_call":
            action = item.get("action")
            command = action.get("command") if isinstance(action, dict) else None
            self._add(item, "local_shell", tool_text.command_line(command) or "")
        elif kind == "web_search_call":
            action = item.get("action")
            query = action.get("query") if isinstance(action, dict) else None
            self._add(item, "web_search", query if isinstance(query, str) else "")

    def _message(self, item: dict[str, Any]) -> None:
        role, text = item.get("role"), _content_text(item.get("content"))
        if role == "assistant":
            self.threaded = True
            if self.turn is not None and text.strip():
                self.turn.answer = text
        elif role == "user" and not self.events:
            self.threaded = True
            request = _request(text)
            if request:
                self._prompt(request)

    def _call(self, item: dict[str, Any]) -> None:
        name = item.get("name")
        if not isinstance(name, str):
            return
        if item.get("type") == "custom_tool_call":
            raw = item.get("input")
            text = raw if isinstance(raw, str) else tool_text.compact_json(raw)
        else:
            text = tool_text.codex_input(name, item.get("arguments"))
        self._add(item, name, text)

    def _add(self, item: dict[str, Any], name: str, text: str) -> None:
        call = CallDraft(name=name, input=text)
        self.calls[str(item.get("call_id") or item.get("id"))] = (self.turn, call)
        self.draft.call(call, turn=self.turn)
        if name == "apply_patch" or "*** Begin Patch" in text:
            for match in _PATCHED.finditer(_patch_text(text)):
                self.draft.touch(match.group(1) or match.group(2))

    def _output(self, item: dict[str, Any]) -> None:
        located = self.calls.get(str(item.get("call_id")))
        if located is None:
            return
        call = located[1]
        call.output, call.is_error = tool_text.codex_output(item.get("output"))
        call.rejected = bool(_REJECTED.search(call.output[:500]))
        call.is_error = call.is_error or call.rejected
        if call.name == "spawn_agent":
            child = _spawned_id(call.output)
            if child:
                self.spawns[child] = located


def _envelope(record: JsonObject) -> tuple[object, object]:
    """(type, payload); a mid-2025 bare line is a meta line or a response item."""
    if "payload" in record:
        return record.get("type"), record.get("payload")
    if record.get("type") in ITEMS:
        return "response_item", record
    if "id" in record and "timestamp" in record and "type" not in record:
        return "session_meta", record
    return record.get("type"), None


def _request(text: str) -> str:
    """A bare user message's request: injected context is none; an old injected form holds the
    request after its `## My request for Codex:` line."""
    if _REQUEST in text:
        return text.split(_REQUEST, 1)[1].strip()
    return "" if text.lstrip().startswith(_INJECTED) else text.strip()


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [b.get("text") for b in content if isinstance(b, dict)]
    return "\n".join(t for t in texts if isinstance(t, str))


def _patch_text(text: str) -> str:
    """A patch given as text, or as the `input` of JSON arguments (`{"input": "*** Begin..."}`)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return (
        value["input"] if isinstance(value, dict) and isinstance(value.get("input"), str) else text
    )


def _spawned_id(output: str) -> str | None:
    try:
        value = json.loads(output)
    except (ValueError, RecursionError):
        return None
    found = value.get("agent_id") or value.get("thread_id") if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def _spawner(source: object) -> str | None:
    """The parent thread of `source: {subagent: {thread_spawn: {parent_thread_id}}}`."""
    subagent = source.get("subagent") if isinstance(source, dict) else None
    spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
    return _text(spawn.get("parent_thread_id")) if isinstance(spawn, dict) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
