"""Gymnasium environments: `PDDLEnv`, its observation encoders, and the registration table.

``import pddlgym_sl`` registers the ids below (Gymnasium 1.x has no plugin discovery, so
registration happens at import; ``gym.make("pddlgym_sl:pddl/ferry-v1")`` imports the package
first).

=====================  ===========  ==================
id                     domain       max_episode_steps
=====================  ===========  ==================
pddl/blocksworld-v1    blocksworld  500
pddl/ferry-v1          ferry        500
pddl/gripper-v1        gripper      500
pddl/visitall-v1       visitall     500
pddl/custom-v1         (yours)      500
=====================  ===========  ==================

and the four domains' ids with ``-v0`` (`PDDLEnvV0`, kept for compatibility; `PDDLEnv`'s
Version History says what changed). The domain ids come from the domain specs
(`domains.DOMAINS`, `DomainSpec.env_ids`); ``pddl/custom-v1`` plays any domain and needs
``domain_file=`` and ``problems=``.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

import domains

ENTRY_POINTS = {
    0: "pddlgym_sl.envs.pddl_env:PDDLEnvV0",
    1: "pddlgym_sl.envs.pddl_env:PDDLEnv",
}
"""Environment class of each id version ``pddl/<name>-v<N>``."""
CUSTOM_ENV_ID = "pddl/custom-v1"
"""The generic id: your own domain through ``domain_file=`` and ``problems=``."""
MAX_EPISODE_STEPS = 500


def env_ids() -> dict[str, str]:
    """Id -> domain name of every domain registered in `domains.DOMAINS` now."""
    return {env_id: name for name, spec in domains.DOMAINS.items() for env_id in spec.env_ids}


ENV_IDS: dict[str, str] = env_ids()
"""Registered id -> paper domain name (the domains registered when this module was imported)."""


def _version(env_id: str) -> int:
    return int(env_id.rsplit("-v", 1)[1])


def register_envs() -> None:
    """Register the id of every domain in `domains.DOMAINS` and the generic id (idempotent; call
    it again after adding a domain at run time)."""
    for env_id, domain in env_ids().items():
        if env_id not in registry:
            register(
                id=env_id,
                entry_point=ENTRY_POINTS[_version(env_id)],
                kwargs={"domain": domain},
                max_episode_steps=MAX_EPISODE_STEPS,
            )
    if CUSTOM_ENV_ID not in registry:
        register(
            id=CUSTOM_ENV_ID,
            entry_point=ENTRY_POINTS[_version(CUSTOM_ENV_ID)],
            max_episode_steps=MAX_EPISODE_STEPS,
        )


register_envs()

from pddlgym_sl.envs.pddl_env import PDDLEnv, PDDLEnvV0  # noqa: E402  (after registration, on purpose)

__all__ = [
    "CUSTOM_ENV_ID",
    "ENTRY_POINTS",
    "ENV_IDS",
    "MAX_EPISODE_STEPS",
    "PDDLEnv",
    "PDDLEnvV0",
    "env_ids",
    "register_envs",
]
