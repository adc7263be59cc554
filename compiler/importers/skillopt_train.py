"""The train block: epochs, batches, the learning-rate schedule, update mode, gate, slow
update, meta skill and the final test, from SkillOpt's train/gradient/optimizer/evaluation keys.
"""

from __future__ import annotations

from skopt.compiler.importers import draft
from skopt.compiler.importers.config import Config
from skopt.compiler.importers.draft import Block
from skopt.compiler.importers.skillopt_env import Paths

MODES = {
    "patch": "patch",
    "rewrite_from_suggestions": "rewrite",
    "rewrite": "rewrite",
    "suggestions": "rewrite",
    "full_rewrite_minibatch": "full_rewrite",
    "full_rewrite": "full_rewrite",
    "minibatch_full_rewrite": "full_rewrite",
}
SCHEDULERS = ("constant", "linear", "cosine", "autonomous")
UNBOUNDED = 999  # SkillOpt's `lr_scheduler: autonomous`: 999 edits a step


def update_mode(cfg: Config) -> str:
    word = (cfg.text("optimizer.skill_update_mode") or "patch").lower()
    if word not in MODES:
        cfg.refuse("optimizer.skill_update_mode", f"unknown skill_update_mode {word!r}")
        return "patch"
    return MODES[word]


def train_block(cfg: Config, env: str, paths: Paths, mode: str) -> Block:
    block = Block("train")
    block.set("target", "target")
    block.set("optimizer", "optimizer")
    block.set("env", env)
    skill = cfg.text("env.skill_init")
    if skill is None:
        block.set("skill", "empty", "env.skill_init is blank: SkillOpt starts from a blank skill")
    else:
        block.set("skill", draft.text(paths.shown(skill)))
    block.set("epochs", str(cfg.integer("train.num_epochs", 4, minimum=1)))
    _batches(cfg, block)
    block.set("lr", *_lr(cfg))
    block.set("mode", mode)
    failures = cfg.boolean("gradient.failure_only", False)
    block.set("reflect", "failures" if failures else "all")
    _gate(cfg, block.child("gate"))
    _slow_update(cfg, block)
    block.set("meta_skill", draft.flag(cfg.boolean("optimizer.use_meta_skill", True)))
    block.set("test", draft.flag(cfg.boolean("evaluation.eval_test", True)))
    block.set("seed", str(cfg.integer("train.seed", 42)))
    out = cfg.text("env.out_root")
    if out is not None:
        block.set("out", draft.text(paths.shown(out)), "env.out_root")
    return block


def _batches(cfg: Config, block: Block) -> None:
    size = cfg.integer("train.batch_size", 40, minimum=1)
    accumulation = cfg.integer("train.accumulation", 1, minimum=1)
    if accumulation > 1:
        note = f"{size} x accumulation {accumulation}: one rollout batch, patches pooled as before"
        block.set("batch_size", str(size * accumulation), note)
    else:
        block.set("batch_size", str(size))
    block.set("minibatch", str(cfg.integer("gradient.minibatch_size", 8, minimum=1)))
    merge = cfg.integer("gradient.merge_batch_size", 8, minimum=1)
    block.set("merge_batch", str(max(merge, 2)), "SkillOpt raises 1 to 2" if merge < 2 else "")


def _lr(cfg: Config) -> tuple[str, str]:
    high = cfg.integer("optimizer.learning_rate", 4, minimum=1)
    low = cfg.integer("optimizer.min_learning_rate", 2, minimum=1)
    control = (cfg.text("optimizer.lr_control_mode") or "fixed").lower()
    scheduler = (cfg.text("optimizer.lr_scheduler") or "cosine").lower()
    if control == "autonomous":
        why = "with lr_control_mode autonomous the optimizer picks each step's edits"
        for key in ("lr_scheduler", "learning_rate", "min_learning_rate"):
            cfg.unused(f"optimizer.{key}", why)
        return "autonomous", "lr_control_mode autonomous: the optimizer picks each step's edits"
    if control not in ("fixed", "none"):
        cfg.refuse("optimizer.lr_control_mode", f"unknown lr_control_mode {control!r}")
    elif control == "none":
        cfg.approximated("optimizer.lr_control_mode", "none is read as fixed: the scheduler rules")
    if scheduler not in SCHEDULERS:
        cfg.refuse("optimizer.lr_scheduler", f"unknown lr_scheduler {scheduler!r}", "cosine")
        scheduler = "cosine"
    if scheduler == "autonomous":
        for key in ("optimizer.learning_rate", "optimizer.min_learning_rate"):
            cfg.unused(key, "lr_scheduler autonomous allows 999 edits a step")
        return draft.call("constant", str(UNBOUNDED)), "SkillOpt's autonomous scheduler: 999 edits"
    if scheduler == "constant":
        cfg.unused("optimizer.min_learning_rate", "a constant schedule has no minimum")
        return draft.call("constant", str(high)), ""
    if low > high:
        cfg.approximated("optimizer.min_learning_rate", f"above learning_rate; taken as {high}")
        low = high
    return draft.call(scheduler, max=str(high), min=str(low)), ""


def _gate(cfg: Config, gate: Block) -> None:
    gate.set("split", "valid")
    metric = (cfg.text("evaluation.gate_metric") or "hard").lower()
    weight = cfg.real("evaluation.gate_mixed_weight", 0.5)
    if metric == "mixed":
        gate.set("metric", draft.call("mixed", draft.number(weight or 0.0)), "soft weight")
    elif metric in ("hard", "soft"):
        gate.set("metric", metric)
        cfg.unused("evaluation.gate_mixed_weight", f"gate_metric is {metric}")
    else:
        cfg.refuse("evaluation.gate_metric", f"unknown gate_metric {metric!r}", "hard|soft|mixed")
    if not cfg.boolean("evaluation.use_gate", True):
        cfg.taken.discard("evaluation.use_gate")  # reported with its reason: no counterpart


def _slow_update(cfg: Config, block: Block) -> None:
    if not cfg.boolean("optimizer.use_slow_update", True):
        block.set("slow_update", "off")
        cfg.unused("optimizer.slow_update_samples", "use_slow_update is false")
        cfg.unused("optimizer.slow_update_gate_with_selection", "use_slow_update is false")
        return
    slow = block.child("slow_update")
    slow.set("samples", str(cfg.integer("optimizer.slow_update_samples", 20, minimum=1)))
    gated = cfg.boolean("optimizer.slow_update_gate_with_selection", False)
    slow.set("gate", draft.flag(gated))
    if (cfg.text("optimizer.longitudinal_pair_policy") or "mixed").lower() == "mixed":
        return
    cfg.taken.discard("optimizer.longitudinal_pair_policy")
