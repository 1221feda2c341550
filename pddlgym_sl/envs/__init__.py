"""Gymnasium environments: `PDDLEnv`, its observation encoders, and the registration table.

``import pddlgym_sl`` registers the ids below (Gymnasium 1.x has no plugin discovery, so
registration happens at import; ``gym.make("pddlgym_sl:pddl/ferry-v0")`` imports the package
first). The environment module itself is only imported by `gym.make`, through the entry point.

=====================  ===========  ==================
id                     domain       max_episode_steps
=====================  ===========  ==================
pddl/blocksworld-v0    blocksworld  500
pddl/ferry-v0          ferry        500
pddl/gripper-v0        gripper      500
pddl/visitall-v0       visitall     500
=====================  ===========  ==================
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

ENTRY_POINT = "pddlgym_sl.envs.pddl_env:PDDLEnv"
MAX_EPISODE_STEPS = 500

ENV_IDS: dict[str, str] = {
    "pddl/blocksworld-v0": "blocksworld",
    "pddl/ferry-v0": "ferry",
    "pddl/gripper-v0": "gripper",
    "pddl/visitall-v0": "visitall",
}
"""Registered id -> paper domain name."""


def register_envs() -> None:
    """Register every id of `ENV_IDS` (idempotent)."""
    for env_id, domain in ENV_IDS.items():
        if env_id not in registry:
            register(
                id=env_id,
                entry_point=ENTRY_POINT,
                kwargs={"domain": domain},
                max_episode_steps=MAX_EPISODE_STEPS,
            )


register_envs()

__all__ = ["ENV_IDS", "MAX_EPISODE_STEPS", "register_envs"]
