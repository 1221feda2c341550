"""The compiled kernels of lifted successor generation: conjunctive queries over a state's atoms
(`enumerate_bindings`), effects applied to a state (`apply_action`), the goal test.

A query (`task.JoinPlan`) is run as a backtracking join: step d draws candidates for its literal
from a sorted code array (the state's codes for a fluent literal, its relation's permuted codes
for a static one), the range of those agreeing with the step's bound prefix found by binary
search; each candidate is checked on the step's other positions (equal to a bound variable or
constant, of the variable's type) and binds the step's new variables; the constraints placed
after the step are checked; then the next step starts. Iterative, with the cursor of every
step in two small arrays, so no recursion and no allocation per state.

Compiled (numba) because it is the lifted search's hot path: every expansion runs every schema's
query, and Python would spend microseconds per candidate (a childsnack state has hundreds of
thousands of bindings before symmetry reduction, `symmetry`).

**Symmetry.** With ``use_sym``, objects of one class of ``sym_class`` (objects interchangeable in
the state, the goal and the static atoms: `symmetry.object_classes`) are bound in canonical order
only: within a binding, the distinct objects of a class, in the order the steps bind them, must
be that class's members of rank 0, 1, 2, ... Every binding is the image of a canonical one under
a permutation of interchangeable objects, which maps the state to itself, so the successors left
out are isomorphic to successors kept (a plan through one maps to a plan through the other).
"""

from __future__ import annotations

from numba import njit

from pddlgym_sl.lifted.query import (
    BIND,
    DOMAIN,
    EMIT_ALL,
    EMIT_FIRST,
    EQUAL,
    FLUENT,
    NEG_FLUENT,
    NEG_STATIC,
    NOT_EQUAL,
    Q_CON0,
    Q_CON1,
    Q_HEAD,
    Q_SCHEMA,
    Q_STEP0,
    Q_STEP1,
    Q_VAR0,
    Q_VARS,
    S_ARITY,
    S_CON0,
    S_CON1,
    S_KIND,
    S_PRED,
    S_PREFIX,
    S_REL,
    S_TERMS,
    STATIC,
    VIEW,
)
from pddlgym_sl.numba_cache import CACHE

__all__ = [
    "OVERFLOW",
    "apply_action",
    "build_views",
    "effect_changes",
    "enumerate_bindings",
    "equals_changed",
    "is_goal",
    "lower_bound",
    "merge_changes",
    "state_codes",
]

_JIT = {"cache": CACHE, "nogil": True}
_INLINE = {**_JIT, "inline": "always"}

OVERFLOW = -1
"""What `enumerate_bindings` returns when ``out`` is full (the caller grows it and runs again)."""


@njit(**_INLINE)
def lower_bound(a, lo, hi, x):
    """The first index in ``a[lo:hi]`` (sorted) whose value is >= x (hi when none)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(**_INLINE)
def _contains(a, n, x):
    i = lower_bound(a, 0, n, x)
    return i < n and a[i] == x


@njit(**_INLINE)
def _value(t, binding):
    return binding[t] if t >= 0 else -t - 1


@njit(**_INLINE)
def _constraints_hold(plan, c0, c1, binding, codes, n_codes, relaxed):
    """Whether the constraint rows c0..c1 hold under `binding` (in relaxed mode negative fluent
    literals are ignored, as the delete relaxation ignores them)."""
    a_max = plan.pw.shape[0] - 1
    for c in range(c0, c1):
        kind = plan.cons[c, 0]
        if kind in (EQUAL, NOT_EQUAL):
            same = _value(plan.cons[c, 3], binding) == _value(plan.cons[c, 4], binding)
            if same != (kind == EQUAL):
                return False
            continue
        if kind == NEG_FLUENT and relaxed:
            continue
        code = plan.cons[c, 1] * plan.pw[a_max]
        for i in range(plan.cons[c, 2]):
            code += _value(plan.cons[c, 3 + i], binding) * plan.pw[a_max - 1 - i]
        if kind == NEG_FLUENT and _contains(codes, n_codes, code):
            return False
        if kind == NEG_STATIC and _contains(plan.static_codes, plan.static_codes.shape[0], code):
            return False
    return True


@njit(**_INLINE)
def _canonical(plan, var0, place, o, binding, sym_class, sym_rank):
    """Whether binding object `o` as the `place`-th variable of the binding order keeps the binding
    canonical (module docstring): o's rank is at most one past the highest rank of its class
    among the variables bound before."""
    c = sym_class[o]
    if c < 0:
        return True
    m = 0
    for j in range(place):
        p = binding[plan.bind_order[var0 + j]]
        if sym_class[p] == c and sym_rank[p] + 1 > m:
            m = sym_rank[p] + 1
    return sym_rank[o] <= m


@njit(**_JIT)
def build_views(plan, codes, n_codes, view_codes, view_ptr):
    """Fill the fluent views (`task.JoinPlan.views`) of the state whose sorted codes are
    ``codes[:n_codes]``: view v's codes into ``view_codes[view_ptr[v]:view_ptr[v + 1]]`` (the
    pointers are set here; ``view_codes`` must hold the state's atoms of every view's predicate)."""
    a_max = plan.pw.shape[0] - 1
    n = plan.pw[1]
    m = 0
    for v in range(plan.views.shape[0]):
        view_ptr[v] = m
        pred, arity = plan.views[v, 0], plan.views[v, 1]
        base = pred * plan.pw[a_max]
        lo = lower_bound(codes, 0, n_codes, base)
        hi = lower_bound(codes, lo, n_codes, base + plan.pw[a_max])
        for k in range(lo, hi):
            c = base
            for i in range(arity):
                o = (codes[k] // plan.pw[a_max - 1 - plan.views[v, 2 + i]]) % n
                c += o * plan.pw[a_max - 1 - i]
            view_codes[m] = c
            m += 1
        view_codes[view_ptr[v] : m].sort()
    view_ptr[plan.views.shape[0]] = m


@njit(**_INLINE)
def _start(plan, s, binding, codes, n_codes, view_codes, view_ptr, pos, end, d):
    """Set the candidate range of step row `s` (cursor d) under the current binding."""
    kind = plan.steps[s, S_KIND]
    if kind == DOMAIN:
        m = plan.steps[s, S_REL]
        pos[d] = plan.dom_ptr[m]
        end[d] = plan.dom_ptr[m + 1]
        return
    a_max = plan.pw.shape[0] - 1
    prefix = plan.steps[s, S_PREFIX]
    base = plan.steps[s, S_PRED] * plan.pw[a_max]
    for i in range(prefix):
        base += _value(plan.steps[s, S_TERMS + i], binding) * plan.pw[a_max - 1 - i]
    span = plan.pw[a_max - prefix]
    if kind == FLUENT:
        lo = lower_bound(codes, 0, n_codes, base)
        pos[d] = lo
        end[d] = lower_bound(codes, lo, n_codes, base + span)
    elif kind == STATIC:
        r = plan.steps[s, S_REL]
        lo = lower_bound(plan.rel_codes, plan.rel_ptr[r], plan.rel_ptr[r + 1], base)
        pos[d] = lo
        end[d] = lower_bound(plan.rel_codes, lo, plan.rel_ptr[r + 1], base + span)
    elif kind == VIEW:
        r = plan.steps[s, S_REL]
        lo = lower_bound(view_codes, view_ptr[r], view_ptr[r + 1], base)
        pos[d] = lo
        end[d] = lower_bound(view_codes, lo, view_ptr[r + 1], base + span)
    else:  # DELTA: the new atoms, after the views in the same array
        r = view_ptr.shape[0] - 1
        lo = lower_bound(view_codes, view_ptr[r], view_codes.shape[0], base)
        pos[d] = lo
        end[d] = lower_bound(view_codes, lo, view_codes.shape[0], base + span)


@njit(**_INLINE)
def _advance(
    plan, s, var0, binding, codes, n_codes, view_codes, pos, end, d, sym_class, sym_rank, use_sym, relaxed
):
    """Move cursor d of step row `s` to its next candidate that binds consistently and passes the
    step's constraints; False when there is none."""
    kind = plan.steps[s, S_KIND]
    a_max = plan.pw.shape[0] - 1
    n = plan.pw[1]
    while pos[d] < end[d]:
        k = pos[d]
        pos[d] = k + 1
        ok = True
        if kind == DOMAIN:
            o = plan.dom_obj[k]
            if use_sym and not _canonical(
                plan, var0, plan.steps[s, S_TERMS + 2 * a_max], o, binding, sym_class, sym_rank
            ):
                continue
            binding[plan.steps[s, S_TERMS]] = o
        else:
            if kind == FLUENT:
                code = codes[k]
            elif kind == STATIC:
                code = plan.rel_codes[k]
            else:  # a view, or the new atoms
                code = view_codes[k]
            for i in range(plan.steps[s, S_PREFIX], plan.steps[s, S_ARITY]):
                o = (code // plan.pw[a_max - 1 - i]) % n
                t = plan.steps[s, S_TERMS + i]
                if plan.steps[s, S_TERMS + a_max + i] == BIND:
                    if plan.masks[plan.var_mask[var0 + t], o] == 0:
                        ok = False
                        break
                    if use_sym and not _canonical(
                        plan, var0, plan.steps[s, S_TERMS + 2 * a_max + i], o, binding, sym_class, sym_rank
                    ):
                        ok = False
                        break
                    binding[t] = o
                elif _value(t, binding) != o:
                    ok = False
                    break
            if not ok:
                continue
        if _constraints_hold(
            plan, plan.steps[s, S_CON0], plan.steps[s, S_CON1], binding, codes, n_codes, relaxed
        ):
            return True
    return False


@njit(**_JIT)
def enumerate_bindings(
    plan,
    q0,
    q1,
    codes,
    n_codes,
    view_codes,
    view_ptr,
    binding,
    pos,
    end,
    sym_class,
    sym_rank,
    use_sym,
    relaxed,
    out,
    n_out,
):
    """Append to ``out`` (rows: schema, then the query's variables' objects) every binding of the
    queries q0..q1 over the state whose sorted atom codes are ``codes[:n_codes]`` (and its views,
    `build_views`, which also leaves the atoms a `task.DELTA` step draws from after the views:
    ``view_codes[view_ptr[-1]:]``); returns the new row count, or `OVERFLOW` when ``out`` is full.

    A query whose head step (`task.Q_HEAD`) is set emits one binding per binding of the steps up
    to it (the later variables are existential); `task.EMIT_FIRST`: at most one binding.
    ``binding``, ``pos``, ``end``: scratch arrays (at least the largest query's variables and
    steps). ``relaxed``: ignore negative fluent literals and symmetry (reachability)."""
    cap = out.shape[0]
    for q in range(q0, q1):
        n_vars = plan.queries[q, Q_VARS]
        s0 = plan.queries[q, Q_STEP0]
        n_steps = plan.queries[q, Q_STEP1] - s0
        var0 = plan.queries[q, Q_VAR0]
        head = plan.queries[q, Q_HEAD]
        schema = plan.queries[q, Q_SCHEMA]
        if not _constraints_hold(
            plan, plan.queries[q, Q_CON0], plan.queries[q, Q_CON1], binding, codes, n_codes, relaxed
        ):
            continue
        if n_steps == 0:
            if n_out >= cap:
                return OVERFLOW
            out[n_out, 0] = schema
            for v in range(1, out.shape[1]):
                out[n_out, v] = 0
            n_out += 1
            continue
        d = 0
        _start(plan, s0, binding, codes, n_codes, view_codes, view_ptr, pos, end, 0)
        while d >= 0:
            if not _advance(
                plan, s0 + d, var0, binding, codes, n_codes, view_codes, pos, end, d, sym_class, sym_rank,
                use_sym and not relaxed, relaxed,
            ):  # fmt: skip
                d -= 1
                continue
            if d + 1 < n_steps:
                d += 1
                _start(plan, s0 + d, binding, codes, n_codes, view_codes, view_ptr, pos, end, d)
                continue
            if n_out >= cap:
                return OVERFLOW
            out[n_out, 0] = schema
            for v in range(n_vars):
                out[n_out, 1 + v] = binding[v]
            for v in range(1 + n_vars, out.shape[1]):
                out[n_out, v] = 0
            n_out += 1
            if head == EMIT_FIRST:
                break
            if head != EMIT_ALL:
                d = head  # the next binding of the head variables; later ones were existential
    return n_out


@njit(**_INLINE)
def _effect_id(task_effects, e, row, pw, fact_code):
    """Fact id of effect row e under the action ``row`` (schema, objects...), -1 when the atom is
    not a reachable fluent atom."""
    a_max = pw.shape[0] - 1
    code = task_effects[e, 1] * pw[a_max]
    for i in range(task_effects[e, 2]):
        t = task_effects[e, 3 + i]
        o = row[1 + t] if t >= 0 else -t - 1
        code += o * pw[a_max - 1 - i]
    i = lower_bound(fact_code, 0, fact_code.shape[0], code)
    if i < fact_code.shape[0] and fact_code[i] == code:
        return i
    return -1


@njit(**_INLINE)
def _sort_unique(a, n):
    """Sort ``a[:n]`` in place (insertion sort: an action has a few effects) and drop repeats;
    returns the new length."""
    for i in range(1, n):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x
    m = 0
    for i in range(n):
        if m == 0 or a[m - 1] != a[i]:
            a[m] = a[i]
            m += 1
    return m


@njit(**_JIT)
def effect_changes(effects, effect_ptr, pw, fact_code, row, state, n, adds, dels):
    """What the ground action ``row`` changes in the state ``state[:n]`` (sorted fact ids): the
    added facts that were false into ``adds`` and the deleted facts that were true (and not added:
    deletes apply before adds, as in PDDL) into ``dels``, both sorted; returns (n_adds, n_dels),
    n_adds -1 when an add effect is not a reachable fluent atom (a bug of the analysis)."""
    s = row[0]
    na = 0
    nd = 0
    for e in range(effect_ptr[s], effect_ptr[s + 1]):
        f = _effect_id(effects, e, row, pw, fact_code)
        if effects[e, 0] == 1:
            if f < 0:
                return -1, 0
            adds[na] = f
            na += 1
        elif f >= 0:
            dels[nd] = f
            nd += 1
    na = _sort_unique(adds, na)
    nd = _sort_unique(dels, nd)
    m = 0
    for i in range(nd):  # deleted, true now, not added again
        if _contains(state, n, dels[i]) and not _contains(adds, na, dels[i]):
            dels[m] = dels[i]
            m += 1
    k = 0
    for i in range(na):  # added, false now
        if not _contains(state, n, adds[i]):
            adds[k] = adds[i]
            k += 1
    return k, m


@njit(**_JIT)
def merge_changes(state, n, adds, na, dels, nd, out):
    """Write the state ``state[:n]`` with the changes of `effect_changes` into ``out``; returns its
    length (n + na - nd)."""
    j = 0
    k = 0
    m = 0
    for i in range(n):
        x = state[i]
        while j < na and adds[j] < x:
            out[m] = adds[j]
            m += 1
            j += 1
        if k < nd and dels[k] == x:
            k += 1
            continue
        out[m] = x
        m += 1
    while j < na:
        out[m] = adds[j]
        m += 1
        j += 1
    return m


@njit(**_JIT)
def equals_changed(state, n, adds, na, dels, nd, other, lo):
    """Whether ``other[lo:lo + n + na - nd]`` is the state ``state[:n]`` with the changes of
    `effect_changes` (compared as `merge_changes` would write it, without writing)."""
    j = 0
    k = 0
    m = lo
    for i in range(n):
        x = state[i]
        while j < na and adds[j] < x:
            if other[m] != adds[j]:
                return False
            m += 1
            j += 1
        if k < nd and dels[k] == x:
            k += 1
            continue
        if other[m] != x:
            return False
        m += 1
    while j < na:
        if other[m] != adds[j]:
            return False
        m += 1
        j += 1
    return True


@njit(**_JIT)
def apply_action(effects, effect_ptr, pw, fact_code, row, state, n, out, adds, dels):
    """Write the successor of the state ``state[:n]`` (sorted fact ids) under the ground action
    ``row`` into ``out`` (sorted); returns its length, or -1 when an add effect is not a
    reachable fluent atom (a bug of the analysis). ``adds``, ``dels``: scratch."""
    na, nd = effect_changes(effects, effect_ptr, pw, fact_code, row, state, n, adds, dels)
    if na < 0:
        return -1
    return merge_changes(state, n, adds, na, dels, nd, out)


@njit(**_JIT)
def is_goal(state, n, goal, goal_neg):
    """Whether the state ``state[:n]`` (sorted fact ids) holds every goal fact and no fact of
    ``goal_neg`` (both sorted)."""
    for g in goal:
        if not _contains(state, n, g):
            return False
    for g in goal_neg:
        if _contains(state, n, g):
            return False
    return True


@njit(**_JIT)
def state_codes(fact_code, state, n, out):
    """The atom codes of the state ``state[:n]`` (sorted, since ids sort like codes) into ``out``."""
    for i in range(n):
        out[i] = fact_code[state[i]]
