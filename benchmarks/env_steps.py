"""Benchmark: environment steps per second, ours against PDDLGym's PyPI release, on the same ferry problem.

    python benchmarks/env_steps.py [--locations 10 --cars 10 --seconds 3] [--setup-pddlgym]

One generated ferry problem (default 10 locations, 10 cars) is played by a uniformly random
policy over the applicable actions (seeded; episodes end at the goal or after 500 steps) in:

- ours, ``gym.make("pddl/ferry-v1", problems=[file], obs=..., heuristics=...)`` with the
  `gym.make` wrappers (TimeLimit, OrderEnforcing, PassiveEnvChecker), for several observation
  types, with no heuristics, with LM-cut + hmax + hFF, and with all six heuristics;
- ours with the ``-v0`` id (the per-problem action space, before the fixed one of ``-v1``), with
  no heuristics: the ``-v1 / -v0`` ratio printed at the end is the single-environment cost of the
  fixed action interface;
- ours vectorised: ``gym.make_vec("pddl/ferry-v1", num_envs=4, vectorization_mode="sync",
  split="train", obs=..., heuristics=())``, four sub-environments drawing the 400 problems of
  ferry's train split (2-6 locations and cars, 10-102 ground actions; ``--vector-split``), the
  action space ``Discrete(max_actions)`` of the split; the rate counts the steps of all four
  sub-environments (episodes end at the goal or after 500 steps, then the sub-environment resets
  itself on its next step, drawing another problem). These rows have no PDDLGym counterpart;
- PDDLGym 0.0.7 (``pddlgym.core.PDDLEnv(domain, problem_dir, operators_as_actions=True,
  dynamic_action_space=True)``, its fastest way to list the applicable actions)
  loaded with *our* ferry domain file. PDDLGym needs the unmaintained ``gym`` package and
  ``pillow<10``, so it lives in its own virtual environment (not a project dependency) and is
  timed in a subprocess by this same file (``--pddlgym-worker``), with the same clock and loop.
  ``--setup-pddlgym`` creates that environment (``pip install pddlgym``) at
  ``~/.cache/pddlgym_sl/pddlgym-venv``; ``--pddlgym-python`` or ``$PDDLGYM_PYTHON`` points
  elsewhere.

Two rates per run, both counting only time inside the timed calls (choosing the random action
and resets are excluded):

- ``step``: ``env.step(action)`` alone;
- ``step+app``: ``env.step`` plus obtaining the applicable actions of the new state (ours returns
  them in ``info["action_mask"]``, so both columns are equal; PDDLGym computes them with
  ``env.action_space.all_ground_literals(obs)``). This is the like-for-like figure for an agent
  that needs to know which actions it may take.

JIT compilation is excluded by a warm-up. Ratios are ours / PDDLGym (for the vector rows, the
steps of all sub-environments against PDDLGym's single environment). Top-level imports are the
standard library only, so the worker runs under PDDLGym's interpreter without our package.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_VENV = Path.home() / ".cache" / "pddlgym_sl" / "pddlgym-venv"
EPISODE_STEPS = 500


# --------------------------------------------------------------------------- PDDLGym side
def pddlgym_worker(domain_file: str, problem_dir: str, seconds: float, seed: int) -> dict:
    """Time PDDLGym on the problem (runs under PDDLGym's interpreter; prints JSON)."""
    import random
    import warnings

    warnings.filterwarnings("ignore")
    import pddlgym
    from pddlgym.core import PDDLEnv

    env = PDDLEnv(domain_file, problem_dir, operators_as_actions=True, dynamic_action_space=True)
    rng = random.Random(seed)

    def applicable(obs):
        return sorted(env.action_space.all_ground_literals(obs), key=str)

    obs, _ = env.reset()
    acts = applicable(obs)
    steps, t_step, t_app, t_end, episode = 0, 0.0, 0.0, time.perf_counter() + seconds, 0
    while time.perf_counter() < t_end:
        action = acts[rng.randrange(len(acts))]
        t0 = time.perf_counter()
        obs, _, done, _, _ = env.step(action)
        t1 = time.perf_counter()
        acts = applicable(obs)
        t2 = time.perf_counter()
        t_step += t1 - t0
        t_app += t2 - t1
        steps += 1
        episode += 1
        if done or episode >= EPISODE_STEPS:
            obs, _ = env.reset()
            acts = applicable(obs)
            episode = 0
    version = getattr(pddlgym, "__version__", None)
    if version is None:
        from importlib.metadata import version as _v

        version = _v("pddlgym")
    return {
        "version": version,
        "steps": steps,
        "step": steps / t_step,
        "step+app": steps / (t_step + t_app),
        "n_ground_actions": len(env.action_space._all_ground_literals),
    }


def run_pddlgym(python: str, domain_file: Path, problem_file: Path, seconds: float, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        pdir = Path(tmp) / "problems"
        pdir.mkdir()
        (pdir / problem_file.name).write_bytes(problem_file.read_bytes())
        dfile = Path(tmp) / "domain.pddl"
        dfile.write_bytes(domain_file.read_bytes())
        cmd = [python, __file__, "--pddlgym-worker", str(dfile), str(pdir), str(seconds), str(seed)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600 + 10 * seconds, cwd=tmp)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "worker failed")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def find_pddlgym_python(explicit: str | None) -> tuple[str | None, str]:
    """(interpreter with pddlgym importable, how it was found) or (None, why not)."""
    candidates = [
        explicit,
        os.environ.get("PDDLGYM_PYTHON"),
        str(DEFAULT_VENV / "bin" / "python"),
        sys.executable,
    ]
    for python in candidates:
        if not python or not Path(python).exists():
            continue
        probe = subprocess.run(
            [python, "-c", "import warnings; warnings.filterwarnings('ignore'); import pddlgym.core"],
            capture_output=True,
            text=True,
        )
        if probe.returncode == 0:
            return python, python
    return None, (
        "pddlgym is not importable from --pddlgym-python, $PDDLGYM_PYTHON, "
        f"{DEFAULT_VENV}/bin/python or this interpreter (run with --setup-pddlgym)"
    )


def setup_pddlgym() -> None:
    """Create ~/.cache/pddlgym_sl/pddlgym-venv with PDDLGym's PyPI release."""
    if not (DEFAULT_VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(DEFAULT_VENV)], check=True)
    subprocess.run([str(DEFAULT_VENV / "bin" / "pip"), "install", "--quiet", "pddlgym"], check=True)


# --------------------------------------------------------------------------- our side
def run_ours(
    problem_file: Path,
    obs: str,
    heuristics: tuple[str, ...],
    seconds: float,
    seed: int,
    env_id: str = "pddl/ferry-v1",
) -> dict:
    import gymnasium as gym
    import numpy as np

    import pddlgym_sl  # noqa: F401  (registers the ids)

    env = gym.make(env_id, problems=[problem_file], obs=obs, heuristics=heuristics)
    rng = np.random.default_rng(seed)

    def loop(budget: float) -> tuple[int, float]:
        _, info = env.reset(seed=seed)
        steps, t_step, t_end = 0, 0.0, time.perf_counter() + budget
        while time.perf_counter() < t_end:
            acts = np.flatnonzero(info["action_mask"])
            action = int(acts[rng.integers(len(acts))])
            t0 = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            t_step += time.perf_counter() - t0
            steps += 1
            if terminated or truncated:
                _, info = env.reset()
        return steps, t_step

    loop(min(0.5, seconds))  # warm-up: numba JIT and first-call caches
    steps, t_step = loop(seconds)
    n_actions = env.unwrapped.task.n_actions
    env.close()
    return {"steps": steps, "step": steps / t_step, "step+app": steps / t_step, "n_ground_actions": n_actions}


def run_vector(split: str, obs: str, seconds: float, seed: int, num_envs: int = 4) -> dict:
    """Steps per second of all sub-environments of a sync vector env over a ferry split."""
    import gymnasium as gym
    import numpy as np

    import pddlgym_sl  # noqa: F401  (registers the ids)

    envs = gym.make_vec(
        "pddl/ferry-v1", num_envs=num_envs, vectorization_mode="sync", split=split, obs=obs, heuristics=()
    )
    rng = np.random.default_rng(seed)

    def loop(budget: float) -> tuple[int, float]:
        _, info = envs.reset(seed=seed)
        steps, t_step, t_end = 0, 0.0, time.perf_counter() + budget
        while time.perf_counter() < t_end:
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
            t0 = time.perf_counter()
            _, _, _, _, info = envs.step(actions)
            t_step += time.perf_counter() - t0
            steps += num_envs
        return steps, t_step

    loop(min(0.5, seconds))  # warm-up: numba JIT and first-call caches
    steps, t_step = loop(seconds)
    n_actions = envs.single_action_space.n
    envs.close()
    return {"steps": steps, "step": steps / t_step, "step+app": steps / t_step, "n_ground_actions": n_actions}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--pddlgym-worker"]:
        d, p, s, seed = argv[1:5]
        print(json.dumps(pddlgym_worker(d, p, float(s), int(seed))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locations", type=int, default=10)
    parser.add_argument("--cars", type=int, default=10)
    parser.add_argument("--problem-seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per configuration")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random policy")
    parser.add_argument("--vector-split", default="train", help="ferry split of the vector-env rows")
    parser.add_argument("--pddlgym-python", default=None, help="interpreter with pddlgym installed")
    parser.add_argument(
        "--setup-pddlgym", action="store_true", help=f"pip install pddlgym into {DEFAULT_VENV}"
    )
    args = parser.parse_args(argv)

    import domains

    if args.setup_pddlgym:
        setup_pddlgym()
    tmp_dir = tempfile.TemporaryDirectory(prefix="env_steps_")
    tmp = Path(tmp_dir.name)
    name = f"ferry-l{args.locations}-c{args.cars}-s{args.problem_seed}"
    problem_file = tmp / f"{name}.pddl"
    problem_file.write_text(
        domains.generate_problem("ferry", seed=args.problem_seed, locations=args.locations, cars=args.cars)
    )
    domain_file = domains.domain_file("ferry")

    bounds = ("lmcut", "hmax", "hff")
    configs = [
        ("ilg", ()),
        ("flat", ()),
        ("nlm", ()),
        ("hypergraph", ()),
        ("ilg", bounds),
        ("flat", bounds),
        ("ilg", ("lmcut", "hmax", "blind", "hff", "hadd", "goal_count")),
    ]
    rows = []
    for obs, heur in configs:
        r = run_ours(problem_file, obs, heur, args.seconds, args.seed)
        rows.append((f"pddlgym-sl obs={obs} h={','.join(heur) or 'none'}", r))
    v0 = {
        obs: run_ours(problem_file, obs, (), args.seconds, args.seed, "pddl/ferry-v0")
        for obs in ("ilg", "flat")
    }
    for obs, r in v0.items():
        rows.append((f"pddlgym-sl -v0 (per-problem action space) obs={obs} h=none", r))
    for obs in ("ilg", "flat"):
        r = run_vector(args.vector_split, obs, args.seconds, args.seed)
        label = f"pddlgym-sl make_vec sync x4, ferry {args.vector_split} split, obs={obs} h=none"
        rows.append((label, r))

    python, how = find_pddlgym_python(args.pddlgym_python)
    ref, ref_note = None, ""
    if python is None:
        ref_note = f"PDDLGym not run: {how}"
    else:
        try:
            ref = run_pddlgym(python, domain_file, problem_file, max(args.seconds, 5.0), args.seed)
            ref_note = f"PDDLGym {ref['version']} (PyPI), interpreter {python}"
        except Exception as exc:  # report, never invent a figure
            ref_note = f"PDDLGym failed: {type(exc).__name__}: {exc}"

    print(
        f"problem: {name} ({rows[0][1]['n_ground_actions']} ground actions), random applicable-action policy"
    )
    print(ref_note)
    header = f"{'environment':<66} {'step/s':>10} {'step+app/s':>11} {'x PDDLGym':>10} {'x (step+app)':>12}"
    print(header)
    print("-" * len(header))
    for label, r in rows:
        ratio = f"{r['step'] / ref['step']:.0f}x" if ref else "n/a"
        ratio_app = f"{r['step+app'] / ref['step+app']:.0f}x" if ref else "n/a"
        print(f"{label:<66} {r['step']:>10,.0f} {r['step+app']:>11,.0f} {ratio:>10} {ratio_app:>12}")
    if ref:
        label = f"PDDLGym {ref['version']} ({ref['n_ground_actions']} ground actions)"
        print(f"{label:<66} {ref['step']:>10,.1f} {ref['step+app']:>11,.1f} {'1x':>10} {'1x':>12}")
    v1 = {label.split("obs=")[1].split()[0]: r for label, r in rows[:2]}
    print(
        "single env, -v1 / -v0 step rate: "
        + ", ".join(f"obs={o} {v1[o]['step'] / v0[o]['step']:.2f}" for o in v0)
    )
    print(
        "targets: >= 20,000 steps/s without heuristics, >= 100x PDDLGym; >= 2,000 steps/s with lmcut+hmax+hff"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
