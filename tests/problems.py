"""Tiny hand-written problems of the paper's domains, shared by the tests."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ROOT / "domains"

FERRY_3_2 = """(define (problem ferry-3-2) (:domain ferry)
 (:objects l0 l1 l2 c0 c1)
 (:init (location l0) (location l1) (location l2) (car c0) (car c1)
  (not-eq l0 l1) (not-eq l1 l0) (not-eq l0 l2) (not-eq l2 l0) (not-eq l1 l2) (not-eq l2 l1)
  (empty-ferry) (at-ferry l0) (at c0 l0) (at c1 l1))
 (:goal (and (at c0 l2) (at c1 l0))))
"""
FERRY_3_2_PLAN = [
    "(board c0 l0)",
    "(sail l0 l2)",
    "(debark c0 l2)",
    "(sail l2 l1)",
    "(board c1 l1)",
    "(sail l1 l0)",
    "(debark c1 l0)",
]
"""An optimal plan of `FERRY_3_2` (seven steps)."""

GRIPPER_2 = """(define (problem gripper-2) (:domain gripper)
 (:objects rooma roomb left right ball0 ball1)
 (:init (room rooma) (room roomb) (gripper left) (gripper right) (ball ball0) (ball ball1)
  (free left) (free right) (at ball0 rooma) (at ball1 roomb) (at-robby rooma))
 (:goal (and (at ball0 roomb) (at ball1 rooma))))
"""

# roomb is not a room: no action can move the robot there, so the goal is unreachable.
GRIPPER_UNSOLVABLE = """(define (problem gripper-dead) (:domain gripper)
 (:objects rooma roomb left ball0)
 (:init (room rooma) (gripper left) (ball ball0) (free left) (at ball0 rooma) (at-robby rooma))
 (:goal (and (at ball0 roomb))))
"""


def pyperplan_task(domain_file, problem_file, **ground_kwargs):
    """pyperplan's grounding of a STRIPS domain/problem pair: an independent parser and grounder
    (the reference for successors, hmax and hadd)."""
    from pyperplan.grounding import ground
    from pyperplan.pddl.parser import Parser

    parser = Parser(str(domain_file), str(problem_file))
    return ground(parser.parse_problem(parser.parse_domain()), **ground_kwargs)


def states_of_a_search(task, budget=400):
    """The states a GBFS + hFF search evaluates on `task` within `budget` evaluations, in its order
    (one (n, n_words) array): states a search really meets, dead ends included."""
    import numpy as np

    from pddlgym_sl.heuristics import make_heuristic
    from pddlgym_sl.search import gbfs

    recorded = []
    h = make_heuristic("hff", task)

    def hff(batch):
        recorded.append(batch.copy())
        return h.batch(batch)

    gbfs(task, hff, max_evaluations=budget)
    return np.concatenate(recorded)
