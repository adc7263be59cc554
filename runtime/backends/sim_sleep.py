"""The simulator's side of `skopt sleep` (SPEC §5.6, §7): deterministic stand-ins for the miner,
the target replaying a task, the rubric judge and the reflecting optimizer, each reading the
prompt its template (prompts/sleep_*.j2) writes.

The world it simulates: a user's corrections say which tool to use ("no, use uv not pip").
- Miner (`<task>sleep_mine</task>`): one task per session, the session's first prompt as the
  intent, and for each "use X, not Y" the user typed later, the checks "mentions X", "never Y",
  a rubric naming the pair, and the prompt as a correction.
- Target (a replay, marked by the replay template's sentinel): restates the task, and follows
  every "use X, not Y" rule its skill states ("I will use X."); with no such rule it reaches
  for pip, the tool a naive agent uses (and the one the fixtures' users correct).
- Judge (`<task>sleep_judge</task>`): the share of the rubric's "use X, not Y" pairs the answer
  respects (1.0 for a rubric with none).
- Reflect (`<task>sleep_reflect</task>`): for each failure whose note says "use X, not Y", an
  `add` of the rule "Use X, not Y." — at most as many as the prompt allows.
"""

from __future__ import annotations

import json
import re

from skopt.runtime.sleep.tasks import USE_NOT

Json = dict[str, object]
REPLAY = "<!-- skopt-internal: sleep replay -->"
NAIVE_TOOL = "pip"  # what a naive agent reaches for
MAX_EDITS = re.compile(r"Propose at most (\d{1,6}) edits")


def pairs(text: str) -> list[tuple[str, str]]:
    """Every "use X, not Y" in `text`, as (X, Y), first occurrence first."""
    return list(dict.fromkeys((m["good"], m["bad"]) for m in USE_NOT.finditer(text)))


def is_replay(user: str) -> bool:
    return user.startswith(REPLAY)


def replay(skill: str, task: str) -> str:
    """The simulated target's answer to a replayed task."""
    rules = pairs(skill)
    told = [f"I will use {good}." for good, _ in rules] or [f"I will use {NAIVE_TOOL}."]
    return " ".join([f"Plan for: {task.removeprefix(REPLAY).strip()[:200]}", *told])


def mine(prompt: str) -> Json:
    lines = _tagged(prompt, "session").splitlines()
    users = [line.removeprefix("user: ") for line in lines if line.startswith("user: ")]
    if not users:
        return {"tasks": []}
    said = [u for u in users[1:] if pairs(u)]
    found = [pair for u in said for pair in pairs(u)]
    checks = [{"kind": "contains", "value": good} for good, _ in found] + [
        {"kind": "not_regex", "value": rf"\b{re.escape(bad)}\b"} for _, bad in found
    ]
    rubric = "Respects: " + "; ".join(f"use {g}, not {b}" for g, b in found) if found else ""
    task = {"intent": users[0], "context": "", "checks": checks, "reference": "",
            "rubric": rubric or "Does what was asked.", "corrections": said}  # fmt: skip
    return {"tasks": [task]}


def judge(prompt: str) -> Json:
    rubric, answer = _tagged(prompt, "rubric"), _tagged(prompt, "answer")
    wanted = pairs(rubric)
    if not wanted:
        return {"score": 1.0, "note": "nothing specific asked"}
    kept = [g for g, b in wanted if _word(g, answer) and not _word(b, answer)]
    return {"score": len(kept) / len(wanted), "note": f"respects {len(kept)} of {len(wanted)}"}


def reflect(prompt: str) -> Json:
    edits: list[Json] = []
    for line in _tagged(prompt, "failures").splitlines():
        note = _note(line)
        for good, bad in pairs(note):
            rule = f"- Use {good}, not {bad}."
            if all(e["content"] != rule for e in edits):
                edits.append({"op": "add", "anchor": None, "content": rule,
                              "rationale": f"the user corrected {bad} to {good}"})  # fmt: skip
    limit = MAX_EDITS.search(prompt)
    return {"edits": edits[: int(limit.group(1))] if limit else edits}


def _note(line: str) -> str:
    try:
        value = json.loads(line)
    except ValueError:
        return ""
    note = value.get("note") if isinstance(value, dict) else None
    return note if isinstance(note, str) else ""


def _tagged(prompt: str, tag: str) -> str:
    """The text inside the last <tag>…</tag> of the prompt (the template's, not an example's)."""
    start = prompt.rfind(f"<{tag}>")
    end = prompt.find(f"</{tag}>", start)
    return prompt[start + len(tag) + 2 : end].strip("\n") if 0 <= start < end else ""


def _word(word: str, text: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE) is not None
