"""One Claude Code transcript file read record by record, in file order, into a draft
(transcripts README §2.2 to §2.8).

This module owns the reading of records: the envelope (cwd, branch, version, entrypoint, ids,
timestamps), real prompts opening turns (claude_prompt.py decides which), assistant records
holding one content block each (grouped by `message.id`: usage and the response counted once
per id; synthetic API-error records skipped), tool calls and their results (matched by
`tool_use_id`, with the user's rejection), titles, slash commands, files touched (Edit/Write
`file_path` and the undo snapshots' `trackedFileBackups` keys), and the session's kind.

A thread is a session file or a sub-agent file. In a session file, inline sidechain records
(1.x) are a sub-agent's: their calls are credited to the open turn, and nothing else of them
counts. In a sub-agent file every record is the thread; its first prompt is the spawn prompt the
parent wrote, kept as `subagent_prompt`, never as a user's turn.
"""

from __future__ import annotations

from typing import Any

from skopt.runtime.sleep.harvest import claude_prompt, tool_text
from skopt.runtime.sleep.harvest.draft import CallDraft, SessionDraft, TurnDraft
from skopt.runtime.sleep.harvest.jsonl import JsonObject, Tally
from skopt.runtime.sleep.marks import is_self_made
from skopt.runtime.sleep.sessions import Kind

THREADED = frozenset({"user", "assistant", "system", "attachment", "progress"})
SIDECARS = frozenset(
    {
        "summary",
        "ai-title",
        "custom-title",
        "agent-name",
        "last-prompt",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
        "mode",
        "permission-mode",
        "atis-latch",
        "frame-link",
        "cost-state",
        "bridge-session",
    }
)
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
SPAWN_TOOLS = frozenset({"Agent", "Task"})
REJECTED = "The user doesn't want to proceed with this tool use"
HEADLESS_PREFIX = "sdk"  # sdk-cli (`claude -p`, the Agent SDK), sdk-ts, sdk-py
_TITLES = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}


class Thread:
    """The reading of one file; `draft` is the result once `finish` ran."""

    def __init__(self, draft: SessionDraft, *, subagent: bool, seen: set[str], tally: Tally):
        self.draft = draft
        self.subagent = subagent
        self.seen = seen  # uuids read in any file of this source: a resumed copy counts once
        self.tally = tally
        self.threaded = False  # whether any user or assistant record was read
        self.turn: TurnDraft | None = None
        self.calls: dict[str, tuple[TurnDraft | None, CallDraft]] = {}  # by tool_use id
        self.agent_calls: dict[str, str] = {}  # sub-agent id -> the tool_use id that spawned it
        self.spawned_by: str | None = None  # a sub-agent's spawning tool_use id (.meta.json)
        self.responses: set[str] = set()
        self.titles: dict[str, str] = {}
        self.prompt_sources: set[str] = set()

    def feed(self, record: JsonObject) -> None:
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen:
                self.tally.skip("duplicate record")
                return
            self.seen.add(uuid)
        kind = record.get("type")
        if kind not in THREADED and kind not in SIDECARS:
            self.tally.skip("unknown record")
            return
        self.draft.stamp(record.get("timestamp"))
        self._envelope(record)
        if kind == "user":
            self._user(record)
        elif kind == "assistant":
            self._assistant(record)
        elif kind == "system" and record.get("subtype") == "local_command":
            self._command(str(record.get("content", "")))
        elif kind in _TITLES:
            self._title(kind, record)
        elif kind == "file-history-snapshot":
            self._snapshot(record)

    def finish(self) -> None:
        draft = self.draft
        draft.title = next((self.titles[k] for k in _TITLES if k in self.titles), None)
        if self.subagent:
            draft.parent_session_id = draft.session_id  # a sub-agent file carries its parent's
        draft.kind = self._kind()

    def _kind(self) -> Kind:
        draft = self.draft
        texts = [*draft.prompts, *([draft.subagent_prompt] if draft.subagent_prompt else [])]
        if is_self_made(cwd=draft.cwd, texts=texts):
            return "self"
        if self.subagent:
            return "subagent"
        if (draft.entrypoint or "").startswith(HEADLESS_PREFIX) or "sdk" in self.prompt_sources:
            return "headless"
        return "interactive"

    # -- the envelope ---------------------------------------------------------------------------

    def _envelope(self, record: JsonObject) -> None:
        draft = self.draft
        side = self._is_side(record)
        if self.subagent and isinstance(record.get("sessionId"), str) and not side:
            draft.session_id = record["sessionId"]  # a sub-agent file carries its parent's id
        if self.subagent and draft.agent_id is None:
            agent_id = record.get("agentId")
            draft.agent_id = agent_id if isinstance(agent_id, str) else _agent_id(draft.path)
        draft.cwd = draft.cwd or _text(record.get("cwd"))
        draft.version = draft.version or _text(record.get("version"))
        draft.entrypoint = draft.entrypoint or _text(record.get("entrypoint"))
        draft.git_branch = draft.git_branch or _text(record.get("gitBranch"))

    def _is_side(self, record: JsonObject) -> bool:
        """An inline sidechain record in a session file (a sub-agent file's are its thread)."""
        return not self.subagent and record.get("isSidechain") is True

    # -- user records ---------------------------------------------------------------------------

    def _user(self, record: JsonObject) -> None:
        self.threaded = True
        role = claude_prompt.classify(record, sidechain_is_thread=self.subagent)
        if role in ("tool_result", "sidechain"):
            self._results(record)
        elif role == "markup":
            self._command(claude_prompt.message_text(record))
        elif role == "prompt":
            self._prompt(record)

    def _prompt(self, record: JsonObject) -> None:
        prompt = claude_prompt.clean_prompt(claude_prompt.message_text(record))
        source = record.get("promptSource")
        if isinstance(source, str):
            self.prompt_sources.add(source)
        if self.subagent:
            # the spawn prompt opens the thread; later ones are the parent's follow-ups
            if self.draft.subagent_prompt is None:
                self.draft.subagent_prompt = prompt
            return
        self.turn = TurnDraft(prompt=prompt)
        self.draft.turns.append(self.turn)

    def _results(self, record: JsonObject) -> None:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        extra = record.get("toolUseResult")
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self._result(block, record, extra)

    def _result(self, block: dict[str, Any], record: JsonObject, extra: object) -> None:
        located = self.calls.get(str(block.get("tool_use_id")))
        if located is None:
            return  # a call in another file (a resumed session's first records)
        call = located[1]
        call.output = tool_text.claude_output(
            block.get("content"), subagent=call.name in SPAWN_TOOLS
        )
        call.is_error = block.get("is_error") is True
        denial = record.get("toolDenialKind") or (
            extra.get("toolDenialKind") if isinstance(extra, dict) else None
        )
        call.rejected = call.is_error and (
            extra == "User rejected tool use"
            or denial == "user-rejected"
            or call.output.startswith(REJECTED)
        )
        if isinstance(extra, dict) and isinstance(extra.get("agentId"), str):
            self.agent_calls[extra["agentId"]] = str(block.get("tool_use_id"))

    def _command(self, text: str) -> None:
        name = claude_prompt.command_name(text)
        if name and not self.subagent:
            self.draft.commands.append(name)

    # -- assistant records ----------------------------------------------------------------------

    def _assistant(self, record: JsonObject) -> None:
        self.threaded = True
        message = record.get("message")
        if not isinstance(message, dict) or record.get("isApiErrorMessage") is True:
            return
        if message.get("model") == "<synthetic>":
            return  # made locally (an API error), not a model's response
        side = self._is_side(record)
        if not side:
            self._response(record, message)
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict):
                self._block(block, side=side)

    def _response(self, record: JsonObject, message: dict[str, Any]) -> None:
        """Counts one response per message id: its blocks come as records sharing the id."""
        key = message.get("id") or record.get("requestId") or record.get("uuid")
        self.draft.use_model(message.get("model"))
        if not isinstance(key, str) or key in self.responses:
            return
        self.responses.add(key)
        self.draft.api_responses += 1
        usage = message.get("usage")
        for name, value in usage.items() if isinstance(usage, dict) else ():
            if isinstance(value, int) and not isinstance(value, bool):
                self.draft.usage[name] = self.draft.usage.get(name, 0) + value

    def _block(self, block: dict[str, Any], *, side: bool) -> None:
        kind = block.get("type")
        if kind == "text" and not side and self.turn is not None:
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                self.turn.answer = text
        elif kind == "tool_use" and isinstance(block.get("name"), str):
            self._tool_use(block, side=side)

    def _tool_use(self, block: dict[str, Any], *, side: bool) -> None:
        name: str = block["name"]
        raw_input = block.get("input")
        call = CallDraft(name=name, input=tool_text.claude_input(name, raw_input))
        self.calls[str(block.get("id"))] = (self.turn, call)
        if side:
            if self.turn is not None:  # an inline sub-agent's call, credited to the turn
                self.turn.tools.append(call)
        else:
            self.draft.call(call, turn=self.turn)
        if name in EDIT_TOOLS and isinstance(raw_input, dict):
            self.draft.touch(raw_input.get("file_path") or raw_input.get("notebook_path"))

    # -- sidecars -------------------------------------------------------------------------------

    def _title(self, kind: str, record: JsonObject) -> None:
        title = record.get(_TITLES[kind])
        if isinstance(title, str) and title.strip():
            self.titles[kind] = title  # the last of each kind wins

    def _snapshot(self, record: JsonObject) -> None:
        snapshot = record.get("snapshot")
        backups = snapshot.get("trackedFileBackups") if isinstance(snapshot, dict) else None
        for path in backups if isinstance(backups, dict) else ():
            self.draft.touch(path)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _agent_id(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.removeprefix("agent-").removesuffix(".jsonl")
