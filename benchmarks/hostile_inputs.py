"""Benchmark: time and peak memory of `load_task` on hostile inputs, each in a fresh subprocess.

    python benchmarks/hostile_inputs.py

Every case should end in a typed `PDDLError` (or a correct task) within 30 s and 2 GB: a file
just under the size limit full of unknown atoms, one over it, a 2 MB object name, a 20,000-deep
type chain, a 300-byte domain with 40^7 ground actions, a FIFO, ``/dev/zero`` and a directory.
Prints one row per case: outcome, seconds, peak resident memory of the child (MB).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FERRY_DOMAIN = Path(__file__).resolve().parents[1] / "domains" / "ferry" / "domain.pddl"
CHILD = """
import sys
from pddlgym_sl import load_task
from pddlgym_sl.errors import PDDLError
try:
    task = load_task(sys.argv[1], sys.argv[2])
    print(f"ok: {len(task.actions)} actions")
except PDDLError as exc:
    print(f"{type(exc).__name__}: {str(exc)[-90:]}")
"""
EXPLOSIVE = """(define (domain boom) (:requirements :strips)
 (:predicates (p ?a) (q ?a ?b ?c ?d ?e ?f ?g))
 (:action go :parameters (?a ?b ?c ?d ?e ?f ?g) :precondition (p ?a)
  :effect (q ?a ?b ?c ?d ?e ?f ?g)))"""


def _problem(objects: str, init: str, goal: str, domain: str = "ferry") -> str:
    return f"(define (problem p) (:domain {domain}) (:objects {objects}) (:init {init}) (:goal {goal}))"


def cases(tmp: Path) -> list[tuple[str, Path, Path]]:
    """(name, domain file, problem file) of every hostile case, written under `tmp`."""
    ferry_goal = "(and (at c0 l1))"
    out = []

    def write(name: str, text: str) -> Path:
        path = tmp / name
        path.write_text(text)
        return path

    atoms = " ".join(f"(foo{i} a b)" for i in range(500_000))  # about 8 MB
    out.append(
        ("8 MB of unknown atoms", FERRY_DOMAIN, write("atoms.pddl", _problem("l0 l1 c0", atoms, ferry_goal)))
    )
    atoms = " ".join(f"(foo{i} a b)" for i in range(1_000_000))
    out.append(
        (
            "16 MB file (over the limit)",
            FERRY_DOMAIN,
            write("big.pddl", _problem("l0 l1 c0", atoms, ferry_goal)),
        )
    )
    name = "c" * 2_000_000
    out.append(
        (
            "2 MB object name",
            FERRY_DOMAIN,
            write("name.pddl", _problem(f"l0 l1 {name}", "", f"(and (at {name} l1))")),
        )
    )
    chain = " ".join(f"t{i + 1} - t{i}" for i in range(20_000))
    deep = "(define (domain deep) (:requirements :strips :typing) "
    deep += f"(:types t0 - object {chain}) (:predicates (p ?x - t0)))"
    out.append(
        (
            "20,000-deep type chain",
            write("deep.pddl", deep),
            write("deep_p.pddl", _problem("x - t20000", "(p x)", "(p x)", "deep")),
        )
    )
    objects = " ".join(f"o{i}" for i in range(40))
    init = " ".join(f"(p o{i})" for i in range(40))
    boom = write("boom_p.pddl", _problem(objects, init, "(q o0 o0 o0 o0 o0 o0 o0)", "boom"))
    out.append(("40^7 ground actions", write("boom.pddl", EXPLOSIVE), boom))
    fifo = tmp / "fifo.pddl"
    os.mkfifo(fifo)
    out.append(("a FIFO", FERRY_DOMAIN, fifo))
    out.append(("/dev/zero", FERRY_DOMAIN, Path("/dev/zero")))
    out.append(("a directory", FERRY_DOMAIN, tmp))
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'case':30} {'seconds':>8} {'peak MB':>8}  outcome")
        for name, domain_file, problem_file in cases(Path(tmp)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-c", CHILD, str(domain_file), str(problem_file)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            seconds = time.perf_counter() - start
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            outcome = (proc.stdout.strip() or proc.stderr.strip().splitlines()[-1])[:110]
            # ru_maxrss of children is the largest child so far: report it only when it grew
            shown = f"{peak / 1024:8.0f}" if peak > before else f"{'<=' + format(before / 1024, '.0f'):>8}"
            print(f"{name:30} {seconds:8.1f} {shown}  {outcome}", flush=True)


if __name__ == "__main__":
    main()
