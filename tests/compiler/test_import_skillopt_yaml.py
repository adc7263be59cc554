"""Reading SkillOpt YAML for the importer: layers, precedence, aliases, secrets, overrides."""

from __future__ import annotations

from pathlib import Path

from skopt.compiler.importers.cfg_options import CFG_OPTIONS, apply_options, options_source
from skopt.compiler.importers.skillopt_keys import SLEEP_REASON, canonical, reason
from skopt.compiler.importers.yaml_config import load_chain


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_flat_child_overrides_a_sectioned_base(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "train:\n  batch_size: 40\n  num_epochs: 4\n")
    child = write(tmp_path, "child.yaml", "_base_: base.yaml\nbatch_size: 8\n")
    loaded = load_chain(child)
    assert loaded.ok
    assert loaded.settings["train.batch_size"].value == 8
    assert loaded.settings["train.batch_size"].span.path == child
    assert loaded.settings["train.num_epochs"].value == 4
    assert loaded.chain == [child, str(tmp_path / "base.yaml")]


def test_within_a_layer_the_sectioned_spelling_wins(tmp_path: Path) -> None:
    config = write(tmp_path, "c.yaml", "edit_budget: 9\noptimizer:\n  learning_rate: 3\n")
    assert load_chain(config).settings["optimizer.learning_rate"].value == 3


def test_codex_aliases_and_flat_names_have_one_dotted_name() -> None:
    assert canonical("model.codex_path") == "model.codex_exec_path"
    assert canonical("sandbox") == "model.codex_exec_sandbox"
    assert canonical("env") == "env.name"
    assert canonical("workers") == "env.workers"
    assert canonical("min_edit_budget") == "optimizer.min_learning_rate"
    assert canonical("human_feedback") == "human_feedback"


def test_secret_values_are_blanked_in_the_sources_but_keep_their_line(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        "c.yaml",
        'model:\n  azure_openai_api_key: "sk-1"\n  qwen_chat_api_key: sk-2\n  target: x\n',
    )
    loaded = load_chain(config)
    text = loaded.sources[config]
    assert "sk-1" not in text and "sk-2" not in text
    assert text.splitlines()[1:3] == [
        "  azure_openai_api_key: <redacted>",
        "  qwen_chat_api_key: <redacted>",
    ]
    assert loaded.settings["model.target"].span.line == 4


def test_an_empty_file_is_an_empty_layer_and_a_list_base_is_refused(tmp_path: Path) -> None:
    empty = write(tmp_path, "empty.yaml", "# nothing\n")
    assert load_chain(empty).ok and load_chain(empty).settings == {}
    listed = write(tmp_path, "listed.yaml", "_base_: [a.yaml, b.yaml]\n")
    [problem] = load_chain(listed).diagnostics
    assert problem.message == "_base_ must name one YAML file"
    assert (problem.span.line, problem.span.col) == (1, 9)


def test_a_config_that_is_not_a_mapping_is_an_error(tmp_path: Path) -> None:
    config = write(tmp_path, "list.yaml", "- a\n- b\n")
    [problem] = load_chain(config).diagnostics
    assert problem.message == "a SkillOpt config is a mapping of sections and keys"


def test_options_are_yaml_scalars_set_under_their_dotted_name() -> None:
    settings: dict = {}
    problems = apply_options(
        settings, ["evaluation.use_gate=no", "gate_mixed_weight=0.25", "env.name=", "seed=3"]
    )
    assert problems == []
    values = {key: s.value for key, s in settings.items()}
    assert values == {
        "evaluation.use_gate": False,
        "evaluation.gate_mixed_weight": 0.25,
        "env.name": "",
        "train.seed": 3,
    }
    assert settings["train.seed"].span.path == CFG_OPTIONS
    assert settings["train.seed"].span.line == 4


def test_option_sources_blank_secrets() -> None:
    source = options_source(["model.azure_openai_api_key=sk-9", "train.seed=1"])
    assert source == (
        "--cfg-options model.azure_openai_api_key=<redacted>\n--cfg-options train.seed=1"
    )


def test_every_backend_family_key_is_explained_by_the_backends_in_use() -> None:
    assert reason("model.qwen_chat_base_url", ("openai_chat",)).startswith(
        "only SkillOpt's qwen_chat backend reads it"
    )
    assert "Entra ID" in reason("model.target_azure_openai_auth_mode", ("openai_chat",))
    assert reason("lookback_hours") == SLEEP_REASON  # SkillOpt-Sleep: out of scope
    assert reason("human_feedback") == (
        "not a key of SkillOpt's research trainer that this importer knows"
    )
