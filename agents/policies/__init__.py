"""Policies for reinforcement learning over planning problems (`python -m agents.rl`).

- `relational.RelationalActorCritic`: a GNN over the Instance Learning Graph that scores every
  ground action from its schema and its argument objects, so one network plays every problem of
  a domain;
- `maskable.RelationalMaskablePolicy`: that network as an sb3-contrib MaskablePPO policy on
  padded ILG observations with the action table;
- `greedy`: greedy rollouts of the network on any problem (held-out, larger), plain observations.
"""

from agents.policies.maskable import RelationalMaskablePolicy
from agents.policies.relational import RelationalActorCritic

__all__ = ["RelationalActorCritic", "RelationalMaskablePolicy"]
