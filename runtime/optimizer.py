"""The optimizer's calls, one method per purpose: each renders its template, asks for JSON,
and turns the answer into typed values. Unusable answers become "nothing" and are recorded.
A reflection's edits are checked against the skill and its evidence (`edit_checks`); when some
are unusable, the reflection is asked once more with the problems listed, and what is still
unusable is dropped (`checks` keeps both rounds for the journal)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

from skopt.prompts import render
from skopt.runtime.calls import CallLayer
from skopt.runtime.edit_checks import Finding, check, reask_text, usable
from skopt.runtime.edits import Edit
from skopt.runtime.events import OptimizerAnswer
from skopt.runtime.request import Message, Request
from skopt.runtime.scoring import Trajectory
from skopt.runtime.structured import Structured, ask_json

OPS = ("add", "replace", "delete")


@dataclass(frozen=True)
class Memory:
    """What optimizer prompts carry beyond the evidence: meta skill and the step buffer."""

    meta_skill: str = ""
    step_buffer: str = ""


@dataclass
class Record:
    """One optimizer call's outcome (steps/NNNN/optimizer.json, and the journal)."""

    task: str
    usable: bool
    repaired: bool
    reasked: bool
    problem: str
    raw: tuple[str, ...] = ()

    def event(self, step: int) -> OptimizerAnswer:
        fields = asdict(self) | {"raw": list(self.raw)}
        return OptimizerAnswer(step=step, **fields)


@dataclass(frozen=True)
class Checked:
    """One reflection's edits as checked, and, when it was asked again, the second answer's."""

    source: str
    first: list[Finding]
    second: list[Finding] | None  # None: not asked again, or its answer was not usable

    @property
    def kept(self) -> list[Edit]:
        return usable(self.second if self.second is not None else self.first)


@dataclass
class Patch:
    source: str  # "failures" or "successes"
    edits: list[Edit] = field(default_factory=list)


def edit_json(edit: Edit, index: int | None = None) -> dict[str, object]:
    """An edit as JSON, keys sorted: the same order it has after the state's round trip through
    disk, so that a resumed run renders the very same prompts."""
    data: dict[str, object] = {"op": edit.op, "anchor": edit.anchor, "content": edit.content}
    data |= {"rationale": edit.rationale, "support": edit.support}
    if index is not None:
        data["index"] = index
    return dict(sorted(data.items()))


def trajectory_json(t: Trajectory) -> dict[str, object]:
    """A trajectory as evidence: what was asked, said and expected, and for a failure whether
    the format or the content failed, with the answer read when it is not the whole output."""
    evidence: dict[str, object] = {
        "input": t.item.input,
        "output": t.output,
        "expected": list(t.item.answers),
        "score": t.hard,
    }
    if t.answer != t.output.strip():
        evidence["extracted"] = t.answer
    if not t.followed:
        evidence["format"] = "not followed" + ("" if not t.answer else ": answer read anyway")
    if not t.passed:
        evidence["failure"] = "content" if t.answer else "format: no answer could be read"
    return evidence


def parse_edits(value: object) -> list[Edit]:
    """The usable edits of an optimizer's JSON answer `{"edits": [...]}`."""
    items = value.get("edits") if isinstance(value, dict) else None
    edits = []
    for raw in items if isinstance(items, list) else []:
        if not isinstance(raw, dict) or raw.get("op") not in OPS:
            continue
        anchor = raw.get("anchor")
        support = raw.get("support")
        edits.append(
            Edit(
                op=raw["op"],
                content=str(raw.get("content") or ""),
                anchor=str(anchor) if anchor else None,
                rationale=str(raw.get("rationale") or ""),
                support=support if isinstance(support, int) and support > 0 else 1,
            )
        )
    return edits


def reflect_own_words(prompts: str | None, kind: str, task_kind: str, max_edits: int) -> str:
    """The reflect prompt's own words, which a proposed rule may not copy (`edit_checks`): its
    text without skill, evidence or memory — the instructions and the worked example."""
    return render(
        "reflect.j2",
        prompts,
        evidence=one_per_line({"trajectories": []}),
        skill="",
        kind=kind,
        task_kind=task_kind,
        max_edits=max_edits,
        **asdict(Memory()),
    )


def one_per_line(evidence: object) -> str:
    """Evidence as JSON with each element of a top-level list on a line of its own: as easy to
    read as indented JSON, in fewer tokens (15% fewer on the quickstart's evidence; a small local
    model pays for each in prompt time). Keys keep their order: a trajectory reads input,
    output, expected, score."""
    if not isinstance(evidence, dict):
        return _json(evidence)
    fields = []
    for key, value in evidence.items():
        if isinstance(value, list | tuple):
            rows = ",\n  ".join(_json(row) for row in value)
            fields.append(f"{_json(key)}: [\n  {rows}\n ]")
        else:
            fields.append(f"{_json(key)}: {_json(value)}")
    return "{\n " + ",\n ".join(fields) + "\n}"


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _text(value: object, key: str) -> str | None:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) and found.strip() else None


class Optimizer:
    def __init__(
        self,
        layer: CallLayer,
        model: str,
        prompts: str | None,
        task_kind: str = "",
        labels: Sequence[str] = (),
    ) -> None:
        self.layer, self.model, self.prompts = layer, model, prompts
        self.task_kind = task_kind  # the env's kind: reflect.j2 shows classify its own example
        self.labels = tuple(labels)  # a classify env's declared labels, which examples must give
        self.records: list[Record] = []
        self.checks: list[Checked] = []

    async def _ask(self, template: str, phase: str, evidence: object, **values: object) -> object:
        request = self._request(template, phase, evidence, **values)
        return (await self._answer(request, template.removesuffix(".j2"))).value

    def _request(self, template: str, phase: str, evidence: object, **values: object) -> Request:
        prompt = render(template, self.prompts, evidence=one_per_line(evidence), **values)
        return Request(self.model, (Message("user", prompt),), "optimizer", phase)

    async def _answer(self, request: Request, task: str) -> Structured:
        answer: Structured = await ask_json(self.layer, request)
        self.records.append(
            Record(
                task,
                answer.value is not None,
                answer.repaired,
                answer.reasked,
                answer.problem,
                answer.answers,
            )
        )
        return answer

    async def reflect(
        self, skill: str, batch: Sequence[Trajectory], kind: str, max_edits: int, memory: Memory
    ) -> Patch:
        evidence = {"trajectories": [trajectory_json(t) for t in batch]}
        request = self._request(
            "reflect.j2",
            "reflect",
            evidence,
            skill=skill,
            kind=kind,
            task_kind=self.task_kind,
            max_edits=max_edits,
            **asdict(memory),
        )
        answer = await self._answer(request, "reflect")
        own = reflect_own_words(self.prompts, kind, self.task_kind, max_edits)
        first = check(parse_edits(answer.value)[:max_edits], skill, batch, self.labels, own)
        second = None
        if any(f.problems for f in first):
            said = Message("assistant", answer.raw)
            again = replace(
                request,
                messages=(*request.messages, said, Message("user", reask_text(first, max_edits))),
            )
            value = (await self._answer(again, "reflect_recheck")).value
            if value is not None:
                second = check(parse_edits(value)[:max_edits], skill, batch, self.labels, own)
        checked = Checked(kind, first, second)
        self.checks.append(checked)
        return Patch(kind, checked.kept)

    async def reflect_full(
        self, skill: str, batch: Sequence[Trajectory], kind: str, memory: Memory
    ) -> str | None:
        evidence = {"trajectories": [trajectory_json(t) for t in batch]}
        return _text(
            await self._ask(
                "reflect_full.j2", "reflect", evidence, skill=skill, kind=kind, **asdict(memory)
            ),
            "skill",
        )

    async def merge(self, skill: str, patches: Sequence[Patch], memory: Memory) -> Patch | None:
        evidence = {
            "patches": [
                {"source": p.source, "edits": [edit_json(e) for e in p.edits]} for p in patches
            ]
        }
        value = await self._ask("merge.j2", "aggregate", evidence, skill=skill, **asdict(memory))
        return Patch(patches[0].source, parse_edits(value)) if value is not None else None

    async def merge_full(self, skill: str, candidates: Sequence[str]) -> str | None:
        value = await self._ask(
            "merge_full.j2", "aggregate", {"candidates": list(candidates)}, skill=skill
        )
        return _text(value, "skill")

    async def learning_rate(self, skill: str, edits: Sequence[Edit], memory: Memory) -> int | None:
        evidence = {"edits": [edit_json(e, i) for i, e in enumerate(edits)]}
        value = await self._ask(
            "learning_rate.j2",
            "select",
            evidence,
            skill=skill,
            available=len(edits),
            **asdict(memory),
        )
        lr = value.get("lr") if isinstance(value, dict) else None
        return max(0, min(len(edits), int(lr))) if isinstance(lr, int | float) else None

    async def select(
        self, skill: str, edits: Sequence[Edit], lr: int, memory: Memory
    ) -> list[int] | None:
        evidence = {"edits": [edit_json(e, i) for i, e in enumerate(edits)]}
        value = await self._ask(
            "select.j2", "select", evidence, skill=skill, lr=lr, **asdict(memory)
        )
        chosen = value.get("selected") if isinstance(value, dict) else None
        if not isinstance(chosen, list):
            return None
        valid = [i for i in dict.fromkeys(chosen) if isinstance(i, int) and 0 <= i < len(edits)]
        return valid[:lr] if valid else None

    async def rewrite(self, skill: str, edits: Sequence[Edit]) -> str | None:
        value = await self._ask(
            "rewrite.j2", "update", {"edits": [edit_json(e) for e in edits]}, skill=skill
        )
        return _text(value, "skill")

    async def slow_update(self, skill: str, pairs: Sequence[Mapping[str, object]]) -> str | None:
        return _text(
            await self._ask("slow_update.j2", "slow_update", {"pairs": pairs}, skill=skill),
            "guidance",
        )

    async def meta_skill(self, history: Mapping[str, object], previous: str) -> str | None:
        value = await self._ask("meta_skill.j2", "meta_skill", history, meta_skill=previous)
        return _text(value, "meta_skill")
