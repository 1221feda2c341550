"""The training loops, as library classes configured by explicit dataclasses (no command line here).

=====================  =====================================================================
module                 what
=====================  =====================================================================
`configs`              `SupervisedConfig`, `ValueConfig`: every hyperparameter by keyword
                       (importing them imports no torch; the command lines extend them)
`supervised`           `Trainer`: supervised training on labelled states (N / TN / cat heads,
                       NLL or ranking loss); ``Trainer(config, run_dir).learn()``
`value`                `ValueLearner`: value learning by interaction without optimal labels
                       (bootstrapped targets, bounds l and u); ``ValueLearner(config, run_dir).learn()``
`replay`               `ReplayBuffer`, `Episode`: the value learner's visited states
`contexts`             `ProblemContext`: one problem's model inputs and symbolic heuristics
`records`              ``args.json``: the configuration, command and version a run records
`datasets`             the dataset a supervised configuration names (the default one is created)
=====================  =====================================================================

``Trainer.load(run_dir, steps=...)`` and ``ValueLearner.load(...)`` continue a run from its
``last.pt``; on the CPU the result equals an uninterrupted run. The command lines
``python -m agents.supervised`` and ``python -m agents.rl_value`` (`agents.apps`) only turn their
flags into these configurations.
"""

from agents.training.configs import SupervisedConfig, ValueConfig

__all__ = ["SupervisedConfig", "ValueConfig"]
