"""SkillOpt's research-trainer keys: their dotted names, aliases, backends, and the keys that
skopt has no counterpart for, each with the reason (the table of docs/import-skillopt.md).

Facts from SkillOpt's `skillopt/config.py` and `scripts/train.py` (see
/work/shared/reference/skillopt.md, section c): a key is `section.key`; a flat (legacy) key
has one dotted name; an unknown flat key goes to the env adapter as it is.
"""

from __future__ import annotations

SECTIONS = ("model", "train", "gradient", "optimizer", "evaluation", "env")
ROLES = ("optimizer", "target")

# Flat names that are not the key's own name (every other section key is flat as itself).
_FLAT_NAMES = {
    "model.backend": "model_backend",
    "model.optimizer": "optimizer_model",
    "model.target": "target_model",
    "optimizer.learning_rate": "edit_budget",
    "optimizer.min_learning_rate": "min_edit_budget",
    "optimizer.meta_learning_rate": "meta_edit_budget",
    "env.name": "env",
}
_ALIASES = {  # SkillOpt's Codex aliases, and `backend` as a flat key
    "codex_path": "codex_exec_path",
    "codex_cli_bin": "codex_exec_path",
    "codex_bin": "codex_exec_path",
    "sandbox": "codex_exec_sandbox",
    "codex_sandbox": "codex_exec_sandbox",
}


def _role_variants(stem: str, fields: tuple[str, ...], roles: bool = True) -> list[str]:
    prefixes = ("", *(f"{r}_" for r in ROLES)) if roles else ("",)
    return [f"{p}{stem}_{f}" for p in prefixes for f in fields]


AZURE_FIELDS = (
    "endpoint",
    "api_version",
    "api_key",
    "auth_mode",
    "ad_scope",
    "managed_identity_client_id",
)
QWEN_FIELDS = (
    "base_url",
    "api_key",
    "temperature",
    "timeout_seconds",
    "max_tokens",
    "enable_thinking",
    "thinking_mode",
)
COMPATIBLE_FIELDS = ("base_url", "api_key", "model", "temperature", "timeout_seconds", "max_tokens")
MINIMAX_FIELDS = (
    "region",
    "base_url",
    "api_key",
    "model",
    "temperature",
    "max_tokens",
    "enable_thinking",
)

MODEL_KEYS = [
    "backend",
    "optimizer",
    "target",
    "optimizer_backend",
    "target_backend",
    "reasoning_effort",
    "rewrite_reasoning_effort",
    "rewrite_max_completion_tokens",
    *_role_variants(
        "codex_exec",
        (
            "path",
            "sandbox",
            "profile",
            "reasoning_effort",
            "approval_policy",
            "use_sdk",
            "network_access",
            "web_search",
            "full_auto",
        ),
        roles=False,
    ),
    *_role_variants(
        "claude_code_exec",
        ("path", "profile", "use_sdk", "effort", "max_thinking_tokens"),
        roles=False,
    ),
    "cursor_exec_path",
    "cursor_exec_sandbox",
    "copilot_exec_path",
    "copilot_exec_home",
    "copilot_exec_allow_all_tools",
    "copilot_chat_optimizer_model",
    "copilot_chat_target_model",
    "copilot_chat_timeout",
    "codex_trace_to_optimizer",
    "azure_endpoint",
    "azure_api_version",
    "azure_api_key",
    *_role_variants("azure_openai", AZURE_FIELDS),
    *_role_variants("qwen_chat", QWEN_FIELDS),
    *_role_variants("minimax", MINIMAX_FIELDS, roles=False),
    "optimizer_minimax_base_url",
    "optimizer_minimax_api_key",
    "target_minimax_base_url",
    "target_minimax_api_key",
    *_role_variants("openai_compatible", COMPATIBLE_FIELDS),
]
TRAIN_KEYS = ["num_epochs", "train_size", "steps_per_epoch", "batch_size", "accumulation", "seed"]
GRADIENT_KEYS = [
    "minibatch_size",
    "merge_batch_size",
    "analyst_workers",
    "failure_only",
    "max_analyst_rounds",
]
OPTIMIZER_KEYS = [
    "learning_rate",
    "min_learning_rate",
    "lr_scheduler",
    "lr_control_mode",
    "skill_update_mode",
    "meta_learning_rate",
    "use_slow_update",
    "slow_update_samples",
    "slow_update_gate_with_selection",
    "longitudinal_pair_policy",
    "use_meta_skill",
    "use_skill_aware_reflection",
    "skill_aware_appendix_source",
    "skill_aware_consolidate_threshold",
]
EVALUATION_KEYS = [
    "use_gate",
    "gate_metric",
    "gate_mixed_weight",
    "use_semantic_density",
    "semantic_density_weight",
    "leading_words",
    "sel_env_num",
    "test_env_num",
    "eval_test",
]
# env.name, env.skill_init and env.out_root are the trainer's; the rest go to the adapter.
ENV_KEYS = [
    "name",
    "skill_init",
    "split_mode",
    "split_ratio",
    "split_seed",
    "split_dir",
    "data_path",
    "split_output_dir",
    "exec_timeout",
    "out_root",
    # per-benchmark adapter keys (configs/<bench>/default.yaml) and CLI-only env knobs
    "workers",
    "max_turns",
    "max_steps",
    "max_completion_tokens",
    "max_api_workers",
    "limit",
    "image_detail",
    "shuffle_choices",
    "use_theorem",
    "use_sketch",
    "data_dirs",
    "data_root",
    "mode",
    "max_tool_turns",
    "search_mode",
    "max_queries_per_turn",
    "search_api_url",
    "search_auth_env",
    "search_provider",
    "search_max_num_results",
    "search_timeout_seconds",
    "judge_model",
    "judge_max_completion_tokens",
    "judge_retries",
]
KNOWN = {
    f"{section}.{key}"
    for section, keys in (
        ("model", MODEL_KEYS),
        ("train", TRAIN_KEYS),
        ("gradient", GRADIENT_KEYS),
        ("optimizer", OPTIMIZER_KEYS),
        ("evaluation", EVALUATION_KEYS),
        ("env", ENV_KEYS),
    )
    for key in keys
}
_FLAT_TO_DOTTED = {_FLAT_NAMES.get(d, d.split(".", 1)[1]): d for d in sorted(KNOWN)}
_FLAT_TO_DOTTED["backend"] = "model.backend"


def canonical(name: str) -> str:
    """The dotted name of a key as written in a section (`env.workers`) or flat (`workers`)."""
    section, dot, key = name.partition(".")
    if dot and section in SECTIONS:
        return f"{section}.{_ALIASES.get(key, key) if section == 'model' else key}"
    flat = _ALIASES.get(name, name)
    return _FLAT_TO_DOTTED.get(flat, flat)


def is_secret(name: str) -> bool:
    leaf = name.rsplit(".", 1)[-1].lower()
    return leaf.endswith(("api_key", "api-key", "token", "secret", "password"))


# -- backends ------------------------------------------------------------------------------

BACKEND_ALIASES = {
    "azure": "azure_openai",
    "azure-openai": "azure_openai",
    "openai": "codex_exec",
    "codex": "codex_exec",
    "claude": "claude_chat",
    "anthropic": "claude_chat",
    "cursor": "cursor_exec",
    "copilot": "copilot_chat",
    "qwen": "qwen_chat",
    "minimax": "minimax_chat",
}
# `model.backend` -> (optimizer backend, target backend), for roles left at openai_chat.
BACKEND_PAIRS = {
    "claude_chat": ("claude_chat", "claude_chat"),
    "codex_exec": ("codex_exec", "codex_exec"),
    "claude_code_exec": ("openai_chat", "claude_code_exec"),
    "cursor_exec": ("openai_chat", "cursor_exec"),
    "copilot_chat": ("copilot_chat", "copilot_chat"),
    "copilot_exec": ("openai_chat", "copilot_exec"),
    "qwen_chat": ("openai_chat", "qwen_chat"),
    "minimax_chat": ("openai_chat", "minimax_chat"),
    "openai_compatible": ("openai_compatible", "openai_compatible"),
}
DEFAULT_MODELS = {
    "openai_chat": "gpt-4o",
    "codex_exec": "gpt-4o",
    "claude_chat": "claude-sonnet-4-6",
    "claude_code_exec": "claude-sonnet-4-6",
    "qwen_chat": "Qwen/Qwen3.5-4B",
    "minimax_chat": "MiniMax-M3",
    "cursor_exec": "composer-2.5",
    "openai_compatible": "gpt-4o-mini",
}
OPENAI_DEFAULT_NAMES = ("gpt-5.4", "gpt-5.5")  # replaced by a non-OpenAI backend's default


def normalize_backend(name: object) -> str:
    text = str(name or "").strip().lower()
    return BACKEND_ALIASES.get(text, text)


# -- keys with no counterpart, and why -------------------------------------------------------

_AGENT_CLI = (
    "skopt calls models through their APIs and runs no agent CLI in a workspace, so the "
    "options of SkillOpt's {} harness have nothing to set"
)
_ENTRA = (
    "skopt authenticates with an API key read from the environment (api_key_env); Microsoft "
    "Entra ID tokens (azure_cli, managed identity) are not supported"
)
_KEY_IN_FILE = (
    "skopt never reads an API key from a file: export it and name the variable with api_key_env"
)
_PREFIX_REASONS = (
    ("model.codex_exec_", _AGENT_CLI.format("Codex")),
    ("model.claude_code_exec_", _AGENT_CLI.format("Claude Code")),
    ("model.cursor_exec_", _AGENT_CLI.format("Cursor")),
    ("model.copilot_exec_", _AGENT_CLI.format("Copilot")),
    ("model.copilot_chat_", "skopt has no Copilot CLI provider"),
)
_SUFFIX_REASONS = (
    ("api_key", _KEY_IN_FILE),
    ("api_version", "skopt calls Azure's v1 API (base_url …/openai/v1/): it takes no api-version"),
    ("auth_mode", _ENTRA),
    ("ad_scope", _ENTRA),
    ("managed_identity_client_id", _ENTRA),
    ("enable_thinking", "skopt sends no chat_template_kwargs, so thinking stays the server's"),
    ("thinking_mode", "skopt sends no chat_template_kwargs, so thinking stays the server's"),
)
REASONS = {
    "model.rewrite_reasoning_effort": (
        "skopt has one reasoning_effort per model, used by every call of the optimizer"
    ),
    "model.rewrite_max_completion_tokens": (
        "skopt has one max_tokens per model, used by every call of the optimizer"
    ),
    "model.codex_trace_to_optimizer": "skopt runs no Codex harness, so there is no trace to pass",
    "model.minimax_region": "skopt takes MiniMax's endpoint as base_url, not as a region",
    "train.steps_per_epoch": "skopt derives it: ceil(train split / batch_size)",
    "train.train_size": (
        "skopt sizes the train split from the data; SkillOpt only checks a non-zero value "
        "against that size"
    ),
    "gradient.max_analyst_rounds": "retired in SkillOpt, which ignores it",
    "optimizer.meta_learning_rate": "read by nothing in SkillOpt's trainer",
    "optimizer.longitudinal_pair_policy": (
        "skopt's slow update compares every sampled item (SkillOpt's `mixed`); `changed` and "
        "`unchanged` pair selection has no counterpart"
    ),
    "optimizer.use_skill_aware_reflection": (
        "skopt has no defect/lapse routing into an execution-notes appendix"
    ),
    "optimizer.skill_aware_appendix_source": "skopt has no execution-notes appendix",
    "optimizer.skill_aware_consolidate_threshold": "skopt has no execution-notes appendix",
    "evaluation.use_gate": (
        "skopt always gates a candidate; there is no validate-but-force-accept mode"
    ),
    "evaluation.use_semantic_density": (
        "skopt's gate scores the env's metric only; a bonus for words like MUST/NEVER has no "
        "counterpart"
    ),
    "evaluation.semantic_density_weight": "skopt's gate has no semantic-density bonus",
    "evaluation.leading_words": "skopt's gate has no semantic-density bonus",
    "env.split_output_dir": "skopt computes its split from the data by hash and writes no files",
    "env.max_turns": "skopt's rollouts are one turn (a system and a user message)",
    "env.max_steps": "skopt's rollouts are one turn: there are no environment steps",
    "env.max_tool_turns": "skopt's rollouts call no tools",
    "env.image_detail": "skopt's envs are text only",
    "env.data_dirs": "the OfficeQA adapter's document folders: skopt has no OfficeQA env",
    "env.data_root": "the SpreadsheetBench adapter's data: skopt has no SpreadsheetBench env",
    "env.mode": "the SpreadsheetBench adapter's agent mode: skopt has no such env",
    "env.limit": "the ALFWorld adapter's task cap: skopt has no ALFWorld env",
    "env.max_api_workers": "the ALFWorld adapter's API threads: skopt has no ALFWorld env",
    "env.shuffle_choices": "LiveMathematicianBench's choice shuffling: skopt has no such env",
    "env.use_theorem": "LiveMathematicianBench's prompt option: skopt has no such env",
    "env.use_sketch": "LiveMathematicianBench's prompt option: skopt has no such env",
    "env.judge_model": "skopt's training envs score answers locally, with no LLM judge",
    "env.judge_max_completion_tokens": "skopt's training envs have no LLM judge",
    "env.judge_retries": "skopt's training envs have no LLM judge",
}
for _search in (
    "search_mode",
    "max_queries_per_turn",
    "search_api_url",
    "search_auth_env",
    "search_provider",
    "search_max_num_results",
    "search_timeout_seconds",
):
    REASONS[f"env.{_search}"] = "OfficeQA's search tool: skopt's rollouts call no tools"


# Model keys that only one SkillOpt backend reads: (key prefix, backend).
_FAMILIES = (
    ("model.codex_exec_", "codex_exec"),
    ("model.codex_trace_", "codex_exec"),
    ("model.claude_code_exec_", "claude_code_exec"),
    ("model.cursor_exec_", "cursor_exec"),
    ("model.copilot_exec_", "copilot_exec"),
    ("model.copilot_chat_", "copilot_chat"),
    *((f"model.{p}azure_", "openai_chat") for p in ("", "optimizer_", "target_")),
    *((f"model.{p}qwen_chat_", "qwen_chat") for p in ("", "optimizer_", "target_")),
    *((f"model.{p}minimax_", "minimax_chat") for p in ("", "optimizer_", "target_")),
    *((f"model.{p}openai_compatible_", "openai_compatible") for p in ("", "optimizer_", "target_")),
)


# SkillOpt-Sleep's keys (`skillopt_sleep/config.py::DEFAULTS`): another tool's config.
SLEEP_KEYS = frozenset(
    (
        "claude_home",
        "codex_home",
        "pi_home",
        "cursor_home",
        "vscode_workspace_storage",
        "copilot_cli_session_store",
        "opencode_db",
        "transcript_source",
        "projects",
        "invoked_project",
        "lookback_hours",
        "max_tasks_per_night",
        "max_sessions_per_night",
        "max_tokens_per_night",
        "holdout_fraction",
        "val_fraction",
        "test_fraction",
        "model",
        "azure_endpoint",
        "gate_mode",
        "codex_path",
        "pi_path",
        "cursor_path",
        "opencode_path",
        "opencode_tool_replay",
        "edit_budget",
        "preferences",
        "gate_metric",
        "gate_mixed_weight",
        "gate_no_regression",
        "replay_mode",
        "dream_rollouts",
        "dream_factor",
        "recall_k",
        "evolve_memory",
        "evolve_skill",
        "llm_mine",
        "target_skill_path",
        "skill_roots",
        "target_task_filter",
        "progress",
        "evidence_log",
        "evidence_max_chars",
        "multi_skill_fanout",
        "multi_skill_report",
        "auto_adopt",
        "managed_skill_name",
        "redact_secrets",
    )
)
SLEEP_REASON = (
    "a SkillOpt-Sleep setting: this importer converts research-trainer configs; write a "
    "skopt sleep block by hand (docs/import-skillopt.md lists the nearest keys)"
)


def reason(key: str, backends: tuple[str, ...] = ()) -> str:
    """Why `key` has no counterpart in skopt, given the backends the roles run on."""
    for prefix, backend in _FAMILIES:
        if key.startswith(prefix) and backend not in backends:
            return f"only SkillOpt's {backend} backend reads it, and no role runs on it here"
    if key in REASONS:
        return REASONS[key]
    for prefix, why in _PREFIX_REASONS:
        if key.startswith(prefix):
            return why
    for suffix, why in _SUFFIX_REASONS:
        if key.endswith(suffix):
            return why
    if key in SLEEP_KEYS:
        return SLEEP_REASON
    if key.startswith("env."):
        return "passed to SkillOpt's env adapter; skopt's envs have no such setting"
    if key not in KNOWN:
        return "not a key of SkillOpt's research trainer that this importer knows"
    return "no skopt setting does this"
