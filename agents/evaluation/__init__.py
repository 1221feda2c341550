"""Evaluation as a library: the problems of a split or a task directory searched with a learned (or
symbolic) heuristic under a budget, one record per problem and a summary (Table 2's protocol).

    from agents.evaluation import EvaluationConfig, evaluate
    summary = evaluate(EvaluationConfig(run=Path("runs/x"), split="plan", limit=10_000))

``python -m agents.evaluate`` (`agents.apps.evaluate`) parses its flags into an `EvaluationConfig`
and prints the summary; the supervised command's quick planning check and the sweep's jobs run the
same evaluation. Modules, one job each: `config` (the flags), `searches` (``--search`` by name),
`problems` (which problems), `choices` (checks, memory limits, lockstep width, result directory),
`worker` (one process: load, warm up, search, record), `records` (finished records, summaries),
`runner` (`evaluate`), `accuracy` (Table 1's accuracy of a run). Importing this package imports
no torch.
"""

from agents.evaluation.accuracy import accuracy, run_accuracy
from agents.evaluation.choices import LOCKSTEP_DEFAULT, lockstep_width, process_memory_limit, result_directory
from agents.evaluation.config import EvaluationConfig
from agents.evaluation.problems import ProblemSelection, select_problems
from agents.evaluation.records import evaluation_records, is_finished, summarize
from agents.evaluation.runner import evaluate
from agents.evaluation.searches import (
    CONFIDENCE_AWARE,
    DEFAULT_SEARCH,
    EVAL_SEARCHES,
    PRUNE_CHOICES,
    SEARCH_NAMES,
    SearchOptions,
    config_label,
)

__all__ = [
    "CONFIDENCE_AWARE",
    "DEFAULT_SEARCH",
    "EVAL_SEARCHES",
    "LOCKSTEP_DEFAULT",
    "PRUNE_CHOICES",
    "SEARCH_NAMES",
    "EvaluationConfig",
    "ProblemSelection",
    "SearchOptions",
    "accuracy",
    "config_label",
    "evaluate",
    "evaluation_records",
    "is_finished",
    "lockstep_width",
    "process_memory_limit",
    "result_directory",
    "run_accuracy",
    "select_problems",
    "summarize",
]
