"""Problem sets with optimal labels: Fast Downward A*+LM-cut plans, every plan state labelled.

- `pddlgym_sl.data.generate`: the command line (``python -m pddlgym_sl.data.generate``);
- `pddlgym_sl.data.build`: parallel, resumable construction of a split directory;
- `pddlgym_sl.data.labels`: the per-problem label format;
- `pddlgym_sl.data.dataset`: fast loading of a labelled split for training.
"""
