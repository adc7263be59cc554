"""The layering at run time (STYLE.md): harvesting and redacting load no parser, no terminal UI
and no model SDK. The static side is import-linter's contract on skopt.runtime.sleep."""

from __future__ import annotations

import subprocess
import sys


def test_harvest_loads_no_parser_no_textual_and_no_model_sdk() -> None:
    code = (
        "import sys, skopt.runtime.sleep.harvest, skopt.runtime.sleep.redact;"
        "print(' '.join(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(out.stdout.split())
    assert "skopt.runtime.sleep.harvest.claude" in modules  # the import really happened
    for forbidden in ("lark", "textual", "openai", "anthropic", "httpx", "llama_cpp"):
        assert forbidden not in modules, forbidden
