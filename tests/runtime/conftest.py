"""Fixtures for the call layer: the scripted server, model settings, and a known fake key."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from skopt.compiler.plan import ModelSettings, Price
from tests.runtime.server import ScriptedServer

KEY_ENV = "SKOPT_TEST_KEY"
KEY = "sk-test-SECRET-123"
PROVIDERS = ("openai", "anthropic")


def settings(provider: str, base_url: str | None, **overrides: Any) -> ModelSettings:
    """A model block as the compiler would resolve it; `overrides` change single fields."""
    fields: dict[str, Any] = {
        "name": "m",
        "provider": provider,
        "model": "claude-test" if provider == "anthropic" else "gpt-test",
        "base_url": base_url,
        "api_key_env": KEY_ENV,
        "temperature": 0.3,
        "max_tokens": 64,
        "top_p": None,
        "reasoning_effort": None,
        "concurrency": 8,
        "rpm": None,
        "tpm": None,
        "timeout_s": 5.0,
        "retries": 3,
        "replay_from": None,
        "gguf": None,
        "price": Price(input_usd=1.0, output_usd=2.0, per=1_000_000, source="recipe"),
    }
    fields.update(overrides)
    return ModelSettings(**fields)


def url_for(server: ScriptedServer, provider: str) -> str:
    return server.anthropic_url if provider == "anthropic" else server.openai_url


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    """The fake key in the environment; the SDKs' own variables are cleared."""
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY
