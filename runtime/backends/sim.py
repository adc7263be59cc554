"""`provider = sim`: a deterministic stand-in for the target and the optimizer (SPEC §5.6).

For tests and for trying skopt with no model. No I/O and no randomness: every reply is a
function of the request's messages alone, and no request, however malformed, raises.

Target (no `<task>` tag in the messages): the system message is the skill. A synthetic case
("Case N concerns TOPIC. Give the house answer.") is answered with the code of the skill's last
sentence "For TOPIC, answer with the code CODE." (so a later, wrong sentence breaks a rule), or
UNKNOWN when the skill states none; a replayed sleep task is answered by `sim_sleep`; any other
input gets "I do not know".

Optimizer (`<task>NAME</task>`): reads the JSON between <evidence> tags and replies with the JSON
its template asks for. It proposes a failed case's rule, and on about one reflection in four
(fixed by a hash of the prompt) one of its edits is harmful or irrelevant instead, so that the
gate has real work. The sleep templates' tasks (`sleep_*`) are answered by `sim_sleep`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from skopt.compiler.plan import ModelSettings
from skopt.compiler.synthetic import CODE_LETTERS
from skopt.compiler.tokens import PER_MESSAGE, PER_REPLY
from skopt.runtime.backends import sim_sleep
from skopt.runtime.request import Completion, Params, Request

# Bounded repeats keep every pattern linear on a megabyte of junk; topics are short phrases.
RULE = re.compile(r"\bFor ([^,.\n]{1,80}), answer with the code ([A-Za-z0-9_-]{1,40})\.")
CASE = re.compile(r"\bCase \d{1,9} concerns ([^.\n]{1,80})\. Give the house answer\.")
TASK = re.compile(r"<task>(\w{1,40})</task>")
EVIDENCE = re.compile(r"<evidence>(.*?)</evidence>", re.DOTALL)
MAX_EDITS = re.compile(r"Propose at most (\d{1,6}) edits")
ONLY = re.compile(r"only (\d{1,6}) may be applied")
AT_MOST = re.compile(r"At most (\d{1,6})")
PROTECTED = re.compile(r"<!--\s*skopt:([\w-]+)\s*-->.*?<!--\s*/skopt:\1\s*-->", re.DOTALL)
LAST_LINE = "alone on the last line"

HARMFUL_ONE_IN = 4
MAX_LR = 3
GENERIC_ADVICE = (
    "Answer as briefly as possible.",
    "Think step by step before you answer.",
    "Prefer the most common code when a case is unclear.",
)
GUIDANCE = "- Keep the house code stated for each topic.\n- Do not add generic advice."
META_SKILL = "Edits that state a topic's house code help; generic advice does not."

Json = dict[str, object]


class SimBackend:
    def __init__(self, settings: ModelSettings | None = None) -> None:
        self.settings = settings

    async def complete(self, request: Request, params: Params) -> Completion:
        latency = self.settings.latency_s if self.settings else 0.0
        if latency:
            await asyncio.sleep(latency)
        text = reply(request)
        return Completion(
            text=text,
            # counted as the plan estimates a chat: ~4 characters a token, plus chat overhead
            input_tokens=sum(_tokens(m.content) + PER_MESSAGE for m in request.messages)
            + PER_REPLY,
            output_tokens=_tokens(text),
            finish_reason="stop",
            latency_s=latency,
        )

    async def aclose(self) -> None:
        return None


def reply(request: Request) -> str:
    """The simulated model's answer to `request`."""
    prompt = "\n\n".join(m.content for m in request.messages)
    task = TASK.search(prompt)
    if task is None:
        users = [m.content for m in request.conversation if m.role == "user"]
        question = users[-1] if users else ""
        if sim_sleep.is_replay(question):
            return sim_sleep.replay(request.system, question)
        return target_reply(request.system, question)
    night = SLEEP_TASKS.get(task.group(1))
    if night is not None:
        return json.dumps(night(prompt), ensure_ascii=False)
    handler = TASKS.get(task.group(1))
    found: Json = handler(read_prompt(prompt)) if handler else {"error": "unknown task"}
    return json.dumps(found, ensure_ascii=False)


# -- target ---------------------------------------------------------------------------------


def target_reply(skill: str, question: str) -> str:
    case = CASE.search(question)
    answer = stated_codes(skill).get(_topic(case.group(1)), "UNKNOWN") if case else None
    if answer is None:
        answer = "I do not know"
    return answer if LAST_LINE in question else f"<answer>{answer}</answer>"


def stated_codes(skill: str) -> dict[str, str]:
    """Topic → code for every rule sentence in `skill`; a later sentence wins."""
    return {_topic(m.group(1)): m.group(2) for m in RULE.finditer(skill)}


def _topic(text: str) -> str:
    return " ".join(text.split())


def rule_text(topic: str, code: str) -> str:
    return f"For {topic}, answer with the code {code}."


# -- reading an optimizer prompt ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Prompt:
    text: str
    skill: str  # between <skill> tags, as the template wrapped it
    evidence: Json  # the JSON between <evidence> tags; {} when there is none

    def items(self, key: str) -> list[Json]:
        """The evidence's list under `key`, keeping only its objects."""
        return _objects(self.evidence.get(key))

    def number(self, pattern: re.Pattern[str]) -> int | None:
        found = pattern.search(self.text)
        return int(found.group(1)) if found else None


def read_prompt(text: str) -> Prompt:
    start, evidence = len(text), {}
    for match in EVIDENCE.finditer(text):
        try:
            value = json.loads(match.group(1))
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            start, evidence = match.start(), value
            break
    return Prompt(text, _skill(text, start), evidence)


def _skill(text: str, end: int) -> str:
    opened = text.find("<skill>", 0, end)
    closed = text.rfind("</skill>", opened, end) if opened >= 0 else -1
    if closed < 0:
        return ""
    return text[opened + len("<skill>") : closed].removeprefix("\n").removesuffix("\n")


# -- proposing ------------------------------------------------------------------------------


def harmful(prompt: str) -> bool:
    """Whether a reflection on this prompt carries one harmful or irrelevant edit."""
    return _hash(prompt) % HARMFUL_ONE_IN == 0


def proposals(p: Prompt, limit: int | None = None) -> list[Json]:
    edits = [_rule_edit(p.skill, topic, code) for topic, code in _failed_rules(p)][:limit]
    if edits and harmful(p.text):
        edits[-1] = _harmful_edit(p)
    return edits


def _failed_rules(p: Prompt) -> list[tuple[str, str]]:
    """(topic, expected code) of each failed synthetic case, first occurrence first."""
    found: dict[tuple[str, str], None] = {}
    for t in p.items("trajectories"):
        score, given, expected = t.get("score"), t.get("input"), t.get("expected")
        if not isinstance(score, int | float) or score >= 1 or not isinstance(given, str):
            continue
        case = CASE.search(given)
        codes = [c for c in expected if isinstance(c, str)] if isinstance(expected, list) else []
        if case and codes and codes[0].strip():
            found.setdefault((_topic(case.group(1)), codes[0].strip()), None)
    return list(found)


def _rule_edit(skill: str, topic: str, code: str) -> Json:
    """Add the rule, or replace the sentence that states another code, if there is one such."""
    content = rule_text(topic, code)
    rationale = f"Failed cases about {topic} expect the house code {code}."
    stated = stated_codes(skill).get(topic)
    wrong = rule_text(topic, stated) if stated and stated != code else None
    if wrong and skill.count(wrong) == 1:
        return {"op": "replace", "anchor": wrong, "content": content, "rationale": rationale}
    return {"op": "add", "anchor": None, "content": content, "rationale": rationale}


def _harmful_edit(p: Prompt) -> Json:
    """Generic advice, or a wrong code for a topic (one the skill states, when it states any)."""
    h = _hash(p.text) // HARMFUL_ONE_IN
    stated = stated_codes(p.skill)
    topics = sorted(stated) or sorted({topic for topic, _ in _failed_rules(p)})
    if h % 2 == 0 or not topics:
        advice = GENERIC_ADVICE[(h // 2) % len(GENERIC_ADVICE)]
        return {"op": "add", "anchor": None, "content": advice, "rationale": "Clearer answers."}
    topic = topics[(h // 2) % len(topics)]
    code = _other_code(p.text, {stated.get(topic, ""), *(c for t, c in _failed_rules(p))})
    rationale = f"Cases about {topic} expect the house code {code}."
    return {"op": "add", "anchor": None, "content": rule_text(topic, code), "rationale": rationale}


def _other_code(seed: str, avoid: set[str]) -> str:
    for attempt in range(len(avoid) + 1):
        h = _hash(f"{seed}\0{attempt}")
        letters = "".join(CODE_LETTERS[(h >> (8 * i)) % len(CODE_LETTERS)] for i in range(3))
        code = f"{letters}{10 + (h >> 24) % 89}"
        if code not in avoid:
            return code
    return "ZZZ99"  # unreachable: len(avoid) + 1 distinct attempts cannot all be avoided


# -- the tasks ------------------------------------------------------------------------------


def _reflect(p: Prompt) -> Json:
    return {"edits": proposals(p, p.number(MAX_EDITS))}


def _reflect_full(p: Prompt) -> Json:
    return {"skill": rewrite(p.skill, proposals(p))}


def _merge(p: Prompt) -> Json:
    patches = sorted(p.items("patches"), key=lambda patch: patch.get("source") != "failures")
    merged: dict[str, Json] = {}
    support: dict[str, int] = {}
    for edit in (e for patch in patches for e in _objects(patch.get("edits"))):
        key = _edit_key(edit)
        merged.setdefault(key, edit)
        support[key] = support.get(key, 0) + _support(edit)
    return {"edits": [{**edit, "support": support[key]} for key, edit in merged.items()]}


def _select(p: Prompt) -> Json:
    edits = p.items("edits")
    order = sorted(range(len(edits)), key=lambda i: (-_support(edits[i]), _index(edits[i], i)))
    return {"selected": [_index(edits[i], i) for i in order][: p.number(ONLY)]}


def _learning_rate(p: Prompt) -> Json:
    available = p.number(AT_MOST)
    return {"lr": min(len(p.items("edits")) if available is None else available, MAX_LR)}


def _rewrite(p: Prompt) -> Json:
    return {"skill": rewrite(p.skill, p.items("edits"))}


def _merge_full(p: Prompt) -> Json:
    found = p.evidence.get("candidates")
    candidates = [c for c in found if isinstance(c, str)] if isinstance(found, list) else []
    if not candidates:
        return {"skill": p.skill}
    skill = candidates[0]
    for other in candidates[1:]:
        for match in RULE.finditer(other):
            if match.group(0) not in skill:
                skill = _append(skill, match.group(0))
    return {"skill": skill}


TASKS: dict[str, Callable[[Prompt], Json]] = {
    "reflect": _reflect,
    "reflect_full": _reflect_full,
    "merge": _merge,
    "select": _select,
    "learning_rate": _learning_rate,
    "rewrite": _rewrite,
    "merge_full": _merge_full,
    "slow_update": lambda p: {"guidance": GUIDANCE},
    "meta_skill": lambda p: {"meta_skill": META_SKILL},
}
SLEEP_TASKS: dict[str, Callable[[str], Json]] = {
    "sleep_mine": sim_sleep.mine,
    "sleep_judge": sim_sleep.judge,
    "sleep_reflect": sim_sleep.reflect,
}


# -- edits, as the simulated optimizer applies them when it rewrites ------------------------


def rewrite(skill: str, edits: list[Json]) -> str:
    """`skill` with each add appended as a paragraph, and each replace or delete applied where
    its anchor is found outside the protected regions."""
    for edit in edits:
        op, anchor, content = edit.get("op"), edit.get("anchor"), edit.get("content")
        content = content if isinstance(content, str) else ""
        if op == "add" and content.strip():
            skill = _append(skill, content)
        elif op in ("replace", "delete") and isinstance(anchor, str) and anchor:
            at = _find(skill, anchor)
            if at >= 0:
                new = content if op == "replace" else ""
                skill = skill[:at] + new + skill[at + len(anchor) :]
    return skill


def _append(skill: str, paragraph: str) -> str:
    return f"{skill.rstrip()}\n\n{paragraph.strip()}" if skill.strip() else paragraph.strip()


def _find(skill: str, anchor: str) -> int:
    at = skill.find(anchor)
    if at < 0 or any(
        m.start() < at + len(anchor) and at < m.end() for m in PROTECTED.finditer(skill)
    ):
        return -1
    return at


def _objects(value: object) -> list[Json]:
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def _edit_key(edit: Json) -> str:
    content = edit.get("content")
    if isinstance(content, str) and content.strip():
        return content.strip()
    return f"\0{edit.get('op')}\0{edit.get('anchor')}"  # deletes: one per op and anchor


def _support(edit: Json) -> int:
    found = edit.get("support")
    return found if isinstance(found, int) and not isinstance(found, bool) and found > 0 else 1


def _index(edit: Json, position: int) -> int:
    """The index the evidence gives the edit, else its position in the list."""
    found = edit.get("index")
    return found if isinstance(found, int) and not isinstance(found, bool) else position


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8])


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)
