"""A step's candidates after the first (runtime/tries.py): what each is made of, the order the
engine scores them in, the shared confidence, the plan's ranges and resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skopt.compiler import synthetic
from skopt.compiler.compile import compile_recipe
from skopt.compiler.dataset import Item
from skopt.compiler.gate_bound import luck
from skopt.compiler.plan import Plan
from skopt.compiler.splits import load_splits
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.edits import Edit
from skopt.runtime.events import CandidateBuilt, EditRecord, GateDecided
from skopt.runtime.exits import Exit
from skopt.runtime.journal import read_journal
from skopt.runtime.run import resume, start
from skopt.runtime.scoring import Trajectory
from skopt.runtime.tries import (
    NEAR_MISSES,
    NearMiss,
    counterweights,
    demonstrations,
    kept,
    left_out,
    shared_by,
    with_near_misses,
)
from tests.conftest import RECIPES
from tests.runtime.test_run import StopAfter, assert_calls_inside, results
from tests.runtime.test_skill_bound import assert_inside

ORDER = ["selected", "near_miss", "next", "demonstrations"]


def failed(item_id: str, text: str, *answers: str) -> Trajectory:
    return Trajectory(Item(item_id, text, answers), 0, "wrong", "wrong", 0.0, 0.0)


def record(content: str) -> EditRecord:
    return EditRecord(op="add", anchor=None, content=content, rationale="", support=1)


def test_demonstrations_quote_failed_items_with_their_expected_answer() -> None:
    failures = [
        failed("a", "Write  this date:\n13 March 2015", "2015-03-13", "13/03/2015"),
        failed("b", "Write this date: 13 March 2015", "2015-03-13"),  # the same input, spaced
        failed("c", "x" * 301, "long"),  # too long to quote
        failed("d", "No answer"),
        failed("e", "Route: I was charged twice", "billing"),
        failed("f", "Route: my parcel is late", "logistics"),
    ]
    edits = demonstrations(failures, 2)
    assert [e.content for e in edits] == [
        'Example: "Write this date: 13 March 2015" -> 2015-03-13',
        'Example: "Route: I was charged twice" -> billing',
    ]
    assert all(e.op == "add" and e.anchor is None for e in edits)
    assert demonstrations(failures, 0) == []


def test_demonstrations_skip_an_input_the_skill_quotes() -> None:
    failures = [
        failed("a", "I was charged twice", "billing"),
        failed("b", "Parcel late", "logistics"),
    ]
    skill = 'Route tickets.\n\nExample: "I was charged twice" -> billing\n'
    assert [e.content for e in demonstrations(failures, 2, skill)] == [
        'Example: "Parcel late" -> logistics'
    ]


LABELS = ["billing", "tech", "accounts", "logistics"]
TRAIN = [
    Item("t1", "My lawyer will call about the charge", ("billing",)),
    Item("t2", "I was charged twice", ("billing",)),
    Item("t3", "x" * 301, ("tech",)),  # too long to quote
    Item("t4", "The app crashes", ("Tech",)),  # labels compare as the env compares them
    Item("t5", "Parcel late", ("logistics",)),
]


def test_counterweights_give_each_label_the_examples_and_skill_leave_out_one_example() -> None:
    shown = demonstrations([failed("t1", "My lawyer will call about the charge", "billing")], 3)
    skill = 'Route tickets.\n\nParcels: "Where is it?" -> LOGISTICS.\n'
    made = counterweights(shown, skill, TRAIN, LABELS)
    # billing is shown, logistics is in the skill, accounts has no train item
    assert [e.content for e in made] == ['Example: "The app crashes" -> Tech']
    assert made[0].rationale == "a counterweight: an example of tech"
    assert counterweights([], "", TRAIN, LABELS) == []  # nothing shown: nothing to balance
    assert counterweights(shown, "", TRAIN, []) == []  # no declared labels


def test_near_misses_join_the_selected_edits_newest_first_once_each() -> None:
    selected = [record("rule A")]
    pool = [
        NearMiss(step=1, edits=[record("rule B"), record("rule A")], fixed=["x"], broken=[]),
        NearMiss(step=2, edits=[record("rule C")], fixed=["y"], broken=[]),
    ]
    assert [e.content for e in with_near_misses(selected, pool)] == ["rule A", "rule C", "rule B"]
    full = pool
    for step in range(3, 3 + NEAR_MISSES):
        full = kept(full, NearMiss(step=step, edits=[record(f"r{step}")], fixed=[], broken=[]))
    assert [m.step for m in full] == list(range(3, 3 + NEAR_MISSES))  # the newest are kept
    again = kept(
        pool, NearMiss(step=5, edits=[record("rule B"), record("rule A")], fixed=[], broken=[])
    )
    assert [m.step for m in again] == [2, 5]  # the same edits again: one entry, the newest


def test_a_step_shares_the_confidence_among_the_new_candidates_it_can_make() -> None:
    # the same skill twice, the current skill and no skill count nothing more
    assert shared_by("skill", ["a", "a", "skill", None], merges=False, tries=3) == 1
    assert shared_by("skill", ["a", "a", "skill", None], merges=True, tries=3) == 2
    assert shared_by("skill", ["a", "b", "c"], merges=True, tries=3) == 3  # tries at most
    assert shared_by("skill", [None], merges=False, tries=3) == 1


def test_left_out_are_the_unselected_edits_most_supported_first() -> None:
    a, b, c, d = (Edit("add", n, support=s) for n, s in (("a", 1), ("b", 3), ("c", 2), ("d", 5)))
    assert left_out([a, b, c, d], [d], 2) == [b, c]
    assert left_out([a, d], [a, d], 3) == []


# -- on the simulator --------------------------------------------------------------------------

# A strict gate (99%) refuses many candidates that fix more than they break; at this seed one
# step's near miss, merged with an earlier one, is then believed.
STRICT = ("train.seed=4", "train.gate.confidence=0.99", "train.demonstrations=on")


def strict_plan() -> Plan:
    result = compile_recipe(str(RECIPES / "demo.skopt"), list(STRICT))
    assert result.plan is not None, result.diagnostics
    return result.plan


@pytest.fixture(scope="module")
def strict_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tries") / "run"
    assert start(strict_plan(), RunFolder(folder)).exit is Exit.OK
    return folder


def missed(g: GateDecided) -> bool:
    """Whether the gate refused a candidate that fixed more items than it broke."""
    fixed = sum(s.after > s.before for s in g.items.values())
    broken = sum(s.after < s.before for s in g.items.values())
    return not g.decision.accepted and fixed > broken


def test_steps_score_their_candidates_in_order_until_one_is_accepted(strict_run: Path) -> None:
    journal = read_journal(RunFolder(strict_run).events)
    tries: dict[int, list[GateDecided]] = {}
    for g in journal.of(GateDecided):
        tries.setdefault(g.step, []).append(g)
    assert any(len(t) > 1 for t in tries.values())
    for step, decided in tries.items():
        sources = [g.decision.source for g in decided]
        assert len(sources) <= 3
        others = [s for s in sources if s != "near_miss"]
        assert others == sorted(others, key=ORDER.index)  # in order
        assert len(set(sources)) == len(sources)  # each at most once
        if "near_miss" in sources:  # right after the step's first near miss
            merged = sources.index("near_miss")
            assert [missed(g) for g in decided[:merged]] == [False] * (merged - 1) + [True]
        assert not any(g.decision.accepted for g in decided[:-1])  # the first accepted ends it
        folder = strict_run / "steps" / f"{step:04d}"
        saved = json.loads((folder / "record.json").read_text())
        assert saved["tries"] == [g.decision.model_dump(mode="json") for g in decided]
        assert saved["decision"] == saved["tries"][-1]
    # every try is tested at 1 - 0.01 / n, n the candidates its step can score (3 at most)
    shared = [g.decision.shared_by or 0 for g in journal.of(GateDecided)]
    assert set(shared) == {2, 3}  # some step could score only two
    for g in journal.of(GateDecided):
        n = g.decision.shared_by or 0
        fixed = sum(s.after > s.before for s in g.items.values())
        broken = sum(s.after < s.before for s in g.items.values())
        assert len(tries[g.step]) <= n
        if g.decision.accepted:
            assert luck(fixed, broken) <= 0.01 / n
        elif (g.decision.after or 0) > (g.decision.before or 0):
            assert luck(fixed, broken) > 0.01 / n


def test_a_near_miss_merged_with_an_earlier_one_is_accepted(strict_run: Path) -> None:
    journal = read_journal(RunFolder(strict_run).events)
    (won,) = [g for g in journal.of(GateDecided) if g.decision.accepted and g.step > 1]
    assert won.decision.source == "near_miss"
    built = [c for c in journal.of(CandidateBuilt) if c.step == won.step]
    first, merged = built[0], built[-1]
    assert (first.source, merged.source) == ("selected", "near_miss")
    earlier = {
        o.edit.content
        for c in journal.of(CandidateBuilt)
        if c.step < won.step and c.source == "selected"
        for o in c.outcomes
        if o.status == "applied"
    }
    contents = [e.content for e in merged.selected]
    assert contents[: len(first.selected)] == [e.content for e in first.selected]
    assert set(contents[len(first.selected) :]) <= earlier and contents[len(first.selected) :]
    state = json.loads((strict_run / "state.json").read_text())
    assert all(m["step"] > won.step for m in state["near_misses"])  # the merged ones are spent


def test_demonstrations_come_from_the_steps_failed_train_items(strict_run: Path) -> None:
    plan = strict_plan()
    splits = load_splits(plan.envs[0])
    by_id = {i.id: i for i in splits.train}
    held_out = {" ".join(i.input.split()) for i in [*splits.valid, *splits.test]}
    journal = read_journal(RunFolder(strict_run).events)
    shown = [c for c in journal.of(CandidateBuilt) if c.source == "demonstrations"]
    assert shown
    for c in shown:
        rollouts = json.loads(
            (strict_run / "steps" / f"{c.step:04d}" / "rollouts.json").read_text()
        )
        failures = [by_id[r["item"]] for r in rollouts if r["hard"] < 1]
        expected = {f'Example: "{" ".join(i.input.split())}" -> {i.answers[0]}' for i in failures}
        assert 0 < len(c.selected) <= plan.jobs[0].schedule.lr[c.step - 1]
        for e in c.selected:
            assert e.content in expected
            assert not any(text in e.content for text in held_out)


def test_actual_calls_and_tokens_fall_inside_the_plan_with_tries(strict_run: Path) -> None:
    job = strict_plan().jobs[0]
    actual = assert_calls_inside(job, strict_run)
    assert_inside(job, strict_run)  # input tokens too
    assert actual["gate", "target"] > len(read_journal(RunFolder(strict_run).events).steps) * 24


def test_a_run_cut_after_a_near_miss_resumes_to_the_same_skills(
    strict_run: Path, tmp_path: Path
) -> None:
    cut = tmp_path / "cut"
    with pytest.raises(KeyboardInterrupt):
        start(strict_plan(), RunFolder(cut), StopAfter(450))
    assert json.loads((cut / "state.json").read_text())["near_misses"]  # cut with a pool
    assert resume(cut).exit is Exit.OK
    assert results(cut) == results(strict_run)


# -- counterweights in a classify env (the simulated target answers the synthetic cases) ---------

CLASSIFY = """skopt 1
model sim {{
  provider = sim
}}
env codes {{
  kind   = classify
  data   = "codes.jsonl"
  labels = [{labels}]
  split {{ train = 60%, valid = 20%, test = 20%, seed = 42 }}
}}
train {{
  target         = sim
  optimizer      = sim
  skill          = "skill.md"
  epochs         = 1
  batch_size     = 8
  lr             = constant(1)
  demonstrations = on
  seed           = 4
  gate {{ split = valid, confidence = 0.99 }}
}}
"""


def test_demonstrations_in_a_classify_env_carry_counterweights_from_train(tmp_path: Path) -> None:
    cases = synthetic.items(8, 120, seed=1)
    (tmp_path / "codes.jsonl").write_text(
        "".join(json.dumps({"input": i.input, "answer": i.answers[0]}) + "\n" for i in cases)
    )
    labels = sorted({i.answers[0] for i in cases})
    (tmp_path / "skill.md").write_text("# House codes\n")
    recipe = tmp_path / "codes.skopt"
    recipe.write_text(CLASSIFY.format(labels=", ".join(f'"{c}"' for c in labels)))
    result = compile_recipe(str(recipe))
    assert result.plan is not None, result.diagnostics
    folder = tmp_path / "run"
    assert start(result.plan, RunFolder(folder)).exit is Exit.OK
    train = {
        " ".join(i.input.split()): i.answers[0] for i in load_splits(result.plan.envs[0]).train
    }
    built = [c for c in read_journal(RunFolder(folder).events).of(CandidateBuilt)]
    shown = [c for c in built if c.source == "demonstrations"]
    assert shown
    made_rules: list[EditRecord] = []
    for c in shown:
        rules = [e for e in c.selected if e.rationale.startswith("the words that set")]
        examples = [e for e in c.selected if e not in rules]
        failures = [e for e in examples if e.rationale.startswith("a worked example")]
        weights = [e for e in examples if e.rationale.startswith("a counterweight")]
        assert len(failures) == 1 and weights  # lr 1: one failure, and labels it leaves out
        given = [e.content.rsplit(" -> ", 1)[1] for e in examples]
        assert sorted(given) == sorted(set(given))  # each label once
        for e in examples:
            quoted, label = e.content.removeprefix('Example: "').rsplit('" -> ', 1)
            assert train[quoted] == label  # a train item, with its own answer
        made_rules.extend(rules)
        for e in rules:  # before the examples; the phrase is in no train item of another label
            assert c.selected.index(e) < c.selected.index(failures[0])
            phrase, label = e.content.removeprefix('If the input mentions "').split('", answer ')
            holders = {a for quoted, a in train.items() if phrase.lower() in quoted.lower()}
            assert holders == {label.removesuffix(", whatever else it says.")}
    assert made_rules
