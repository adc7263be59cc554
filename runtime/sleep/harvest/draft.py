"""A session while a harvester builds it, and the one way it becomes a `Session`.

This module owns the mutable drafts (`SessionDraft`, `TurnDraft`, `CallDraft`) the agent
modules fill in file order, crediting a sub-agent's calls to the turn that spawned it, and
`seal`: the funnel every session leaves the harvester through. Sealing redacts every string
of the draft (runtime/sleep/redact.py) before it bounds any (so that no cut hides half a secret
from a rule), then redacts the bounded text once more, and freezes the result.

Drafts hold what the file says (raw prompts, as expected.json lists them); only structured tool
inputs are redacted as they are read, because secret-named keys are only visible as structure.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skopt.runtime.sleep.redact import Redactor
from skopt.runtime.sleep.sessions import (
    ANSWER_CHARS,
    PROMPT_CHARS,
    TOOL_CHARS,
    Agent,
    Kind,
    Session,
)

CUT = "\n[…]\n"


@dataclass
class CallDraft:
    name: str
    input: str
    output: str = ""
    is_error: bool = False
    rejected: bool = False


@dataclass
class TurnDraft:
    prompt: str
    tools: list[CallDraft] = field(default_factory=list)
    answer: str = ""


@dataclass
class SessionDraft:
    agent: Agent
    session_id: str
    path: str
    cwd: str | None = None
    git_branch: str | None = None
    version: str | None = None
    entrypoint: str | None = None
    agent_id: str | None = None
    kind: Kind = "interactive"
    started_at: str | None = None
    ended_at: str | None = None
    models: list[str] = field(default_factory=list)
    turns: list[TurnDraft] = field(default_factory=list)
    tool_calls: list[str] = field(default_factory=list)
    api_responses: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    files_touched: list[str] = field(default_factory=list)
    subagent_prompt: str | None = None
    parent_session_id: str | None = None
    title: str | None = None
    commands: list[str] = field(default_factory=list)
    # for the filters, never sealed:
    live: bool = field(default=False, metadata={"seal": False})
    mtime: float = field(default=0.0, metadata={"seal": False})
    own_calls: list[CallDraft] = field(default_factory=list, metadata={"seal": False})

    @property
    def prompts(self) -> list[str]:
        return [turn.prompt for turn in self.turns]

    def stamp(self, timestamp: object) -> None:
        """A record's timestamp, in file order: the first opens the session, the last ends it."""
        if isinstance(timestamp, str) and timestamp:
            self.started_at = self.started_at or timestamp
            self.ended_at = timestamp

    def use_model(self, model: object) -> None:
        if isinstance(model, str) and model and model not in self.models:
            self.models.append(model)

    def touch(self, path: object) -> None:
        """A file the session changed, relative to cwd when inside it."""
        if not isinstance(path, str) or not path:
            return
        if self.cwd and path.startswith(self.cwd.rstrip("/") + "/"):
            path = path[len(self.cwd.rstrip("/")) + 1 :]
        if path not in self.files_touched:
            self.files_touched.append(path)

    def call(self, draft: CallDraft, *, turn: TurnDraft | None) -> None:
        """A main-thread call: named in `tool_calls`, detailed in its turn (if one is open)."""
        self.tool_calls.append(draft.name)
        self.own_calls.append(draft)
        if turn is not None:
            turn.tools.append(draft)

    def started(self) -> datetime | None:
        return parse_time(self.started_at)


def credit(parent: TurnDraft, spawn: CallDraft, child: SessionDraft) -> None:
    """A sub-agent's calls, in the parent's turn right after the call that spawned it."""
    at = next((i for i, c in enumerate(parent.tools) if c is spawn), len(parent.tools) - 1)
    parent.tools[at + 1 : at + 1] = child.own_calls


def parse_time(stamp: str | None) -> datetime | None:
    """An ISO 8601 timestamp as aware UTC (naive ones are taken as UTC); None if unreadable."""
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def clip(text: str, limit: int) -> str:
    """`text` in at most `limit` characters: its head and its tail around a cut mark."""
    if len(text) <= limit:
        return text
    keep = limit - len(CUT)
    head = (keep + 1) // 2
    return text[:head] + CUT + text[len(text) - (keep - head) :]


def seal(draft: SessionDraft, redactor: Redactor) -> Session:
    """The draft as a frozen `Session`: redacted, then bounded, then redacted again."""
    fields = {k: v for k, v in asdict(draft).items() if k in _SEALED}
    for _ in range(2):
        fields = _bound(redactor.tree(fields))
    return Session.model_validate(fields)


_SEALED = frozenset(
    f for f, spec in SessionDraft.__dataclass_fields__.items() if spec.metadata.get("seal", True)
)


def _bound(fields: dict[str, Any]) -> dict[str, Any]:
    for turn in fields["turns"]:
        turn["prompt"] = clip(turn["prompt"], PROMPT_CHARS)
        turn["answer"] = clip(turn["answer"], ANSWER_CHARS)
        for tool in turn["tools"]:
            tool["input"] = clip(tool["input"], TOOL_CHARS)
            tool["output"] = clip(tool["output"], TOOL_CHARS)
    if fields["subagent_prompt"] is not None:
        fields["subagent_prompt"] = clip(fields["subagent_prompt"], PROMPT_CHARS)
    return fields


def relative(path: Path, root: Path) -> str:
    """`path` as a session's `path`: relative to its source's root (a file root: its name)."""
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
