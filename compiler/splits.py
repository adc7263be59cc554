"""An env's items, split and limited: what the compiler plans with and the runtime runs on.

This sits beside `dataset` (reading and splitting files) and away from `lower`, so that the
runtime can load its data without importing the compiler's parser.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skopt.compiler import synthetic
from skopt.compiler.dataset import Fields, Item, read_items, split_items
from skopt.compiler.plan import EnvSettings


@dataclass(frozen=True)
class Splits:
    train: list[Item]
    valid: list[Item]
    test: list[Item]

    def get(self, name: str) -> list[Item]:
        return {"train": self.train, "valid": self.valid, "test": self.test}[name]


def load_splits(env: EnvSettings) -> Splits:
    """The env's items, split and limited. Raises DataError with a message for the user."""
    if env.kind == "synthetic":
        args = env.kind_args
        items = synthetic.items(
            int(args["rules"]), int(args["items"]), int(args["seed"]), float(args["noise"])
        )
        parts = split_items(items, _parts(env), env.split.seed if env.split else 42)
    elif env.files:
        fields = _fields(env)
        parts = {name: read_items(Path(path), fields) for name, path in env.files.items()}
    else:
        assert env.data is not None
        fields = _fields(env)
        items = read_items(Path(env.data), fields)
        seed = env.split.seed if env.split else 42
        parts = split_items(items, _parts(env), seed, stratified=fields.stratify is not None)
    limited = {
        name: parts.get(name, [])[: env.limit[name]] if name in env.limit else parts.get(name, [])
        for name in ("train", "valid", "test")
    }
    return Splits(limited["train"], limited["valid"], limited["test"])


def _parts(env: EnvSettings) -> dict[str, float]:
    split = env.split
    return (
        {"train": split.train, "valid": split.valid, "test": split.test}
        if split
        else {"train": 0.6, "valid": 0.2, "test": 0.2}
    )


def _fields(env: EnvSettings) -> Fields:
    f = env.fields
    return Fields(
        input=f.get("input", "input"),
        answer=f.get("answer", "answer"),
        context=f.get("context"),
        id=f.get("id"),
        stratify=env.split.stratify if env.split and not env.files else None,  # files: no split
    )
