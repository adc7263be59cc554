"""The pipeline's layering, checked at run time: importing the compiler loads no model SDK and
no terminal UI (STYLE.md). The static side is import-linter's contracts in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys


def loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_compiler_loads_no_model_sdk_and_no_textual() -> None:
    modules = loaded_after("import skopt.compiler.compile, skopt.compiler.plan")
    assert "skopt.compiler.compile" in modules  # the import really happened
    for forbidden in ("openai", "anthropic", "textual", "httpx"):
        assert forbidden not in modules, forbidden


def test_plan_model_loads_without_lark() -> None:
    # the plan is the contract the runtime reads: it must not drag the parser in
    modules = loaded_after("import skopt.compiler.plan")
    assert "lark" not in modules


def test_runtime_loads_no_parser_no_textual_and_sdks_only_when_used() -> None:
    modules = loaded_after("import skopt.runtime.calls, skopt.runtime.structured")
    assert "skopt.runtime.calls" in modules
    for forbidden in ("lark", "textual", "openai", "anthropic"):
        assert forbidden not in modules, forbidden


def test_run_engine_and_evaluate_load_no_parser_and_no_textual() -> None:
    # the runtime loads its data through compiler/splits.py, never through lower (the parser)
    modules = loaded_after("import skopt.runtime.run, skopt.runtime.engine, skopt.runtime.evaluate")
    assert {"skopt.runtime.run", "skopt.runtime.engine", "skopt.runtime.evaluate"} <= modules
    for forbidden in ("lark", "textual"):
        assert forbidden not in modules, forbidden


def test_the_command_line_loads_textual_only_for_the_terminal_ui() -> None:
    modules = loaded_after("import skopt.ui.cli, skopt.runtime.adopt, skopt.runtime.launch")
    assert "skopt.ui.cli" in modules
    assert "textual" not in modules
    assert "textual" in loaded_after("import skopt.ui.tui.app")


def test_ray_is_loaded_only_by_the_ray_executor() -> None:
    modules = loaded_after(
        "import skopt.ui.cli, skopt.runtime.sweep, skopt.runtime.executors.local"
    )
    assert "skopt.runtime.sweep" in modules and "ray" not in modules
