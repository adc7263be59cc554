"""One LLM call: the request skopt makes and the completion it gets back.

A request's cache key is a hash of its canonical JSON: provider, model, sampling parameters,
messages and a sample index (so that deliberate re-samples are distinct). Who asked (role,
phase) is not part of the key: the same question asked twice is answered once.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Literal

Role = Literal["target", "optimizer", "judge"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class Request:
    model: str  # the model block's name in the recipe
    messages: tuple[Message, ...]
    role: Role = field(default="target", compare=False)
    phase: str = field(default="", compare=False)
    sample: int = 0  # 0 for the first answer; 1, 2, ... for deliberate re-samples

    @property
    def system(self) -> str:
        return "\n\n".join(m.content for m in self.messages if m.role == "system")

    @property
    def conversation(self) -> list[Message]:
        return [m for m in self.messages if m.role != "system"]


@dataclass(frozen=True, slots=True)
class Params:
    """What is sent besides the messages; fixed per model block."""

    provider: str
    name: str
    temperature: float
    max_tokens: int
    top_p: float | None = None
    reasoning_effort: str | None = None


def canonical(request: Request, params: Params) -> str:
    """The request as canonical JSON: what is hashed, stored, and diffed on a replay miss."""
    body = {
        "params": asdict(params),
        "messages": [asdict(m) for m in request.messages],
        "sample": request.sample,
    }
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def cache_key(request: Request, params: Params) -> str:
    return hashlib.sha256(canonical(request, params).encode()).hexdigest()


def content_key(request: Request) -> str:
    """What replay matches on: the messages and the sample index, whichever model asked."""
    body = {"messages": [asdict(m) for m in request.messages], "sample": request.sample}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int
    finish_reason: str
    latency_s: float
