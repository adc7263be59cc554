"""The records harvest returns (docs/sleep.md, A): a coding-agent session as skopt keeps it.

This module owns them: `ToolCall`, `Turn`, `Session`, what harvest passed over (`Skipped`) and
the whole result (`Harvest`). They are frozen pydantic models and everything they hold is
already redacted (runtime/sleep/redact.py) and bounded: a tool call's input and output at most
`TOOL_CHARS`, an answer at most `ANSWER_CHARS`, a prompt at most `PROMPT_CHARS` characters.
The harvesters (runtime/sleep/harvest/) build them; the night (mine, replay, judge) reads them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Agent = Literal["claude-code", "codex", "generic"]
Kind = Literal["interactive", "headless", "subagent", "self"]
KINDS: tuple[Kind, ...] = ("interactive", "headless", "subagent", "self")

TOOL_CHARS = 2_000  # a tool call's input, and its output (head and tail kept)
ANSWER_CHARS = 4_000  # the last assistant text of a turn
PROMPT_CHARS = 8_000  # a prompt (a pasted log can be megabytes; the miner sees 8,000 at most)


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(Record):
    """One tool call and its result."""

    name: str  # "Bash", "shell_command", "apply_patch", ...
    input: str  # a command line, the patch, or compact JSON
    output: str
    is_error: bool
    rejected: bool  # the user refused the call (Claude "User rejected tool use")


class Turn(Record):
    """A real human prompt and what the agent did in answer to it, up to the next prompt."""

    prompt: str  # markup and reminders stripped
    tools: list[ToolCall]  # in order; a sub-agent's calls follow the call that spawned it
    answer: str  # the last assistant text of the turn ("" when there was none)


class Session(Record):
    """One transcript file (a generic file holds several sessions, one per `session_id`)."""

    agent: Agent
    session_id: str  # a Claude sub-agent carries its parent's session id (and its own agent_id)
    path: str  # the file, relative to its source's root
    cwd: str | None
    git_branch: str | None  # None outside git
    version: str | None  # the agent's CLI version
    entrypoint: str | None  # Claude's entrypoint / Codex's originator / the generic `agent`
    agent_id: str | None  # a sub-agent's id (Codex: its thread id)
    kind: Kind
    started_at: str | None  # ISO 8601 UTC as in the file
    ended_at: str | None
    models: list[str]  # main thread, in order of first use
    turns: list[Turn]  # main thread only; empty for a sub-agent (its prompt is not a user's)
    tool_calls: list[str]  # names, main thread, in order
    api_responses: int  # Claude: distinct message ids; Codex: distinct cumulative token totals
    usage: dict[str, int]  # Claude: summed once per message id; Codex: the last cumulative total
    files_touched: list[str]  # relative to cwd when inside it; a sub-agent's count for its parent
    # additive to docs/sleep.md, A:
    subagent_prompt: str | None = None  # the prompt a sub-agent was spawned with (not a task)
    parent_session_id: str | None = None  # a sub-agent's parent session
    title: str | None = None  # Claude's title (custom > ai > legacy summary)
    commands: list[str] = []  # slash commands typed ("/cost"): a signal, never an intent


class Skipped(Record):
    """What harvest passed over, counted by reason: "unreadable file", "empty file", "bad line",
    "truncated line", "unknown record", "empty session", "duplicate", "missing source", the
    kinds not wanted ("self", "headless", "subagent", "interactive"), "warmup", "compaction",
    "live", "outside project", "too old"."""

    counts: dict[str, int]


class Harvest(Record):
    sessions: list[Session]  # in start order
    files: int  # transcript files looked at
    skipped: Skipped
