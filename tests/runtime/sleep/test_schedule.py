"""`skopt sleep schedule` / `unschedule` against a `crontab` stand-in on PATH that keeps the
table in a file: one managed block between marker lines, every other line byte-identical."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ui.invoke import run


def invoke(args: list[str]) -> Done:
    code, out, err = run(*args)
    return Done(code, out + err)


@dataclass(frozen=True)
class Done:
    exit_code: int
    output: str


STAND_IN = """#!/bin/sh
# crontab -l | crontab - : the table lives in $CRONTAB_FILE
if [ "$1" = "-l" ]; then
  [ -f "$CRONTAB_FILE" ] || { echo "no crontab for $(id -un)" >&2; exit 1; }
  cat "$CRONTAB_FILE"
elif [ "$1" = "-" ]; then
  cat > "$CRONTAB_FILE"
else
  exit 2
fi
"""
THEIRS = (
    b"MAILTO=dana@example.com \xff\r\n# my backups\n0 1 * * * /usr/bin/backup --all   \n"
    b"\n5 4 * * 0 echo 'no newline'"
)
RECIPE = """skopt 1
model m {
  provider = sim
}
sleep {
  sources  = [generic("sessions")]
  target   = m
  optimizer = m
  skill    = "SKILL.md"
  schedule = "17 3 * * *"
}
"""


@pytest.fixture
def crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "crontab"
    script.write_text(STAND_IN)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    table = tmp_path / "table"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CRONTAB_FILE", str(table))
    return table


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "SKILL.md").write_text("# Skill\n")
    (project / "sessions").mkdir()
    path = project / "sleep.skopt"
    path.write_text(RECIPE)
    return path


def test_schedule_adds_one_block_and_leaves_the_rest_byte_identical(
    crontab: Path, recipe: Path
) -> None:
    crontab.write_bytes(THEIRS)  # a CRLF, a byte that is not UTF-8, no final newline
    done = invoke(["sleep", "schedule", str(recipe)])
    assert done.exit_code == 0, done.output
    table = crontab.read_bytes()
    assert table.startswith(THEIRS + b"\n")  # only the missing final newline was added
    block = table[len(THEIRS) + 1 :].decode()
    lines = block.splitlines()
    assert len(lines) == 3 and lines[0].startswith("# >>> skopt sleep ")
    assert lines[1].startswith("17 3 * * * cd ") and "sleep run sleep.skopt" in lines[1]
    assert lines[2].startswith("# <<< skopt sleep ")
    assert (recipe.parent / ".skopt" / "sleep").is_dir()  # where cron appends its log

    again = invoke(["sleep", "schedule", str(recipe)])  # replaced, not added twice
    assert again.exit_code == 0 and crontab.read_bytes() == table

    gone = invoke(["sleep", "unschedule", str(recipe)])
    assert gone.exit_code == 0 and "removed" in gone.output
    assert crontab.read_bytes() == THEIRS + b"\n"
    none = invoke(["sleep", "unschedule", str(recipe)])
    assert none.exit_code == 0 and "no entry" in none.output
    assert crontab.read_bytes() == THEIRS + b"\n"


def test_a_user_with_no_crontab_gets_one(crontab: Path, recipe: Path) -> None:
    done = invoke(["sleep", "schedule", str(recipe)])
    assert done.exit_code == 0, done.output
    lines = crontab.read_text().splitlines()
    assert [line[:6] for line in lines] == ["# >>> ", "17 3 *", "# <<< "]


def test_two_recipes_keep_two_blocks(crontab: Path, recipe: Path) -> None:
    other = recipe.with_name("other.skopt")
    other.write_text(RECIPE.replace("17 3", "45 2"))
    assert invoke(["sleep", "schedule", str(recipe)]).exit_code == 0
    assert invoke(["sleep", "schedule", str(other)]).exit_code == 0
    assert invoke(["sleep", "unschedule", str(recipe)]).exit_code == 0
    table = crontab.read_text()
    assert "45 2 * * *" in table and "17 3 * * *" not in table


def test_a_recipe_without_a_schedule_is_refused(crontab: Path, recipe: Path) -> None:
    recipe.write_text(RECIPE.replace('  schedule = "17 3 * * *"\n', ""))
    done = invoke(["sleep", "schedule", str(recipe)])
    assert done.exit_code == 2 and "schedule" in done.output
    assert not crontab.exists()


def test_a_crontab_that_refuses_the_table_is_an_error(crontab: Path, recipe: Path) -> None:
    script = Path(os.environ["PATH"].split(os.pathsep)[0]) / "crontab"
    script.write_text("#!/bin/sh\necho 'crontab: permission denied' >&2\nexit 1\n")
    done = invoke(["sleep", "schedule", str(recipe)])
    assert done.exit_code == 1 and "permission denied" in done.output
