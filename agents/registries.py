"""The learning registries, importable without torch: every list of models, losses, noises and head
options derives from here.

A torch-using registry (models, losses, noises) maps each name to where its entry lives,
``"module:attribute"``, imported on first use (`Registry`): the command lines list the names for
their choices and ``--help`` without importing torch (and torch-geometric, wlplan), and adding a
model is one module plus one line in `MODELS`. The head options are plain data and live here
whole (`agents.heads` reads them).

=============  ====================================  =================================================
registry       entries                               what derives from it
=============  ====================================  =================================================
`MODELS`       ``agents.models.<name>:SPEC``         ``--model``, the sweep's axis, the report's order
`LOSSES`       ``agents.losses`` classes             ``--loss``
`NOISES`       ``agents.ood`` fact probabilities      ``--ood``, Table 1's noise columns
`DISTS`,       head options (`agents.heads`)         ``--dist``, ``--sigma``, ``--bound``,
`SIGMAS`, ...                                        ``--residual``, ``--upper``
=============  ====================================  =================================================
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterator, MutableMapping
from typing import Any

from agents.distributions.constants import MISSING_BOUND
from agents.errors import AgentError
from pddlgym_sl.data.labels import BOUND_NAMES, INFORMATIVE_NAMES

__all__ = [
    "BOUNDS",
    "DISTS",
    "LOSSES",
    "LOSS_NAMES",
    "MISSING_BOUND",
    "MODELS",
    "MODEL_NAMES",
    "NOISES",
    "NOISE_NAMES",
    "RESIDUALS",
    "SEARCH_BOUNDS",
    "SIGMAS",
    "UPPERS",
    "UPPER_DEFAULTS",
    "WL_HASHES",
    "WL_PRUNING",
    "Registry",
]


class Registry(MutableMapping[str, Any]):
    """Names -> entries, in registration order; an entry given as ``"module:attribute"`` is imported
    on first access (an entry may also be the object itself, e.g. one registered at run time).

    `names` lists the names without importing anything; `lookup` is ``[name]`` with an
    `AgentError` naming the registered ones for an unknown name."""

    def __init__(self, kind: str, entries: dict[str, Any]) -> None:
        self.kind = kind
        self._entries: dict[str, Any] = dict(entries)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def __getitem__(self, name: str) -> Any:
        entry = self._entries[name]
        if isinstance(entry, str):
            module, _, attribute = entry.partition(":")
            entry = getattr(importlib.import_module(module), attribute)
            self._entries[name] = entry
        return entry

    def __setitem__(self, name: str, entry: Any) -> None:
        self._entries[name] = entry

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def lookup(self, name: str) -> Any:
        """The entry of `name`; `AgentError` listing the registered names for an unknown one."""
        if name not in self._entries:
            raise AgentError(f"unknown {self.kind} {name!r}; choose one of {', '.join(self._entries)}")
        return self[name]

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._entries)})"


MODELS = Registry(
    "model",
    {
        "nlm": "agents.models.nlm:SPEC",
        "hgn": "agents.models.strips_hgn:SPEC",
        "linear": "agents.models.linear:SPEC",
        "mlp": "agents.models.mlp:SPEC",
        "wl": "agents.models.wl:SPEC",
    },
)
"""The models (`agents.models.spec.ModelSpec` per name), in the report's order."""
LOSSES = Registry(
    "loss",
    {
        "nll": "agents.losses:NLLLoss",
        "rank": "agents.losses:RankLoss",
        "rank-nll": "agents.losses:RankNLLLoss",
    },
)
"""The training losses by name (`agents.losses`)."""
NOISES = Registry(
    "noise", {"uniform": "agents.ood:uniform_frequencies", "weighted": "agents.ood:fact_frequencies"}
)
"""The noise distributions of ``--ood`` (`agents.ood`): each fact's probability of being true."""

MODEL_NAMES = MODELS.names
LOSS_NAMES = LOSSES.names
NOISE_NAMES = NOISES.names

DISTS = ("n", "tn", "cat")
"""Distribution heads (`agents.heads.make_head`)."""
SIGMAS = ("learn", "fixed")
BOUNDS = BOUND_NAMES
"""Lower bounds: the admissible heuristics of `pddlgym_sl.heuristics.HEURISTICS` (lmcut, hmax, blind)."""
RESIDUALS = ("none", INFORMATIVE_NAMES[0], BOUND_NAMES[0])
"""No residual, or one over the most informative heuristic of either kind (hff, lmcut)."""
UPPER_DEFAULTS = {"none": MISSING_BOUND, "inf": math.inf, "plan": MISSING_BOUND}
"""Per ``--upper`` option, the u of a state whose caller passes none (``plan`` reads u from the data;
`MISSING_BOUND`, 1e5, is the paper's where none is known, `agents.distributions.constants`)."""
UPPERS = tuple(UPPER_DEFAULTS)
WL_PRUNING = ("none", "a-m", "i-g", "i-m", "i-f", "i-mf")
"""``--wl-pruning``: wlplan 2.1.0's colour pruning options (``get_available_pruning_methods``)."""
SEARCH_BOUNDS = ("trained", "lmcut", "hmax", "screened", "lazy", "none")
"""``agents.evaluate --search-bound``: which bound a learned value reads at search, and when (the
head's own bound on every state, LM-cut or hmax instead, the trained bound where hFF cannot screen
it off, the trained bound on expanded states only, or none: the value is μ;
`agents.models.wl.compiled.heuristic`)."""
WL_HASHES = ("set", "multiset")
"""``--wl-hash``: a node's neighbour colours kept once (set, GOOSE's default) or counted."""
