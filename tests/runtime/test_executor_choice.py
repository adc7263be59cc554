"""Choosing where a sweep's cells run: `--executor` (or the recipe's `sweep.executor`) on the
command line, and what happens without the `ray` extra: exit 2 and the install command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import RECIPES
from tests.ui.invoke import run

# `skopt` with Ray made unimportable, as on a machine without the extra
NO_RAY = "import sys; sys.modules['ray'] = None; from skopt.ui.cli import main; main()"


def test_without_the_extra_the_ray_executor_says_how_to_get_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", NO_RAY, "run", str(RECIPES / "sweep.skopt"), "--executor", "ray",
         "--out", str(tmp_path / "out")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "pip install 'skopt[ray]'" in done.stderr and "pip install -e '.[ray]'" in done.stderr
    assert not (tmp_path / "out").exists()  # refused before anything is written


def test_the_executor_applies_to_sweeps_only(tmp_path: Path) -> None:
    code, _, err = run("run", str(RECIPES / "demo.skopt"), "--executor", "ray",
                       "--out", str(tmp_path / "out"))  # fmt: skip
    assert code == 2 and "apply to a sweep" in err
