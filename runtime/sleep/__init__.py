"""Sleep (SPEC §7): learn from past coding-agent sessions, stage a gated proposal.

This package owns the night's parts: `sessions` (the records a harvest returns), `harvest/`
(reading Claude Code, Codex and generic transcripts), `redact` (secret redaction, applied to
everything that leaves the harvester and everything the night writes or sends) and `marks`
(how skopt recognises the agent sessions it ran itself).
"""
