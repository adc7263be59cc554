"""How a tool call's input and output become text (`ToolCall.input`, `ToolCall.output`).

This module owns the renderings every harvester shares: a shell call shows its command line
(Claude `Bash`, Codex `shell` / `shell_command` / `exec_command` / `local_shell`), a patch its
text, anything else compact JSON — made from the structured value after the secret-named keys
in it were redacted and the fields with no intent dropped (redact.py), since JSON text no longer
shows which value sits under which key. Outputs: Claude's result blocks joined (images dropped,
a sub-agent's footer stripped); Codex's exit code read from whichever envelope the era used.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from skopt.runtime.sleep.redact import redact_tree, strip_no_intent

SHELL_TOOLS = frozenset({"Bash", "PowerShell"})
_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "powershell", "pwsh"})
_AGENT_FOOTER = re.compile(
    r"\s*agentId: \S+ \(use SendMessage[^)]*\)\s*(?:<usage>.*?</usage>)?\s*\Z", re.DOTALL
)
_EXIT = re.compile(r"^(?:Exit code:|Process exited with code) (-?\d+)\s*$", re.MULTILINE)


def compact_json(value: object) -> str:
    """A structured value as one line of JSON, secret-named keys redacted first."""
    return json.dumps(
        redact_tree(strip_no_intent(value)), ensure_ascii=False, separators=(",", ":")
    )


def command_line(command: object) -> str | None:
    """A shell command as typed: a string as is; `["bash", "-lc", script]` as the script; any
    other argument list joined with shell quoting."""
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
        return None
    if len(command) == 3 and command[0] in _SHELLS and command[1] in ("-c", "-lc"):
        return str(command[2])
    return shlex.join(command)


def claude_input(name: str, value: object) -> str:
    if name in SHELL_TOOLS and isinstance(value, dict):
        line = command_line(value.get("command"))
        if line is not None:
            return line
    return compact_json(value)


def claude_output(content: object, *, subagent: bool) -> str:
    """A `tool_result`'s content: a string, or its text blocks joined (images dropped)."""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    else:
        text = ""
    return _AGENT_FOOTER.sub("", text) if subagent else text


def codex_input(name: str, arguments: object) -> str:
    """A Codex `function_call`'s arguments (a JSON string) as text."""
    parsed = _loads(arguments) if isinstance(arguments, str) else arguments
    if isinstance(parsed, dict):
        for key in ("command", "cmd"):
            if name in ("shell", "shell_command", "exec_command", "local_shell") and key in parsed:
                line = command_line(parsed[key])
                if line is not None:
                    return line
        return compact_json(parsed)
    return arguments if isinstance(arguments, str) else compact_json(arguments)


def codex_output(output: object) -> tuple[str, bool]:
    """A Codex call's output and whether it failed: the 2025 `{"output", "metadata":
    {"exit_code"}}` JSON, or text with an `Exit code: N` / `Process exited with code N` line."""
    if not isinstance(output, str):
        output = compact_json(output) if output is not None else ""
    parsed = _loads(output)
    if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
        metadata = parsed.get("metadata")
        code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        return parsed["output"], isinstance(code, int) and code != 0
    match = _EXIT.search(output)
    return output, match is not None and int(match.group(1)) != 0


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
