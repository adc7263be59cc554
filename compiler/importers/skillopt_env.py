"""The env block: SkillOpt's benchmark, its data (a `ratio` split of `data_path`, or the
`train`/`val`/`test` folders of `split_dir`) and how many valid and test items it scores.

SearchQA is skopt's `qa` kind with the same scoring (hard = exact match, soft = token F1).
Every other benchmark keeps its name as the kind, which `skopt check` reports as a kind skopt
lacks. Paths are resolved from the folder SkillOpt ran in (`root`) and written relative to the
recipe's folder.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from skopt.compiler.importers import draft
from skopt.compiler.importers.config import Config
from skopt.compiler.importers.draft import Block

# benchmark -> (kind, field mapping, metric)
KNOWN_ENVS = {
    "searchqa": (
        "qa",
        {"input": "question", "context": "context", "answer": "answers", "id": "id"},
        "f1",
    ),
}
SPLIT_FOLDERS = {  # skopt split -> SkillOpt's folder names, in the order its loader accepts
    "train": ("train",),
    "valid": ("val", "valid_seen", "selection"),
    "test": ("test", "valid_unseen"),
}


@dataclass(frozen=True)
class Paths:
    root: Path  # the folder SkillOpt ran in: its relative paths start here
    recipe_dir: Path  # the folder the recipe is written to: the recipe's paths start here

    def shown(self, path: str) -> str:
        full = Path(path) if os.path.isabs(path) else self.root / path
        return Path(os.path.relpath(full.resolve(), self.recipe_dir.resolve())).as_posix()


def env_block(cfg: Config, paths: Paths) -> Block:
    name = cfg.text("env.name")
    if name is None:
        name = "alfworld"
        cfg.approximated("env.name", "no env is named; SkillOpt then trains on alfworld")
    word = re.sub(r"[^A-Za-z0-9_-]", "_", name)
    word = word if re.match(r"[A-Za-z_]", word) else f"env_{word}"
    block = Block(f"env {word}")
    kind, fields, metric = KNOWN_ENVS.get(name.lower(), (word, {}, ""))
    if kind == word:
        block.set("kind", kind, "no such skopt env kind: qa, classify, math or python(...)")
        cfg.approximated("env.name", f"skopt has no {name} env", "`skopt check` reports the kind")
    else:
        block.set("kind", kind, f"SkillOpt's {name}")
    ratio = _data(cfg, paths, block)
    for key, field in fields.items():
        block.set(key, draft.text(field))
    if metric:
        block.set("metric", metric, "hard = exact match, soft = token F1")
    if ratio:
        _split(cfg, block)
    _limits(cfg, block)
    if cfg.settings.get("env.max_turns") and cfg.settings["env.max_turns"].value == 1:
        cfg.take("env.max_turns")  # one turn: as skopt's rollouts are
    return block


def _data(cfg: Config, paths: Paths, block: Block) -> bool:
    """`data` or `files`; whether a ratio split is to follow."""
    mode = (cfg.text("env.split_mode") or "ratio").lower()
    if mode == "split_dir":
        folder = cfg.text("env.split_dir")
        cfg.unused("env.data_path", "split_mode is split_dir")
        cfg.unused("env.split_ratio", "split_mode is split_dir")
        cfg.unused("env.split_seed", "split_mode is split_dir")
        if folder is None:
            cfg.refuse("env.split_mode", "split_mode is split_dir but env.split_dir is not set")
            return False
        _files(cfg, paths, folder, block)
        return False
    if mode != "ratio":
        cfg.refuse("env.split_mode", f"unknown split_mode {mode!r}", "ratio or split_dir")
        return False
    cfg.unused("env.split_dir", "split_mode is ratio")
    data = cfg.text("env.data_path")
    if data is not None:
        block.set("data", draft.text(paths.shown(data)))
    return True


def _files(cfg: Config, paths: Paths, folder: str, block: Block) -> None:
    files = block.child("files")
    for split, names in SPLIT_FOLDERS.items():
        found = _first_json(paths.root / folder, names)
        if found is None:
            guess = f"{folder.rstrip('/')}/{names[0]}/{names[0]}.json"
            files.set(split, draft.text(paths.shown(guess)), "not found: the name is a guess")
            cfg.approximated(
                "env.split_dir",
                f"no JSON file in {folder}/{names[0]}/; the recipe names {guess}",
                "put the split's items there, or correct the path",
            )
        else:
            files.set(split, draft.text(paths.shown(str(found))))


def _first_json(folder: Path, names: tuple[str, ...]) -> Path | None:
    """The file SkillOpt's loader reads: the first `*.json` in the split's folder."""
    for name in names:
        candidates = sorted((folder / name).glob("*.json")) if (folder / name).is_dir() else []
        if candidates:
            return candidates[0].resolve()
    return None


def _split(cfg: Config, block: Block) -> None:
    ratio = cfg.text("env.split_ratio") or "2:1:7"
    parts = _ratio(ratio)
    if parts is None:
        cfg.refuse("env.split_ratio", f"split_ratio {ratio!r} is not train:val:test", "e.g. 2:1:7")
        return
    split = block.child("split")
    total = sum(parts)
    exact = [p / total for p in parts]
    shares = [float(p) for p in exact]
    note = f"split_ratio {ratio}"
    if any((share * 10_000) != int(share * 10_000) for share in exact):
        shares = [round(float(p), 4) for p in exact[:2]]
        shares.append(round(1 - sum(shares), 4))
        note += ", rounded"
    for name, share in zip(("train", "valid", "test"), shares, strict=True):
        split.set(name, draft.percent(share), note if name == "train" else "")
    seed = cfg.integer("env.split_seed", 42)
    split.set("seed", str(seed), "SkillOpt's own split differs: skopt ranks items by hash")


def _ratio(text: str) -> list[Fraction] | None:
    try:
        parts = [Fraction(p.strip()) for p in text.split(":")]
    except (ValueError, ZeroDivisionError):
        return None
    if len(parts) != 3 or any(p < 0 for p in parts) or sum(parts) == 0:
        return None
    return parts


def _limits(cfg: Config, block: Block) -> None:
    valid = cfg.integer("evaluation.sel_env_num", 0)
    test = cfg.integer("evaluation.test_env_num", 0)
    if not valid and not test:
        return
    limit = block.child("limit")
    note = "SkillOpt takes the first N items; skopt the first N in its split order"
    if valid:
        limit.set("valid", str(valid), note)
    if test:
        limit.set("test", str(test), "" if valid else note)
