"""A trained WL model on lifted states (`agents.models.wl.lifted`): the same values as the compiled
WL heuristic on the grounded states, and lifted GBFS solving with it.

The models are the stored runs of the IPC 2023 LT experiment (`experiments/results/ipc-ecai25`);
the tasks come from ``../shared/ipc23-lt`` (skipped without them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pddlgym_sl import load_task
from pddlgym_sl.lifted import Expander, load_lifted_task
from pddlgym_sl.lifted.check import StateMapper, reached_states
from pddlgym_sl.lifted.search import lifted_gbfs
from tests.fd_reference import IPC

pytest.importorskip("wlplan")
STORE = Path(__file__).resolve().parent.parent / "experiments" / "results" / "ipc-ecai25"
pytestmark = pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """The trained runs of the IPC experiment's store, as plain folders."""
    from experiments import results_store

    return results_store.extract(STORE, tmp_path_factory.mktemp("store"), areas=("runs",)) / "runs"


def _run(runs: Path, domain: str, kind: str = "wl-rank-ecai") -> Path:
    path = runs / f"{domain}-{kind}"
    if not (path / "model.json").is_file():
        pytest.skip(f"no stored run {path}")
    return path


@pytest.mark.parametrize(
    ("domain", "kind"), [("ferry", "wl-rank-ecai"), ("transport", "wl-tn-ecai"), ("rovers", "wl-rank-ecai")]
)
def test_lifted_values_equal_the_grounded_compiled_ones(runs, domain, kind):
    """On every state of a 200-evaluation grounded search, the lifted WL value is the compiled
    grounded heuristic's with ``search_bound="none"`` (μ; dead ends, inf there, skipped)."""
    from agents.learned_heuristic import TrainedModel
    from agents.models.wl.compiled import CompiledWLHeuristic
    from agents.models.wl.lifted import LiftedWLHeuristic

    trained = TrainedModel.load(_run(runs, domain, kind))
    files = (IPC / domain / "domain.pddl", IPC / domain / "testing-easy" / "p03.pddl")
    grounded, lifted = load_task(*files), load_lifted_task(*files)
    states = reached_states(grounded, 200)
    expected = CompiledWLHeuristic(trained, grounded, search_bound="none").batch(states)
    mapper = StateMapper(grounded, lifted)
    got = LiftedWLHeuristic(trained, lifted).values([mapper.to_lifted(w) for w in states])
    live = np.isfinite(expected)
    assert live.sum() > 10
    np.testing.assert_array_equal(got[live], expected[live])
    assert len(np.unique(got)) > 2  # the values tell states apart


def test_lifted_gbfs_with_wl_solves_a_hard_childsnack_task(runs):
    """Childsnack's hard p04 (39M ground actions at its largest; no configuration grounded it in
    60 s / 4 GB): lifted GBFS with the WL rank model and symmetry solves it, the plan valid."""
    from agents.learned_heuristic import TrainedModel
    from agents.models.wl.lifted import LiftedWLHeuristic

    files = (IPC / "childsnack" / "domain.pddl", IPC / "childsnack" / "testing-hard" / "p04.pddl")
    task = load_lifted_task(*files)
    heuristic = LiftedWLHeuristic(TrainedModel.load(_run(runs, "childsnack")), task)
    result = lifted_gbfs(task, heuristic.engine_args(), max_evaluations=100_000, time_limit=60)
    assert result.solved
    Expander(task).validate_plan(result.plan)


def test_evaluate_plans_lifted_and_records_it(runs, tmp_path):
    """``agents.evaluate --grounding lifted`` with a WL run and with hFF: solved, plans replayed, each
    record saying the task was searched lifted; ``--grounding ground`` on the same task says ground;
    a search the lifted engine does not have is refused."""
    import dataclasses
    import json
    import shutil

    from agents.evaluation import EvaluationConfig as Args
    from agents.evaluation import evaluate
    from agents.evaluation.choices import result_directory
    from pddlgym_sl.errors import ConfigError

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    shutil.copy(IPC / "childsnack" / "domain.pddl", tasks / "domain.pddl")
    shutil.copy(IPC / "childsnack" / "testing-easy" / "p03.pddl", tasks / "p03.pddl")
    runs = [("run", _run(runs, "childsnack")), ("heuristic", "hff")]
    for grounding in ("lifted", "ground"):
        for key, value in runs:
            out = tmp_path / f"{grounding}-{key}"
            summary = evaluate(
                Args(**{key: value}, tasks=tasks, out=out, quiet=True, time_limit=60, grounding=grounding)
            )
            assert summary["solved"] == 1
            record = json.loads((out / "problems" / "p03.json").read_text())
            assert record["grounding"] == grounding and record["plan"]
    # lazy lifted GBFS with the WL run: one evaluation per expansion, recorded, in a folder of its own
    config = Args(
        run=runs[0][1], tasks=tasks, quiet=True, time_limit=60, grounding="lifted", lifted_search="lazy"
    )
    assert result_directory(config, "childsnack", "tasks").name == "tasks-lifted-lazy"
    summary = evaluate(dataclasses.replace(config, out=tmp_path / "lazy"))
    lazy = json.loads((tmp_path / "lazy" / "problems" / "p03.json").read_text())
    assert summary["solved"] == 1 and lazy["lifted_search"] == "lazy" and lazy["plan"]
    assert lazy["evaluations"] == lazy["expansions"] - 1
    with pytest.raises(ConfigError, match="plain GBFS"):
        evaluate(Args(heuristic="hff", tasks=tasks, out=tmp_path / "x", grounding="lifted", search="astar"))
