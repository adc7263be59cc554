"""Running the `skopt` command line in-process, for the UI tests."""

from __future__ import annotations

from click.testing import CliRunner

from skopt.ui.cli import main
from tests.conftest import RECIPES

DEMO = str(RECIPES / "demo.skopt")


def run(*args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr); a crash other than a deliberate exit fails the test."""
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr
