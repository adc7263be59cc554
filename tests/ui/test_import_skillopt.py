"""`skopt import skillopt`: SkillOpt configs (our own, in its documented format, under
import_cases/) converted through the real command line, then `skopt fmt --check` and
`skopt check` run on the recipe written, with exactly the diagnostics each case should give."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ui.invoke import run

CASES = Path(__file__).parent / "import_cases"
SKOPT = Path(sys.executable).parent / "skopt"


@pytest.fixture(autouse=True)
def cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the cases, as the folder SkillOpt would run in (its paths start there)."""
    folder = tmp_path / "cases"
    shutil.copytree(CASES, folder)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # a missing key is not what is tested
    return folder


def convert(config: str, *args: str) -> tuple[int, str, str]:
    """(exit code, recipe text or '', stderr) of importing `config` into recipe.skopt."""
    code, _, err = run("import", "skillopt", config, "-o", "recipe.skopt", *args)
    out = Path("recipe.skopt")
    return code, out.read_text(encoding="utf-8") if out.exists() else "", err


def headlines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(("error: ", "warning: "))]


def check(recipe: str = "recipe.skopt") -> tuple[int, list[str]]:
    code, _, err = run("check", recipe)
    return code, headlines(err)


def assert_canonical(recipe: str = "recipe.skopt") -> None:
    code, _, err = run("fmt", "--check", recipe)
    assert code == 0, err


def no_counterpart(*keys: str) -> list[str]:
    return [f"warning: '{key}' has no counterpart in skopt" for key in keys]


# -- inheritance, output, overrides --------------------------------------------------------


def test_a_child_overrides_its_base_key_by_key_and_the_recipe_checks_clean() -> None:
    code, recipe, err = convert("searchqa/child.yaml")
    assert code == 0, err
    assert headlines(err) == []
    assert "searchqa/child.yaml: converted to recipe.skopt (0 errors, 0 warnings)" in err
    assert "  batch_size  = 8\n" in recipe  # the child's
    assert "  epochs      = 3\n" in recipe  # the base's
    assert "  seed       = 7\n" in recipe
    assert "# Inherits (_base_): _base_/default.yaml." in recipe
    assert 'data    = "searchqa/data/items.json"' in recipe
    assert 'skill       = "searchqa/skills/seed.md"' in recipe
    assert "  timeout          = 90s  # env.exec_timeout\n" in recipe
    assert "    train = 60%  # split_ratio 3:1:1\n" in recipe
    assert "    seed  = 11" in recipe
    assert "kind    = qa" in recipe and "metric  = f1" in recipe
    assert_canonical()
    assert check() == (0, [])


def test_without_o_the_recipe_goes_to_stdout_and_matches_the_file() -> None:
    code, printed, err = run("import", "skillopt", "searchqa/child.yaml")
    assert code == 0, err
    _, written, _ = convert("searchqa/child.yaml")
    assert printed == written and printed.startswith("skopt 1\n")


def test_o_never_overwrites_a_file_unless_forced() -> None:
    Path("recipe.skopt").write_text("mine\n", encoding="utf-8")
    code, recipe, err = convert("searchqa/child.yaml")
    assert code == 2
    assert "recipe.skopt already exists; nothing was written" in err
    assert recipe == "mine\n"
    code, recipe, err = convert("searchqa/child.yaml", "--force")
    assert code == 0, err
    assert recipe.startswith("skopt 1\n")


def test_a_cycle_of_bases_is_an_error_naming_the_chain() -> None:
    code, recipe, err = convert("cycle/a.yaml")
    assert code == 2
    assert recipe == ""
    assert headlines(err) == [
        "error: circular _base_ inheritance: "
        "cycle/a.yaml -> cycle/b.yaml -> cycle/c.yaml -> cycle/a.yaml"
    ]
    assert "--> cycle/c.yaml:1:9" in err


def test_cfg_options_apply_after_inheritance_sectioned_or_flat() -> None:
    code, recipe, err = convert(
        "searchqa/child.yaml",
        "--cfg-options",
        "train.num_epochs=2",
        "batch_size=5",
        "optimizer.lr_scheduler=linear",
        "evaluation.eval_test=false",
    )
    assert code == 0, err
    assert "  epochs      = 2\n" in recipe
    assert "  batch_size  = 5\n" in recipe
    assert "  lr          = linear(max = 6, min = 2)\n" in recipe
    assert "  test       = off\n" in recipe
    assert "Overridden with --cfg-options: train.num_epochs, batch_size" in recipe
    assert check() == (0, [])


def test_a_bad_cfg_option_is_pointed_at() -> None:
    code, recipe, err = convert("searchqa/child.yaml", "--cfg-options", "train.batch_size")
    assert code == 2 and recipe == ""
    assert headlines(err) == ["error: --cfg-options takes KEY=VALUE, not 'train.batch_size'"]
    assert "--> <cfg-options>:1:15" in err


# -- schedulers, update modes, gates, splits -----------------------------------------------


@pytest.mark.parametrize(
    ("config", "lr", "warnings"),
    [
        (
            "schedulers/constant.yaml",
            "constant(6)",
            [
                "warning: 'optimizer.min_learning_rate' has no effect here: a constant schedule "
                "has no minimum"
            ],
        ),
        ("schedulers/linear.yaml", "linear(max = 6, min = 2)", []),
        ("schedulers/cosine.yaml", "cosine(max = 6, min = 2)", []),
        (
            "schedulers/autonomous.yaml",
            "constant(999)  # SkillOpt's autonomous scheduler: 999 edits",
            [
                "warning: 'optimizer.learning_rate' has no effect here: lr_scheduler autonomous "
                "allows 999 edits a step",
                "warning: 'optimizer.min_learning_rate' has no effect here: lr_scheduler "
                "autonomous allows 999 edits a step",
            ],
        ),
        (
            "schedulers/llm_control.yaml",
            "autonomous  # lr_control_mode autonomous: the optimizer picks each step's edits",
            [
                f"warning: 'optimizer.{key}' has no effect here: with lr_control_mode "
                "autonomous the optimizer picks each step's edits"
                for key in ("learning_rate", "min_learning_rate", "lr_scheduler")
            ],
        ),
    ],
)
def test_every_scheduler(config: str, lr: str, warnings: list[str]) -> None:
    code, recipe, err = convert(config)
    assert code == 0, err
    assert f"  lr          = {lr}\n" in recipe
    assert headlines(err) == warnings
    assert_canonical()
    assert check() == (0, [])


@pytest.mark.parametrize(
    ("config", "mode", "max_tokens"),
    [
        ("modes/patch.yaml", "patch", "16384  # SkillOpt's cap on each optimizer call"),
        (
            "modes/rewrite.yaml",
            "rewrite",
            "12000  # model.rewrite_max_completion_tokens, for every call",
        ),
        (
            "modes/full_rewrite.yaml",
            "full_rewrite",
            "16384  # SkillOpt's cap on each optimizer call",
        ),
    ],
)
def test_every_update_mode(config: str, mode: str, max_tokens: str) -> None:
    code, recipe, err = convert(config)
    assert code == 0, err
    assert headlines(err) == []
    assert f"  mode        = {mode}\n" in recipe
    optimizer = recipe.split("model optimizer {", 1)[1].split("}", 1)[0]
    assert f"max_tokens       = {max_tokens}\n" in optimizer
    assert check() == (0, [])


def test_a_soft_gate() -> None:
    code, recipe, err = convert("gates/soft.yaml")
    assert code == 0, err
    assert "    metric = soft\n" in recipe
    assert check() == (0, [])


def test_a_mixed_gate_keeps_its_weight_and_the_item_counts_become_limits() -> None:
    code, recipe, err = convert("gates/mixed.yaml")
    assert code == 0, err
    assert headlines(err) == []
    assert "    metric = mixed(0.3)  # soft weight\n" in recipe
    assert "  limit {\n    valid = 12" in recipe and "    test  = 15\n" in recipe
    assert check() == (0, [])


def test_a_split_dir_becomes_files_named_as_skillopts_loader_reads_them() -> None:
    code, recipe, err = convert("splits/split_dir.yaml")
    assert code == 0, err
    assert headlines(err) == [
        f"warning: 'env.{key}' has no effect here: split_mode is split_dir"
        for key in ("split_ratio", "split_seed", "data_path")
    ]
    assert 'train = "splits/data/train/train_items.json"' in recipe
    assert 'valid = "splits/data/val/val_items.json"' in recipe
    assert 'test  = "splits/data/test/test_items.json"' in recipe
    assert "split {" not in recipe
    assert check() == (0, [])


def test_a_ratio_that_is_no_whole_percent_is_rounded_to_add_up() -> None:
    code, recipe, err = convert("splits/ratio.yaml")
    assert code == 0, err
    assert "    train = 33.33%  # split_ratio 1:1:1, rounded\n" in recipe
    assert "    valid = 33.33%\n    test  = 33.34%\n    seed  = 3" in recipe
    assert check() == (0, [])


def test_paths_are_written_from_the_recipes_folder(cases: Path) -> None:
    (cases / "out").mkdir()
    code, _, err = run("import", "skillopt", "searchqa/child.yaml", "-o", "out/r.skopt")
    assert code == 0, err
    recipe = (cases / "out" / "r.skopt").read_text(encoding="utf-8")
    assert 'data    = "../searchqa/data/items.json"' in recipe
    assert check("out/r.skopt") == (0, [])


# -- what has no counterpart -----------------------------------------------------------------


def test_azure_sign_in_and_codex_exec_options_are_each_reported_by_name() -> None:
    code, recipe, err = convert("unsupported/codex_azure.yaml")
    assert code == 0, err
    assert headlines(err) == [
        "warning: 'model.target_backend' approximated: the target ran as the codex_exec agent "
        "harness; skopt calls gpt-4o-mini directly",
        *no_counterpart(
            "model.azure_openai_auth_mode",
            "model.azure_openai_managed_identity_client_id",
            "model.azure_openai_api_version",
            "model.azure_openai_api_key",
            "model.codex_exec_sandbox",
            "model.codex_exec_approval_policy",
            "model.codex_exec_network_access",
            "optimizer.use_skill_aware_reflection",
            "evaluation.use_semantic_density",
            "evaluation.semantic_density_weight",
            "evaluation.use_gate",
        ),
    ]
    assert "Microsoft Entra ID tokens (azure_cli, managed identity) are not supported" in err
    assert "options of SkillOpt's Codex harness have nothing to set" in err
    assert "sk-do-not-print-me" not in err + recipe
    assert "azure_openai_api_key: <redacted>" in err
    optimizer = recipe.split("model optimizer {", 1)[1].split("}", 1)[0]
    assert 'base_url         = "https://example-resource.openai.azure.com/openai/v1/"' in optimizer
    assert 'api_key_env      = "AZURE_OPENAI_API_KEY"' in optimizer
    assert check() == (0, ["warning: AZURE_OPENAI_API_KEY is not set"])  # a real gap


def test_azure_with_an_api_key_maps_onto_the_v1_api_without_a_warning() -> None:
    code, recipe, err = convert("unsupported/azure_chat.yaml")
    assert code == 0, err
    assert headlines(err) == []
    url = 'base_url         = "https://example-resource.openai.azure.com/openai/v1/"'
    assert recipe.count(url) == 2
    assert check() == (0, ["warning: AZURE_OPENAI_API_KEY is not set"] * 2)


def block(recipe: str, head: str) -> str:
    return recipe.split(head + " {\n", 1)[1].split("\n}", 1)[0]


def test_a_qwen_target_is_an_openai_compatible_server() -> None:
    code, recipe, err = convert("backends/qwen.yaml")
    assert code == 0, err
    assert headlines(err) == no_counterpart("model.qwen_chat_thinking_mode")
    assert block(recipe, "model target").split("\n") == [
        "  provider         = openai",
        '  name             = "Qwen/Qwen3.5-4B"  # SkillOpt\'s default model for qwen_chat',
        '  base_url         = "http://127.0.0.1:8011/v1"',
        '  api_key_env      = "QWEN_CHAT_API_KEY"',
        "  temperature      = 0.2",
        "  timeout          = 90s  # env.exec_timeout",
        "  max_tokens       = 2048",
        "  reasoning_effort = low",
    ]
    assert check() == (
        0,
        [
            "warning: no price known for model 'target' (Qwen/Qwen3.5-4B)",
            "warning: QWEN_CHAT_API_KEY is not set",
        ],
    )


def test_claude_chat_roles_call_anthropic_with_claudes_default_name() -> None:
    code, recipe, err = convert("backends/claude.yaml")
    assert code == 0, err
    assert headlines(err) == [
        "warning: 'model.reasoning_effort' approximated: xhigh is written as high"
    ]
    for role in ("target", "optimizer"):
        model = block(recipe, f"model {role}")
        assert "provider         = anthropic" in model
        assert 'name             = "claude-sonnet-4-6"' in model
        assert "reasoning_effort = high" in model
    assert check() == (0, ["warning: ANTHROPIC_API_KEY is not set"] * 2)


def test_a_cursor_target_has_no_provider_and_check_says_so() -> None:
    code, recipe, err = convert("backends/cursor.yaml")
    assert code == 0, err
    assert headlines(err) == [
        "warning: 'model.backend' approximated: skopt has no cursor_exec provider for the target",
        *no_counterpart("model.cursor_exec_sandbox"),
    ]
    assert "provider         = cursor_exec" in block(recipe, "model target")
    assert check() == (2, ["error: unknown provider 'cursor_exec'"])


def test_training_knobs_accumulation_reflection_slow_update_and_output() -> None:
    code, recipe, err = convert("backends/training.yaml")
    assert code == 0, err
    assert headlines(err) == [
        *no_counterpart("train.train_size"),
        "warning: 'optimizer.slow_update_samples' has no effect here: use_slow_update is false",
        *no_counterpart(
            "optimizer.meta_learning_rate",
            "optimizer.longitudinal_pair_policy",
            "env.split_output_dir",
        ),
    ]
    train = block(recipe, "train")
    for line in (
        "batch_size  = 30  # 10 x accumulation 3: one rollout batch, patches pooled as before",
        "merge_batch = 2  # SkillOpt raises 1 to 2",
        "reflect     = failures",
        "slow_update = off",
        "meta_skill  = off",
        'out         = "outputs/run1"  # env.out_root',
    ):
        assert f"  {line}\n" in train + "\n"
    assert "concurrency      = 6" in block(recipe, "model optimizer")
    assert check() == (0, [])


def test_a_benchmark_skopt_lacks_leaves_only_the_real_gaps_to_check() -> None:
    code, recipe, err = convert("bench/alfworld.yaml")
    assert code == 0, err
    assert "warning: 'env.name' approximated: skopt has no alfworld env" in err
    assert no_counterpart("env.max_steps")[0] in err
    assert "concurrency      = 8  # env.workers: SkillOpt's rollout threads" in recipe
    code, diagnostics = check()
    assert code == 2
    assert diagnostics == [
        "error: unknown env kind 'alfworld'",
        *(
            f"error: file not found: data/alfworld_path_split/{part}/{part}.json"
            for part in ("train", "val", "test")
        ),
    ]


def test_the_legacy_flat_format_maps_like_the_sectioned_one() -> None:
    code, recipe, err = convert("flat/legacy.yaml")
    assert code == 0, err
    assert headlines(err) == []
    assert "  epochs      = 2\n" in recipe and "  batch_size  = 10\n" in recipe
    assert "  lr          = constant(3)\n" in recipe
    assert re.search(r'model target \{\n  provider += openai\n  name += "gpt-4o-mini"', recipe)
    assert "    train = 20%  # split_ratio 2:1:7\n" in recipe
    assert check() == (0, [])


# -- configs that cannot be converted ----------------------------------------------------------


def test_a_wrong_value_is_an_error_and_nothing_is_written() -> None:
    code, recipe, err = convert("bad/epochs.yaml")
    assert code == 2 and recipe == ""
    assert headlines(err) == [
        "error: 'train.num_epochs' must be a whole number of at least 1, not 'four'"
    ]
    assert "--> bad/epochs.yaml:3:3" in err


def test_yaml_that_does_not_parse_is_pointed_at() -> None:
    code, recipe, err = convert("bad/broken.yaml")
    assert code == 2 and recipe == ""
    assert headlines(err) == ["error: not valid YAML: mapping values are not allowed here"]
    assert "--> bad/broken.yaml:3:14" in err


def test_a_missing_config_is_an_error() -> None:
    code, _, err = convert("nowhere.yaml")
    assert code == 2
    assert headlines(err) == ["error: cannot read nowhere.yaml: No such file or directory"]


def test_help_lists_the_exit_codes() -> None:
    code, out, _ = run("import", "skillopt", "--help")
    assert code == 0
    assert "Exit codes:\n    0 ok\n    2 recipe or usage error" in out


def test_the_installed_command_pipes_a_recipe_that_fmt_accepts(cases: Path) -> None:
    done = subprocess.run(
        [str(SKOPT), "import", "skillopt", "gates/mixed.yaml"],
        cwd=cases,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (cases / "piped.skopt").write_text(done.stdout, encoding="utf-8")
    fmt = subprocess.run(
        [str(SKOPT), "fmt", "--check", "piped.skopt"], cwd=cases, capture_output=True, check=False
    )
    assert fmt.returncode == 0, fmt.stderr
