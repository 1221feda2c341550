"""Learning search heuristics with (truncated) Gaussian heads: a library, and the applications on it.

The library (import from here):

=======================  ==============================================================
module                   what
=======================  ==============================================================
`distributions/`         all Gaussian / TN / interval maths: constants, stable torch
                         distributions, interval probabilities, the compiled TN mean for search
`heads`                  N / TN heads: raw model outputs + symbolic bounds -> h* distribution
`models/`                the model registry (`MODELS`) and the models: NLM, STRIPS-HGN, linear
`inputs`, `sampler`      what input builders implement; size-bucketed training batches
`metrics`                test accuracy of a model on a labelled split (the paper's Table 1)
`checkpoint`             weights and training state that load without unpickling
`learned_heuristic`      a trained run as a batch heuristic for `pddlgym_sl.search`
`training/`              the training loops: `Trainer`, `ValueLearner` and their configurations
`registries`             the model, loss, noise and head-option registries, torch-free
`errors`                 `AgentError`, under the project's one root `pddlgym_sl.errors.PDDLError`
=======================  ==============================================================

The commands are in `agents.apps` (training, evaluation, report, sweep, RL): thin, they turn
flags into the library's configurations; the modules `agents.supervised`, `agents.evaluate`,
`agents.report`, `agents.sweep`, `agents.rl`, `agents.rl_value`, `agents.rl_value_curves` and
`agents.anytime_curves` only forward ``python -m agents.<name>`` to them.
"""

import os

# Intel MKL (PyTorch's CPU BLAS) may round a matrix product differently with the alignment of its
# operands, so the same states could get values a few ulps apart in two forward passes; a search
# with a learned heuristic would then not be reproducible node for node (lockstep against the
# search alone, a rerun of an evaluation). Strict conditional numerical reproducibility makes
# MKL's results depend on the inputs alone. MKL reads it when it starts, at the first product,
# so this holds after ``import torch`` too unless a product ran before; a MKL_CBWR of your own wins.
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")

from pddlgym_sl.cli import exit_at_start
from pddlgym_sl.errors import MissingExtraError
from pddlgym_sl.extras import require_extra

try:
    require_extra("learn", "the learning code (agents)")
except MissingExtraError as exc:
    exit_at_start(exc)  # ``python -m agents.<command>``: one line and status 2, as every command error
    raise
