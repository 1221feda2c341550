"""The experiments behind the figures in README.md and docs/: each module is a resumable driver run
from the checkout's root as ``python -m experiments.<name>`` (``ipc23_lt``, ``paper_tables``,
``paper_compare``, ``confidence_tables``, ``validate_plans``, ``rl_value_exact_mse``); finished work
is kept in ``experiments/results/`` (`experiments.results_store`)."""
