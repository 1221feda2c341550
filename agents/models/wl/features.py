"""Weisfeiler-Leman features of the ILG, by `wlplan` (Chen, Trevizan and Thiébaux, ICAPS 2024).

WL refines each ILG node's colour by the multiset of its neighbours' colours and edge labels; a
state's feature vector counts, for every colour seen while *fitting* (the training states, all
refinement iterations), how many of its nodes have it. Colours first met after fitting are not
counted. The fitted colour table is the feature map: `WLFeaturizer.config` is its JSON (stored in
the run's ``model.json``), and `WLFeaturizer.from_config` rebuilds it without any pickled code.

Defaults are those of GOOSE's released IPC 2023 models: 2 iterations, neighbour colours as a set.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from _wlplan.data import DomainDataset, ProblemDataset
from _wlplan.planning import Domain, Predicate, Problem, State
from wlplan.feature_generator import WLFeatures, init_feature_generator

from agents.errors import AgentError
from agents.registries import WL_PRUNING

__all__ = ["ITERATIONS", "PRUNING", "WLFeaturizer"]

ITERATIONS = 2
PRUNING = WL_PRUNING
"""wlplan 2.1.0's pruning options (``get_available_pruning_methods``)."""


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Silence what the C++ library prints to the process's stdout (its progress lines)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


class WLFeaturizer:
    """A fitted WL colour table: states -> (n, n_features) float32 colour counts.

    Build with `fit` (training) or `from_config` (a stored run).
    """

    def __init__(self, features: WLFeatures, domain: Domain, config: dict[str, Any]) -> None:
        self._features, self.domain, self.config = features, domain, config
        self.key = hashlib.sha1(json.dumps(config, sort_keys=True).encode()).hexdigest()

    @property
    def n_features(self) -> int:
        return self._features.get_n_features()

    @classmethod
    def fit(
        cls,
        domain: Domain,
        data: Iterable[tuple[Problem, list[State]]],
        iterations: int = ITERATIONS,
        pruning: str = "none",
        multiset_hash: bool = False,
    ) -> WLFeaturizer:
        """Collect the colours of every state of `data` ((problem, states) pairs); colours are
        numbered in order of appearance.

        `pruning` is wlplan's option (`PRUNING`; e.g. ``"i-mf"``: after each iteration, drop the
        colours equivalent to others on the training states (by MaxSAT) and those whose total
        count over them is at most 1% of their number; the ECAI 2025 setting is 1 iteration,
        ``"i-mf"``, set hash). With pruning wlplan collects
        once, from all states together (it decides what to prune on all of them); without it the
        problems are collected one at a time, so only one problem's graphs are in memory.
        `multiset_hash` counts repeated (edge label, colour) neighbours instead of keeping them
        once (a set, GOOSE's default).
        """
        if pruning not in PRUNING:
            raise AgentError(f"WL pruning={pruning!r} is not one of wlplan's {', '.join(PRUNING)}")
        features = init_feature_generator(
            "wl",
            domain,
            graph_representation="ilg",
            iterations=iterations,
            pruning=pruning,
            multiset_hash=multiset_hash,
        )
        with _quiet_stdout():
            if pruning == "none":
                for problem, states in data:
                    if states:
                        features.collect(DomainDataset(domain, [ProblemDataset(problem, states)]))
            else:
                problems = [ProblemDataset(problem, states) for problem, states in data if states]
                features.collect(DomainDataset(domain, problems))
        return cls(features, domain, _to_config(features))

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> WLFeaturizer:
        """Rebuild a fitted featurizer from its `config` (JSON data only; its domain included)."""
        d = config["domain"]
        # the saved predicates are in wlplan's sorted order (see `vocabulary.wl_domain`)
        predicates = [Predicate(name, arity) for name, arity in d["predicates"]]
        domain = Domain(d["name"], predicates, [], [], list(d["constant_objects"]))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "wl.json")
            with open(path, "w") as f:
                json.dump(config, f)
            with _quiet_stdout():
                features = WLFeatures(path, True)
        return cls(features, domain, config)

    def embed(self, problem: Problem, states: list[State]) -> np.ndarray:
        """Colour counts of `states` of `problem` as a (len(states), n_features) float32 array,
        computed in one call."""
        if not states:
            return np.zeros((0, self.n_features), dtype=np.float32)
        dataset = DomainDataset(self.domain, [ProblemDataset(problem, states)])
        return np.asarray(self._features.embed(dataset), dtype=np.float32)


def _to_config(features: WLFeatures) -> dict[str, Any]:
    """The JSON of a fitted colour table (what `wlplan` saves, without weights)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "wl.json")
        with _quiet_stdout():
            features.save(path)
        with open(path) as f:
            config = json.load(f)
    config["weights"] = []  # the linear model lives in torch
    return config
