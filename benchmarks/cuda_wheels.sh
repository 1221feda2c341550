#!/usr/bin/env bash
# The wheels that the device machine's image lacks, for benchmarks/cuda_check.sh (it has no
# network; its Python 3.12 has PyTorch with CUDA, NumPy and numba, not the rest of our requirements),
# at the versions this environment has where it has them:
#   bash benchmarks/cuda_wheels.sh [DIR]          # default .whl (git-ignored: add it to a run's carry)
# then, on the device machine:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site:$PWD bash benchmarks/cuda_check.sh FERRY_RUN GRIPPER_RUN $OUT
# Fast Downward's wheel (61 MB) does not fit a call's 64 MiB, so the checks there use no solver.
set -euo pipefail
dir=${1:-.whl}
py=${PYTHON:-python3}
mkdir -p "$dir"
names="gymnasium farama-notifications cloudpickle tyro docstring-parser typeguard typing-extensions
  fast-downward-translate pyperplan wlplan pddl click lark python-sat six networkx"
pins=$($py - $names <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
for name in sys.argv[1:]:
    try:
        print(f"{name}=={version(name)}")
    except PackageNotFoundError:
        print(name)
PY
)
pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  --platform manylinux_2_34_x86_64 --dest "$dir" $pins
du -sh "$dir"
