"""Observation encoders: one module per observation type, usable with or without an environment.

>>> schema = Schema.from_domain_file(domains.domain_file("ferry"))
>>> enc = make_encoder("ilg", schema, task)        # built once per task
>>> graph = enc.encode(task.init)                  # a State or its uint64 words
>>> enc.space                                      # the Gymnasium space of the observations

==============  ===========================================================  ==================
name            observation                                                  space
==============  ===========================================================  ==================
``ilg``         Instance Learning Graph (objects + atoms, goal status)       ``spaces.Graph``
``nlm``         per-arity predicate tensors of state and goal                ``spaces.Dict``
``hypergraph``  STRIPS-HGN delete-relaxed hypergraph (bipartite form)        ``spaces.Graph``
``flat``        fact vector of one fixed problem (MLP policies)              ``spaces.MultiBinary``
==============  ===========================================================  ==================

Each module's docstring specifies its exact format. The registry is the explicit `ENCODERS`
dict; `make_encoder` turns unknown names and options into a `ConfigError`.

Each encoder class says what it is, and the environment asks it instead of testing its name:

- ``graph``: its observations are variable-size `spaces.Graph` s, which ``padded=True`` (its
  ``max_nodes`` and ``max_edges`` options) turns into fixed-size dicts of arrays;
- ``width``: how its space depends on the problem: ``"fixed"`` (the same for every problem of the
  domain), ``"objects"`` (one slot per object: an environment over several problems sizes it to the
  most objects of its problem files) or ``"facts"`` (one entry per fact of one problem: several
  problems share only a length, and a ``-v0`` environment takes one problem);
- ``size_options``: the options that size its space, which its classmethod ``padding(schema,
  task, **options)`` returns for one task (an environment takes the largest over its problems).
"""

from __future__ import annotations

import inspect
from typing import Any

from pddlgym_sl.envs.encoders.flat import FlatEncoder
from pddlgym_sl.envs.encoders.hypergraph import HypergraphEncoder
from pddlgym_sl.envs.encoders.ilg import ILGEncoder
from pddlgym_sl.envs.encoders.nlm import NLMEncoder
from pddlgym_sl.envs.encoders.schema import AtomTable, Schema
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.task import CompiledTask

ENCODERS: dict[str, type] = {
    "ilg": ILGEncoder,
    "nlm": NLMEncoder,
    "hypergraph": HypergraphEncoder,
    "flat": FlatEncoder,
}


def encoder_options(name: str) -> tuple[str, ...]:
    """Keyword options accepted by encoder `name` (beyond schema and task)."""
    params = list(inspect.signature(ENCODERS[name].__init__).parameters)
    return tuple(p for p in params if p not in ("self", "schema", "task"))


def make_encoder(name: str, schema: Schema, task: CompiledTask, **options: Any):
    """Build encoder `name` for `task`; `ConfigError` for an unknown name or option."""
    if name not in ENCODERS:
        raise ConfigError(f"unknown observation type {name!r}; expected one of {', '.join(ENCODERS)}")
    unknown = sorted(set(options) - set(encoder_options(name)))
    if unknown:
        allowed = ", ".join(encoder_options(name)) or "none"
        raise ConfigError(f"observation {name!r} takes no option {', '.join(unknown)} (options: {allowed})")
    return ENCODERS[name](schema, task, **options)


__all__ = [
    "ENCODERS",
    "AtomTable",
    "FlatEncoder",
    "HypergraphEncoder",
    "ILGEncoder",
    "NLMEncoder",
    "Schema",
    "encoder_options",
    "make_encoder",
]
