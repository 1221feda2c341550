#!/usr/bin/env bash
# The CUDA check of the learned heuristics (issue 26), one short script for a GPU machine:
#   bash benchmarks/cuda_check.sh FERRY_NLM_RUN GRIPPER_NLM_RUN [OUT_DIR]
# 1. GBFS + NLM rates at 100 objects (ferry 50/50, 8 searches; 4 gripper `plan` problems) with the
#    forward passes on the GPU, then the same untrained model with the hmax bound on GPU and CPU
#    (the CPU row is this machine's baseline, same run);
# 2. agents.evaluate --device cuda --lockstep 8 end to end on 8 gripper `plan` problems;
# 3. the CUDA tests (lockstep on CUDA node for node the searches alone; --device auto);
# 4. STRIPS-HGN's sparse forward on the GPU (ferry 20/20, 8 searches).
# The rates come first: they are what a short device budget is for. The LM-cut rows are the
# slow ones (LM-cut alone evaluates about 200 states/s at 100 objects on a CPU core, and the row
# times it alone too, after the kernels' first compile): 250 evaluations per search there.
# The runs: any trained NLM runs, e.g. the paper experiment's kept ones
# (runs/{ferry,gripper}__nlm__tn__learn__hff__s0 of `python -m experiments.results_store
# experiments/results/paper-v2 --into .`); the packages the
# device image lacks: benchmarks/cuda_wheels.sh. Each step has its own time limit, so that one that hangs leaves the rest their time; the log
# goes to OUT_DIR/cuda_check.log (default: the current directory).
set -u
ferry_run=$1 gripper_run=$2 out=${3:-.}
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}  # the interpreter with the project and CUDA PyTorch
step() { echo "== $* ($(date +%T))"; }
{
  step machine
  nvidia-smi -L
  $py -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__, 'cuda', torch.cuda.is_available())"
  step "trained NLMs (LM-cut bound), forward passes on cuda"
  timeout 240 $py benchmarks/search_speed.py --parts nlm gripper --sizes 50 --lockstep 8 \
    --nlm-evaluations 250 --repeats 1 --device cuda --run "$ferry_run" --gripper 4 --gripper-run "$gripper_run"
  for device in cuda cpu; do
    step "untrained NLM (hmax bound), forward passes on $device"
    timeout 100 $py benchmarks/search_speed.py --parts nlm --sizes 50 --lockstep 8 \
      --nlm-evaluations 500 --repeats 1 --bound hmax --device $device
  done
  step "agents.evaluate --device cuda --lockstep 8"
  timeout 100 $py -m agents.evaluate --run "$gripper_run" --split plan --problems 8 --limit 300 \
    --lockstep 8 --device cuda
  step tests
  timeout 100 $py -m pytest -q -p no:cacheprovider tests/test_lockstep.py tests/test_devices.py -k "cuda or auto" -rs
  step "untrained STRIPS-HGN (hmax bound), forward passes on cuda"
  timeout 60 $py benchmarks/search_speed.py --parts nlm --models hgn --sizes 20 --lockstep 8 \
    --nlm-evaluations 500 --repeats 1 --bound hmax --device cuda
  step done
} 2>&1 | tee "$out/cuda_check.log"
