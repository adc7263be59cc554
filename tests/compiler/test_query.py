"""The schema's answers for the language server: every key documented, defaults as written,
the words and references a value may be; and the compiler reading unsaved buffers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from skopt.compiler.compile import compile_recipe
from skopt.compiler.query import (
    SWEEP_KEYS,
    block_spec,
    default_text,
    ref_kind,
    value_type,
    words,
)
from skopt.compiler.schema import MODEL, SLEEP, SWEEP_OPTIONS, TOP_LEVEL, TRAIN, BlockSpec, Key
from skopt.compiler.types import Ref


def _keys(spec: BlockSpec, where: str) -> Iterator[tuple[str, Key]]:
    for name, key in spec.keys.items():
        yield f"{where}.{name}", key
    for kind, child in spec.children.items():
        yield from _keys(child, f"{where}.{kind}")


def test_every_key_has_a_one_line_doc() -> None:
    keys = [k for spec in TOP_LEVEL.values() for k in _keys(spec, spec.kind)]
    keys += [(f"sweep.{name}", key) for name, key in SWEEP_OPTIONS.items()]
    assert len(keys) > 90
    undocumented = [where for where, key in keys if not key.doc.strip()]
    assert undocumented == []
    assert [where for where, key in keys if "\n" in key.doc] == []


def test_defaults_are_shown_as_a_recipe_writes_them() -> None:
    assert default_text(TRAIN.keys["lr"]) == "cosine(max = 4, min = 2)"
    assert default_text(TRAIN.keys["slow_update"]) == "on"
    assert default_text(TRAIN.keys["target"]) == "required"
    assert default_text(TRAIN.keys["out"]) == '"runs/{recipe}/{time}"'
    assert default_text(MODEL.keys["timeout"]) == "2min"
    assert default_text(MODEL.keys["top_p"]) == ""
    assert default_text(SLEEP.keys["holdout"]) == "34%"
    assert default_text(SLEEP.keys["lookback"]) == "72h"
    assert default_text(SLEEP.keys["sources"]) == "[claude, codex]"


def test_the_places_of_nested_blocks_and_sweeps() -> None:
    assert block_spec(["train", "gate"]) is TRAIN.children["gate"]
    assert block_spec(["sleep", "gate"]) is SLEEP.children["gate"]
    assert block_spec(["model", "nope"]) is None and block_spec([]) is None
    assert "executor" in SWEEP_KEYS.keys and "target" not in SWEEP_KEYS.keys
    assert default_text(SWEEP_KEYS.keys["epochs"]) == ""  # a sweep's default is the train's


def test_words_and_references_of_a_value() -> None:
    assert words(TRAIN.keys["mode"].type) == ["patch", "rewrite", "full_rewrite"]
    assert words(TRAIN.keys["meta_skill"].type) == ["on", "off"]
    assert words(SLEEP.keys["include"].type) == ["interactive", "headless"]  # in a list
    assert ref_kind(TRAIN.keys["target"].type) == "model"
    assert ref_kind(TRAIN.keys["mode"].type) is None
    assert value_type(SLEEP.keys["judge"], "rubric", "model") == Ref("model")
    assert value_type(SLEEP.keys["judge"], "rubric", None) == Ref("model")  # its one parameter
    assert value_type(TRAIN.keys["lr"], "cosine", None) is None  # two: the name decides


def test_an_overlay_stands_in_for_files_imports_included(tmp_path: Path) -> None:
    lib, recipe = tmp_path / "lib.skopt", tmp_path / "main.skopt"
    lib.write_text("model m { provider = sim }\n", encoding="utf-8")
    recipe.write_text('import "lib.skopt"\n', encoding="utf-8")
    assert compile_recipe(str(recipe)).ok
    overlay = {str(lib.resolve()): "model m { provider = sim, temprature = 0 }\n"}
    result = compile_recipe(str(recipe), overlay=overlay)
    [problem] = result.diagnostics
    assert problem.message.startswith("unknown key 'temprature'")
    assert problem.span.path == str(lib) and result.sources[str(lib)] == overlay[str(lib.resolve())]
    assert compile_recipe(str(recipe), overlay={str(lib.resolve()): "not a recipe"}).ok is False
