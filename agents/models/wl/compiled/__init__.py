"""The WL model compiled: a trained ``--model wl`` run as a numba heuristic, in batches or inside
the search engine's loop, with the values of the torch path (`agents.learned_heuristic`).

- `table`: wlplan's fitted colour table (`WLFeaturizer.config`) as arrays and a hash lookup;
- `graph`: one task's ILG as arrays (every node any state's graph can have), built once per task;
- `kernels`: the WL colour counts of a state, incrementally from the previous state;
- `export`: a trained model (table, standardisation, linear map, head) as arrays;
- `symbolic`: the admissible bound and residual base (LM-cut, hmax, blind, hFF) inside numba;
- `heuristic`: `CompiledWLHeuristic` (``batch``, ``engine_args``) and the
  `pddlgym_sl.heuristics.compiled.state_values` overload of its arrays.
"""

from __future__ import annotations

from agents.models.wl.compiled.export import WLExport, export_wl
from agents.models.wl.compiled.heuristic import CompiledWLHeuristic, WLEngineArgs

__all__ = ["CompiledWLHeuristic", "WLEngineArgs", "WLExport", "export_wl"]
