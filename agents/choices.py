"""The names of the learning registries, importable without torch, for command-line choices.

``--help`` of the training, evaluation and sweep commands must not pay for importing torch (and
torch-geometric, wlplan) only to list the ``Literal`` choices of their flags. The registries
themselves (`agents.models.MODELS`, `agents.losses.LOSSES`, `agents.ood.NOISES`, the heads'
upper-bound table) live in torch-using modules, so their names are listed here once more;
``tests/test_registries.py`` checks that each list equals its registry's keys, in order.
"""

from __future__ import annotations

from pddlgym_sl.data.labels import BOUND_NAMES, INFORMATIVE_NAMES

__all__ = ["BOUNDS", "DISTS", "LOSS_NAMES", "MODEL_NAMES", "NOISE_NAMES", "RESIDUALS", "SIGMAS", "UPPERS"]

DISTS = ("n", "tn", "cat")
"""Distribution heads (`agents.heads.make_head`)."""
SIGMAS = ("learn", "fixed")
BOUNDS = BOUND_NAMES
"""Lower bounds: the admissible heuristics of `pddlgym_sl.heuristics.HEURISTICS` (lmcut, hmax, blind)."""
RESIDUALS = ("none", INFORMATIVE_NAMES[0], BOUND_NAMES[0])
"""No residual, or one over the most informative heuristic of either kind (hff, lmcut)."""
UPPERS = ("none", "inf", "plan")
"""The keys of `agents.heads` ``_DEFAULT_UPPER``."""
MODEL_NAMES = ("nlm", "hgn", "linear", "mlp", "wl")
"""The keys of `agents.models.MODELS`, in the report's order."""
LOSS_NAMES = ("nll", "rank")
"""The keys of `agents.losses.LOSSES`."""
NOISE_NAMES = ("uniform", "weighted")
"""The keys of `agents.ood.NOISES`."""
