"""The secret test at harvest level: no literal of `fake_secret_literals` survives anywhere in
what harvest returns (every session of every kind, every field, every string of the dump and
its JSON), even where a secret sits across the point where a long output is cut; and the
returned sessions are a fixed point of redaction."""

from __future__ import annotations

import json
from pathlib import Path

from skopt.runtime.sleep.harvest import Source, harvest
from skopt.runtime.sleep.redact import redact_tree
from skopt.runtime.sleep.sessions import TOOL_CHARS
from tests.runtime.sleep.conftest import ALL_KINDS, NOW, OLD, SECRETS, age, sources, strings


def test_no_planted_secret_survives_in_the_harvest(transcripts: Path) -> None:
    harvested = harvest(sources(transcripts), kinds=ALL_KINDS, now=NOW)
    assert len(harvested.sessions) == 12
    dump = harvested.model_dump()
    text = "\n".join(strings(dump)) + harvested.model_dump_json()
    assert "[REDACTED:anthropic_key]" in text and "[REDACTED:jwt]" in text  # redacted, not lost
    for name, literal in SECRETS.items():
        assert literal not in text, name


def test_the_harvest_is_a_fixed_point_of_redaction(transcripts: Path) -> None:
    dump = harvest(sources(transcripts), kinds=ALL_KINDS, now=NOW).model_dump()
    assert redact_tree(dump) == dump


def test_a_secret_across_the_cut_of_a_long_output_is_redacted_whole(tmp_path: Path) -> None:
    # redaction runs before the bound: a cut through a key would leave half of it to no rule
    key = SECRETS["openai"]
    offsets = range(TOOL_CHARS // 2 - 60, TOOL_CHARS // 2 + 10, 7)  # the key spans the cut
    for offset in offsets:
        output = "x" * offset + " " + key + " " + "y" * 9000
        lines = [
            {"v": 1, "session_id": f"s{offset}", "role": "user", "text": "print the env"},
            {
                "v": 1,
                "session_id": f"s{offset}",
                "role": "tool",
                "tool": {"name": "shell", "input": "env", "output": output, "is_error": False},
            },
        ]
        path = tmp_path / f"s{offset}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    age(tmp_path, OLD)
    harvested = harvest([Source("generic", tmp_path)], now=NOW)
    outputs = [t.output for s in harvested.sessions for turn in s.turns for t in turn.tools]
    assert len(outputs) == len(offsets)
    for output in outputs:
        assert len(output) <= TOOL_CHARS
        assert key[:12] not in output and key[-12:] not in output
