"""Terminal conventions: colour only where wanted (NO_COLOR, --color), every command's help
lists its exit codes, and `skopt run` ends with a summary line; its live display counts paid
calls apart from cache hits."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from skopt.ui.cli import main
from tests.conftest import ROOT
from tests.ui.invoke import DEMO, run

ESC = "\x1b["


def on_a_terminal(*args: str, env: dict[str, str] | None = None) -> str:
    """Standard error of a command whose output would keep colour (as on a TTY)."""
    result = CliRunner().invoke(main, list(args), color=True, env=env)
    return result.stderr


@pytest.fixture
def bad(tmp_path: Path) -> str:
    recipe = tmp_path / "bad.skopt"
    recipe.write_text("model m { provider = simm }\n")
    return str(recipe)


def test_colour_on_a_terminal_and_never_with_no_color(bad: str) -> None:
    assert ESC in on_a_terminal("check", bad)
    assert ESC not in on_a_terminal("check", bad, env={"NO_COLOR": "1"})
    assert ESC not in on_a_terminal("--color", "never", "check", bad)


def test_color_always_colours_even_a_pipe(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert ESC in run("--color", "always", "check", bad)[2]  # the flag wins over NO_COLOR
    assert ESC not in run("check", bad)[2]  # not a terminal: no colour


def test_every_commands_help_lists_its_exit_codes() -> None:
    for name in main.commands:
        code, out, _ = run(name, "--help")
        assert code == 0 and "Exit codes:" in out, name
        assert "2 recipe or usage error" in out, name
    assert "130 interrupted" in run("run", "--help")[1]
    assert "_SKOPT_COMPLETE" in run("--help")[1]


def test_the_readme_documents_shell_completion() -> None:
    assert "_SKOPT_COMPLETE=bash_source skopt" in (ROOT / "README.md").read_text()


def test_run_ends_with_a_summary_line(tmp_path: Path) -> None:
    code, _, err = run("run", DEMO, "--out", str(tmp_path / "run"))
    assert code == 0
    last = err.splitlines()[-1]
    assert last.startswith("done · 9 of 9 steps: ")
    for part in (" accepted, ", " rejected · gate ", " → ", " · test ", " paid calls (", " · $"):
        assert part in last, part
    steps = [line for line in err.splitlines() if line.startswith("step ")]
    assert len(steps) == 9 and all(" elapsed" in line for line in steps)
    assert "left" in steps[0] and "left" not in steps[-1]


def test_the_live_display_counts_paid_calls_not_cache_hits(tmp_path: Path) -> None:
    assert run("run", DEMO, "--out", str(tmp_path / "first"), "--quiet")[0] == 0
    code, _, err = run(
        "run", DEMO, "--out", str(tmp_path / "again"), "--cache-from", str(tmp_path / "first")
    )
    assert code == 0
    phases = [line for line in err.splitlines() if line.startswith("  ") and "paid calls" in line]
    assert phases and all("paid calls 0 of budget 20000" in line for line in phases)
    assert " · 0 paid calls (" in err.splitlines()[-1]
