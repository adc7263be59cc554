"""A checked sleep recipe → one night's plan: its phases with calls, tokens and cost per role.

Calls come from `night_calls` (the definitions the night itself uses). Tokens are counted as
training's are (compiler/tokens.py: exact for OpenAI models, else estimates): what is known when
planning — the templates of prompts/ rendered with their run-time variables empty, the live
skill, the chat overhead — is counted with each model's counter; what only exists at run time
(a session, a task, a note, an answer) is counted at its bound (compiler/sleep_bounds.py, which
the night enforces) or, for a model's answer, at its `max_tokens`. So every input count carries
an estimate (`input_exact` is false). The expected value is the typical night of `night_calls`
with every bounded text at its bound, at about four characters a token, and each answer at a
per-phase constant.
"""

from __future__ import annotations

from dataclasses import dataclass

from skopt.compiler import sleep_bounds as B
from skopt.compiler.cost import combined, count, model_costs
from skopt.compiler.night_calls import (
    Key,
    NightShape,
    explain_night,
    explain_reflect,
    extremes,
)
from skopt.compiler.phases import REASKS, Span3
from skopt.compiler.plan import (
    SLEEP_PHASE_ORDER,
    ModelSettings,
    Role,
    RoleCalls,
    SleepJob,
    SleepPhase,
    SleepSettings,
)
from skopt.compiler.tokens import Counter, chat_tokens, counter_for
from skopt.prompts import render

# Expected answer per call, by what it answers (capped at the model's max_tokens).
EXPECTED_OUTPUT = {
    "mine": 500,  # up to three tasks as JSON
    "replay": 400,  # the target's answer to a task
    "judge": 100,  # a score and a note
    "reflect": 600,  # a few edits as JSON
    "select": 60,  # a list of indices
}


@dataclass(frozen=True, slots=True)
class PerCall:
    """Tokens of one call: least (the known text only), expected and most."""

    low: float
    expected: float
    high: float


def build_night(
    settings: SleepSettings, models: dict[str, ModelSettings], skill_text: str
) -> SleepJob:
    target, optimizer = models[settings.target], models[settings.optimizer]
    judge = models[settings.judge.model] if settings.judge.model else None
    tokens = _NightTokens(settings, target, optimizer, judge, skill_text)
    calls = explain_night(tokens.shape, settings.max_sessions, settings.max_tasks)
    by_phase: dict[str, list[RoleCalls]] = {phase: [] for phase in SLEEP_PHASE_ORDER}
    for key, span in calls.items():
        by_phase[key[0]].append(tokens.role_calls(key, span))
    phases = [SleepPhase(phase=p, calls=by_phase[p]) for p in SLEEP_PHASE_ORDER]
    used = {m.name: m for m in (target, optimizer, judge) if m is not None}
    counters = {
        **({judge.name: tokens.judge} if judge else {}),
        optimizer.name: tokens.optimizer,
        target.name: tokens.target,  # the target's own counter wins when a model is both
    }
    # the target's calls first, then the optimizer's and the judge's (the settings' order)
    role_calls = sorted(
        (rc for p in phases for rc in p.calls), key=lambda rc: list(used).index(rc.model)
    )
    return SleepJob(
        settings=settings,
        phases=phases,
        models=model_costs(role_calls, used, counters),
        verdict=None,
        max_skill_tokens=tokens.max_skill,
    )


class _NightTokens:
    """The tokens of each phase's calls, per call, for the models of one night."""

    def __init__(
        self,
        settings: SleepSettings,
        target: ModelSettings,
        optimizer: ModelSettings,
        judge: ModelSettings | None,
        skill: str,
    ) -> None:
        self.settings, self.skill = settings, skill
        self.models: dict[Role, ModelSettings] = {"target": target, "optimizer": optimizer}
        self.target = counter_for(target.provider, target.model)
        self.optimizer = counter_for(optimizer.provider, optimizer.model)
        self.judge: Counter = self.optimizer
        if judge is not None:
            self.models["judge"] = judge
            self.judge = counter_for(judge.provider, judge.model)
        self.live = self.target.count(skill)
        self.max_skill = B.max_skill_tokens(self.live, settings.lr, optimizer.max_tokens)
        self.shape = NightShape(settings.holdout, settings.minibatch, judge is not None)

    def role_calls(self, key: Key, calls: Span3) -> RoleCalls:
        phase, role = key
        if phase == "reflect":
            return self._reflect()
        if role == "judge":
            per_call, answer = self._judged(), "judge"
        elif phase == "mine":
            per_call, answer = self._mine(), "mine"
        elif phase == "replay":
            per_call, answer = self._replay(), "replay"
        else:  # the gate's replays of the candidate
            per_call, answer = self._candidate(), "replay"
        model = self.models[role]
        return _calls(role, model, calls, per_call, self._output(model, answer))

    # input tokens a call, by what it carries

    def _mine(self) -> PerCall:
        base = chat_tokens(self.optimizer, "", render("sleep_mine.j2", session=""))
        return self._with(base, self.optimizer, B.DIGEST_CHARS)

    def _replay(self) -> PerCall:
        """The current skill (the live file) as the system message, a task as the user's."""
        base = chat_tokens(self.target, self.skill, render("sleep_replay.j2", task=""))
        return self._with(base, self.target, B.TASK_CHARS)

    def _candidate(self) -> PerCall:
        """As a replay, with a skill of at most the candidate's bound (expected: the live one)."""
        replay = self._replay()
        grown = self.max_skill - self.live
        return PerCall(replay.low, replay.expected, replay.high + grown)

    def _judged(self) -> PerCall:
        """The rubric judge: a task, its rubric and the target's answer (at most max_tokens)."""
        base = chat_tokens(self.judge, "", render("sleep_judge.j2", task="", rubric="", answer=""))
        task = self._with(0, self.judge, B.TASK_CHARS)
        rubric = self._with(0, self.judge, B.RUBRIC_CHARS)
        answer = self._output(self.models["target"], "replay")
        return PerCall(
            base,
            base + task.expected + rubric.expected + answer.expected,
            base + task.high + rubric.high + answer.high + B.SEAM,
        )

    def _reflect(self) -> RoleCalls:
        """Reflections on minibatches of failures, then the selection of lr edits."""
        s, optimizer = self.settings, self.models["optimizer"]
        reflections, selections = explain_reflect(self.shape, s.max_sessions, s.max_tasks)
        base = chat_tokens(
            self.optimizer,
            "",
            render("sleep_reflect.j2", skill=self.skill, failures="", lr=s.lr, memory=""),
        )
        memory = self._with(0, self.optimizer, B.MEMORY_CHARS)
        task = self._with(0, self.optimizer, B.TASK_CHARS)
        note = self._with(0, self.optimizer, B.NOTE_CHARS)
        answer = self._output(self.models["target"], "replay")
        failure = PerCall(
            0,
            task.expected + answer.expected + note.expected + B.FAILURE_SEAM,
            task.high + answer.high + note.high + B.FAILURE_SEAM,
        )
        _, typical, worst = extremes(self.shape, s.max_sessions, s.max_tasks)
        per_reflection = PerCall(
            base,
            base + memory.expected + min(s.minibatch, typical.failures) * failure.expected,
            base + memory.high + min(s.minibatch, worst.failures) * failure.high + 2 * B.SEAM,
        )
        reply = self._output(optimizer, "reflect")
        reflected = _calls("optimizer", optimizer, reflections, per_reflection, reply)
        # the selection reads the proposals: every reflection's (last) answer
        select = render(
            "select.j2", skill=self.skill, evidence="", lr=s.lr, meta_skill="", step_buffer=""
        )
        base = chat_tokens(self.optimizer, "", select)
        first_asks = reflections.max // (1 + REASKS)
        per_select = PerCall(
            base,
            base + reflections.expected * reply.expected,
            base + first_asks * reply.high + B.SEAM,
        )
        output = self._output(optimizer, "select")
        return combined(reflected, _calls("optimizer", optimizer, selections, per_select, output))

    def _with(self, base: int, counter: Counter, limit: int) -> PerCall:
        """`base` known tokens and one text clipped to `limit` characters."""
        return PerCall(
            base,
            base + B.expected_tokens(limit),
            base + B.most_tokens(counter, limit) + B.SEAM,
        )

    def _output(self, model: ModelSettings, answer: str) -> PerCall:
        cap = model.max_tokens
        return PerCall(1, min(cap, EXPECTED_OUTPUT[answer]), cap)


def _calls(
    role: Role, model: ModelSettings, calls: Span3, per_call: PerCall, output: PerCall
) -> RoleCalls:
    return RoleCalls(
        role=role,
        model=model.name,
        calls=count(calls.min, calls.expected, calls.max),
        input_tokens=count(
            calls.min * per_call.low, calls.expected * per_call.expected, calls.max * per_call.high
        ),
        output_tokens=count(
            calls.min * output.low, calls.expected * output.expected, calls.max * output.high
        ),
        input_exact=False,
    )
