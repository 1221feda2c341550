"""The commands built on the learning library of `agents`, each a ``python -m agents.<name>`` (the
modules `agents.supervised`, `agents.evaluate`, ... forward here). Each is a `pddlgym_sl.cli.Command`
that turns its flags into a configuration of the library (`agents.training`, `agents.learned_heuristic`,
...) and prints what came out; no training loop lives here.

================  ======================================================================
module            what
================  ======================================================================
`supervised`      train a model with an N or TN head on a labelled dataset (a run directory)
`evaluate`        GBFS with a trained run (or a symbolic heuristic) under an evaluation budget
`report/`         the paper's Tables 1-2 and plots from run directories
`sweep/`          a grid of runs: train, evaluate and report with local subprocesses or Ray tasks
`rl`              MaskablePPO on one problem of the Gymnasium environments (an example)
`rl_value`        value learning without optimal labels (N / N+clip / TN, bounds l and u)
`rl_value_curves` learning curves of rl_value runs (GBFS on held-out problems vs env steps)
`anytime_curves`  plan cost over evaluations from anytime evaluations
`presets`         the training presets configs/<domain>-<model>.yaml
================  ======================================================================
"""
