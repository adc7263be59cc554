"""The two model blocks, `target` and `optimizer`, from SkillOpt's role backends.

Chat backends map onto skopt providers: `openai_chat` (OpenAI, or Azure through its v1 API),
`openai_compatible`, `qwen_chat` and `minimax_chat` onto `openai` with a `base_url`,
`claude_chat` onto `anthropic`. The agent harnesses `codex_exec` and `claude_code_exec` are
approximated by calling their model directly; Cursor and Copilot have no provider, and their
name is written as the provider so that `skopt check` says so.
"""

from __future__ import annotations

from skopt.compiler.importers import draft
from skopt.compiler.importers.config import Config
from skopt.compiler.importers.draft import Block
from skopt.compiler.importers.skillopt_keys import (
    BACKEND_PAIRS,
    DEFAULT_MODELS,
    OPENAI_DEFAULT_NAMES,
    ROLES,
    normalize_backend,
)

CHAT_DEFAULTS = {  # SkillOpt's code defaults for its HTTP backends: temperature, timeout, tokens
    "qwen_chat": (0.7, 300.0, 8000),
    "minimax_chat": (0.7, 300.0, 8000),
    "openai_compatible": (None, 300.0, 8000),
}
EFFORTS = {"none": "none", "minimal": "minimal", "low": "low", "medium": "medium", "high": "high"}
MINIMAX_URL = "https://api.minimax.io/v1"  # MiniMax's OpenAI-compatible endpoint (global_en)
NO_PROVIDER = ("cursor_exec", "copilot_exec", "copilot_chat")


def model_blocks(cfg: Config, rewrites: bool) -> list[Block]:
    backends = role_backends(cfg)
    effort = _effort(cfg)
    if not rewrites:
        for key in ("rewrite_reasoning_effort", "rewrite_max_completion_tokens"):
            cfg.unused(f"model.{key}", "skill_update_mode patch makes no rewrite calls")
    blocks = []
    for role in ("target", "optimizer"):
        block = Block(f"model {role}")
        _provider(cfg, role, *backends[role], block)
        if effort:
            block.set("reasoning_effort", effort)
        _capacity(cfg, role, block, rewrites)
        blocks.append(block)
    return blocks


def role_backends(cfg: Config) -> dict[str, tuple[str, str]]:
    """Each role's backend and the key that chose it: its own, else `model.backend`'s pair."""
    backend = normalize_backend(cfg.take("model.backend") or "azure_openai")
    pair = BACKEND_PAIRS.get(backend, ("openai_chat", "openai_chat"))
    chosen = {}
    for role, implied in zip(ROLES, pair, strict=True):
        key = f"model.{role}_backend"
        own = normalize_backend(cfg.take(key))
        own = "openai_chat" if own == "azure_openai" else own
        chosen[role] = (implied, "model.backend") if own in ("", "openai_chat") else (own, key)
    cfg.backends = tuple(b for b, _ in chosen.values())
    return chosen


def _effort(cfg: Config) -> str | None:
    value = cfg.text("model.reasoning_effort")
    if value is None:
        return None
    word = value.strip().lower()
    if word in ("xhigh", "max"):
        cfg.approximated("model.reasoning_effort", f"{word} is written as high", "skopt's highest")
        return "high"
    if word not in EFFORTS:
        cfg.refuse("model.reasoning_effort", f"unknown reasoning effort {value!r}")
        return None
    return EFFORTS[word]


def _name(cfg: Config, role: str, backend: str) -> tuple[str, str]:
    """The model's name, and a note when SkillOpt's default for the backend was taken."""
    written = cfg.text(f"model.{role}")
    for_backend = {
        "minimax_chat": cfg.text("model.minimax_model"),
        "openai_compatible": cfg.text(f"model.{role}_openai_compatible_model")
        or cfg.text("model.openai_compatible_model"),
        "copilot_chat": cfg.text(f"model.copilot_chat_{role}_model"),
    }.get(backend)
    non_openai = backend not in ("openai_chat", "codex_exec")
    if written and not (non_openai and written in OPENAI_DEFAULT_NAMES):
        return written, ""
    if for_backend:
        return for_backend, ""
    default = DEFAULT_MODELS.get(backend, written or "")
    return default, f"SkillOpt's default model for {backend}"


def _provider(cfg: Config, role: str, backend: str, key: str, block: Block) -> None:
    name, note = _name(cfg, role, backend)
    if backend in ("openai_chat", "codex_exec", "openai_compatible", "qwen_chat", "minimax_chat"):
        block.set("provider", "openai")
    elif backend in ("claude_chat", "claude_code_exec"):
        block.set("provider", "anthropic", "SkillOpt ran the Claude CLI; skopt calls the API")
    else:
        word = backend if backend.isidentifier() else "unknown"
        block.set("provider", word, "no skopt provider: choose openai or anthropic")
        cfg.approximated(
            key,
            f"skopt has no {backend} provider for the {role}",
            "the recipe names it as the provider, which `skopt check` reports",
        )
    if name:
        block.set("name", draft.text(name), note)
    if backend in ("codex_exec", "claude_code_exec"):
        cfg.approximated(
            key,
            f"the {role} ran as the {backend} agent harness; skopt calls {name} directly",
            "the skill goes in the system message, with no workspace and no tools",
        )
    if backend == "openai_chat":
        _azure(cfg, role, block)
    elif backend in CHAT_DEFAULTS:
        _compatible(cfg, role, backend, block)


def _azure(cfg: Config, role: str, block: Block) -> None:
    found = cfg.first(
        f"model.{role}_azure_openai_endpoint", "model.azure_openai_endpoint", "model.azure_endpoint"
    )
    mode = cfg.settings.get(f"model.{role}_azure_openai_auth_mode") or cfg.settings.get(
        "model.azure_openai_auth_mode"
    )
    if found is None:
        block.notes.append("No Azure endpoint in the config: this calls OpenAI. For Azure add")
        block.notes.append('base_url = "https://RESOURCE.openai.azure.com/openai/v1/"')
        return
    key, endpoint = found
    block.set("base_url", draft.text(str(endpoint).rstrip("/") + "/openai/v1/"), "Azure v1 API")
    block.set("api_key_env", draft.text("AZURE_OPENAI_API_KEY"))
    if mode is not None and str(mode.value).lower() in ("api_key", "openai_compatible"):
        cfg.take(f"model.{role}_azure_openai_auth_mode")
        cfg.take("model.azure_openai_auth_mode")
    elif mode is None or mode.value in (None, ""):
        cfg.approximated(
            key,
            "SkillOpt signs in with the Azure CLI by default; skopt needs an API key",
            "export AZURE_OPENAI_API_KEY",
        )


def _compatible(cfg: Config, role: str, backend: str, block: Block) -> None:
    temperature, timeout, tokens = CHAT_DEFAULTS[backend]
    stem = {"qwen_chat": "qwen_chat", "minimax_chat": "minimax"}.get(backend, "openai_compatible")

    def pick(field: str) -> tuple[str, object] | None:
        return cfg.first(f"model.{role}_{stem}_{field}", f"model.{stem}_{field}")

    url = pick("base_url")
    if url is None and backend == "qwen_chat":
        url = ("", "http://localhost:8000/v1")
    region = cfg.settings.get("model.minimax_region")
    default_region = region is None or region.value in ("", None, "global_en")
    if url is None and backend == "minimax_chat" and default_region:
        cfg.take("model.minimax_region")
        url = ("", MINIMAX_URL)
    if url is not None:
        block.set("base_url", draft.text(str(url[1])))
    else:
        block.notes.append(f"SkillOpt read {backend}'s base URL from the environment")
    block.set("api_key_env", draft.text(f"{stem.upper()}_API_KEY"))
    found_t = pick("temperature")
    value_t = _float(found_t[1] if found_t else temperature)
    if value_t is not None:
        block.set("temperature", draft.number(value_t))
    if backend != "minimax_chat":
        found_s = pick("timeout_seconds")
        block.set("timeout", draft.seconds(_float(found_s[1] if found_s else timeout) or timeout))
    found_n = pick("max_tokens")
    block.set("max_tokens", str(int(_float(found_n[1] if found_n else tokens) or tokens)))


def _float(value: object) -> float | None:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _capacity(cfg: Config, role: str, block: Block, rewrites: bool) -> None:
    """Timeouts, concurrency and output caps that SkillOpt sets per role."""
    members = {m.key for m in block.members if isinstance(m, draft.Entry)}
    if role == "target":
        timeout = cfg.real("env.exec_timeout")
        if timeout is not None:
            block.put("timeout", draft.seconds(timeout), "env.exec_timeout")
        workers = cfg.integer("env.workers", 0, minimum=1)
        if workers:
            block.set("concurrency", str(workers), "env.workers: SkillOpt's rollout threads")
        if "max_tokens" in members:
            cfg.unused("env.max_completion_tokens", "the target backend's max_tokens is used")
        elif tokens := cfg.integer("env.max_completion_tokens", 0, minimum=1):
            block.set("max_tokens", str(tokens), "env.max_completion_tokens")
        return
    workers = cfg.integer("gradient.analyst_workers", 0, minimum=1)
    if workers:
        block.set("concurrency", str(workers), "gradient.analyst_workers: analyst threads")
    if "max_tokens" in members:
        return
    if rewrites and cfg.written("model.rewrite_max_completion_tokens"):
        tokens = cfg.integer("model.rewrite_max_completion_tokens", 64000, minimum=1)
        block.set("max_tokens", str(tokens), "model.rewrite_max_completion_tokens, for every call")
    else:
        block.set("max_tokens", "16384", "SkillOpt's cap on each optimizer call")
