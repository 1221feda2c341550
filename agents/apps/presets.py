"""The paper's training presets ``configs/<domain>-<model>.yaml``, rendered from the registries.

One preset per registered domain and model (`domains.DOMAINS` × `agents.models.MODELS`): the
paper's budget (section 4 and appendix C) with the model's learning rate and weight decay from
its `agents.models.spec.ModelSpec`. ``python -m agents.supervised --config FILE`` and the sweep
read them; after adding a domain or a model, write the new ones with

    python -m agents.apps.presets --out configs

(``--check`` only reports files that differ from their rendering; the tests run it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import domains
from agents.registries import MODELS
from pddlgym_sl.cli import ArgumentParser, Command, argparse_parse

__all__ = ["PAPER_BUDGET", "preset_files", "render_preset"]

PAPER_BUDGET = {"data": "data", "steps": 40000, "batch_size": 256}
"""The paper's budget: the full dataset (``data/<domain>``), 40,000 steps of batch 256."""
PAPER_OPTIMISER = {"grad_clip": 0.1, "train_problems": 400, "val_every": 1000}


def render_preset(domain: str, model: str) -> str:
    """The YAML text of ``configs/<domain>-<model>.yaml``."""
    spec = MODELS[model]
    name = f"configs/{domain}-{model}.yaml"
    header = [
        f"The paper's training setting for {model} on {domain} (Nunez-Molina et al., IJCAI 2024, section 4 "
        "and appendix C):",
        "AdamW, batch 256, gradient-norm clip 0.1, 40,000 steps, 400 training problems; "
        "lr 1e-2 (1e-3 for HGN);",
        "weight decay 1e-2 (none for linear regression, appendix C.1). Choose the grid cell with flags:",
        f"  python -m agents.supervised --config {name} --dist tn --sigma learn --residual hff --seed 0",
        f"Needs the paper-scale dataset: python -m pddlgym_sl.data.generate --domain {domain} --split train "
        "(and val, test)",
    ]
    values = {
        "domain": domain,
        "model": model,
        **PAPER_BUDGET,
        "lr": spec.lr,
        "weight_decay": spec.paper_weight_decay,
        **PAPER_OPTIMISER,
    }
    body = [
        f"{key}: {value!r}" if isinstance(value, float) else f"{key}: {value}"
        for key, value in values.items()
    ]
    return "\n".join([*(f"# {line}" for line in header), *body]) + "\n"


def preset_files(out: Path) -> dict[Path, str]:
    """Every preset's path under ``out`` and its text."""
    return {
        out / f"{domain}-{model}.yaml": render_preset(domain, model)
        for domain in domains.DOMAINS
        for model in MODELS
    }


def build_parser(prog: str) -> ArgumentParser:
    parser = ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("configs"), help="directory of the presets")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file differs")
    return parser


def run(args: argparse.Namespace) -> int:
    """Write the presets that differ from their rendering (``--check``: list them, exit 1)."""
    stale = [
        path
        for path, text in preset_files(args.out).items()
        if not path.is_file() or path.read_text() != text
    ]
    if args.check:
        for path in stale:
            print(f"differs from its rendering: {path}")
        return 1 if stale else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for path in stale:
        path.write_text(preset_files(args.out)[path])
        print(f"wrote {path}")
    return 0


COMMAND = Command("python -m agents.apps.presets", argparse_parse(build_parser), run, extra="learn")


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
