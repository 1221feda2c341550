"""The NLM's compiled CPU path: numba kernels that compute the PyTorch model's function faster.

PyTorch runs each step of an NLM layer as its own full pass over memory and keeps most
intermediates for autograd; the arity-3 steps materialise ``[B, N, N, N, C]`` tensors. The kernels
here work over the real objects of each batch element only (padding costs nothing), with 8-lane
SIMD over channels, on batch slices in ``torch.get_num_threads()`` threads:

==================  ==========================================================================
module              computes
==================  ==========================================================================
`exists_forall`     the masked ∃/∀ of an arity-1 or -2 tensor (training and inference)
`arity2`            a layer's activated arity-2 output, or its ∃/∀ (training and inference)
`arity3_block`      the arity-3 block of the first two layers, from their arity-2 inputs straight
                    to the four ∃/∀ tensors the next layers read (training)
`arity3_memo`       the same block for inference, memoised and computed incrementally from
                    states evaluated in full shortly before
`low_arity`         a layer's arity <= 1 outputs in one call (inference)
`inference`         `InferencePlan`: the gradient-free forward of a network (search)
`simd`, `jit`,      8-lane vectors, numba options and inlined helpers, threads, array layouts
`threads`, `arrays`
==================  ==========================================================================

This package depends on the model (`agents.models.nlm.layer`, `.network`) and never the reverse:
the model asks for a `agents.models.nlm.compiled.CompiledPath`, and `agents.models.nlm` installs
`COMPILED_PATH` below. The tests compare every kernel with the generic PyTorch path.
"""

from __future__ import annotations

from agents.models.nlm.compiled import CompiledPath
from agents.models.nlm.fast.arity2 import arity2_output
from agents.models.nlm.fast.arity3_block import block3
from agents.models.nlm.fast.exists_forall import masked_max_min
from agents.models.nlm.fast.inference import InferencePlan
from agents.models.nlm.fast.threads import inline_kernels

__all__ = ["COMPILED_PATH", "inline_kernels"]

COMPILED_PATH = CompiledPath(
    exists_forall=masked_max_min,
    arity2_output=arity2_output,
    arity3_block=block3,
    inference_plan=InferencePlan.build,
)
"""The numba implementations of what `agents.models.nlm.compiled.CompiledPath` asks for."""
