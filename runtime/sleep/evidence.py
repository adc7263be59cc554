"""What the models of a night are shown, cut to the bounds the plan counts with
(compiler/sleep_bounds.py): a session as the miner sees it, a task as the target replays it and
the judge reads it, a failure as the optimizer reflects on it. Everything here is already
redacted (sessions leave the harvester redacted; answers are redacted as they arrive).
"""

from __future__ import annotations

import json

from skopt.compiler import sleep_bounds as bounds
from skopt.runtime.sleep.sessions import Session, ToolCall
from skopt.runtime.sleep.tasks import Task

ACTION_CHARS = 300  # a tool call's input, or its output's head, in a digest


def digest(session: Session) -> str:
    """The session for the miner, one line per prompt, action and answer (its first prompt is
    the task; later ones often correct the agent), within DIGEST_CHARS (head and tail kept)."""
    lines = [
        f"project: {session.cwd or '?'}"
        + (f" (branch {session.git_branch})" if session.git_branch else "")
    ]
    for turn in session.turns:
        lines.append(f"user: {turn.prompt}")
        lines += [f"agent: {_action(c)}" for c in turn.tools]
        if turn.answer:
            lines.append(f"agent: {turn.answer[:ACTION_CHARS]}")
    return bounds.digest("\n".join(lines))


def _action(call: ToolCall) -> str:
    outcome = "refused by the user" if call.rejected else "failed" if call.is_error else "ok"
    output = f": {call.output[:ACTION_CHARS]}" if call.output else ""
    return f"ran {call.name} {call.input[:ACTION_CHARS]} ({outcome}){output}"


def task_text(task: Task) -> str:
    """The task as the target is asked it and the judge reads it: the intent, then its context.
    Never the user's corrections: they are what the skill must teach."""
    return bounds.task(task.intent if not task.context else f"{task.intent}\n\n{task.context}")


def failure(task: Task, answer: str, note: str) -> str:
    """A failed replay as the optimizer reflects on it, one JSON line: the task, the answer,
    and a note (the judge's, then what the user said when the agent got it wrong)."""
    said = f" The user said: {' / '.join(task.signals)}" if task.signals else ""
    return json.dumps(
        {"task": task_text(task), "answer": answer, "note": bounds.note(note + said)},
        ensure_ascii=False,
    )
