"""Fixtures of the UI tests: no API key from the machine, and one finished demo run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.invoke import DEMO, run


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


@pytest.fixture(scope="session")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo run that finished (read-only for the tests that share it)."""
    out = tmp_path_factory.mktemp("demo") / "run"
    code, _, err = run("run", DEMO, "--out", str(out), "--quiet")
    assert code == 0, err
    return out
