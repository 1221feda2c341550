"""Checks of what a run directory's files hold, field by field, before anything uses them.

`agents.checkpoint` reads the files safely (no pickled code, typed errors for missing, truncated
or corrupt files); this module checks their *content*: a file that parses can still lie. A
negative step, a NaN best validation value, a ``steps`` of 25.5, a step beyond the run's steps,
an ``n_outputs`` that asks for a 16 TB weight matrix, a batch size of a trillion, int64 weights
where the model has float32 (``load_state_dict`` would cast them silently), a missing ``seed``
(the dataclass default would stand in for it) -- each is one `CheckpointError` naming the file and
the field, raised before any of it is used:

- ``args.json`` (`check_args`): every field of the command's ``Args`` present (those whose
  default is None may be absent, and fields added later take the value that reproduces runs
  written before them), of the annotated type (an int is not a float, a float is finite, a
  ``Literal`` one of its values), and in the ``Args``' ranges -- the range error names the field
  of the file, not the command-line flag the user never typed;
- ``last.pt`` (`check_number`, `check_state_dict`, `check_optimizer_state`): counters are ints in
  range, values finite, the model's tensors exactly the model's names, shapes and dtypes (finite),
  the optimiser's groups those of a fresh optimiser and its per-parameter state shaped like the
  parameters;
- ``model.json`` and the safetensors (`check_model_config`, `check_weights`): the three sections
  and their types, the head's outputs equal to the model's, the model as the config describes it
  (built on PyTorch's ``meta`` device: no memory) equal in names, shapes and dtypes to the stored
  weights, which must be finite.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, Literal

from agents.errors import CheckpointError
from pddlgym_sl.arguments import ArgumentRangeError, with_paths
from pddlgym_sl.errors import ConfigError

if typing.TYPE_CHECKING:
    import torch

__all__ = [
    "check_args",
    "check_model_config",
    "check_number",
    "check_optimizer_state",
    "check_state_dict",
    "check_weights",
]


# --------------------------------------------------------------------------- scalars
def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_number(
    value: Any,
    path: Path,
    field: str,
    *,
    integer: bool = False,
    low: float | None = None,
    high: float | None = None,
    allow_inf: bool = False,
    what: str = "",
) -> float:
    """`value` if it is an int (``integer``) or a real number, not NaN, finite unless
    ``allow_inf``, and in ``[low, high]``; else a `CheckpointError` naming `path` and `field`
    (`what` explains the range)."""
    kind = "an integer" if integer else "a number"
    ok = _is_int(value) if integer else _is_real(value)
    if ok and not integer:
        ok = not math.isnan(value) and (allow_inf or math.isfinite(value))
    if ok and ((low is not None and value < low) or (high is not None and value > high)):
        ok = False
    if not ok:
        if low is not None and low == high:
            raise CheckpointError(f"field {field!r} must be {_num(low, '')}{what}, not {value!r}", file=path)
        span = "" if low is None and high is None else f" in [{_num(low, '-inf')}, {_num(high, 'inf')}]"
        raise CheckpointError(f"field {field!r} must be {kind}{span}{what}, not {value!r}", file=path)
    return value


def _num(x: float | None, none: str) -> str:
    return none if x is None else f"{x:,}" if _is_int(x) else f"{x:g}"


# --------------------------------------------------------------------------- args.json
def _describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(tp))
    names = {int: "an integer", float: "a finite number", bool: "true or false", str: "a string"}
    names |= {Path: "a path (a string)", type(None): "null"}
    if origin in (tuple, list):
        return "a list"
    return names.get(tp, getattr(tp, "__name__", str(tp)))


def _fits(value: Any, tp: Any) -> bool:
    """Whether a JSON value fits a field annotation (unknown annotations accept anything)."""
    origin = typing.get_origin(tp)
    if origin is Literal:
        return any(type(value) is type(a) and value == a for a in typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in typing.get_args(tp))
    if origin in (tuple, list):
        if not isinstance(value, list):
            return False
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return all(_fits(v, args[0]) for v in value) if len(args) == 1 else True
    if tp is type(None):
        return value is None
    if tp is int:
        return _is_int(value)
    if tp is float:
        return _is_real(value) and math.isfinite(value)
    if tp is bool:
        return isinstance(value, bool)
    if tp in (str, Path):
        return isinstance(value, str)
    return True


_FLAG = re.compile(r"--([a-z][a-z0-9-]*)")


def check_args(
    args_class: type,
    stored: dict[str, Any],
    path: Path,
    command: str,
    added_later: dict[str, Any] | None = None,
    registries: dict[str, Callable[[], Collection[str]]] | None = None,
) -> Any:
    """The ``args_class`` instance that ``args.json`` at `path` holds (`stored`), checked field by
    field (see the module docstring); `CheckpointError` naming the file and field otherwise.

    ``added_later`` maps fields that runs written before they existed lack to the value that
    reproduces those runs; ``registries`` maps a field to the names its registry holds now (a
    model registered at run time is not among its ``Literal``'s names, fixed at import)."""
    hints = typing.get_type_hints(args_class)
    fields = {f.name: f for f in dataclasses.fields(args_class)}
    unknown = sorted(set(stored) - set(fields))
    if unknown:
        raise CheckpointError(
            f"field(s) {', '.join(map(repr, unknown))} are not arguments of {command}: not the "
            f"arguments of an {command} run",
            file=path,
        )
    values = dict(stored)
    for name, f in fields.items():
        if name in values:
            continue
        if added_later and name in added_later:
            values[name] = added_later[name]
        elif f.default is not None or f.default_factory is not dataclasses.MISSING:
            raise CheckpointError(
                f"field {name!r} is missing (a run records every argument it was started with)", file=path
            )
    for name, value in values.items():
        if registries and name in registries and isinstance(value, str) and value in registries[name]():
            continue
        if not _fits(value, hints[name]):
            raise CheckpointError(
                f"field {name!r} must be {_describe(hints[name])}, not {value!r}", file=path
            )
    try:
        return args_class(**with_paths(args_class, values))
    except ArgumentRangeError as exc:
        raise CheckpointError(
            f"field {exc.field!r} must be {exc.requirement}, not {exc.value!r}", file=path
        ) from None
    except ConfigError as exc:  # a rule between fields: name them as fields, not as flags
        cause = _FLAG.sub(lambda m: repr(m.group(1).replace("-", "_")), exc.cause)
        raise CheckpointError(f"inconsistent fields: {cause}", file=path) from None


# --------------------------------------------------------------------------- tensors
def check_state_dict(stored: Any, reference: dict[str, torch.Tensor], path: Path, field: str) -> None:
    """`stored` must hold exactly `reference`'s tensors: names, shapes and dtypes, with finite
    floating values (``load_state_dict`` would cast another dtype silently)."""
    import torch

    label = f"field {field!r}" if field else "the file"
    if not isinstance(stored, dict):
        raise CheckpointError(f"{label} must be a dict of tensors, not {type(stored).__name__}", file=path)
    missing, extra = sorted(set(reference) - set(stored)), sorted(set(stored) - set(reference))
    if missing or extra:
        parts = [
            f"missing {', '.join(missing[:3])}" if missing else "",
            f"unknown {', '.join(extra[:3])}" if extra else "",
        ]
        raise CheckpointError(
            f"{label} does not hold the model's tensors ({'; '.join(p for p in parts if p)})",
            file=path,
        )
    for name, ref in reference.items():
        value = stored[name]
        where = f"{field}.{name}" if field else name
        if not isinstance(value, torch.Tensor):
            raise CheckpointError(f"field {where!r} must be a tensor, not {type(value).__name__}", file=path)
        if value.dtype != ref.dtype:
            raise CheckpointError(
                f"field {where!r} has dtype {value.dtype}, the model's is {ref.dtype}", file=path
            )
        if tuple(value.shape) != tuple(ref.shape):
            raise CheckpointError(
                f"field {where!r} has shape {tuple(value.shape)}, the model's is {tuple(ref.shape)}",
                file=path,
            )
        if value.is_floating_point() and not bool(torch.isfinite(value).all()):
            raise CheckpointError(f"field {where!r} holds NaN or infinite values", file=path)


def check_optimizer_state(
    stored: Any, optimizer: torch.optim.Optimizer, path: Path, field: str = "optimizer"
) -> None:
    """`stored` must be a state of `optimizer`'s kind for its parameters: the same groups (the same
    parameters, hyperparameters of the same types, finite and >= 0), and per parameter tensors of
    its shape and dtype (or scalars, such as Adam's step), finite."""
    import torch

    reference = optimizer.state_dict()
    if not isinstance(stored, dict) or set(stored) != {"state", "param_groups"}:
        raise CheckpointError(f"field {field!r} must hold 'state' and 'param_groups'", file=path)
    groups, ref_groups = stored["param_groups"], reference["param_groups"]
    if not isinstance(groups, list) or len(groups) != len(ref_groups):
        raise CheckpointError(f"field '{field}.param_groups' must be a list of {len(ref_groups)}", file=path)
    by_index: dict[Any, torch.Tensor] = {}
    for k, (group, ref) in enumerate(zip(groups, ref_groups, strict=True)):
        where = f"{field}.param_groups[{k}]"
        if not isinstance(group, dict) or set(group) != set(ref):
            raise CheckpointError(f"field {where!r} must have the keys {sorted(ref)}", file=path)
        if group["params"] != ref["params"]:
            raise CheckpointError(f"field '{where}.params' must be {ref['params']}", file=path)
        for key, value in group.items():
            if key != "params":
                _check_hyper(value, ref[key], path, f"{where}.{key}")
        by_index.update(zip(ref["params"], optimizer.param_groups[k]["params"], strict=True))
    state = stored["state"]
    if not isinstance(state, dict):
        raise CheckpointError(f"field '{field}.state' must be a dict", file=path)
    for index, entry in state.items():
        where = f"{field}.state[{index!r}]"
        if index not in by_index or not isinstance(entry, dict):
            raise CheckpointError(f"field {where!r} is not the state of a parameter of the model", file=path)
        param = by_index[index]
        for key, value in entry.items():
            name = f"{where}.{key}"
            if _is_real(value):
                check_number(value, path, name, low=0)
                continue
            if not isinstance(value, torch.Tensor):
                raise CheckpointError(f"field {name!r} must be a tensor or a number", file=path)
            if value.dim() == 0:
                check_number(value.item(), path, name, low=0)
            elif tuple(value.shape) != tuple(param.shape) or value.dtype != param.dtype:
                raise CheckpointError(
                    f"field {name!r} has shape {tuple(value.shape)} and dtype {value.dtype}, its "
                    f"parameter's are {tuple(param.shape)} and {param.dtype}",
                    file=path,
                )
            elif value.is_floating_point() and not bool(torch.isfinite(value).all()):
                raise CheckpointError(f"field {name!r} holds NaN or infinite values", file=path)


def _check_hyper(value: Any, ref: Any, path: Path, field: str) -> None:
    """An optimiser hyperparameter: the type of a fresh optimiser's, numbers finite and >= 0."""
    if ref is None or isinstance(ref, bool):
        if value is not ref and type(value) is not type(ref):
            raise CheckpointError(f"field {field!r} must be {ref!r}, not {value!r}", file=path)
        return
    if _is_real(ref):
        check_number(value, path, field, low=0)
        return
    if isinstance(ref, tuple | list):
        if not isinstance(value, tuple | list) or len(value) != len(ref):
            raise CheckpointError(
                f"field {field!r} must be a sequence of {len(ref)}, not {value!r}", file=path
            )
        for k, (v, r) in enumerate(zip(value, ref, strict=True)):
            _check_hyper(v, r, path, f"{field}[{k}]")
        return
    if type(value) is not type(ref):
        raise CheckpointError(f"field {field!r} must be a {type(ref).__name__}, not {value!r}", file=path)


# --------------------------------------------------------------------------- model.json + weights
MODEL_JSON_SECTIONS = ("model", "head", "domain")


def check_model_config(config: dict[str, Any], path: Path) -> tuple[str, dict[str, Any], Any]:
    """(model name, its constructor's config, the head) from a ``model.json``, every section and
    field checked; the model itself is checked against the weights by `check_weights`."""
    from agents.heads import make_head
    from agents.models import MODELS

    if set(config) != set(MODEL_JSON_SECTIONS):
        raise CheckpointError(
            f"must hold exactly the fields {', '.join(MODEL_JSON_SECTIONS)}, not {', '.join(sorted(config))}",
            file=path,
        )
    model, head_config, domain = config["model"], config["head"], config["domain"]
    if not isinstance(domain, str) or not domain:
        raise CheckpointError(f"field 'domain' must be a domain name, not {domain!r}", file=path)
    if not isinstance(model, dict):
        raise CheckpointError(f"field 'model' must be an object, not {model!r}", file=path)
    model = dict(model)
    name = model.pop("name", None)
    if name not in MODELS:
        raise CheckpointError(
            f"field 'model.name' must be one of {', '.join(sorted(MODELS))}, not {name!r}", file=path
        )
    if not isinstance(head_config, dict):
        raise CheckpointError(f"field 'head' must be an object, not {head_config!r}", file=path)
    for key, value in head_config.items():
        if key == "max_cost":
            check_number(value, path, "head.max_cost", integer=True, low=0, high=1_000_000)
        elif not isinstance(value, str):
            raise CheckpointError(f"field 'head.{key}' must be a string, not {value!r}", file=path)
    try:
        head = make_head(**head_config)
    except (TypeError, ValueError) as exc:  # AgentError is a ValueError
        raise CheckpointError(f"field 'head' does not describe a head ({exc})", file=path) from None
    n_outputs = model.get("n_outputs")
    check_number(
        n_outputs,
        path,
        "model.n_outputs",
        integer=True,
        low=head.n_outputs,
        high=head.n_outputs,
        what=f" (the {head_config.get('dist')!s} head's outputs)",
    )
    return name, model, head


def build_on_meta(name: str, model_config: dict[str, Any], path: Path) -> torch.nn.Module:
    """The model `model_config` describes, on the ``meta`` device (shapes only: no memory)."""
    import torch

    from agents.models import make_model

    try:
        with torch.device("meta"):
            return make_model(name, **model_config)
    except (TypeError, ValueError, KeyError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(f"field 'model' cannot rebuild a {name} model ({first})", file=path) from None


def check_weights(
    weights: dict[str, torch.Tensor], meta_model: torch.nn.Module, weights_path: Path, config_path: Path
) -> None:
    """The stored weights must be the model's exactly (names, shapes, dtypes) and finite. A shape
    that differs is the model.json's fault when the weights file is intact, so both are named."""
    reference = meta_model.state_dict()
    try:
        check_state_dict(weights, reference, weights_path, "")
    except CheckpointError as exc:
        raise CheckpointError(
            f"the weights do not fit the model as {config_path.name} describes it ({exc.cause})",
            file=weights_path,
        ) from None
