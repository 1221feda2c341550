"""Gymnasium environments: `PDDLEnv`, its observation encoders, and the registration table.

``import pddlgym_sl`` registers the ids below (Gymnasium 1.x has no plugin discovery, so
registration happens at import; ``gym.make("pddlgym_sl:pddl/ferry-v0")`` imports the package
first). The environment module itself is only imported by `gym.make`, through the entry point.

=====================  ===========  ==================
id                     domain       max_episode_steps
=====================  ===========  ==================
pddl/blocksworld-v1    blocksworld  500
pddl/ferry-v1          ferry        500
pddl/gripper-v1        gripper      500
pddl/visitall-v1       visitall     500
=====================  ===========  ==================

and the same ids with ``-v0`` (kept for compatibility; `PDDLEnv`'s Version History says what
changed). The ids come from the domain specs (`domains.DOMAINS`, `DomainSpec.env_ids`).
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

import domains

ENTRY_POINT = "pddlgym_sl.envs.pddl_env:PDDLEnv"
MAX_EPISODE_STEPS = 500


def env_ids() -> dict[str, str]:
    """Id -> domain name of every domain registered in `domains.DOMAINS` now."""
    return {env_id: name for name, spec in domains.DOMAINS.items() for env_id in spec.env_ids}


ENV_IDS: dict[str, str] = env_ids()
"""Registered id -> paper domain name (the domains registered when this module was imported)."""


def register_envs() -> None:
    """Register the id of every domain in `domains.DOMAINS` (idempotent; call it again after adding
    a domain at run time)."""
    for env_id, domain in env_ids().items():
        if env_id not in registry:
            register(
                id=env_id,
                entry_point=ENTRY_POINT,
                kwargs={"domain": domain},
                max_episode_steps=MAX_EPISODE_STEPS,
            )


register_envs()

__all__ = ["ENV_IDS", "MAX_EPISODE_STEPS", "env_ids", "register_envs"]
