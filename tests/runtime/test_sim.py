"""The simulator (SPEC §5.6) on real rendered prompts: the target follows exactly the rules the
skill states, the optimizer answers every template with the JSON it asks for, the harmful share
is fixed and about one in four, nothing is random, nothing raises; and the label noise of
synthetic items."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skopt.compiler import synthetic
from skopt.compiler.dataset import Item
from skopt.compiler.tokens import PER_MESSAGE, PER_REPLY
from skopt.prompts import render
from skopt.runtime.backends import Backend, backend_for, params_of
from skopt.runtime.backends.sim import GENERIC_ADVICE, SimBackend, harmful, reply
from skopt.runtime.request import Completion, Message, Request
from tests.runtime.conftest import settings as model_settings

RULES = synthetic.rules(8, seed=1)
ITEMS = synthetic.items(8, 200, seed=1)
MEMORY = {"meta_skill": "", "step_buffer": ""}
ANSWER = re.compile(r"<answer>(.*)</answer>")


def target(skill: str, item: Item, answer_format: str = "tag") -> str:
    user = render("rollout_user.j2", input=item.input, context=None, answer_format=answer_format)
    request = Request("sim", (Message("system", skill), Message("user", user)))
    return reply(request)


def answer_of(output: str) -> str:
    found = ANSWER.fullmatch(output)
    assert found, output
    return found.group(1)


def optimizer(template: str, evidence: object, **values: object) -> dict[str, object]:
    """The simulator's reply to a rendered template, parsed; it must be a JSON object."""
    prompt = render(template, None, evidence=json.dumps(evidence, indent=1), **values)
    value = json.loads(reply(Request("sim", (Message("user", prompt),), "optimizer")))
    assert isinstance(value, dict)
    return value


def trajectory(
    item: Item, score: float, output: str = "<answer>UNKNOWN</answer>"
) -> dict[str, object]:
    return {"input": item.input, "output": output, "expected": list(item.answers), "score": score}


def reflect(
    skill: str, trajectories: list[dict[str, object]], max_edits: int = 8
) -> list[dict[str, object]]:
    evidence = {"trajectories": trajectories}
    value = optimizer(
        "reflect.j2",
        evidence,
        skill=skill,
        kind="failures",
        task_kind="synthetic",
        max_edits=max_edits,
        **MEMORY,
    )
    edits = value["edits"]
    assert isinstance(edits, list) and all(isinstance(e, dict) for e in edits)
    return edits


def add(content: str, support: int | None = None) -> dict[str, object]:
    edit: dict[str, object] = {"op": "add", "anchor": None, "content": content, "rationale": "r"}
    return edit if support is None else {**edit, "support": support}


def rule_of(item: Item) -> synthetic.Rule:
    index = item.meta["rule"]
    assert isinstance(index, int)
    return RULES[index]


# -- target ---------------------------------------------------------------------------------


@pytest.mark.parametrize("missing", range(len(RULES)))
def test_target_answers_right_exactly_when_the_skill_states_the_rule(missing: int) -> None:
    skill = "# House rules\n\n" + "\n".join(r.text for r in RULES if r.index != missing)
    for item in ITEMS:
        answer = answer_of(target(skill, item))
        if rule_of(item).index == missing:
            assert answer == "UNKNOWN"
        else:
            assert answer == item.answers[0]


def test_the_last_code_stated_for_a_topic_wins() -> None:
    item = ITEMS[0]
    rule, wrong = rule_of(item), f"For {rule_of(item).topic}, answer with the code ZZZ11."
    assert answer_of(target(f"{rule.text}\n{wrong}", item)) == "ZZZ11"
    assert answer_of(target(f"{wrong}\n{rule.text}", item)) == rule.code
    assert answer_of(target(f"{wrong} Be brief. {rule.text} Be kind.", item)) == rule.code


def test_target_without_a_skill_or_a_synthetic_case() -> None:
    assert target("", ITEMS[0]) == "<answer>UNKNOWN</answer>"
    other = Item("q", "What is the capital of France?", ("Paris",))
    assert target("\n".join(r.text for r in RULES), other) == "<answer>I do not know</answer>"


def test_target_follows_the_last_line_format() -> None:
    item = ITEMS[0]
    assert target(rule_of(item).text, item, "last_line") == rule_of(item).code


# -- optimizer ------------------------------------------------------------------------------


def test_reflect_proposes_the_rules_of_failed_cases_deduplicated_and_bounded() -> None:
    failures = [trajectory(item, 0.0) for item in ITEMS[:12]]
    expected = list(dict.fromkeys(rule_of(item).text for item in ITEMS[:12]))
    assert len(expected) > 3
    skills = (f"A skill, version {n}." for n in range(100))
    skill = next(s for s in skills if not harmful(_reflect_prompt(s, failures, 3)))
    edits = reflect(skill, failures, max_edits=3)
    proposed = [(e["op"], e["anchor"], e["content"]) for e in edits]
    assert proposed == [("add", None, text) for text in expected[:3]]
    assert all(e["rationale"] for e in edits)


def test_reflect_on_successes_proposes_nothing() -> None:
    successes = [trajectory(item, 1.0, f"<answer>{item.answers[0]}</answer>") for item in ITEMS]
    for n in range(20):
        assert reflect(f"skill {n}", successes[n : n + 8]) == []


def test_reflect_replaces_a_sentence_that_states_the_wrong_code() -> None:
    item = ITEMS[0]
    rule = rule_of(item)
    wrong = f"For {rule.topic}, answer with the code ZZZ11."
    skills = (f"{wrong}\n\nVersion {n}." for n in range(100))
    skill = next(s for s in skills if not harmful(_reflect_prompt(s, [trajectory(item, 0.0)], 8)))
    [edit] = reflect(skill, [trajectory(item, 0.0)])
    assert isinstance(edit, dict)
    assert (edit["op"], edit["anchor"], edit["content"]) == ("replace", wrong, rule.text)


def test_harmful_reflections_swap_one_edit_for_generic_advice_or_a_wrong_code() -> None:
    stated = "\n".join(r.text for r in RULES[:4])
    failures = [trajectory(item, 0.0) for item in ITEMS if rule_of(item).index >= 4][:8]
    kinds = set()
    for n in range(200):
        skill = f"{stated}\n\nVersion {n}."
        if not harmful(_reflect_prompt(skill, failures, 8)):
            continue
        edits = reflect(skill, failures)
        *rules, odd = edits
        assert isinstance(odd, dict)
        assert all(isinstance(e, dict) and e["content"] in [r.text for r in RULES] for e in rules)
        content = odd["content"]
        assert isinstance(content, str) and content not in [r.text for r in RULES]
        if content in GENERIC_ADVICE:
            kinds.add("generic")
        else:
            topic = re.fullmatch(r"For (.+), answer with the code \w+\.", content)
            assert topic and topic.group(1) in [r.topic for r in RULES[:4]]  # breaks a kept rule
            kinds.add("wrong code")
    assert kinds == {"generic", "wrong code"}


def test_the_harmful_share_is_fixed_and_about_one_in_four() -> None:
    prompts = [
        _reflect_prompt(f"skill {n}", [trajectory(ITEMS[n % len(ITEMS)], 0.0)], 4)
        for n in range(2000)
    ]
    marks = [harmful(p) for p in prompts]
    assert marks == [harmful(p) for p in prompts]
    assert 0.2 <= sum(marks) / len(marks) <= 0.3  # 1 in 4, within 5 standard deviations


def test_merge_unions_failures_first_with_support_summed() -> None:
    a, b, c = (RULES[i].text for i in range(3))
    evidence = {
        "patches": [
            {"source": "successes", "edits": [add(c), add(a, 2)]},
            {"source": "failures", "edits": [add(a), add(b, 3)]},
            {"source": "failures", "edits": [add(b)]},
        ]
    }
    value = optimizer("merge.j2", evidence, skill="s", **MEMORY)
    edits = value["edits"]
    assert isinstance(edits, list)
    assert [(e["content"], e["support"]) for e in edits] == [(a, 3), (b, 4), (c, 1)]
    assert all(e["op"] == "add" and e["rationale"] == "r" for e in edits)


def test_select_keeps_the_most_supported_ties_to_the_lower_index() -> None:
    supports = [1, 3, 2, 3, 1, 2]
    evidence = {"edits": [{"index": i, **add(RULES[i].text, s)} for i, s in enumerate(supports)]}
    value = optimizer("select.j2", evidence, skill="s", lr=4, **MEMORY)
    assert value == {"selected": [1, 3, 2, 5]}


@pytest.mark.parametrize(("available", "lr"), [(1, 1), (3, 3), (7, 3)])
def test_learning_rate_is_at_most_three(available: int, lr: int) -> None:
    evidence = {"edits": [{"index": i, **add(RULES[i].text, 1)} for i in range(available)]}
    value = optimizer("learning_rate.j2", evidence, skill="s", available=available, **MEMORY)
    assert value == {"lr": lr}


def test_rewrite_applies_the_edits_outside_protected_regions() -> None:
    guard = "<!-- skopt:slow-update -->\nBe careful.\n<!-- /skopt:slow-update -->"
    skill = f"# Skill\n\nBe careful.\n\nOld line.\n\n{guard}"
    edits = [
        add(RULES[0].text),
        {"op": "replace", "anchor": "Old line.", "content": RULES[1].text},
        {"op": "delete", "anchor": "# Skill"},
        {"op": "replace", "anchor": "Not there.", "content": "x"},
        {"op": "delete", "anchor": "<!-- skopt:slow-update -->"},
    ]
    value = optimizer("rewrite.j2", {"edits": edits}, skill=skill)
    assert value == {"skill": f"\n\nBe careful.\n\n{RULES[1].text}\n\n{guard}\n\n{RULES[0].text}"}


def test_reflect_full_appends_the_proposed_rules() -> None:
    failures = [trajectory(item, 0.0) for item in ITEMS[:6]]
    skills = (f"# Skill {n}" for n in range(100))
    skill = next(s for s in skills if not harmful(_prompt("reflect_full.j2", s, failures)))
    value = optimizer(
        "reflect_full.j2", {"trajectories": failures}, skill=skill, kind="failures", **MEMORY
    )
    texts = dict.fromkeys(rule_of(item).text for item in ITEMS[:6])
    assert value == {"skill": "\n\n".join([skill, *texts])}


def test_merge_full_adds_the_rules_the_first_candidate_lacks() -> None:
    first = f"# A\n\n{RULES[0].text}"
    second = f"# B\n\n{RULES[1].text} {RULES[0].text}\n\nBe brief."
    value = optimizer("merge_full.j2", {"candidates": [first, second]}, skill="s")
    assert value == {"skill": f"{first}\n\n{RULES[1].text}"}


def test_slow_update_meta_skill_and_an_unknown_task() -> None:
    slow = optimizer("slow_update.j2", {"pairs": []}, skill="s")
    meta = optimizer("meta_skill.j2", {"steps": []}, meta_skill="")
    assert isinstance(slow["guidance"], str) and slow["guidance"].startswith("- ")
    assert isinstance(meta["meta_skill"], str) and meta["meta_skill"]
    unknown = Request("sim", (Message("user", "<task>dance</task>\nDance."),))
    assert json.loads(reply(unknown)) == {"error": "unknown task"}


def test_the_simulated_pair_learns_every_rule() -> None:
    """Rollout, reflect on the failures, rewrite: a few rounds reach every noise-free item."""
    skill = "# House answers"
    for _ in range(6):
        failures = [
            trajectory(item, 0.0, output)
            for item in ITEMS
            if answer_of(output := target(skill, item)) != item.answers[0]
        ]
        for start in range(0, len(failures), 8):
            edits = reflect(skill, failures[start : start + 8], max_edits=4)
            value = optimizer("rewrite.j2", {"edits": edits}, skill=skill)
            candidate = value["skill"]
            assert isinstance(candidate, str)
            if _solved(candidate) > _solved(skill):  # the gate
                skill = candidate
    assert _solved(skill) == len(ITEMS)


# -- the backend ----------------------------------------------------------------------------


def test_backend_for_sim_completes_deterministically() -> None:
    model = model_settings("sim", None, model=None, api_key_env=None, price=None)
    request = Request(
        "sim", (Message("system", RULES[0].text), Message("user", "x" * 10)), "target"
    )

    async def go() -> tuple[Completion, Completion]:
        backend: Backend = backend_for(model)
        try:
            assert isinstance(backend, SimBackend)
            first = await backend.complete(request, params_of(model))
            return first, await backend.complete(request, params_of(model))
        finally:
            await backend.aclose()

    first, second = asyncio.run(go())
    assert first == second
    # ceil(characters / 4) of each message, plus the chat overhead the plan counts too
    tokens = -(-len(RULES[0].text) // 4) + 3 + 2 * PER_MESSAGE + PER_REPLY
    assert first == Completion("<answer>I do not know</answer>", tokens, 8, "stop", 0.0)


@settings(max_examples=200, deadline=None)
@given(
    task=st.sampled_from(["", "<task>reflect</task>", "<task>merge</task>", "<task>select</task>"]),
    skill=st.text(),
    body=st.text(),
    evidence=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
        max_leaves=12,
    ),
)
def test_no_request_raises(task: str, skill: str, body: str, evidence: object) -> None:
    prompt = f"{task}\nPropose at most 3 edits. only 2 may be applied. At most 9.\n<skill>\n"
    prompt += f"{skill}\n</skill>\n<evidence>\n{json.dumps(evidence)}\n</evidence>\n{body}"
    text = reply(Request("sim", (Message("system", skill), Message("user", prompt))))
    assert text == reply(Request("sim", (Message("system", skill), Message("user", prompt))))
    if task:
        assert isinstance(json.loads(text), dict)


def test_junk_is_answered_quickly() -> None:
    junk = "For For, " * 100_000 + "<evidence>" + "[" * 50_000 + "<skill>\n\udcff"
    for head in ("", "<task>reflect</task>"):
        assert reply(Request("sim", (Message("user", head + junk),)))


# -- label noise of synthetic items ---------------------------------------------------------


@pytest.mark.parametrize("noise", [0.0, 0.05, 0.2, 0.5, 1.0])
def test_a_fixed_share_of_items_has_a_wrong_gold_code(noise: float) -> None:
    clean = synthetic.items(8, 400, seed=3)
    noisy = synthetic.items(8, 400, seed=3, noise=noise)
    assert noisy == synthetic.items(8, 400, seed=3, noise=noise)
    assert [i.input for i in noisy] == [i.input for i in clean]
    wrong = [n for c, n in zip(clean, noisy, strict=True) if n.answers != c.answers]
    assert len(wrong) == round(noise * 400)
    assert all(n.meta["noisy"] for n in wrong)
    assert sum(bool(n.meta["noisy"]) for n in noisy) == len(wrong)
    codes = {r.code for r in synthetic.rules(8, seed=3)}
    assert all(re.fullmatch(r"[A-Z]{3}\d{2}", n.answers[0]) for n in wrong)
    assert not any(n.answers[0] in codes for n in wrong)


def test_noisy_items_are_not_learnable() -> None:
    items = synthetic.items(8, 200, seed=1, noise=0.1)
    skill = "\n".join(r.text for r in RULES)
    right = [answer_of(target(skill, item)) == item.answers[0] for item in items]
    assert right == [not item.meta["noisy"] for item in items]


def _prompt(template: str, skill: str, trajectories: list[dict[str, object]]) -> str:
    evidence = json.dumps({"trajectories": trajectories}, indent=1)
    return render(template, None, evidence=evidence, skill=skill, kind="failures", **MEMORY)


def _reflect_prompt(skill: str, trajectories: list[dict[str, object]], max_edits: int) -> str:
    evidence = json.dumps({"trajectories": trajectories}, indent=1)
    return render(
        "reflect.j2",
        None,
        evidence=evidence,
        skill=skill,
        kind="failures",
        task_kind="synthetic",
        max_edits=max_edits,
        **MEMORY,
    )


def _solved(skill: str) -> int:
    return sum(answer_of(target(skill, item)) == item.answers[0] for item in ITEMS)
