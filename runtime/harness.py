"""The deploy harness: a skill scored the way a user deploys it (`skopt eval --harness deploy`).

Training, and `--harness plain`, show the target the skill as the system message and the task as
the user message with the env's answer-format line (`prompts/rollout_user.j2`). A deployed skill
gets no such line: here the system message is the skill and a one-line task statement (the
env's `task`, else one made from its kind), and the user message is the item's raw input (and
its context). Nothing asks for a format, so the answer is read leniently — the <answer> tag if
there is one, else the last line, and for `classify` the one label a reply names — whatever the
env's `strict_format` says. A skill that only helps under the training prompt shows it here.
"""

from __future__ import annotations

from skopt.compiler.dataset import Item
from skopt.compiler.plan import EnvSettings
from skopt.runtime.request import Message

_TASKS = {
    "qa": "Answer the user's message.",
    "math": "Solve the user's problem and give the number.",
}


def deploy_task(env: EnvSettings) -> str:
    """The env's task statement: its `task` key, else one made from its kind."""
    if env.task:
        return env.task
    if env.kind == "classify" and isinstance(env.labels, list):
        return f"Reply with one of these labels: {', '.join(env.labels)}."
    return _TASKS.get(env.kind, "Answer the user's message.")


def deploy_messages(skill: str, item: Item, task: str) -> tuple[Message, Message]:
    system = f"{skill.rstrip()}\n\n{task}" if skill.strip() else task
    user = f"{item.input}\n\nContext:\n{item.context}" if item.context else item.input
    return Message("system", system), Message("user", user)
