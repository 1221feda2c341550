"""Benchmark: time and peak memory of `load_task` on hostile inputs, each in a fresh subprocess.

    python benchmarks/hostile_inputs.py            # every case
    python benchmarks/hostile_inputs.py objects    # the cases whose name contains "objects"

Every case should end in a typed `PDDLError` or a correct task: a file just under the size limit
full of unknown atoms, one over it, a 2 MB object name, a 20,000-deep type chain, grounding far
beyond the memory limit (40^7 and 11^7 instances of one seven-parameter schema, five such schemas),
a translator that outgrows its memory cap (the estimate disabled), 100,000 objects, 20,000 ferry
cars, empty goals, a valid negative goal, a FIFO, ``/dev/zero`` and a directory. Prints one row
per case: seconds, the child's peak resident memory (MB) and the outcome. `run_case` is what
``tests/test_hostile_inputs.py`` runs, under a 2 GB address-space cap.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FERRY_DOMAIN = ROOT / "domains" / "ferry" / "domain.pddl"
CHILD = """
import resource, sys
{patch}
from pddlgym_sl import load_task
from pddlgym_sl.errors import PDDLError
try:
    task = load_task(sys.argv[1], sys.argv[2])
    goal = " (goal at init)" if task.is_goal(task.init) else ""
    print(f"ok: {{len(task.actions)}} actions, {{len(task.objects)}} objects{{goal}}")
except PDDLError as exc:
    print(f"{{type(exc).__name__}}: {{exc.cause[:160]}}")
finally:
    print("peak_kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""
NO_ESTIMATE = """
import pddlgym_sl.translate as _t
from pddlgym_sl.ground_size import GroundEstimate
_t.check_ground_size = lambda d, p: GroundEstimate({}, {}, 0, 0)  # as if the estimate were wrong
"""
EXPLOSIVE = """(define (domain boom) (:requirements :strips)
 (:predicates (p ?a) (q ?a ?b ?c ?d ?e ?f ?g))
 (:action go :parameters (?a ?b ?c ?d ?e ?f ?g) :precondition (p ?a)
  :effect (q ?a ?b ?c ?d ?e ?f ?g)))"""


def _five_schemas() -> str:
    """Five seven-parameter schemas, each under the per-schema limit of 20 million that was once
    the only bound (11^7 = 19.5 million instances each)."""
    preds = " ".join(f"(q{k} ?a ?b ?c ?d ?e ?f ?g)" for k in range(5))
    actions = " ".join(
        f"(:action go{k} :parameters (?a ?b ?c ?d ?e ?f ?g) :precondition (p ?a) "
        f":effect (q{k} ?a ?b ?c ?d ?e ?f ?g))"
        for k in range(5)
    )
    return f"(define (domain boom) (:requirements :strips) (:predicates (p ?a) {preds}) {actions})"


@dataclass
class Case:
    """One hostile input: the files `load_task` reads, and how the child is started."""

    name: str
    domain: Path
    problem: Path
    env: dict[str, str] = field(default_factory=dict)
    patch: str = ""


def _problem(objects: str, init: str, goal: str, domain: str = "ferry", extra: str = "") -> str:
    return (
        f"(define (problem p) (:domain {domain}) {extra}(:objects {objects}) (:init {init}) (:goal {goal}))"
    )


def cases(tmp: Path) -> list[Case]:
    """Every hostile case, its files written under `tmp`."""
    ferry_goal = "(and (at c0 l1))"
    ferry_init = "(location l0) (location l1) (not-eq l0 l1) (not-eq l1 l0) (at-ferry l0) (empty-ferry)"
    out = []

    def write(name: str, text: str) -> Path:
        path = tmp / name
        path.write_text(text)
        return path

    atoms = " ".join(f"(foo{i} a b)" for i in range(500_000))  # about 8 MB
    out.append(
        Case(
            "8 MB of unknown atoms",
            FERRY_DOMAIN,
            write("atoms.pddl", _problem("l0 l1 c0", atoms, ferry_goal)),
        )
    )
    atoms = " ".join(f"(foo{i} a b)" for i in range(1_000_000))
    out.append(
        Case(
            "16 MB file (over the limit)",
            FERRY_DOMAIN,
            write("big.pddl", _problem("l0 l1 c0", atoms, ferry_goal)),
        )
    )
    name = "c" * 2_000_000
    out.append(
        Case(
            "2 MB object name",
            FERRY_DOMAIN,
            write("name.pddl", _problem(f"l0 l1 {name}", "", f"(and (at {name} l1))")),
        )
    )
    chain = " ".join(f"t{i + 1} - t{i}" for i in range(20_000))
    deep = "(define (domain deep) (:requirements :strips :typing) "
    deep += f"(:types t0 - object {chain}) (:predicates (p ?x - t0)))"
    out.append(
        Case(
            "20,000-deep type chain",
            write("deep.pddl", deep),
            write("deep_p.pddl", _problem("x - t20000", "(p x)", "(p x)", "deep")),
        )
    )
    boom = write("boom.pddl", EXPLOSIVE)
    for n in (40, 11):

        def objects(n: int = n) -> tuple[str, str]:
            return " ".join(f"o{i}" for i in range(n)), " ".join(f"(p o{i})" for i in range(n))

        text = _problem(*objects(), "(q o0 o0 o0 o0 o0 o0 o0)", "boom")
        out.append(Case(f"{n}^7 ground actions", boom, write(f"boom{n}_p.pddl", text)))
    text = _problem(*objects(11), "(q0 o0 o0 o0 o0 o0 o0 o0)", "boom")
    out.append(Case("five schemas of 11^7", write("five.pddl", _five_schemas()), write("five_p.pddl", text)))
    objs, init = objects(6)  # 6^7 = 280,000 instances: about 1.1 GB
    out.append(
        Case(
            "translator over its memory cap",
            boom,
            write("cap_p.pddl", _problem(objs, init, "(q o0 o0 o0 o0 o0 o0 o0)", "boom")),
            env={"PDDLGYM_SL_MAX_GROUND_BYTES": "64M"},
            patch=NO_ESTIMATE,
        )
    )
    names = " ".join(f"o{i}" for i in range(100_000))
    many = " ".join(f"(location o{i})" for i in range(100_000))
    text = _problem(f"l0 l1 c0 {names}", f"{ferry_init} (car c0) (at c0 l0) {many}", ferry_goal)
    out.append(Case("100,000 objects", FERRY_DOMAIN, write("objects.pddl", text)))
    cars = " ".join(f"c{i}" for i in range(20_000))
    at = " ".join(f"(car c{i}) (at c{i} l0)" for i in range(20_000))
    text = _problem(f"l0 l1 {cars}", f"{ferry_init} {at}", ferry_goal)
    out.append(Case("20,000 ferry cars", FERRY_DOMAIN, write("cars.pddl", text)))
    start = f"{ferry_init} (car c0) (at c0 l0)"
    out.append(
        Case("empty goal (and)", FERRY_DOMAIN, write("goal_and.pddl", _problem("l0 l1 c0", start, "(and)")))
    )
    out.append(
        Case("empty goal ()", FERRY_DOMAIN, write("goal_empty.pddl", _problem("l0 l1 c0", start, "()")))
    )
    req = "(:requirements :negative-preconditions) "
    text = _problem("l0 l1 c0", start, "(and (at c0 l1) (not (on c0)))", extra=req)
    out.append(Case("negative goal, problem requirements", FERRY_DOMAIN, write("neg_goal.pddl", text)))
    fifo = tmp / "fifo.pddl"
    os.mkfifo(fifo)
    out.append(Case("a FIFO", FERRY_DOMAIN, fifo))
    out.append(Case("/dev/zero", FERRY_DOMAIN, Path("/dev/zero")))
    out.append(Case("a directory", FERRY_DOMAIN, tmp))
    return out


def run_case(
    case: Case, timeout: float, preexec_fn: Callable[[], None] | None = None
) -> tuple[int, str, float, float]:
    """Run one case in a fresh interpreter: (exit status, last output line, seconds, peak resident
    MB of the child as it reports it; NaN when it died before reporting)."""
    env = {**os.environ, **case.env}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(patch=case.patch), str(case.domain), str(case.problem)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
        preexec_fn=preexec_fn,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return -9, f"timeout after {timeout:.0f} s", time.perf_counter() - start, float("nan")
    seconds = time.perf_counter() - start
    peaks = [line.split()[1] for line in err.splitlines() if line.startswith("peak_kb ")]
    peak = int(peaks[-1]) / 1024 if peaks else float("nan")
    err = "\n".join(line for line in err.splitlines() if not line.startswith("peak_kb "))
    lines = (out.strip() or err.strip() or "(no output)").splitlines()
    return proc.returncode, lines[-1], seconds, peak


def main(argv: list[str]) -> None:
    wanted = argv[0] if argv else ""
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'case':38} {'seconds':>8} {'peak MB':>8}  outcome")
        for case in cases(Path(tmp)):
            if wanted not in case.name:
                continue
            _, outcome, seconds, peak = run_case(case, timeout=600)
            print(f"{case.name:38} {seconds:8.1f} {peak:8.0f}  {outcome[:120]}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
