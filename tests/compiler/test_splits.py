"""Splitting an env's items (compiler/dataset.split_items, compiler/splits.load_splits): the
plain hash-ranked split, and the split stratified by a field."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from skopt.compiler.compile import compile_recipe
from skopt.compiler.dataset import Item, rank, split_items
from skopt.compiler.splits import load_splits

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
PARTS = {"train": 0.6, "valid": 0.2, "test": 0.2}


def items(strata: dict[str, int]) -> list[Item]:
    return [
        Item(f"{name}-{n}", f"task {name} {n}", ("a",), meta={"stratum": name})
        for name, count in strata.items()
        for n in range(count)
    ]


def kinds(part: list[Item]) -> Counter[object]:
    return Counter(item.meta["stratum"] for item in part)


def test_the_plain_split_ranks_items_by_the_hash_of_seed_and_id() -> None:
    every = items({"a": 30, "b": 20, "c": 10})
    parts = split_items(every, PARTS, seed=7)
    ordered = sorted(every, key=lambda i: rank(7, i.id))
    assert parts["train"] + parts["valid"] + parts["test"] == ordered
    assert [len(parts[s]) for s in ("train", "valid", "test")] == [36, 12, 12]


def test_a_stratified_split_takes_its_share_of_every_stratum() -> None:
    every = items({"a": 30, "b": 20, "c": 10})
    for seed in range(20):
        parts = split_items(every, PARTS, seed, stratified=True)
        assert [len(parts[s]) for s in ("train", "valid", "test")] == [36, 12, 12]
        assert kinds(parts["train"]) == {"a": 18, "b": 12, "c": 6}
        assert kinds(parts["valid"]) == {"a": 6, "b": 4, "c": 2}
        assert kinds(parts["test"]) == {"a": 6, "b": 4, "c": 2}


def test_every_prefix_of_a_stratified_split_keeps_the_shares() -> None:
    """What `limit { }` keeps is a prefix: each stratum's count stays within one item of its
    share of the prefix (a plain split's prefixes stray further on some seed)."""
    every = items({"a": 30, "b": 20, "c": 10})
    share = {"a": 0.5, "b": 1 / 3, "c": 1 / 6}

    def worst(stratified: bool) -> float:
        out = 0.0
        for seed in range(20):
            train = split_items(every, PARTS, seed, stratified)["train"]
            for m in range(1, len(train) + 1):
                counts = kinds(train[:m])
                out = max(out, *(abs(counts[k] - m * s) for k, s in share.items()))
        return out

    assert worst(stratified=True) <= 1.0
    assert worst(stratified=False) > 3.0


def test_a_stratified_split_does_not_depend_on_the_files_order() -> None:
    every = items({"a": 9, "b": 6})
    forward = split_items(every, PARTS, 3, stratified=True)
    backward = split_items(every[::-1], PARTS, 3, stratified=True)
    assert forward == backward


def test_tickets_gate_and_test_see_the_house_rules_in_their_share() -> None:
    """The shipped tickets recipe stratifies by the generator's kind: 84 of its 180 tickets fall
    under a house rule, and so do about 47% of the valid and the (limited) test split."""
    plan = compile_recipe(str(RECIPES / "tickets.skopt")).plan
    assert plan is not None
    splits = load_splits(plan.envs[0])
    house = {'"legal"', '"enterprise"', '"damaged"', '"invoice_details"'}
    for part, size in ((splits.valid, 36), (splits.test, 48), (splits.train, 20)):
        assert len(part) == size
        under_rules = sum(item.meta["stratum"] in house for item in part)
        assert abs(under_rules - size * 84 / 180) <= 1.5
        assert len(kinds(part)) == 8
