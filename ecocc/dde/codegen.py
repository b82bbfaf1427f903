"""Compiled kernels generated from a model's laws (one description, every model).

A model's laws (:mod:`ecocc.models`) are scalar functions of an ``ops`` namespace.  Here they are
evaluated once on SymPy symbols -- the per-flow state (as its logarithm where the model integrates the
logarithm), the queueing delay, the per-flow and per-link static fields, the delayed link state, load
and queue of each (link, flow) pair, the aggregated feedback, the model's numeric parameters -- and the
resulting expressions are printed as plain Python (``sympy.printing.pycode``, common subexpressions
eliminated) into scalar functions.  A right-hand side that loops over flows, links and pairs with the
semantics of :meth:`ecocc.system.NetworkSystem.rhs` calls them; the generic Dormand--Prince integrator
(:mod:`ecocc.dde.integrator`, copied verbatim below them) calls that.  The module is written to the kernel
cache directory under a name carrying a hash of its source (written to a temporary file and renamed, so
concurrent processes never load half a file) and compiled by numba with ``cache=True``: the second run of
a model in any process loads the machine code from numba's cache.

Why generated source rather than numba compiling the laws themselves (the other route the design allows):
the laws are written for NumPy and SymPy -- dicts of states (``s["x"]``), parameter objects, string
options tested in Python (``if P.aqm == "red"``) -- none of which numba compiles, so numba-compiling them
would mean writing them a third time.  Evaluated on symbols, the options are resolved once, the
parameters become array entries (a sweep of a gain reuses one compiled kernel), and SymPy simplifies what
the NumPy form computes literally: an AECP flow's ``alpha x (ln r - ln x) / x`` with ``x = e^u`` and
``r = min_l e^{v_l}`` becomes ``alpha (min_l v_l - u)`` -- the aggregation of a signal ``e^g`` by ``min``
or ``max`` is done on ``g`` (monotone), and the exp-log pair cancels -- which is what the hand-written AECP
kernel did.  Measured (see ``docs/notes/engine.md``): the generated AECP kernel runs as fast as the hand
transcription it replaces.

Numerics, stated: the generated code evaluates the same laws in another order (SymPy's canonical form,
e.g. ``0.1 (q - 50) / 500`` becomes ``0.0002 q - 0.01``), so it agrees with the NumPy solver to
round-off per evaluation; with the same step decisions the runs agree to a few ulp per step, and where a
round-off difference flips one step decision (an accept/reject at the tolerance boundary) the two runs
differ by a tolerance-sized amount.  Float constants in the laws are printed with 15 significant
digits (SymPy's default precision): they may differ from the literal in the 16th digit.

Hooks of :meth:`NetworkSystem.rhs`, followed generically (no model named here): a model's
``link_drop_fraction`` (active queue management, e.g. RED) is generated as ``_law_drop`` on the link's
current state, queue and arrival; that fraction of the arrival is taken out of the queue's input and added
to ``lost`` with the operations of the NumPy right-hand side, so arrived = departed + lost + queue holds.
The per-pair extras of a link signal (``pair_extras``, :data:`PAIR_EXTRAS`) are computed in the pair loop:
``n_active`` counts the flows on the link active at the load's delay, ``rate`` is the receiving flow's
current rate, ``self_seen`` is 1.0 where the receiving flow itself is active at that delay (the entry
``k = p`` of ``n_active``'s count: ``t - d_b(l, p)``, less ``d_f(l, p)`` with forward delays), else 0.0.  A
piecewise signal that reads the delayed load in some branches only (drop-tail: the load at a full buffer,
:func:`_reads_when`) gets ``_law_reads_y``: a pair whose branch ignores the load skips its per-flow sum (the
same values; ``Generated.lazy``).  The laws are evaluated with exact symbolic ops (``SYMPY_EXACT_OPS``: every
branch of a piecewise law, where the linearization keeps only the one its equilibrium lies on).

Queueing delay and forward delays (two variants of ``_model_rhs``, :func:`variant_flags`; the default text
is unchanged, so the shipped modules are too): with ``rtt_includes_queueing`` (``sdd``) every positive
feedback delay of flow ``p`` -- the pairs' link signals, the loads they read, the own load one round trip
back -- is lengthened by ``Q_p = max(sum_{l in p} q_l / C_l, 0)`` of the state the right-hand side is
called with, as :meth:`NetworkSystem.queueing_delays` and ``adaptive._Evaluator`` do; flow activity and
cross traffic are still read at the constant delays, as there.  With forward delays (``fwd``) the arrival at
link ``l`` sums each flow's rate at ``t - d_f(l, k)`` (its state from the history, its queueing delay the
current one) and the load a pair reads is each flow's at ``d_b(l, p) + d_f(l, k)``.  Breakpoints are the
reference's (:meth:`DDEProblem.breakpoints`, propagated through the constant delays only).

Reading of a delayed load (``load_rtt="sent"``, a third variant, :func:`variant_flags`): a delayed load or
forward-delayed rate that reads the queueing delay reads it at the sending time -- the flow's path queues read
from the history at the same delayed time (the queues are then stored) -- and such a load is aggregated per link
like a queue-free one, its slope by the chain rule through the flow states and the path queues
(docs/notes/renosent.md).  The lock-step kernel does not follow it (``engine._variant_gap``); where no delayed
load reads the queueing delay the variant is the default text (``Generated.sent`` False,
:func:`sent_differs`), so the lock-step kernel runs it there.

Scope: what :class:`NetworkSystem` computes with no state jumps; :func:`supported` says why not otherwise,
and the caller uses the NumPy solver.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import re
import sys
from pathlib import Path

import numpy as np

_HERE = Path(__file__).resolve().parent
#: bump to regenerate every module (a change of the generator not visible in the generated text)
GEN_VERSION = 3
#: the per-pair extras (NetworkModel.pair_extras) the generated right-hand side computes
PAIR_EXTRAS = ("n_active", "rate", "self_seen")
_AGG_INIT = {"min": "math.inf", "max": "-math.inf", "sum": "0.0"}

_modules: dict = {}


# ---------------------------------------------------------------------------
# symbolic laws
# ---------------------------------------------------------------------------

def numeric_params(P) -> list:
    """The parameter fields that become symbols (entries of the kernel's ``par`` array), in order: the
    numeric ones.  Options (strings, booleans, ``None``) are resolved at generation: they select laws.

    Parameters
    ----------
    P : ModelParams
        A model's parameter object.

    Returns
    -------
    list of str
        The names of its numeric fields, in declaration order.
    """
    out = []
    for f in dataclasses.fields(P):
        if not f.init:
            continue
        v = getattr(P, f.name)
        if isinstance(v, (bool, np.bool_)) or v is None or isinstance(v, str):
            continue
        if isinstance(v, (int, float, np.integer, np.floating)):
            out.append(f.name)
    return out


def _symbolic_params(P):
    """A copy of the parameter object whose numeric fields are SymPy symbols (methods and properties of the
    class still work; validation is skipped)."""
    import sympy as sp
    names = numeric_params(P)
    obj = object.__new__(type(P))
    for f in dataclasses.fields(P):
        object.__setattr__(obj, f.name, getattr(P, f.name))
    syms = []
    for nm in names:
        s = sp.Symbol(f"p_{nm}", real=True)
        object.__setattr__(obj, nm, s)
        syms.append(s)
    return obj, syms


class Laws:
    """The model's laws on symbols (see the module docstring); attributes are SymPy expressions and the
    symbol lists that the generated functions take as arguments."""

    def __init__(self, model, P, st_keys, lst_keys):
        import sympy as sp
        from ..models.base import SYMPY_EXACT_OPS as ops

        def R(name):
            return sp.Symbol(name, real=True)

        m = self.model = model
        Ps, self.par = _symbolic_params(P)
        self.u = [R(f"u_{v}") for v in m.flow_states]              # flow states (log where flow_log)
        fs = {v: (sp.exp(u) if lg else u) for v, lg, u in zip(m.flow_states, m.flow_log, self.u)}
        self.qd = R("qd")
        self.st = [R(f"st_{k}") for k in st_keys]
        st = dict(zip(st_keys, self.st))
        self.rate = sp.sympify(m.flow_rate(ops, fs, self.qd, Ps, st))
        self.load = sp.sympify(m.flow_load(ops, fs, self.qd, Ps, st)) if m.separate_load else self.rate
        self.own = sp.sympify(m.own_load(ops, fs, Ps, st)) if m.needs_own_delayed else None
        # a (link, flow) pair's delayed link state, queue and load, and the link's fields
        self.lv = [R(f"lv_{v}") for v in m.link_states]
        ls = {v: (sp.exp(u) if lg else u) for v, lg, u in zip(m.link_states, m.link_log, self.lv)}
        self.qq, self.yy, self.CC = R("qq"), R("yy"), R("CC")
        self.ls = [R(f"ls_{k}") for k in lst_keys]
        lst = dict(zip(lst_keys, self.ls))
        # the per-pair extras the system adds to the signal's static dict (NetworkModel.pair_extras)
        self.px = [R(f"px_{k}") for k in m.pair_extras]
        sig = sp.sympify(m.link_signal(ops, ls, self.qq, self.yy if m.signal_uses_arrival else None, self.CC,
                                       Ps, {**lst, **dict(zip(m.pair_extras, self.px))}))
        self.fb = R("fb")
        self.ownsym = R("own")
        # a signal e^g aggregated by min or max: aggregate g (exp is monotone) and hand the law e^fb
        self.log_agg = m.path_aggregate in ("min", "max") and isinstance(sig, sp.exp)
        self.signal = sig.args[0] if self.log_agg else sig
        fb_nat = sp.exp(self.fb) if self.log_agg else self.fb
        d = m.flow_law(ops, fs, fb_nat, self.ownsym if m.needs_own_delayed else None, self.qd, Ps, st)
        self.dflow = [sp.sympify(d[v]) / fs[v] if lg else sp.sympify(d[v])
                      for v, lg in zip(m.flow_states, m.flow_log)]
        # the link's current state, queue and arrival
        self.lc = [R(f"lc_{v}") for v in m.link_states]
        lc = {v: (sp.exp(u) if lg else u) for v, lg, u in zip(m.link_states, m.link_log, self.lc)}
        self.q, self.y, self.C = R("q"), R("y"), R("C")
        dl = m.link_law(ops, lc, self.q, self.y, self.C, Ps, lst) if m.link_states else {}
        self.dlink = [sp.sympify(dl[v]) / lc[v] if lg else sp.sympify(dl[v])
                      for v, lg in zip(m.link_states, m.link_log)]
        # active queue management: the fraction of the arrival dropped before the queue, or None
        dr = m.link_drop_fraction(ops, lc, self.q, self.y, self.C, Ps, lst)
        self.drop = None if dr is None else sp.sympify(dr)

    def uses(self, expr, sym) -> bool:
        """Whether ``expr`` (a SymPy expression or None) depends on the symbol ``sym``.

        Parameters
        ----------
        expr : sympy.Expr or None
            An expression of the laws.
        sym : sympy.Symbol
            One of the laws' symbols.

        Returns
        -------
        bool
            True if ``sym`` is among ``expr``'s free symbols.
        """
        return expr is not None and sym in expr.free_symbols


def _reads_when(expr, sym):
    """Where ``expr`` reads ``sym``: a SymPy condition, true wherever the value of ``expr`` may depend on
    ``sym`` (``sympy.true`` when that cannot be told: ``sym`` in a condition, or outside a piecewise branch).

    A piecewise law (``ops.where``: drop-tail's ``where(full, 1 - C/y, 0)``) reads ``sym`` only in the branches
    whose value uses it: branch ``i`` is taken where its condition holds and no earlier one does.

    Parameters
    ----------
    expr : sympy.Expr
        A law (the link signal).
    sym : sympy.Symbol
        One of its arguments (the delayed load ``yy``).

    Returns
    -------
    sympy.logic.boolalg.Boolean
        ``sympy.false`` if ``expr`` never reads ``sym``, ``sympy.true`` if always (or unknown), else the
        condition on the other arguments.
    """
    import sympy as sp
    if sym not in expr.free_symbols:
        return sp.false
    if not isinstance(expr, sp.Piecewise):
        return sp.true
    need, before = sp.false, sp.false
    for e, c in expr.args:
        if sym in getattr(c, "free_symbols", ()):
            return sp.true
        sub = _reads_when(e, sym)
        if sub is not sp.false:
            need = sp.Or(need, sp.And(c, sp.Not(before), sub))
        before = sp.Or(before, c)
    return need


def _function(name, args, exprs, tuple_out):
    """Source of a numba function of the scalars ``args`` returning ``exprs`` (a tuple if ``tuple_out``).
    Scalars only: an array argument would cost numba's reference counting on every call in the loops."""
    import sympy as sp
    from sympy.printing.pycode import PythonCodePrinter
    pr = PythonCodePrinter(dict(fully_qualified_modules=True))
    repl, red = sp.cse(list(exprs), symbols=sp.numbered_symbols("c_"), optimizations="basic")
    # not inline="always": numba's IR-level inlining (copy, SSA rebuild) was 60 % of the install-time build;
    # LLVM inlines the compiled call anyway (measured: same outputs bit for bit, same speed; docs/notes/startup.md)
    lines = ["", "", "@njit(cache=True)", f"def {name}({', '.join(args)}):"]
    for s, e in repl:
        lines.append(f"    {s} = {pr.doprint(e)}")
    outs = [f"float({pr.doprint(e)})" for e in red]
    if tuple_out:
        lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    else:
        lines.append(f"    return {outs[0]}")
    return lines


def _seg_code(ind, d, kslot, cur=True):
    """Source: where the history is read at ``s - d`` (as ``adaptive._Evaluator.lookups``), written out in
    the loop body: an inlined helper taking the history arrays would cost numba's reference counting on
    every pair (measured: 5x the whole run).  Sets ``md`` (0 zero delay: the current state, 1 before ``t0``:
    the initial state, 2 one node, 3 Hermite segment ``k`` with weights ``w0..w3``), walking the segment
    from the previous lookup's ``kslot`` (:func:`ecocc.dde.kernels._segment_at`).  ``cur`` (the generated
    models' right-hand sides, which read the overlap arguments ``n_pass, t_cur, h_cur, QV, yc``; not a user
    DDE's): mode 4, a delayed time inside the step being taken (``overlap``, pass ``n_pass > 0``), at ``th``
    of it."""
    x = " " * ind
    return [f"{x}dd = {d}",
            f"{x}if dd <= 0.0:",
            f"{x}    md = 0",
            f"{x}else:",
            f"{x}    tau = s - dd",
            f"{x}    tsel = tau + nud",
            f"{x}    if tsel < t0:",
            f"{x}        md = 1"] + ([
            f"{x}    elif n_pass > 0 and tsel > t_cur:{OV}",
            f"{x}        md = 4{OV}",
            f"{x}        th = (tau - t_cur) / h_cur{OV}"] if cur else []) + [
            f"{x}    elif m < 2:",
            f"{x}        md = 2",
            f"{x}    else:",
            f"{x}        md = 3",
            f"{x}        k = min(max({kslot}, 0), m - 2)",
            f"{x}        while k < m - 2 and HT[k + 1] <= tsel:",
            f"{x}            k += 1",
            f"{x}        while k > 0 and HT[k] > tsel:",
            f"{x}            k -= 1",
            f"{x}        {kslot} = k",
            f"{x}        ta = HT[k]",
            f"{x}        hh = HT[k + 1] - ta",
            f"{x}        th = (tau - ta) / (hh if hh > 0 else 1.0)",
            # ecocc.dde.history.hermite's basis, same operations
            f"{x}        th2 = th * th",
            f"{x}        th3 = th2 * th",
            f"{x}        w0 = 2 * th3 - 3 * th2 + 1",
            f"{x}        w1 = (th3 - 2 * th2 + th) * hh",
            f"{x}        w2 = -2 * th3 + 3 * th2",
            f"{x}        w3 = (th3 - th2) * hh"]


#: the tag of the generated lines that read inside the step being taken (overlap's mode 4): :func:`rhs_variants`
OV = "  # overlap"


def rhs_variants(lines):
    """The generated ``_model_rhs`` (``lines``, its source with the overlap lines tagged ``OV``) twice: without the
    tagged lines, as ``_model_rhs`` (every evaluation but the overlap passes: the text of the method of steps,
    whose lookups never reach past the last history node), and with them, as ``_model_rhs_cur`` (the passes
    ``n_pass > 0`` of an overlapping step: :func:`ecocc.dde.integrator.adaptive_kernel`).  Two functions, because
    the lookups' mode-4 code in the one right-hand side cost the default run 73 % (AECP dumbbell, 360,037
    evaluations: 0.127 s against 0.073 s; docs/notes/overlap1.md) though it never ran there.  ``_model_rhs`` is
    ``forceinline`` (LLVM alwaysinline) and ``_model_rhs_cur`` not: with the second callee in the kernel,
    ``numba.pycc`` (the install-time build) stopped inlining ``_model_rhs`` and ran 2.4x slower than the JIT
    (``benchmarks/aot_vs_jit.py``).

    Parameters
    ----------
    lines : list of str
        The generated source lines of ``_model_rhs``, its overlap-only lines ending with the tag ``OV``.

    Returns
    -------
    list of str
        The source lines of both functions, ``_model_rhs`` first.
    """
    plain = [c for c in lines if not c.endswith(OV)]
    cur = [c.replace(OV, "") for c in lines]
    i = next(k for k, c in enumerate(cur) if c.startswith("def _model_rhs("))
    cur[i] = cur[i].replace("def _model_rhs(", "def _model_rhs_cur(", 1)
    cur[i - 1] = cur[i - 1].replace(", forceinline=True", "", 1)
    if cur[i + 1].startswith("               yc):"):
        cur[i + 1] = "    " + cur[i + 1]
    return plain + cur


def _val_code(ind, name, col, comp, cur=True):
    """Source: ``name`` = history column ``col`` (state component ``comp``) where :func:`_seg_code` points;
    ``cur``: with its mode 4 (the step's continuous extension ``QV`` from the step's start ``yc``, the
    single kernel's overlap: :func:`ecocc.dde.kernels._overlap_extension`)."""
    x = " " * ind
    return ([f"{x}if md == 3:",
             f"{x}    {name} = w0 * HY[k, {col}] + w1 * HFA[k, {col}] + w2 * HY[k + 1, {col}] + w3 * HFB[k, {col}]",
             f"{x}elif md == 0:",
             f"{x}    {name} = y[{comp}]",
             f"{x}elif md == 1:",
             f"{x}    {name} = y0[{comp}]"]
            + ([f"{x}elif md == 4:{OV}",
                f"{x}    vx = 0.0{OV}",
                f"{x}    pw = 1.0{OV}",
                f"{x}    for jd in range(QV.shape[0]):{OV}",
                f"{x}        pw *= th{OV}",
                f"{x}        vx += QV[jd, {col}] * pw{OV}",
                f"{x}    {name} = yc[{comp}] + h_cur * vx{OV}"] if cur else [])
            + [f"{x}else:",
               f"{x}    {name} = HY[0, {col}]"])


def _seg_code_lanes(ind, d, kslot):
    """:func:`_seg_code` for the lock-step kernel: the segment and weights shared by the lanes, plus mode 4, a
    delayed time inside the step being taken (``overlap``, pass ``n_pass > 0``): the step's continuous
    extension, its powers of ``th`` in ``ext``."""
    x = " " * ind
    out = [c.replace(OV, "") for c in _seg_code(ind, d, kslot, cur=True)]
    i = out.index(f"{x}    elif m < 2:")
    return out[:i] + [f"{x}        sp = 1.0",
                      f"{x}        for jd in range(nd):",
                      f"{x}            sp *= th",
                      f"{x}            ext[jd] = sp"] + out[i:]


def _val_code_lanes(ind, name, col, comp):
    """:func:`_val_code` for lane ``w`` (history column ``col``, state component ``comp``, lane-flat)."""
    x = " " * ind
    return [f"{x}if md == 3:",
            f"{x}    {name} = (w0 * HY[k, ({col}) * W + w] + w1 * HFA[k, ({col}) * W + w] + w2 * HY[k + 1, ({col}) * W + w]"
            f" + w3 * HFB[k, ({col}) * W + w])",
            f"{x}elif md == 0:",
            f"{x}    {name} = y[({comp}) * W + w]",
            f"{x}elif md == 1:",
            f"{x}    {name} = y0[({comp}) * W + w]",
            f"{x}elif md == 4:",
            f"{x}    vx = 0.0",
            f"{x}    for jd in range(nd):",
            f"{x}        vx += QV[jd, ({col}) * W + w] * ext[jd]",
            f"{x}    {name} = yc[({comp}) * W + w] + h_cur * vx",
            f"{x}else:",
            f"{x}    {name} = HY[0, ({col}) * W + w]"]


def _vals_code_lanes(ind, items, body):
    """:func:`_val_code_lanes` for all the lanes at once, the mode decided once (outside the lane loops): one
    lane loop per mode, each setting the items ``(name, col, comp)`` with the same operations as
    :func:`_val_code_lanes`, then running ``body`` (lines at the lane loop's body level; it reads the names)."""
    x = " " * ind
    modes = [("md == 3", lambda t, col, comp: [f"{t} = (w0 * HY[k, ({col}) * W + w] + w1 * HFA[k, ({col}) * W + w]"
                                               f" + w2 * HY[k + 1, ({col}) * W + w] + w3 * HFB[k, ({col}) * W + w])"]),
             ("md == 0", lambda t, col, comp: [f"{t} = y[({comp}) * W + w]"]),
             ("md == 1", lambda t, col, comp: [f"{t} = y0[({comp}) * W + w]"]),
             ("md == 4", lambda t, col, comp: ["vx = 0.0",
                                               "for jd in range(nd):",
                                               f"    vx += QV[jd, ({col}) * W + w] * ext[jd]",
                                               f"{t} = yc[({comp}) * W + w] + h_cur * vx"]),
             (None, lambda t, col, comp: [f"{t} = HY[0, ({col}) * W + w]"])]
    out = []
    for i, (cond, code) in enumerate(modes):
        out.append(f"{x}{'if' if i == 0 else 'elif'} {cond}:" if cond else f"{x}else:")
        out.append(f"{x}    for w in range(W):")
        for t, col, comp in items:
            out += [f"{x}        {c}" for c in code(t, col, comp)]
        out += [f"{x}        {c}" for c in body]
    return out


def _agg_cur_code(ind, lhs, cols_a, cols_b):
    """Source (overlap, mode 4 of :func:`_seg_code`: a lookup inside the step being taken): ``lhs`` the sum over
    the aggregated columns ``cols_a`` (left end, slopes) and ``cols_b`` (right end) of history row ``m - 1``, the
    cubic Hermite at ``th`` of the step ``h_cur`` -- the row the kernel fills from the previous pass's end value and
    derivative (:func:`ecocc.dde.integrator.adaptive_kernel`, ``_model_hist_seg``) until the step is accepted."""
    x = " " * ind
    terms = " + ".join(f"c0 * HY[m - 1, {a}] + c1 * HFA[m - 1, {a}] + c2 * HY[m - 1, {b}] + c3 * HFB[m - 1, {a}]"
                       for a, b in zip(cols_a, cols_b))
    return [f"{x}th2 = th * th{OV}",
            f"{x}th3 = th2 * th{OV}",
            f"{x}c0 = 2 * th3 - 3 * th2 + 1{OV}",
            f"{x}c1 = (th3 - 2 * th2 + th) * h_cur{OV}",
            f"{x}c2 = -2 * th3 + 3 * th2{OV}",
            f"{x}c3 = (th3 - th2) * h_cur{OV}",
            f"{x}{lhs}{terms}{OV}"]


def _index_code(ind, name, times, t):
    """Source: ``name`` = ``kernels._index_at(times, t)`` written out (see :func:`_seg_code`)."""
    x = " " * ind
    return [f"{x}lo_i = 0",
            f"{x}hi_i = {times}.size",
            f"{x}while lo_i < hi_i:",
            f"{x}    mid = (lo_i + hi_i) // 2",
            f"{x}    if {times}[mid] <= {t}:",
            f"{x}        lo_i = mid + 1",
            f"{x}    else:",
            f"{x}        hi_i = mid",
            f"{x}{name} = max(lo_i - 1, 0)"]


# ---------------------------------------------------------------------------
# the generated module
# ---------------------------------------------------------------------------

class Generated:
    """The generated source of a model (with its structural choices) and what the Python side needs to
    call it: the history components, the parameter names."""

    def __init__(self, model, P, st_keys, lst_keys, sdd=False, fwd=False, sent=False):
        import sympy as sp
        lw = Laws(model, P, st_keys, lst_keys)
        # variants (module docstring, "Queueing delay and forward delays"): the default text is unchanged
        self.sdd, self.fwd = bool(sdd), bool(fwd)
        m = model
        nF, nL = len(m.flow_states), len(m.link_states)
        self.param_names = numeric_params(P)
        self.st_keys, self.lst_keys = list(st_keys), list(lst_keys)
        par_args = [x.name for x in lw.par]
        # which delayed components the signal, the load and the own load read
        uses_y = m.signal_uses_arrival and lw.uses(lw.signal, lw.yy)
        link_used = [i for i, s in enumerate(lw.lv) if lw.uses(lw.signal, s)]
        q_used = lw.uses(lw.signal, lw.qq)
        flow_used = sorted({i for i, s in enumerate(lw.u)
                            if (uses_y and lw.uses(lw.load, s)) or (m.needs_own_delayed and lw.uses(lw.own, s))
                            or (fwd and lw.uses(lw.rate, s))})  # fwd: the arrival reads the rate delayed
        uses_qd = any(lw.uses(e, lw.qd) for e in [lw.rate] + lw.dflow + ([lw.load] if uses_y else []))
        # load_rtt="sent" (module docstring): a delayed load (sent_y) or forward-delayed rate (sent_f) that reads
        # the queueing delay reads it at the sending time, from the history of its path's queues
        sent_y = bool(sent and uses_y and lw.uses(lw.load, lw.qd))
        sent_f = bool(sent and fwd and lw.uses(lw.rate, lw.qd))
        self.sent = sent_y or sent_f
        q_used = q_used or self.sent  # the queues' history: the signal's, or the sending time's queueing delay
        # the aggregated link load (_agg_hooks; docs/notes/aggload.md): the history keeps per link and per
        # accepted segment the Hermite data of sum_k act_k load_k, so a pair reads it in O(1) instead of a
        # history read per flow on the link; only where the load a pair reads is the flows' load at one time
        # (no forward delays, no queueing delay in the delays) and the load does not read the current qd
        aggl = bool(uses_y and not sdd and not fwd and (sent_y or not lw.uses(lw.load, lw.qd)))
        self.agg = aggl
        # the load read only where the signal's value depends on it (docs/notes/renoagg.md): a piecewise
        # signal (drop-tail: the load only at a full buffer) gets ``_law_reads_y`` on the pair's other
        # arguments, and a pair whose branch does not read the load skips its sum -- the same values, as the
        # branch taken ignores it
        px_sig = {x for x in lw.px if lw.uses(lw.signal, x)}
        ycond = _reads_when(lw.signal, lw.yy) if uses_y else sp.true
        self.lazy = bool(uses_y and ycond is not sp.true and ycond is not sp.false and not px_sig
                         and ycond.free_symbols <= set(lw.lv) | {lw.qq, lw.CC} | set(lw.ls) | set(lw.par))
        # history columns: (block name, offset expression in the state, size)
        blocks = ([(f"flow:{m.flow_states[i]}", f"{i} * P", "P", ("F", i)) for i in flow_used]
                  + [(f"link:{m.link_states[i]}", f"{nF} * P + {i} * L", "L", ("L", i)) for i in link_used]
                  + ([("queue", "IQ", "L", ("Q", 0))] if q_used else []))
        self.hist_blocks = [b[0] for b in blocks]
        hc, col = {}, "0"
        for name, off, size, key in blocks:
            hc[key] = col
            col = f"{col} + {size}"
        fn_rate = ["u_" + v for v in m.flow_states] + ["qd"] + [s.name for s in lw.st]
        src = ["import math  # noqa",
               "from numba import njit  # noqa"]
        src += _function("_law_rate", fn_rate + par_args, [lw.rate], False)
        if uses_y:
            src += _function("_law_load", fn_rate + par_args, [lw.load], False)
        if aggl:
            src += _load_dot_function("_law_load_dot", lw, lw.load, fn_rate, par_args, qd=sent_y)
        if m.needs_own_delayed:
            src += _function("_law_own", ["u_" + v for v in m.flow_states] + [s.name for s in lw.st] + par_args,
                             [lw.own], False)
        fn_sig = [s.name for s in lw.lv] + ["qq", "yy", "CC"] + [s.name for s in lw.ls] + [s.name for s in lw.px]
        src += _function("_law_signal", fn_sig + par_args, [lw.signal], False)
        fn_ry = [a for a in fn_sig if a != "yy"]
        if self.lazy:
            from sympy.printing.pycode import PythonCodePrinter
            pr = PythonCodePrinter(dict(fully_qualified_modules=True))
            src += ["", "", "@njit(cache=True)", f"def _law_reads_y({', '.join(fn_ry + par_args)}):",
                    f"    return bool({pr.doprint(ycond)})"]
        fn_flow = ["u_" + v for v in m.flow_states] + ["fb", "own", "qd"] + [s.name for s in lw.st]
        flow_src = _function("_law_flow", fn_flow + par_args, lw.dflow, True)
        src += flow_src
        # the exponentials of a flow's current state that the rate and the flow laws both compute (_shared_exps):
        # computed once per flow and call, before the rate, and passed to copies of the two laws with each call
        # replaced by its value (_law_rate_x, _law_flow_x: the same operations in the same order, so the same
        # results bit for bit); shared by _model_rhs and the lock-step _model_rhs_lanes
        rate_src = _function("_law_rate", fn_rate + par_args, [lw.rate], False)
        shared = _shared_exps(rate_src, flow_src, [x for x in fn_rate if x in fn_flow] + par_args)
        if shared:
            src += _with_exps(rate_src, "_law_rate_x", shared) + _with_exps(flow_src, "_law_flow_x", shared)
        # _model_rhs keeps them between its rate loop and its flow loop in the flow's derivative slots of ``out``
        # (out[i * P + p], written only at the end of the flow loop): at most one per flow state
        sh_rhs = shared if len(shared) <= nF else []
        ex_rhs = "".join(f", ex_{i}" for i in range(len(sh_rhs)))
        fn_link = [s.name for s in lw.lc] + ["q", "y", "C"] + [s.name for s in lw.ls]
        if nL:
            src += _function("_law_link", fn_link + par_args, lw.dlink, True)
        if lw.drop is not None:
            src += _function("_law_drop", fn_link + par_args, [lw.drop], False)
        # the per-pair extras the signal reads (NetworkSystem.rhs: n_active at the load's delays, rate now)
        unknown = [k for k in m.pair_extras if k not in PAIR_EXTRAS]
        if unknown:
            raise ValueError(f"pair_extras {unknown}: the generated kernel knows {PAIR_EXTRAS}")
        px_used = {k for k, x in zip(m.pair_extras, lw.px) if lw.uses(lw.signal, x)}
        if "n_active" in px_used and not m.signal_uses_arrival:
            raise ValueError("pair_extras 'n_active' needs signal_uses_arrival (it is counted with the load)")

        def unpack_flow(idx, names=None):
            return [f"u_{v} = y[{i} * P + {idx}]" for i, v in enumerate(m.flow_states)]

        def static_flow(idx):
            return [f"st_{k} = FST[{i}, {idx}]" for i, k in enumerate(self.st_keys)]

        def static_link(idx):
            return [f"ls_{k} = LST[{i}, {idx}]" for i, k in enumerate(self.lst_keys)]

        agg = m.path_aggregate
        r = ["", "", "@njit(cache=True, forceinline=True)",  # not inline="always": see _function; forceinline: rhs_variants
             "def _model_rhs(s, nud, y, sat_lo, sat_hi, out, D, Wk, t0, y0, HT, HY, HFA, HFB, m, n_pass, t_cur, h_cur, QV,",
             "               yc):",
             '    """NetworkSystem.rhs of this model, generated (ecocc.dde.codegen); a lookup inside the step being taken'
             ' (overlap, pass n_pass > 0) reads the step\'s continuous extension QV from yc."""',
             "    P, L, fps, pl, bwd, rtt, lptr, lflows, start, stop, C, ctimes, ctable, FST, LST, par"
             + (", FWL" if fwd else "") + " = D",
             "    qdel, rate, arrival, kcur, kown" + (", karr, kld" if fwd else "") + " = Wk",
             "    tt = s + nud",
             "    md, k, w0, w1, w2, w3, th = 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0",
             f"    IQ = {nF} * P + {nL} * L",
             "    ISENT = IQ + 5 * L"]
        r += [f"    {x.name} = par[{i}]" for i, x in enumerate(lw.par)]
        r += [f"    HC_{k[0]}{k[1]} = {v}" for k, v in hc.items()]
        count_na = "n_active" in px_used
        nxl = (3 if count_na else 2) if aggl else 0  # the aggregated load's columns per link
        if aggl:
            # after the delayed components: per link the segment's load at its left end (its slopes at both
            # ends in HFA, HFB), at its right end, and the number of active flows; absent in the fixed-step
            # kernel's history (it shares this function): the per-flow sum there
            r += [f"    XA = {col}",
                  "    XB = XA + L",
                  "    XN = XA + 2 * L",
                  f"    use_agg = HY.shape[1] >= XA + {nxl} * L",
                  # each link's earliest flow start: before it (the first round trip from t0) no flow on the
                  # link is active at td, the load is zero -- without the per-flow loop of the fallback
                  "    smin = np.full(L if use_agg else 0, math.inf)",
                  "    if use_agg:",
                  "        for l in range(L):",
                  "            for jj in range(lptr[l], lptr[l + 1]):",
                  "                smin[l] = min(smin[l], start[lflows[jj]])"]
        if (uses_y or count_na) and not fwd:  # the per-link sums before t0, computed on first use in the call
            r += ["    PRE = np.full(3 * L, math.nan)"]
        if uses_qd or sdd:  # each link's queueing delay once (as _model_rhs_lanes), summed per path below (the same
            # operations); arrival is its scratch until the arrival sums
            r += ["    for l in range(L):",
                  "        arrival[l] = y[IQ + l] / C[l]"]
        r += ["    for p in range(P):"]
        if uses_qd or sdd:  # sdd: the feedback delays read the path's queueing delay
            r += ["        qd = 0.0",
                  "        for j in range(fps[p], fps[p + 1]):",
                  "            qd += arrival[pl[j]]"]
        else:
            r += ["        qd = 0.0"]
        r += ["        qdel[p] = qd",
              "        if start[p] <= tt and tt < stop[p]:"]
        r += ["            " + x for x in unpack_flow("p") + static_flow("p")]
        for i, a in enumerate(sh_rhs):
            r += [f"            ex_{i} = math.exp({a})",
                  f"            out[{i} * P + p] = ex_{i}  # read back by the flow loop (then overwritten)"]
        r += [f"            rate[p] = _law_rate{'_x' if sh_rhs else ''}({', '.join(fn_rate + par_args)}{ex_rhs})",
              "        else:",
              "            rate[p] = 0.0",
              "        out[ISENT + p] = rate[p]",
              ] + _index_code(4, "kc", "ctimes", "tt") + [
              "    for l in range(L):",
              "        a = 0.0",
              "        for jj in range(lptr[l], lptr[l + 1]):"]
        if fwd:
            r += _fwd_arrival_code(m, lw, fn_rate, par_args, flow_used, static_flow, sent_f)
        else:
            r += ["            a += rate[lflows[jj]]"]
        r += ["        arrival[l] = a + ctable[kc, l]",
              "    for p in range(P):",
              "        if not (start[p] <= tt and tt < stop[p]):"]
        r += [f"            out[{i} * P + p] = 0.0" for i in range(nF)]
        r += ["            continue",
              f"        fb = {_AGG_INIT[agg]}"]
        if sdd:  # the receiving flow's queueing delay Q_p >= 0 lengthens each positive feedback delay
            r += ["        qx = qdel[p] if qdel[p] > 0.0 else 0.0"]
        r += ["        for j in range(fps[p], fps[p + 1]):",
              "            l = pl[j]",
              ] + _seg_code(12, _sdd_delay("bwd[j]") if sdd else "bwd[j]", "kcur[j]")
        for i in range(nL):
            v = m.link_states[i]
            if i in link_used:
                r += _val_code(12, f"lv_{v}", f"HC_L{i} + l", f"{nF} * P + {i} * L + l")
            else:
                r += [f"            lv_{v} = 0.0  # not read by the signal"]
        r += (_val_code(12, "qq", "HC_Q0 + l", "IQ + l") if q_used
              else ["            qq = 0.0  # not read by the signal"])
        if uses_y or count_na:
            ry = len(r)
            r += ["            td = tt - bwd[j]"]
            if aggl:
                # a segment inside the history (not the extrapolated last one, not before t0): its aggregated
                # load, O(1); flow starts and stops are nodes, so the segment's activity is the activity at td
                # overlap: the last segment extrapolated (pass 0: td past the last node, only while overlapping) and
                # the step being taken (mode 4: row m - 1, which the kernel fills from the previous pass with
                # _model_hist_seg, _agg_cur_code) read the aggregated load too
                r += ["            if use_agg and td < smin[l]:",
                      "                yy = 0.0",
                      "                px_n_active = 0.0",
                      "            elif use_agg and md == 3 and HT[k] <= td and (td < HT[k + 1] or k == m - 2):",
                      "                yy = (w0 * HY[k, XA + l] + w1 * HFA[k, XA + l] + w2 * HY[k, XB + l]"
                      " + w3 * HFB[k, XA + l])"]
                r += (["                px_n_active = HY[k, XN + l]"] if count_na else [])
                r += [f"            elif use_agg and md == 4:{OV}"]
                r += _agg_cur_code(16, "yy = ", ["XA + l"], ["XB + l"])
                r += ([f"                px_n_active = HY[m - 1, XN + l]{OV}"] if count_na else [])
                r += ["            else:"]
            def flow_sum(cond):
                """The per-flow sum over link l's flows (indent 12), a flow counted where ``cond`` holds."""
                out = ["            yy = 0.0",
                       "            px_n_active = 0.0",
                       "            for jj in range(lptr[l], lptr[l + 1]):",
                       "                kf = lflows[jj]"]
                if fwd:  # the load of flow kf at d_b(l, p) + d_f(l, kf) (+ Q_p): its own history point
                    out += ["                tdk = td - FWL[jj]",
                            "                if start[kf] <= tdk and tdk < stop[kf]:"]
                    if uses_y:
                        dl_ = "bwd[j] + FWL[jj]"
                        out += _seg_code(20, _sdd_delay(dl_) if sdd else dl_, "kld[jj]")
                else:
                    out += [f"                if {cond}:"]
                if count_na:
                    out += ["                    px_n_active += 1.0"]
                if uses_y:
                    for i, v in enumerate(m.flow_states):
                        if i in flow_used:
                            out += _val_code(20, f"u_{v}", f"HC_F{i} + kf", f"{i} * P + kf")
                        else:
                            out += [f"                    u_{v} = 0.0  # not read by the load"]
                    out += ["                    " + x for x in static_flow("kf")]
                    if sent_y:  # the queueing delay at the sending time, where the flow's state was read
                        out += _sent_qd_code(20, "kf", "qk", "HC_Q0")
                    load_args = ", ".join([("qk" if sent_y else "qdel[kf]") if x == "qd" else x for x in fn_rate]
                                          + par_args)
                    out += [f"                    yy += _law_load({load_args})"]
                return out

            r0 = len(r)
            if fwd:
                r += flow_sum(None)
            else:
                # before t0 (md == 1: the initial state y0 read) the loads of the flows active there are constant:
                # each link's sum once per call (PRE: the time from which its flows' activity is that of t0's left
                # limit, start < t0 <= stop; the sum; the count), the per-flow loop's operations in its order, so
                # the same values bit for bit; a pair then reads it in O(1) (docs/notes/prelink.md)
                r += ["            pre = False",
                      "            if md == 1 and td < t0:",
                      "                if PRE[l] != PRE[l]:  # NaN: link l's first pair before t0 in this call",
                      "                    bp = -math.inf"]
                r += ["        " + x for x in flow_sum("start[kf] < t0 and t0 <= stop[kf]")]
                r += ["                        if start[kf] < t0:",
                      "                            bp = max(bp, start[kf])",
                      "                        if stop[kf] < t0:",
                      "                            bp = max(bp, stop[kf])",
                      "                    PRE[l] = bp",
                      "                    PRE[L + l] = yy",
                      "                    PRE[2 * L + l] = px_n_active",
                      "                pre = PRE[l] <= td",
                      "            if pre:",
                      "                yy = PRE[L + l]",
                      "                px_n_active = PRE[2 * L + l]",
                      "            else:"]
                r += ["    " + x for x in flow_sum("start[kf] <= td and td < stop[kf]")]
            if aggl:  # the per-flow sum above: the else branch
                r[r0:] = ["    " + x for x in r[r0:]]
            if uses_y:
                r += _index_code(12, "kd", "ctimes", "td") + ["            yy += ctable[kd, l]"]
            if self.lazy:  # the load (above) only where the signal's branch reads it
                r[ry:] = ["    " + x for x in r[ry:]]
                r[ry:ry] = (["            CC = C[l]"] + ["            " + x for x in static_link("l")]
                            + [f"            if _law_reads_y({', '.join(fn_ry + par_args)}):"])
                r += ["            else:",
                      "                yy = 0.0  # the signal's branch here does not read the load"]
        else:
            r += ["            yy = 0.0  # the signal does not read the load"]
        if "n_active" in m.pair_extras and not count_na:
            r += ["            px_n_active = 0.0  # not read by the signal"]
        if "rate" in m.pair_extras:
            r += ["            px_rate = rate[p]"]
        r += _self_seen_code(12, m, px_used, fwd)
        if not self.lazy:
            r += ["            CC = C[l]"]
            r += ["            " + x for x in static_link("l")]
        r += [f"            sg = _law_signal({', '.join(fn_sig + par_args)})"]
        r += {"min": ["            fb = min(fb, sg)"], "max": ["            fb = max(fb, sg)"],
              "sum": ["            fb += sg"]}[agg]
        if m.needs_own_delayed:
            r += _seg_code(8, _sdd_delay("rtt[p]") if sdd else "rtt[p]", "kown[p]")
            r += ["        to = tt - rtt[p]",
                  "        own = 0.0",
                  "        if start[p] <= to and to < stop[p]:"]
            for i, v in enumerate(m.flow_states):
                if i in flow_used:
                    r += _val_code(12, f"u_{v}", f"HC_F{i} + p", f"{i} * P + p")
                else:
                    r += [f"            u_{v} = 0.0  # not read by the own load"]
            r += ["            " + x for x in static_flow("p")]
            r += [f"            own = _law_own({', '.join(['u_' + v for v in m.flow_states] + [s.name for s in lw.st] + par_args)})"]
        else:
            r += ["        own = 0.0"]
        r += ["        " + x for x in unpack_flow("p") + static_flow("p")]
        r += ["        qd = qdel[p]"]
        r += [f"        ex_{i} = out[{i} * P + p]" for i in range(len(sh_rhs))]
        r += [f"        d = _law_flow{'_x' if sh_rhs else ''}({', '.join(fn_flow + par_args)}{ex_rhs})"]
        r += [f"        out[{i} * P + p] = d[{i}]" for i in range(nF)]
        r += ["    for l in range(L):",
              "        q = y[IQ + l]",
              "        C_l = C[l]",
              "        a = arrival[l]"]
        args = ", ".join([s.name for s in lw.lc] + ["q", "a", "C_l"] + [s.name for s in lw.ls] + par_args)
        if nL or lw.drop is not None:
            r += [f"        lc_{v} = y[{nF} * P + {i} * L + l]" for i, v in enumerate(m.link_states)]
            r += ["        " + x for x in static_link("l")]
        if nL:
            r += [f"        dl = _law_link({args})"]
            r += [f"        out[{nF} * P + {i} * L + l] = dl[{i}]" for i in range(nL)]
        if lw.drop is not None:
            # AQM drops (packets/s), never queued, counted as lost (NetworkSystem.rhs, same operations)
            r += [f"        early = a * _law_drop({args})",
                  "        dq = a - early - C_l",
                  "        a_q = a - early",
                  "        out[IQ + L + l] = ((dq if dq > 0.0 else 0.0) if sat_hi[l] else 0.0) + early"]
        else:
            r += ["        dq = a - C_l",
                  "        a_q = a",
                  "        out[IQ + L + l] = (dq if dq > 0.0 else 0.0) if sat_hi[l] else 0.0"]
        r += ["        out[IQ + l] = dq",
              "        out[IQ + 2 * L + l] = a",
              "        out[IQ + 3 * L + l] = (a_q if a_q < C_l else C_l) if sat_lo[l] else C_l",
              "        out[IQ + 4 * L + l] = q"]
        r = rhs_variants(r)
        lev_src, self.drop_levels = _drop_levels_code(lw, par_args, self.lst_keys)
        r += lev_src
        r += _HOLD_IMAGES_CODE
        # a signal linear in the delayed queue (PE-TCP's q/T, FAST's queueing delay) kinks where the queue empties
        # (its derivative jumps to 0): the single-run kernels end steps where the flows read that kink
        # (EMPTY_IMAGES), and the signal's slope in the queue sets the queues' default tolerance
        # (NetworkSystem.default_atol)
        self.empty_images = _linear_in(lw.signal, lw.qq) if lw.uses(lw.signal, lw.qq) else False
        self.queue_gain = _queue_gain(lw) if self.empty_images else None
        self.empty_weight = None
        if self.empty_images:
            src_e, self.empty_weight = _empty_images_code(_empty_weight(lw), par_args, self.lst_keys)
            r += src_e
        if aggl:
            r += _agg_hooks(m, nxl, count_na, fn_rate, par_args, flow_used, self.st_keys, lw, sent_y)
        # the lock-step kernel's aggregated load: as the single kernel's, where the load reads no queueing delay
        # (the lanes keep no "sent" variant) and every flow state the load reads is a logarithm (the load is
        # positive: the lanes store the logarithm of the sum)
        logsum = all(i < len(m.flow_log) and m.flow_log[i] for i in flow_used)
        agg_lanes = col if aggl and not sent_y and logsum else None
        r += _lanes_agg_hooks(m, fn_rate, par_args, flow_used, self.st_keys, lw, agg_lanes)
        r += _lanes_rhs(m, lw, nF, nL, par_args, fn_rate, fn_sig, fn_flow, hc, uses_y, uses_qd, link_used, q_used,
                        flow_used, self.st_keys, self.lst_keys, shared, self.lazy, agg_lanes)
        # lock-step group width: narrower where the model's kinks are breakpoints of the shared mesh (each lane
        # brings its own; docs/notes/mapsfast.md), or the registry model's measured one (docs/notes/mapwidth.md)
        self.lanes = _lanes_count(_has_kinks(lw, q_used), m.name)
        template = ((_HERE / "integrator.py").read_text() + "\n\n# --- the lock-step method ---\n"
                    + _lanes_template(self.lanes, bool(_load_switches(lw)))
                    + "\n\n# --- the fixed-step RK4 method ---\n" + (_HERE / "rk4.py").read_text())
        stamp = hashlib.sha256(b"".join((_HERE / f).read_bytes() for f in ("kernels.py", "history.py"))).hexdigest()
        # the text depends only on the laws (two models with the same laws, as AECP and CLTCP, share a module)
        header = ['"""Generated by ecocc.dde.codegen from a model\'s laws; do not edit."""',
                  f"# generator {GEN_VERSION}; helpers {stamp[:16]}; lanes {self.lanes}",
                  "# parameters (par): " + ", ".join(self.param_names)]
        self.source = "\n".join(header) + "\n" + template + "\n\n# --- the model ---\n" + "\n".join(src + r) + "\n"
        self.n_flow_states, self.n_link_states = nF, nL
        self.flow_used, self.link_used, self.q_used = flow_used, link_used, q_used
        self.digest = hashlib.sha256(self.source.encode()).hexdigest()[:20]
        self.model_name = m.name
        self.name = f"ecocc_gen_{self.digest}"

    def drop_level_values(self, sysm) -> np.ndarray:
        """The queue levels where each link's AQM drop fraction has a kink or a jump (RED's ``min_th`` and
        ``max_th``), evaluated for a system (the generated kernels' ``_model_drop_levels``, for the NumPy solver).

        Parameters
        ----------
        sysm : NetworkSystem
            The model on its network, with this description's parameters and static fields.

        Returns
        -------
        numpy.ndarray
            Shape ``(n_links, n_levels)``, packets; ``n_levels`` is 0 for a model without such levels.
        """
        return self._per_link(sysm, self.drop_levels)

    def queue_gain_values(self, sysm):
        """The slope of each link's signal in its delayed queue (1/packets in the signal's units), for a signal linear
        in the queue (:attr:`empty_images`: PE-TCP's ``(y + q/T)/C`` has ``1/(T C)``), evaluated for a system; None
        otherwise, or where the slope depends on more than the parameters, link fields and capacity.

        Parameters
        ----------
        sysm : NetworkSystem
            The model on its network, with this description's parameters and static fields.

        Returns
        -------
        numpy.ndarray or None
            Shape ``(n_links,)``, absolute values.
        """
        if not getattr(self, "queue_gain", None):
            return None
        return np.abs(self._per_link(sysm, [self.queue_gain])[:, 0])

    def empty_weight_values(self, sysm):
        """:func:`_empty_weight` per link of a system (the kernels' ``_model_empty_weight``), ``inf`` where it has
        none (every emptying's image kept).

        Parameters
        ----------
        sysm : NetworkSystem
            The model on its network.

        Returns
        -------
        numpy.ndarray
            Shape ``(n_links,)``, per packet (the flow law's units per second).
        """
        w = getattr(self, "empty_weight", None)
        if not w:
            return np.full(sysm.n_links, np.inf)
        return np.abs(self._per_link(sysm, [w])[:, 0])

    def _per_link(self, sysm, exprs):
        """:func:`per_link` of this description's expressions for the system ``sysm``."""
        return per_link(exprs, self.param_names, sysm.P, sysm.C, self.lst_keys, sysm.lst, sysm.n_links)

    def hsrc(self, P, L) -> np.ndarray:
        """The state components the history stores, in column order.

        Parameters
        ----------
        P, L : int
            Number of flows and of links.

        Returns
        -------
        numpy.ndarray
            Indices into the state vector (int).
        """
        nF = self.n_flow_states
        parts = [np.arange(P) + i * P for i in self.flow_used]
        parts += [np.arange(L) + nF * P + i * L for i in self.link_used]
        if self.q_used:
            parts.append(np.arange(L) + nF * P + self.n_link_states * L)
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def _sent_qd_segment_lines(ys, fs):
    """Generated lines (16-space indent) summing flow ``kf``'s path queueing delay ``qd_e`` (seconds) and its
    derivative ``dqd_e`` at a history segment's end from the stored queues ``{ys}`` and slopes ``{fs}``
    (``load_rtt="sent"``; the single and the mixed generator's aggregated load)."""
    return ["                qd_e = 0.0",
            "                dqd_e = 0.0",
            "                for j2 in range(fps[kf], fps[kf + 1]):",
            "                    l2 = pl[j2]",
            f"                    qd_e += {ys}[IQ + l2] / C[l2]",
            f"                    dqd_e += {fs}[IQ + l2] / C[l2]"]


def _load_dot_function(name, lw, expr, fn_rate, par_args, qd=False):
    """Source of ``name``: d ``expr`` / dt by the chain rule through the stored flow states (log or not),
    ``sum_i d expr / d u_i * du_i``, taking ``fn_rate``, then ``du_<state>`` per flow state, then ``par_args``
    (the aggregated load's slopes, :func:`_agg_hooks`; the mixed composites' aggregated groups,
    :mod:`ecocc.dde.codegen_mixed`).  ``qd``: the law is read at the sending time (``load_rtt="sent"``), its
    queueing delay is a state too: the term ``d expr / d qd * dqd`` is added, ``dqd`` after the ``du``."""
    import sympy as sp
    du = [sp.Symbol(f"du_{v}", real=True) for v in lw.model.flow_states]
    dot = sum((sp.diff(expr, ui) * dui for ui, dui in zip(lw.u, du)), sp.Integer(0))
    if qd:
        dqd = sp.Symbol("dqd", real=True)
        return _function(name, list(fn_rate) + [x.name for x in du] + ["dqd"] + list(par_args),
                         [dot + sp.diff(expr, lw.qd) * dqd], False)
    return _function(name, list(fn_rate) + [x.name for x in du] + list(par_args), [dot], False)


def _sent_qd_code(ind, kf, name, qcol):
    """Source: ``name`` = flow ``kf``'s queueing delay ``sum_{l in kf} q_l / C_l`` at the time where
    :func:`_seg_code` points, its path's queues read from the history columns ``qcol + l`` (``load_rtt="sent"``:
    the delayed rate at the sending time; the same operations as the current ``qd``)."""
    x = " " * ind
    return ([f"{x}{name} = 0.0",
             f"{x}for j2 in range(fps[{kf}], fps[{kf} + 1]):",
             f"{x}    l2 = pl[j2]"]
            + _val_code(ind + 4, "qv", f"{qcol} + l2", "IQ + l2")
            + [f"{x}    {name} += qv / C[l2]"])


#: generated lines (indent 4) of a history check (``_model_hist_err``): the step's continuous extension's weights at
#: mid-step, ``wm[s] = sum_j Pd[s, j] / 2^(j + 1)``, once per call
_MID_WEIGHTS = ["    wm = np.zeros(n_st + 1)",
               "    for s_ in range(n_st + 1):",
               "        for j in range(Pd.shape[1]):",
               "            wm[s_] += Pd[s_, j] * half_pow[j]"]


def _mid_value_lines(name, o, x):
    """Generated lines (indent ``x``) of a history check: ``name`` = state component ``o`` at mid-step, from the
    step's stages ``K`` and the weights of :data:`_MID_WEIGHTS`."""
    return [f"{x}o = {o}",
            f"{x}vm = 0.0",
            f"{x}for s_ in range(n_st + 1):",
            f"{x}    vm += K[s_, o] * wm[s_]",
            f"{x}{name} = y[o] + h * vm"]


def _mid_qd_lines(x):
    """Generated lines (indent ``x``, in a history check's flow loop, flow ``kf``): ``qd_e``, the flow's path
    queueing delay (s) at mid-step from the queues' continuous extension (``load_rtt="sent"``)."""
    y = x + "    "
    return ([f"{x}qd_e = 0.0", f"{x}for j2 in range(fps[kf], fps[kf + 1]):", f"{y}l2 = pl[j2]"]
            + _mid_value_lines("qm", "IQ + l2", y) + [f"{y}qd_e += qm / C[l2]"])


def _sum_check_lines(col_a, col_b):
    """Generated lines (indent 8, in a loop) of a history check: ``a0``, ``a1`` the stored sum at the ends of
    history row ``r`` (columns ``col_a``, ``col_b``) and ``sc`` its tolerance, ``rtol * max(|a0|, |a1|)``; a sum of
    no active flow (0) is not checked."""
    return [f"        a0 = HY[r, {col_a}]",
            f"        a1 = HY[r, {col_b}]",
            "        sc = rtol * max(abs(a0), abs(a1))",
            "        if not sc > 0.0:",
            "            continue  # no active flow"]


def _agg_hooks(m, nxl, count_na, fn_rate, par_args, flow_used, st_keys, lw, sent=False):
    """Source of ``_model_hist_cols`` and ``_model_hist_seg`` (redefining the integrator template's, which keep
    nothing): per link ``l`` and accepted segment ``[t, t + h]`` (history row ``r``), the aggregated load
    ``A_l = sum_k act_k load_k`` over the flows on ``l`` active on the segment (at its midpoint: starts and stops
    are breakpoints, so the activity is constant on it): its value at the left end (column ``XA + l`` of ``HY``),
    its time derivatives at both ends (``HFA``, ``HFB``: the chain rule through the stored states, whose
    derivatives at the ends are the history's), its value at the right end (column ``XB + l``: the left limit,
    as a flow starting or stopping at a node makes the sum jump there) and the number of active flows
    (``XN + l``, XCP's ``n_active``).  The cubic Hermite of the sum is the sum of the terms' cubic Hermites for a
    load linear in the stored states; for a state stored as its logarithm (``load = e^u``) the two differ at
    the order of the interpolation error.  ``sent`` (``load_rtt="sent"``): the load reads the flow's queueing
    delay at the same time, ``sum_{l in k} q_l / C_l`` from the segment's ends, its slope from the queues'.
    ``_model_hist_err`` (with ``MODEL_HIST_CHECK``: the integrator calls both on every attempt of a step, before
    its error test) checks the cubic Hermite of those data at mid-step against the sum of the flows' loads at
    the step's continuous extension there, relative to the load (``rtol * max(A_l(t), A_l(t + h))``, as the
    lock-step kernel's check, :func:`_lanes_agg_hooks`)."""
    load_args = ", ".join([("qd_e" if sent else "0.0") if x == "qd" else x for x in fn_rate] + par_args)
    dot_args = ", ".join([("qd_e" if sent else "0.0") if x == "qd" else x for x in fn_rate]
                         + [f"du_{v}" for v in m.flow_states] + (["dqd_e"] if sent else []) + par_args)
    r = ["", "", "@njit(cache=True)",
         "def _model_hist_cols(D):",
         '    """The aggregated load\'s history columns (ecocc.dde.codegen._agg_hooks)."""',
         f"    return {nxl} * D[1]",
         "", "", "@njit(cache=True)",
         "def _model_hist_seg(t, h, y, y_new, fa, fe, HY, HFA, HFB, r, nh, D):",
         '    """The aggregated load of history row r (ecocc.dde.codegen._agg_hooks)."""',
         "    P, L, fps, pl, bwd, rtt, lptr, lflows, start, stop, C, ctimes, ctable, FST, LST, par = D"]
    r += [f"    {x.name} = par[{i}]" for i, x in enumerate(lw.par)]
    r += ([f"    IQ = {len(m.flow_states)} * P + {len(m.link_states)} * L"] if sent else [])
    r += ["    XA = nh",
          "    XB = nh + L",
          "    XN = nh + 2 * L",
          "    tm = t + 0.5 * h",
          "    for l in range(L):",
          "        a0 = 0.0",
          "        a1 = 0.0",
          "        d0 = 0.0",
          "        d1 = 0.0",
          "        na = 0.0",
          "        for jj in range(lptr[l], lptr[l + 1]):",
          "            kf = lflows[jj]",
          "            if start[kf] <= tm and tm < stop[kf]:",
          "                na += 1.0"]
    r += [f"                st_{k} = FST[{i}, kf]" for i, k in enumerate(st_keys)]
    for ys, fs, a, d in (("y", "fa", "a0", "d0"), ("y_new", "fe", "a1", "d1")):
        for i, v in enumerate(m.flow_states):
            if i in flow_used:
                r += [f"                u_{v} = {ys}[{i} * P + kf]",
                      f"                du_{v} = {fs}[{i} * P + kf]"]
            else:
                r += [f"                u_{v} = 0.0  # not read by the load",
                      f"                du_{v} = 0.0"]
        if sent:
            r += _sent_qd_segment_lines(ys, fs)
        r += [f"                {a} += _law_load({load_args})",
              f"                {d} += _law_load_dot({dot_args})"]
    r += ["        HY[r, XA + l] = a0",
          "        HFA[r, XA + l] = d0",
          "        HFB[r, XA + l] = d1",
          "        HY[r, XB + l] = a1"]
    if count_na:
        r += ["        HY[r, XN + l] = na"]
    # the check (the integrator's MODEL_HIST_CHECK): the cubic Hermite of the stored data at mid-step against the
    # sum of the flows' loads at the step's continuous extension there, relative to the load (as the lock-step
    # kernel's, _lanes_agg_hooks); without it the summed load's interpolant was checked by no error control
    # (docs/notes/aggload.md, "The check")
    r += ["", "", "MODEL_HIST_CHECK = True  # the aggregated load's cubic is error-checked (_model_hist_err)",
          "", "", "@njit(cache=True)",
          "def _model_hist_err(t, h, y, K, n_st, Pd, half_pow, rtol, HY, HFA, HFB, r, nh, D):",
          '    """The aggregated load\'s error at mid-step, in tolerance units (ecocc.dde.codegen._agg_hooks)."""',
          "    P, L, fps, pl, bwd, rtt, lptr, lflows, start, stop, C, ctimes, ctable, FST, LST, par = D"]
    r += [f"    {x.name} = par[{i}]" for i, x in enumerate(lw.par)]
    r += ([f"    IQ = {len(m.flow_states)} * P + {len(m.link_states)} * L"] if sent else [])
    r += ["    XA = nh",
          "    XB = nh + L",
          "    tm = t + 0.5 * h",
          "    err = 0.0"] + _MID_WEIGHTS + ["    for l in range(L):"] + _sum_check_lines("XA + l", "XB + l") + [
          "        herm = 0.5 * (a0 + a1) + 0.125 * h * (HFA[r, XA + l] - HFB[r, XA + l])",
          "        am = 0.0",
          "        for jj in range(lptr[l], lptr[l + 1]):",
          "            kf = lflows[jj]",
          "            if start[kf] <= tm and tm < stop[kf]:"]
    r += [f"                st_{k} = FST[{i}, kf]" for i, k in enumerate(st_keys)]
    mids = [(f"u_{v}", f"{i} * P + kf") for i, v in enumerate(m.flow_states) if i in flow_used]
    r += [f"                u_{v} = 0.0  # not read by the load" for i, v in enumerate(m.flow_states)
          if i not in flow_used]
    for name, o in mids:
        r += _mid_value_lines(name, o, " " * 16)
    r += _mid_qd_lines(" " * 16) if sent else []  # the queueing delay at the sending time
    r += [f"                am += _law_load({load_args})",
          "        e = abs(am - herm) / sc",
          "        if e > err:",
          "            err = e",
          "    return err"]
    return r


def _lanes_agg_hooks(m, fn_rate, par_args, flow_used, st_keys, lw, agg_col):
    """Source of the lock-step kernel's ``_lanes_hist_cols`` and ``_lanes_agg_seg`` (:mod:`ecocc.dde.lanes`):
    :func:`_agg_hooks`' aggregated load for ``W = LANES`` lanes, with a history check.  ``_lanes_agg_seg``, called
    on every attempt of a step ``[t, t + h]`` (history row ``r``, which is free until the step is accepted), writes
    per link ``l`` and lane ``w`` the sum ``A_l = sum_k act_k load_k`` over the flows active at mid-step, at the left
    end (column ``XA + l``, slopes in ``HFA`` and ``HFB``) and at the right end (column ``XB + l``), from the flows'
    states (rows 0 and 2 of ``Y``: the step's start and end) and derivatives (rows ``FF`` and ``n_st`` of ``F``),
    and checks the cubic Hermite of those data at mid-step against the sum of the flows' loads at their continuous
    extensions there (``Pd``), relative to the load, into the lane's error ``err_w`` -- as the history check of a
    stored component (the single kernel's ``_model_hist_err``, :func:`_agg_hooks`), and like it only where
    ``check`` (a positive delay reads the history: the kernel's ``dcomp`` is not empty).  The columns hold ``ln A_l`` and
    its slope ``A_l'/A_l`` (the flow states the load reads are logarithms, so the load is positive: the caller's
    condition), and the reader takes the exponential of their Hermite -- exact where the flows grow at one exponential rate,
    where the cubic of the sum is not (a 100 x 100 Symbiosis map took 502 mean steps with the sum, 459 with its
    logarithm, 458 with the per-flow sum; docs/notes/lanesagg.md).  ``agg_col`` None (a model whose signal does
    not read an aggregable load): no columns, nothing written or checked."""
    r = ["", "", f"LANES_AGG = {agg_col is not None}  # the lock-step kernel keeps the aggregated load (_lanes_agg_seg)",
         "NO_LOAD = -1e300  # the logarithm of a zero aggregated load (its exponential is 0)",
         "", "", "@njit(cache=True)",
         "def _lanes_hist_cols(D):",
         '    """The lock-step history\'s aggregated-load columns per lane (ecocc.dde.codegen._lanes_agg_hooks)."""',
         f"    return {0 if agg_col is None else 2} * D[1]",
         "", "", "@njit(cache=True, _nrt=False, forceinline=True)",
         "def _lanes_agg_seg(t, h, Y, F, FF, n_st, Pd, half_pow, rtol, err_w, HY, HFA, HFB, r, D, check):",
         '    """The aggregated load over the step in history row r and its check, every lane'
         ' (ecocc.dde.codegen._lanes_agg_hooks)."""']
    if agg_col is None:
        return r + ["    return"]
    load_args = ", ".join(["0.0" if x == "qd" else x for x in fn_rate] + par_args)
    dot_args = ", ".join(["0.0" if x == "qd" else x for x in fn_rate] + [f"du_{v}" for v in m.flow_states] + par_args)
    r += ["    P, L, fps, pl, bwd, rtt, lptr, lflows, start, stop, C, ctimes, ctable, FST, LST, par = D",
          "    W = LANES",
          f"    XA = {agg_col}",
          "    XB = XA + L",
          "    tm = t + 0.5 * h",
          "    for l in range(L):",
          "        for w in range(W):",
          "            a0 = 0.0",
          "            a1 = 0.0",
          "            d0 = 0.0",
          "            d1 = 0.0",
          "            am = 0.0"]
    r += [f"            {x.name} = par[{i} * W + w]" for i, x in enumerate(lw.par)]
    r += ["            for jj in range(lptr[l], lptr[l + 1]):",
          "                kf = lflows[jj]",
          "                if start[kf] <= tm and tm < stop[kf]:"]
    r += [f"                    st_{k} = FST[{i}, kf * W + w]" for i, k in enumerate(st_keys)]
    for ys, fs, a, d in (("0", "FF", "a0", "d0"), ("2", "n_st", "a1", "d1"), (None, None, "am", None)):
        part = []
        for i, v in enumerate(m.flow_states):
            if i not in flow_used:
                part += [f"u_{v} = 0.0  # not read by the load", f"du_{v} = 0.0"]
            elif ys is not None:
                part += [f"u_{v} = Y[{ys}, ({i} * P + kf) * W + w]", f"du_{v} = F[{fs}, ({i} * P + kf) * W + w]"]
            else:  # mid-step: the step's continuous extension (as the kernel's history check)
                part += [f"o = ({i} * P + kf) * W + w",
                         "vm = 0.0",
                         "for j in range(Pd.shape[1]):",
                         "    cj = 0.0",
                         "    for s_ in range(n_st + 1):",
                         "        cj += F[s_, o] * Pd[s_, j]",
                         "    vm += cj * half_pow[j]",
                         f"u_{v} = Y[0, o] + h * vm"]
        part += [f"{a} += _law_load({load_args})"] + ([f"{d} += _law_load_dot({dot_args})"] if d else [])
        if ys is None:  # the sum at mid-step only for the check (none where no positive delay reads the history)
            r += ["                    if check:"] + ["    " * 6 + x for x in part]
        else:
            r += ["    " * 5 + x for x in part]
    # no active flow (or an underflowed load): NO_LOAD
    r += ["            if a0 > 0.0 and a1 > 0.0:",
          "                la0 = math.log(a0)",
          "                la1 = math.log(a1)",
          "                g0 = d0 / a0",
          "                g1 = d1 / a1",
          "                herm = math.exp(0.5 * la0 + 0.125 * h * g0 + 0.5 * la1 - 0.125 * h * g1)",
          "            else:",
          "                la0 = la1 = NO_LOAD",
          "                g0 = g1 = 0.0",
          "                herm = 0.0",
          "            HY[r, (XA + l) * W + w] = la0",
          "            HFA[r, (XA + l) * W + w] = g0",
          "            HFB[r, (XA + l) * W + w] = g1",
          "            HY[r, (XB + l) * W + w] = la1"]
    r += ["            sc = rtol * max(abs(a0), abs(a1))",
          "            if check and sc > 0.0:",
          "                err_w[w] = max(err_w[w], abs(am - herm) / sc)"]
    return r


def _self_seen_code(ind, m, px_used, fwd):
    """Source, in the pair loop (pair ``j`` = link ``l``, flow ``p``): ``px_self_seen`` = 1.0 if flow ``p`` is active
    at the load's delay, ``t - d_b(l, p)`` (less its forward delay ``FWL`` on ``l`` with forward delays), else
    0.0 -- the test ``n_active`` counts flow ``p`` with (NetworkSystem.rhs: ``active_pairs(t - (bwd + fwd))``).
    Constant delays: with ``rtt_includes_queueing`` activity is read at the constant delays, as n_active."""
    if "self_seen" not in m.pair_extras:
        return []
    x = " " * ind
    if "self_seen" not in px_used:
        return [f"{x}px_self_seen = 0.0  # not read by the signal"]
    out = [f"{x}tds = tt - bwd[j]",
           f"{x}px_self_seen = 0.0"]
    if fwd:  # flow p's entry among link l's flows, its forward delay to l
        out += [f"{x}for jj in range(lptr[l], lptr[l + 1]):",
                f"{x}    if lflows[jj] == p:",
                f"{x}        tdk = tds - FWL[jj]",
                f"{x}        if start[p] <= tdk and tdk < stop[p]:",
                f"{x}            px_self_seen = 1.0",
                f"{x}        break"]
    else:
        out += [f"{x}if start[p] <= tds and tds < stop[p]:",
                f"{x}    px_self_seen = 1.0"]
    return out


def _sdd_delay(d):
    """Source of a feedback delay ``d`` with the queueing delay ``qx`` added where ``d`` is positive (the NumPy
    reference adds the state-dependent part to the positive constant delays only: ``adaptive._Evaluator``)."""
    return f"({d} + qx if {d} > 0.0 else 0.0)"


def _fwd_arrival_code(m, lw, fn_rate, par_args, flow_used, static_flow, sent=False):
    """Source, in the arrival loop over ``jj`` (link ``l``'s flows): add flow ``kf``'s rate at ``t - d_f(l, kf)``
    (``FWL[jj]``), its state read from the history and its queueing delay the current one, zero while the flow
    is inactive then -- ``NetworkSystem.rhs``'s ``fwd`` lookup; a zero forward delay reads the current rate."""
    out = ["            kf = lflows[jj]",
           "            if FWL[jj] <= 0.0:",
           "                a += rate[kf]",
           "            else:",
           "                tf = tt - FWL[jj]",
           "                if start[kf] <= tf and tf < stop[kf]:"]
    out += _seg_code(20, "FWL[jj]", "karr[jj]")
    for i, v in enumerate(m.flow_states):
        if i in flow_used and lw.uses(lw.rate, lw.u[i]):
            out += _val_code(20, f"u_{v}", f"HC_F{i} + kf", f"{i} * P + kf")
        else:
            out += [f"                    u_{v} = 0.0  # not read by the rate"]
    out += ["                    " + x for x in static_flow("kf")]
    if sent:  # load_rtt="sent": the queueing delay at the sending time
        out += _sent_qd_code(20, "kf", "qk", "HC_Q0")
    rate_args = ", ".join([("qk" if sent else "qdel[kf]") if x == "qd" else x for x in fn_rate] + par_args)
    out += [f"                    a += _law_rate({rate_args})"]
    return out


def _lanes_count(kinks=False, model=None) -> int:
    """Members per lock-step group of a model's lanes kernel: the measured width of the registry model named
    ``model`` (its entry in :data:`ecocc.dde.aot.LANES_MODEL`), else :data:`ecocc.dde.aot.LANES`, or
    :data:`ecocc.dde.aot.LANES_KINKS` for a model whose signal's kinks are breakpoints (``kinks``)."""
    from .aot import LANES, LANES_KINKS, LANES_MODEL
    w = LANES_MODEL.get(model)
    if w is not None:
        if LANES % w:
            raise ValueError(f"lock-step width {w} of {model!r} does not divide LANES = {LANES}")
        return int(w)
    return LANES_KINKS if kinks else LANES


def _has_kinks(lw, q_used) -> bool:
    """Whether the lock-step kernel's kinks code is compiled in for these laws (``KINKS``, :func:`_kinks_code`)."""
    return bool(_queue_levels(lw)) or (bool(q_used) and _linear_in(lw.signal, lw.qq)) or bool(_load_switches(lw))


def _load_switches(lw):
    """The switching functions of the link signal in its delayed load: for every ``Min``/``Max`` of the signal the
    differences of its arguments, for every ``Abs`` its argument, that read the load ``yy`` and otherwise only the
    queue, the capacity, parameters and link fields (not a pair's values: the flow's own rate, a count of flows).
    The signal kinks where one changes sign, at the link's own time; each flow reads it one backward delay later
    (XCP's ``phi`` and its shuffled traffic ``max(0, gamma y d - |phi|)``).  A model whose signal has queue levels
    (:func:`_queue_levels`) is left to them.

    Returns
    -------
    list of sympy.Expr
        In a fixed order, without repeats (``g`` and ``-g`` are one).
    """
    import sympy as sp
    sig = lw.signal
    if sig is None or lw.yy not in sig.free_symbols or _queue_levels(lw):
        return []
    allowed = set(lw.par) | set(lw.ls) | {lw.CC, lw.qq, lw.yy}
    diffs = [a.args[0] for a in sig.atoms(sp.Abs)]
    for f in sig.atoms(sp.Min, sp.Max):
        args = list(f.args)
        diffs += [args[i] - args[j] for i in range(len(args)) for j in range(i + 1, len(args))]
    out = []
    for d in diffs:
        if lw.yy not in d.free_symbols or not d.free_symbols <= allowed or d.free_symbols == {lw.yy}:
            continue
        if all(sp.simplify(d / o).free_symbols for o in out):  # a constant ratio: the same zeros
            out.append(d)
    return sorted(out, key=sp.default_sort_key)


def _lanes_template(width=None, switches=True) -> str:
    """The lock-step template (:mod:`ecocc.dde.lanes`) without its imports that the integrator template already
    made (so the generated module has each import once); with ``width``, its ``LANES`` is that constant (the
    model's group width) instead of :data:`ecocc.dde.aot.LANES`.  Without ``switches`` (a model whose signal has no
    switching function of the load, :func:`_load_switches`) the lines between the ``<switches>`` marks are left
    out: the kernel's text is then the one before they were added (their mere presence, dead code and four unused
    arrays, made a Symbiosis map 1.09x slower in CPU, median of 10 rounds in turn; docs/notes/mapswitch.md)."""
    src = (_HERE / "lanes.py").read_text()
    if not switches:
        src, n = re.subn(r"\n[ ]*# <switches>.*?# </switches>\n", "\n", src, flags=re.S)
        assert n == 2, n
    if width is None:
        return src
    imp = "from ecocc.dde.aot import LANES\n"
    assert src.count(imp) == 1
    return src.replace(imp, f"LANES = {int(width)}  # members per lock-step group (ecocc.dde.codegen._lanes_count)\n")


def _exp_calls(lines):
    """The arguments ``a`` of the calls ``math.exp(a)`` in the source ``lines``, in order (each once)."""
    out = []
    for x in lines:
        i = x.find("math.exp(")
        while i >= 0:
            j, depth = i + 9, 1
            while depth:
                depth += {"(": 1, ")": -1}.get(x[j], 0)
                j += 1
            a = x[i + 9:j - 1]
            if a not in out:
                out.append(a)
            i = x.find("math.exp(", i + 9)
    return out


def _shared_exps(rate_src, flow_src, names):
    """The exponentials (their argument's source) that both the rate law and the flow law compute from the same
    values (identifiers among ``names``: the flow's state now, its static fields, the parameters): the lock-step
    kernel computes each once per flow and lane, before the rate, and passes it to both laws (a call replaced by
    its value: the same operations, the same results)."""
    import re
    rate_exps = _exp_calls(rate_src[4:])
    return [a for a in _exp_calls(flow_src[4:]) if a in rate_exps
            and set(re.findall(r"[A-Za-z_][A-Za-z_0-9.]*", a)) <= set(names)]


def _with_exps(src, name, shared):
    """``src`` (a law's function, :func:`_function`) renamed ``name``, taking the shared exponentials ``ex_i``
    as further arguments in place of their calls."""
    out = list(src)
    out[3] = out[3].replace(src[3][4:src[3].index("(")], name, 1)
    out[3] = out[3][:-2] + "".join(f", ex_{i}" for i in range(len(shared))) + "):"
    for k in range(4, len(out)):
        for i, a in enumerate(shared):
            out[k] = out[k].replace(f"math.exp({a})", f"ex_{i}")
    return out


def _queue_levels(lw):
    """The queue levels where the link signal has a kink or a jump: the ``qq`` of every relation (a piecewise
    law's condition, RED's ``qq < min_th``) and of every ``Min``/``Max`` whose argument difference is linear in
    ``qq`` with a level free of the other delayed values (parameters, link fields and capacity only).  A
    signal's kink elsewhere (in the load, a link state) is not listed.

    Parameters
    ----------
    lw : Laws
        The model's laws.

    Returns
    -------
    list of sympy.Expr
        The levels (packets), in a fixed order, without repeats.
    """
    return _levels_in(lw.signal, lw.qq, set(lw.par) | set(lw.ls) | {lw.CC})


def _levels_in(sig, qq, allowed):
    """:func:`_queue_levels` of the expression ``sig`` in the symbol ``qq``, levels made of ``allowed`` only."""
    import sympy as sp
    if sig is None or qq not in sig.free_symbols:
        return []
    diffs = [a.lhs - a.rhs for a in sig.atoms(sp.core.relational.Relational) if qq in a.free_symbols]
    for f in sig.atoms(sp.Min, sp.Max):
        args = list(f.args)
        diffs += [args[i] - args[j] for i in range(len(args)) for j in range(i + 1, len(args))
                  if qq in (args[i] - args[j]).free_symbols]
    out = []
    for d in diffs:
        d = sp.expand(d)
        if not d.is_polynomial(qq) or sp.degree(d, qq) != 1:
            continue
        lev = sp.simplify(sp.solve(d, qq)[0])
        if lev.free_symbols <= allowed and all(sp.simplify(lev - o) != 0 for o in out):
            out.append(lev)
    return sorted(out, key=sp.default_sort_key)


def _drop_levels(lw):
    """:func:`_queue_levels` of the link's AQM drop fraction of the current queue (``lw.drop`` in ``q``): the levels
    (packets, SymPy expressions of parameters, link fields and the capacity) where it has a kink or a jump, RED's
    ``min_th`` and ``max_th``; none without a drop law."""
    return [] if lw.drop is None else _levels_in(lw.drop, lw.q, set(lw.par) | set(lw.ls) | {lw.C})


#: the network models' single-run kernels propagate a change of an upper-bound hold to the flows
#: (:data:`ecocc.dde.integrator.HOLD_IMAGES`; ``D[3]``, ``D[4]``: each pair's link and backward delay)
_HOLD_IMAGES_CODE = ["", "", "HOLD_IMAGES = True  # upper-bound hold changes make breakpoints one backward delay later"]

#: a signal linear in the delayed queue: a queue's hold at 0 starting makes breakpoints one backward delay later too
#: (:data:`ecocc.dde.integrator.EMPTY_IMAGES`)
_EMPTY_IMAGES_CODE = ["EMPTY_IMAGES = True  # the signal reads the queue linearly: an emptying is a kink"]


def _empty_weight(lw):
    """How much a unit jump of the queue's derivative moves the flows' second derivative: ``|d dflow / d fb| * |d
    signal / d qq|`` (per packet, the flow law's units per second), a SymPy expression of the parameters, link
    fields and capacity (PE-TCP: ``b / (T CC)``), for :func:`_empty_images_code`; None where either factor depends
    on a state (then every emptying's image is kept), or for a signal aggregated as a logarithm."""
    import sympy as sp
    g = _queue_slope(lw)
    if g is None or lw.log_agg:
        return None
    sens = [sp.simplify(sp.diff(d, lw.fb)) for d in lw.dflow]
    if any(not e.free_symbols <= set(lw.par) | set(lw.ls) | {lw.CC} for e in sens):
        return None
    w = sp.Max(*[sp.Abs(e) for e in sens]) * sp.Abs(g) if len(sens) > 1 else sp.Abs(sens[0]) * sp.Abs(g)
    return sp.simplify(w)


def _empty_images_code(weight, par_args, lst_keys):
    """Source of ``EMPTY_IMAGES`` and, with a ``weight`` (:func:`_empty_weight`), ``_model_empty_weight(D, l)`` for
    the single-run kernels, redefining the template's (which keeps every image).

    Returns
    -------
    lines : list of str
    expr : str or None
        The weight as a Python expression (:meth:`Generated.empty_weight_values`), None without one.
    """
    r = ["", ""] + _EMPTY_IMAGES_CODE
    if weight is None:
        return r, None
    from sympy.printing.pycode import PythonCodePrinter
    expr = PythonCodePrinter(dict(fully_qualified_modules=True)).doprint(weight)
    r += ["", "", "@njit(cache=True)", "def _model_empty_weight(D, l):",
          '    """|d dflow / d fb| |d signal / d qq| of link ``l`` (ecocc.dde.codegen._empty_weight)."""']
    r += _link_field_lines({x.name for x in weight.free_symbols}, par_args, lst_keys, "CC")
    r += [f"    return float({expr})"]
    return r, expr


def per_link(exprs, param_names, P, C, lst_keys, lst, L):
    """Evaluate the generator's printed expressions of the parameters (``p_<name>``), link fields (``ls_<key>``)
    and capacity (``C``, ``CC``) for every link.

    Parameters
    ----------
    exprs : list of str
        Python expressions as the generator printed them.
    param_names : list of str
        The numeric parameters' names (:func:`numeric_params`).
    P : ModelParams
        Their values.
    C : array_like
        Capacity per link (packets/s), or one value.
    lst_keys : list of str
        The link fields' names.
    lst : dict
        Link field values (per link, or one value each).
    L : int
        Number of links.

    Returns
    -------
    numpy.ndarray
        Shape ``(L, len(exprs))``.
    """
    import math
    out = np.zeros((L, len(exprs)))
    if not exprs:
        return out
    code = [compile(e, "<law expression>", "eval") for e in exprs]  # the generator's own printed text
    par = {f"p_{nm}": float(getattr(P, nm)) for nm in param_names}
    C = np.broadcast_to(np.asarray(C, dtype=float), (L,))
    lst = {f"ls_{k}": np.broadcast_to(np.asarray(lst[k], dtype=float), (L,)) for k in lst_keys}
    for l in range(L):  # noqa: E741  (scalars per link, as the kernel's _model_drop_levels)
        ns = {"math": math, "C": float(C[l]), "CC": float(C[l]), **par, **{k: float(v[l]) for k, v in lst.items()}}
        out[l] = [eval(c, ns) for c in code]  # noqa: S307
    return out


def _queue_slope(lw):
    """The slope of a link's signal in its delayed queue (``d signal / d qq``, per packet), a SymPy expression of the
    parameters, the link fields and the capacity (``CC``), for a signal linear in the queue (PE-TCP:
    ``1 / (T_s CC)``); None where the slope depends on anything else (a state, the load)."""
    import sympy as sp
    g = sp.simplify(sp.diff(lw.signal, lw.qq))
    if not g.free_symbols <= set(lw.par) | set(lw.ls) | {lw.CC} or g == 0:
        return None
    return g


def _queue_gain(lw):
    """:func:`_queue_slope` as a Python expression of the parameters (``p_<name>``), the link fields (``ls_<key>``)
    and the capacity (``CC``), or None.

    Returns
    -------
    str or None
    """
    from sympy.printing.pycode import PythonCodePrinter
    g = _queue_slope(lw)
    return None if g is None else PythonCodePrinter(dict(fully_qualified_modules=True)).doprint(g)


def _drop_levels_code(lw, par_args, lst_keys):
    """Source of ``NOW_NLEV`` and ``_model_drop_levels(D, l, out)`` for the single-run kernels
    (:mod:`ecocc.dde.integrator`: a step that carries a queue across one of its link's drop-law levels is retaken
    to end at the crossing), redefining the template's, which have none; nothing for a model without such levels
    (its module's text is unchanged).  Also the levels as Python expressions of the parameters (``p_<name>``),
    the link fields (``ls_<key>``) and the capacity (``C``), for the NumPy solver
    (:meth:`Generated.drop_level_values`).

    Returns
    -------
    lines : list of str
    exprs : list of str
    """
    levs = _drop_levels(lw)
    if not levs:
        return [], []
    from sympy.printing.pycode import PythonCodePrinter
    pr = PythonCodePrinter(dict(fully_qualified_modules=True))
    exprs = [pr.doprint(e) for e in levs]
    names = {s.name for e in levs for s in e.free_symbols}
    r = ["", "", f"NOW_NLEV = {len(levs)}  # the levels of the current queue where the drop fraction is not smooth",
         "", "", "@njit(cache=True)",
         "def _model_drop_levels(D, l, out):",
         '    """The queue levels of link ``l`` where its drop fraction has a kink or a jump (ecocc.dde.codegen)."""']
    r += _link_field_lines(names, par_args, lst_keys, lw.C.name)
    r += [f"    out[{i}] = float({e})" for i, e in enumerate(exprs)]
    r += [f"    return {len(levs)}"]
    return r, exprs


def _link_field_lines(names, par_args, lst_keys, cap_name):
    """The lines of a generated per-link function ``f(D, l, ...)`` that bind the parameters, link fields and capacity
    (named ``cap_name``) among ``names`` to link ``l``'s values."""
    r = ["    LST, par = D[14], D[15]"]
    r += [f"    {x} = par[{i}]" for i, x in enumerate(par_args) if x in names]
    r += [f"    ls_{k} = LST[{i}, l]" for i, k in enumerate(lst_keys) if f"ls_{k}" in names]
    r += [f"    {cap_name} = D[10][l]"] if cap_name in names else []
    return r


def _linear_in(expr, sym):
    """Whether ``expr`` is a polynomial of degree 1 in ``sym`` (no piecewise, min or max of it): its slope in
    ``sym`` is the same everywhere, so a kink of ``sym`` is a kink of ``expr``."""
    import sympy as sp
    e = sp.expand(expr)
    if any(sym in a.free_symbols for a in e.atoms(sp.Piecewise, sp.Min, sp.Max, sp.Heaviside, sp.Abs)):
        return False
    return e.is_polynomial(sym) and sp.degree(e, sym) == 1


def _kinks_code(lw, par_args, lst_keys, q_used):
    """Source of the propagated breakpoints' model part (:mod:`ecocc.dde.lanes`, ``kinks``): ``LANES_NLEV`` and
    ``_model_levels(D, l, w, out)`` (the queue levels of link ``l``'s signal in lane ``w``, :func:`_queue_levels`,
    written to ``out``; returns their count), ``KINK_BOUNDS``: whether the flows see a queue's kink where it
    starts being held at 0 or at its buffer (its derivative jumps to 0), taken where the signal reads the delayed
    queue linearly (:func:`_linear_in`: PE-TCP, FAST; XCP's ``max(0, ...)`` of it not: measured, its maps took
    more steps with them), ``LANES_NSW`` and ``_model_switch(D, l, w, qq, yy, out)`` (:func:`_load_switches` at
    queue ``qq`` and load ``yy``, their values in ``out[:n]`` and each one's sum of its terms' magnitudes in
    ``out[n:2 n]``; returns ``n``), and ``KINKS``: any of them (else the kernel's kinks code is left out, so the other models'
    kernels are the code before it: its mere presence made a Symbiosis map 35 % slower, docs/notes/mapsreno.md)."""
    from sympy.printing.pycode import PythonCodePrinter
    pr = PythonCodePrinter(dict(fully_qualified_modules=True))
    import sympy as sp
    levs = _queue_levels(lw)
    bounds = bool(q_used) and _linear_in(lw.signal, lw.qq)
    assert (bool(levs) or bounds or bool(_load_switches(lw))) == _has_kinks(lw, q_used)
    # the AQM drop fraction of the current queue has its kinks at the same levels (RED: the drop and the signal
    # are one probability): its queue's own derivative kinks there, located on a rejected step (KINK_NOW)
    now = False
    if levs and lw.drop is not None:
        dl = [e.subs(lw.C, lw.CC) for e in _drop_levels(lw)]
        # (the signal may have more: RED's band around its queue's bound, where it reads 1 - C/y, models.loss)
        now = all(any(sp.simplify(a - b) == 0 for b in levs) for a in dl)
    sws = _load_switches(lw)
    r = ["", "", f"LANES_NSW = {len(sws)}  # the signal's switching functions of the delayed load (kinks)",
         "", "", "@njit(cache=True, _nrt=False)",
         "def _model_switch(D, l, w, qq, yy, out):",
         '    """The switching functions of link ``l``\'s signal in lane ``w`` at queue ``qq`` and load ``yy``."""']
    if sws:
        r += _lane_fields(sws, par_args, lst_keys)
        r += [f"    out[{i}] = float({pr.doprint(e)})" for i, e in enumerate(sws)]
        # the scale of each: the sum of its terms' magnitudes
        r += [f"    out[{len(sws) + i}] = float({pr.doprint(sp.Add(*[abs(a) for a in sp.Add.make_args(sp.expand(e))]))})"
              for i, e in enumerate(sws)]
    r += [f"    return {len(sws)}"]
    r += ["", "", f"LANES_NLEV = {len(levs)}  # the queue levels where the link signal has a kink (kinks)",
         f"KINK_BOUNDS = {bounds}  # the flows see a queue's kinks at its bounds (kinks)",
         f"KINKS = {bool(levs) or bounds or bool(sws)}  # the lock-step kernel's kinks code is compiled in",
         f"KINK_NOW = {now}  # the current queue's derivative kinks at those levels too (AQM drops; kinks)", "", "",
         "@njit(cache=True, _nrt=False)",
         "def _model_levels(D, l, w, out):",
         '    """The queue levels of link ``l``\'s signal in lane ``w`` where it has a kink (ecocc.dde.codegen)."""']
    if levs:
        r += _lane_fields(levs, par_args, lst_keys)
        r += [f"    out[{i}] = float({pr.doprint(e)})" for i, e in enumerate(levs)]
    r += [f"    return {len(levs)}"]
    return r


def _lane_fields(exprs, par_args, lst_keys):
    """Source lines binding, in a generated ``f(D, l, w, ...)`` of lane ``w`` and link ``l``, the parameters
    (``p_<name>``), link fields (``ls_<key>``) and capacity (``CC``) that ``exprs`` read."""
    names = {s.name for e in exprs for s in e.free_symbols}
    r = ["    C, LST, par = D[10], D[14], D[15]",
         "    W = LANES"]
    r += [f"    {x} = par[{i} * W + w]" for i, x in enumerate(par_args) if x in names]
    r += [f"    ls_{k} = LST[{i}, l * W + w]" for i, k in enumerate(lst_keys) if f"ls_{k}" in names]
    r += ["    CC = C[l]"] if "CC" in names else []
    return r


def _lanes_rhs(m, lw, nF, nL, par_args, fn_rate, fn_sig, fn_flow, hc, uses_y, uses_qd, link_used, q_used,
               flow_used, st_keys, lst_keys, shared, lazy=False, agg_col=None):
    """Source of ``_model_rhs_lanes``: ``_model_rhs`` (the same laws, the same order of operations per lane)
    for ``W = LANES`` lanes, state ``[q * W + w]``; per-lane parameters ``par[i * W + w]`` and static fields
    ``FST[i, p * W + w]``, ``LST[i, l * W + w]``; history columns ``HY[k, c * W + w]``.  Where a lookup's time
    falls inside the step being taken (``overlap``), the step's continuous extension ``QV`` from ``yc``.  With
    ``lazy`` (a signal that reads the load in some branches only, ``_law_reads_y``: drop-tail's full buffer, RED's
    bound) a pair sums its load only where some lane's signal reads it (as ``_model_rhs``); the load of the
    other lanes is then summed but not read, so every lane's values are those of summing everywhere.  With
    ``agg_col`` (the aggregated link load, :func:`_lanes_agg_hooks`: the history column where its columns start) a
    pair whose delayed time falls in a stored segment reads the link's summed load from the history in O(1)
    instead of summing its flows' delayed loads (as ``_model_rhs``)."""
    pars = [f"{x} = par[{i} * W + w]" for i, x in enumerate(par_args)]

    def stf(idx):
        return [f"st_{k} = FST[{i}, ({idx}) * W + w]" for i, k in enumerate(st_keys)]

    def lsf(idx):
        return [f"ls_{k} = LST[{i}, ({idx}) * W + w]" for i, k in enumerate(lst_keys)]

    def ind(n, lines):
        return [" " * n + x for x in lines]

    agg = m.path_aggregate
    # exponentials the rate and the flow laws share (``shared``: computed once per flow and lane, _shared_exps;
    # the laws _law_rate_x, _law_flow_x are generated with _model_rhs), and the own delayed load taken from the
    # pair loop where it is the load's own term (the same function of the same values: the own load's law is the
    # load's, text for text, and the pair's backward delay is the RTT)
    ex_args = "".join(f", ex_{i}" for i in range(len(shared)))
    own_from_load = False
    if m.needs_own_delayed and uses_y:
        own_src = _function("_law_own", ["u_" + v for v in m.flow_states] + [s.name for s in lw.st] + par_args,
                            [lw.own], False)
        own_from_load = own_src[4:] == _function("_law_load", fn_rate + par_args, [lw.load], False)[4:]
    load_used = [i for i in range(nF) if i in flow_used] if uses_y else []
    r = ["", "", f"LANES_NEXP = {max(len(shared), 1)}  # the shared exponentials' slots per flow and lane",
         f"LANES_NS = {len(link_used) + (1 if q_used else 0) or 1}  # the signal's delayed link values, slots per lane"]
    r += _kinks_code(lw, par_args, lst_keys, q_used)
    # not inline="always" (numba's IR-level inlining: see _function), and _nrt=False: the function allocates
    # nothing, and numba's reference counting of its ~30 array arguments (the tuples D and Wk unpacked included)
    # was an incref and a decref per array and call, 13 % of a Symbiosis map (docs/notes/mapsym.md)
    r += ["", "", "@njit(cache=True, _nrt=False, forceinline=True)",
         "def _model_rhs_lanes(s, nud, YA, yr, sat_lo, sat_hi, FA, fr, full, D, Wk, t0, y0, HT, HY, HFA, HFB, m, n_pass,",
         "                     t_cur, h_cur, QV, ycr):",
         '    """_model_rhs for LANES lanes (ecocc.dde.codegen): the state ``YA[yr]``, the derivative into ``FA[fr]``,',
         "    the step's start ``YA[ycr]``; the counters' derivatives only if ``full``.  The rows are taken here, where",
         '    nothing is reference-counted (a row view made by the caller cost an incref and a decref per call)."""',
         "    y, out, yc = YA[yr], FA[fr], YA[ycr]",
         "    P, L, fps, pl, bwd, rtt, lptr, lflows, start, stop, C, ctimes, ctable, FST, LST, par = D",
         "    qdel, rate, arrival, kcur, kown, fbw, ext, ew, ownw, yyw, sw = Wk",
         "    W = LANES",
         "    nd = QV.shape[0]",
         "    tt = s + nud",
         "    md, k, w0, w1, w2, w3, th = 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0",
         f"    IQ = {nF} * P + {nL} * L",
         "    ISENT = IQ + 5 * L"]
    r += [f"    HC_{k[0]}{k[1]} = {v}" for k, v in hc.items()]
    if agg_col is not None:
        r += [f"    XA = {agg_col}",
              "    XB = XA + L"]
    if uses_qd:  # each link's queueing delay once (capacities are positive), summed per path below; arrival
        # is its scratch until the arrival sums
        r += ["    for l in range(L):",
              "        for w in range(W):",
              "            arrival[l * W + w] = y[(IQ + l) * W + w] / C[l]"]
    r += ["    for p in range(P):",
          "        act = start[p] <= tt and tt < stop[p]",
          "        for w in range(W):"]
    r += ind(12, pars)
    if uses_qd:
        r += ["            qd = 0.0",
              "            for j in range(fps[p], fps[p + 1]):",
              "                qd += arrival[pl[j] * W + w]"]
    else:
        r += ["            qd = 0.0"]
    r += ["            qdel[p * W + w] = qd",
          "            if act:"]
    r += ind(16, [f"u_{v} = y[({i} * P + p) * W + w]" for i, v in enumerate(m.flow_states)] + stf("p"))
    for i, a in enumerate(shared):
        r += [f"                ex_{i} = math.exp({a})",
              f"                ew[({i} * P + p) * W + w] = ex_{i}"]
    rate_fn = "_law_rate_x" if shared else "_law_rate"
    r += [f"                rate[p * W + w] = {rate_fn}({', '.join(fn_rate + par_args)}{ex_args})",
          "            else:",
          "                rate[p * W + w] = 0.0",
          "            if full:",
          "                out[(ISENT + p) * W + w] = rate[p * W + w]",
          ] + _index_code(4, "kc", "ctimes", "tt") + [
          "    for l in range(L):",
          "        for w in range(W):",
          "            arrival[l * W + w] = 0.0",
          "        for jj in range(lptr[l], lptr[l + 1]):",
          "            o = lflows[jj] * W",
          "            for w in range(W):",
          "                arrival[l * W + w] += rate[o + w]",
          "        for w in range(W):",
          "            arrival[l * W + w] += ctable[kc, l]",
          "    for p in range(P):",
          "        if not (start[p] <= tt and tt < stop[p]):",
          "            for w in range(W):"]
    r += [f"                out[({i} * P + p) * W + w] = 0.0" for i in range(nF)]
    r += ["            continue",
          "        for w in range(W):",
          f"            fbw[w] = {_AGG_INIT[agg]}",
          ] + (["        own_hit = False"] if own_from_load else []) + [
          "        for j in range(fps[p], fps[p + 1]):",
          "            l = pl[j]",
          ] + _seg_code_lanes(12, "bwd[j]", "kcur[j]")
    # the per-pair extras (as _model_rhs): n_active counts the flows on the link active at the load's delay
    # (shared by the lanes: starts and stops are), rate is the receiving flow's current rate (per lane)
    px_used = {k for k, x in zip(m.pair_extras, lw.px) if lw.uses(lw.signal, x)}
    count_na = "n_active" in px_used
    if uses_y or count_na:
        r += ["            td = tt - bwd[j]"]
    if own_from_load:
        r += ["            own_j = bwd[j] == rtt[p]"]
    if uses_y:
        r += _index_code(12, "kd", "ctimes", "td")
    if count_na:
        r += ["            px_n_active = 0.0",
              "            for jj in range(lptr[l], lptr[l + 1]):",
              "                kf = lflows[jj]",
              "                if start[kf] <= td and td < stop[kf]:",
              "                    px_n_active += 1.0"]
    elif "n_active" in m.pair_extras:
        r += ["            px_n_active = 0.0  # not read by the signal"]
    r += _self_seen_code(12, m, px_used, False)  # shared by the lanes (starts and stops are)
    # the link's delayed values the signal reads (link states, queue), all lanes at once (the lookup's mode
    # decided once per pair), then the signal
    sig_items = [(f"HC_L{i} + l", f"{nF} * P + {i} * L + l") for i in range(nL) if i in link_used]
    sig_items += [("HC_Q0 + l", "IQ + l")] if q_used else []
    sig_vals = (_vals_code_lanes(12, [(f"sw[{n} * W + w]", col, comp) for n, (col, comp) in enumerate(sig_items)], [])
                if sig_items else [])
    # a lane's values the signal reads but the load (16 spaces: inside ``for w in range(W)``)
    lane_vals = ind(16, pars) + (["                px_rate = rate[p * W + w]"] if "rate" in m.pair_extras else [])
    n_s = 0
    for i in range(nL):
        v = m.link_states[i]
        if i in link_used:
            lane_vals += [f"                lv_{v} = sw[{n_s} * W + w]"]
            n_s += 1
        else:
            lane_vals += [f"                lv_{v} = 0.0  # not read by the signal"]
    lane_vals += ([f"                qq = sw[{n_s} * W + w]"] if q_used
                  else ["                qq = 0.0  # not read by the signal"])
    lazy = lazy and uses_y
    if lazy:
        # the signal's other delayed values first: whether any lane's signal reads the load here
        fn_ry = [a for a in fn_sig if a != "yy"]
        r += sig_vals + ["            CC = C[l]",
                         "            rd = False",
                         "            for w in range(W):"] + lane_vals + ind(16, lsf("l")) + [
              f"                if _law_reads_y({', '.join(fn_ry + par_args)}):",
              "                    rd = True"]
    if uses_y:
        # the load: flow by flow, the lanes inside (the lookup's mode decided once per flow); per lane the same
        # terms added in the same order as _model_rhs
        r0 = len(r)
        r += ["            for w in range(W):",
              "                yyw[w] = 0.0",
              "            for jj in range(lptr[l], lptr[l + 1]):",
              "                kf = lflows[jj]",
              "                if start[kf] <= td and td < stop[kf]:"]
        body = list(pars)
        body += [f"u_{v} = 0.0  # not read by the load" for i, v in enumerate(m.flow_states) if i not in load_used]
        body += stf("kf")
        load_args = ", ".join(["qdel[kf * W + w]" if x == "qd" else x for x in fn_rate] + par_args)
        if own_from_load:
            body += [f"ld = _law_load({load_args})",
                     "yyw[w] += ld",
                     "if own_j and kf == p:",
                     "    ownw[w] = ld",
                     "    own_hit = True"]
        else:
            body += [f"yyw[w] += _law_load({load_args})"]
        r += _vals_code_lanes(20, [(f"u_{m.flow_states[i]}", f"HC_F{i} + kf", f"{i} * P + kf") for i in load_used],
                              body)
        if agg_col is not None:
            # the aggregated load (as _model_rhs): a delayed time inside a stored segment (or extrapolating the
            # last one on a first pass); else (before t0, no history yet, inside the step being taken) the
            # per-flow sum.  Unlike the single kernel, a lookup inside the step (overlap, mode 4) keeps the
            # per-flow sum of the step's continuous extensions: the cubic Hermite of the summed load over the
            # step, from each pass's end values, took a 20 x 20 XCP map from 1,000 to 1,553 mean steps
            # (docs/notes/lanesagg.md)
            r[r0:] = (["            if md == 3 and HT[k] <= td and (td < HT[k + 1] or k == m - 2):",
                       "                for w in range(W):",
                       "                    yyw[w] = math.exp(w0 * HY[k, (XA + l) * W + w] + w1 * HFA[k, (XA + l) * W + w]"
                       " + w2 * HY[k, (XB + l) * W + w] + w3 * HFB[k, (XA + l) * W + w])",
                       "            else:"]
                      + ind(4, r[r0:]))
        if lazy:  # summed only where some lane reads it (its lanes' values are then unread: any is right)
            r[r0:] = ["            if rd:"] + ind(4, r[r0:])
    if not lazy:
        r += sig_vals + ["            CC = C[l]"]
    r += ["            for w in range(W):"] + lane_vals
    if uses_y:
        r += ["                yy = yyw[w] + ctable[kd, l]"]
    else:
        r += ["                yy = 0.0  # the signal does not read the load"]
    r += ind(16, lsf("l"))
    r += [f"                sg = _law_signal({', '.join(fn_sig + par_args)})"]
    r += {"min": ["                fbw[w] = min(fbw[w], sg)"], "max": ["                fbw[w] = max(fbw[w], sg)"],
          "sum": ["                fbw[w] += sg"]}[agg]
    if m.needs_own_delayed:
        r += (["        if not own_hit:"] + _seg_code_lanes(12, "rtt[p]", "kown[p]") if own_from_load
              else _seg_code_lanes(8, "rtt[p]", "kown[p]"))
        r += ["        to = tt - rtt[p]",
              "        oact = start[p] <= to and to < stop[p]"]
    r += ["        for w in range(W):"]
    r += ind(12, pars)
    if m.needs_own_delayed:
        r += ["            own = 0.0"]
        if own_from_load:
            r += ["            if own_hit:",
                  "                own = ownw[w]",
                  "            elif oact:"]
        else:
            r += ["            if oact:"]
        for i, v in enumerate(m.flow_states):
            if i in flow_used:
                r += _val_code_lanes(16, f"u_{v}", f"HC_F{i} + p", f"{i} * P + p")
            else:
                r += [f"                u_{v} = 0.0  # not read by the own load"]
        r += ind(16, stf("p"))
        own_args = ", ".join(["u_" + v for v in m.flow_states] + [s.name for s in lw.st] + par_args)
        r += [f"                own = _law_own({own_args})"]
    else:
        r += ["            own = 0.0"]
    r += ind(12, [f"u_{v} = y[({i} * P + p) * W + w]" for i, v in enumerate(m.flow_states)] + stf("p"))
    r += ["            qd = qdel[p * W + w]",
          "            fb = fbw[w]"]
    r += [f"            ex_{i} = ew[({i} * P + p) * W + w]" for i in range(len(shared))]
    r += [f"            d = _law_flow{'_x' if shared else ''}({', '.join(fn_flow + par_args)}{ex_args})"]
    r += [f"            out[({i} * P + p) * W + w] = d[{i}]" for i in range(nF)]
    r += ["    for l in range(L):",
          "        C_l = C[l]",
          "        for w in range(W):",
          "            lw = l * W + w",
          "            q = y[(IQ + l) * W + w]",
          "            a = arrival[lw]"]
    args = ", ".join([s.name for s in lw.lc] + ["q", "a", "C_l"] + [s.name for s in lw.ls] + par_args)
    if nL or lw.drop is not None:
        r += ind(12, pars)
        r += [f"            lc_{v} = y[({nF} * P + {i} * L + l) * W + w]" for i, v in enumerate(m.link_states)]
        r += ind(12, lsf("l"))
    if nL:
        r += [f"            dl = _law_link({args})"]
        r += [f"            out[({nF} * P + {i} * L + l) * W + w] = dl[{i}]" for i in range(nL)]
    if lw.drop is not None:
        # AQM drops (packets/s), never queued, counted as lost (_model_rhs, same operations)
        r += [f"            early = a * _law_drop({args})",
              "            dq = a - early - C_l",
              "            a_q = a - early",
              "            out[(IQ + l) * W + w] = dq",
              "            if full:",
              "                out[(IQ + L + l) * W + w] = ((dq if dq > 0.0 else 0.0) if sat_hi[lw] else 0.0) + early",
              "                out[(IQ + 2 * L + l) * W + w] = a",
              "                out[(IQ + 3 * L + l) * W + w] = (a_q if a_q < C_l else C_l) if sat_lo[lw] else C_l",
              "                out[(IQ + 4 * L + l) * W + w] = q"]
    else:  # (the text of the models without drops is unchanged: their compiled caches stay valid)
        r += ["            dq = a - C_l",
              "            out[(IQ + l) * W + w] = dq",
              "            if full:",
              "                out[(IQ + L + l) * W + w] = (dq if dq > 0.0 else 0.0) if sat_hi[lw] else 0.0",
              "                out[(IQ + 2 * L + l) * W + w] = a",
              "                out[(IQ + 3 * L + l) * W + w] = (a if a < C_l else C_l) if sat_lo[lw] else C_l",
              "                out[(IQ + 4 * L + l) * W + w] = q"]
    return r


def generated_dir() -> Path:
    """The directory of generated modules and their index (``<kernel cache>/generated``).

    Returns
    -------
    pathlib.Path
        The directory (not created here).
    """
    from .aot import cache_dir
    return cache_dir() / "generated"


def load(gen: Generated):
    """The compiled module of ``gen`` (written to the cache if new; numba compiles or loads its cache on the
    first call of the kernel).

    Parameters
    ----------
    gen : Generated
        A generated module's description (:func:`generate`).

    Returns
    -------
    module
        The imported Python module (its kernels are numba functions).
    """
    if gen.name in _modules:
        return _modules[gen.name]
    d = generated_dir()
    path = d / f"{gen.name}.py"
    if not path.exists():
        _write(path, gen.source)
    spec = importlib.util.spec_from_file_location(gen.name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[gen.name] = mod
    spec.loader.exec_module(mod)
    _modules[gen.name] = mod
    return mod


_kernels: dict = {}

#: kernels of a generated module: kind -> (function name, argument names' attribute of ecocc.dde.engine)
KINDS = {"adaptive": ("adaptive_kernel", "ADAPTIVE_ARGS"), "lanes": ("lanes_kernel_strided", "LANES_ARGS"),
         "fixed": ("fixed_kernel_strided", "FIXED_ARGS")}


def kernel(gen: Generated, args: dict, kind: str = "adaptive"):
    """The compiled kernel ``kind`` of a generated module.

    Parameters
    ----------
    gen : Generated
    args : dict
        Arguments like the ones it will get (their numba types make the signature), keyed by the kind's
        argument names in :mod:`ecocc.dde.engine`.
    kind : {"adaptive", "lanes", "fixed"}
        :data:`KINDS`: one adaptive run, the lock-step groups of :func:`ecocc.dde.engine.solve_adaptive_batch`,
        the fixed-step RK4 members of :func:`ecocc.dde.engine.solve_fixed`.

    Returns
    -------
    callable, dict
        The kernel and how it was obtained (``compiled``: ``"aot"`` or ``"jit"``, the module, ``built_now``, or
        ``aot_unavailable``: why not ahead of time).

    The generated kernel is compiled by ``numba.pycc`` into an extension module in the cache directory (named
    by a hash of the generated source, the kind, this CPU, numba's and Python's versions; built once, under a
    lock, written atomically), which later processes load without importing numba (numba's start-up and cache
    loading cost ~0.5 s per process, far more than a small run).  Compiled with the GIL released, so threads
    run it in parallel.  If that build fails, or with ``ECOCC_AOT=0``, numba's JIT (cached on disk) runs the
    same function."""
    key = (gen.name, kind)
    if key in _kernels:
        return _kernels[key]
    from . import aot
    fname, argattr = KINDS[kind]
    if kind == "adaptive":  # a registry model's kernel compiled at install time (ecocc.dde.shipped, setup.py)
        fn, where = aot.installed_generated(gen.name)
        if fn is not None:
            _kernels[key] = (fn, dict(compiled="aot", module=where, built_now=False, installed=True))
            return _kernels[key]
    fn, info = None, {}
    if aot.aot_mode() != "0":
        try:
            tag = "" if kind == "adaptive" else f"|{kind}"
            name = "ecocc_aot_" + hashlib.sha256(
                f"{gen.name}{tag}|{aot._cpu_id()}|{aot._numba_version()}|{sys.version}".encode()).hexdigest()[:16]
            path = aot._module_path(name)
            built = False
            if path is None:
                with aot._build_lock(name):  # a concurrent process building it waits, then loads it
                    path = aot._module_path(name)
                    if path is None:
                        import numba

                        from . import engine
                        py = getattr(load(gen), fname).py_func
                        ret = numba.int64 if kind == "adaptive" else numba.none
                        sig = ret(*[numba.typeof(args[k]) for k in getattr(engine, argattr)])
                        path = aot.compile_module(f"{gen.model_name} {kind}", name, aot.cache_dir(), func=py,
                                                  sig=sig, stamp=int(gen.name[-15:], 16))
                        built = True
            fn = getattr(aot._load(path, name), aot._EXPORT)
            info = dict(compiled="aot", module=str(path), built_now=built)
        except Exception as exc:  # no numba.pycc, no C compiler, a failed build: numba's JIT
            info = dict(aot_unavailable=f"{type(exc).__name__}: {exc}")
    else:
        info = dict(aot_unavailable="ECOCC_AOT=0")
    if fn is None:
        if not _numba_cached(gen.name, generated_dir(), fname):
            sys.stderr.write(f"ecocc: compiling the {gen.model_name} {kind} kernel for this machine with numba's JIT, "
                             f"once (a minute or so; cached in {generated_dir()})\n")
        fn = getattr(load(gen), fname)
        info["compiled"] = "jit"
    _kernels[key] = (fn, info)
    return fn, info


def _numba_cache_dirs(d: Path):
    env = os.environ.get("NUMBA_CACHE_DIR")
    return [Path(env)] if env else [d / "__pycache__"]


def _numba_cached(name: str, d: Path, fname: str = "adaptive_kernel") -> bool:
    """Whether numba's cache holds the compiled kernel ``fname`` of module ``name`` (its index file)."""
    for c in _numba_cache_dirs(d):
        if c.is_dir() and any(c.rglob(f"{name}.{fname}-*.nbi")):
            return True
    return False


def warm(models=None) -> dict:
    """Compile (or load from numba's cache) the adaptive kernel of every registered model (or of ``models``)
    with its default parameters, on a two-flow dumbbell.

    Parameters
    ----------
    models : sequence of str or None, optional
        Registry names (None: every model the generated kernels serve).

    Returns
    -------
    dict
        ``{name: (wall seconds, where the kernel came from)}``: the install-time or ahead-of-time extension
        module, else numba's JIT of the generated module (its path).
    """
    import time

    from ..models import REGISTRY, get_model
    from ..network import dumbbell
    from ..simulate import output_grid
    from ..system import NetworkSystem
    from .engine import solve_adaptive
    out = {}
    for name in (models or REGISTRY):
        t0 = time.perf_counter()
        m = get_model(name)
        sysm = NetworkSystem(m, dumbbell(1000.0, [0.05, 0.1]), m.make_params(), 0.2)
        solve_adaptive(sysm, 0.2, t_eval=output_grid(0.2, 0.1), atol=sysm.default_atol())
        gen = generate(sysm)
        info = _kernels.get((gen.name, "adaptive"), (None, {}))[1]
        where = (info["module"] if info.get("compiled") == "aot"
                 else f"numba's JIT of {generated_dir() / f'{gen.name}.py'}")
        out[m.name] = (time.perf_counter() - t0, where)
    return out


#: the registry models whose generated kernels are shipped and compiled at install time (the models of issue
#: 14's first-run target; AECP and CLTCP share theirs): the five cost 58 s of CPU to build (docs/notes/startup.md);
#: the others compile on first use
SHIP_MODELS = ("aecp", "cltcp", "petcp", "symbiosis", "reno")


def _registry_systems(models=SHIP_MODELS):
    """``{label: NetworkSystem}``: each model of ``models`` (None: every registered one) the generated kernel
    serves, with its default
    parameters, and with each parameter whose default is ``None`` given a number (AECP's ``r0_pps``: a
    number is a kernel parameter, ``None`` an option, so the two are two kernels), on the two-flow dumbbell
    :func:`warm` uses (the generated text depends on the model, its options and the names of its static
    fields, not on the network's values)."""
    from ..errors import InputError
    from ..models import REGISTRY, get_model
    from ..network import dumbbell
    from ..system import NetworkSystem
    from .engine import codegen_gap
    out = {}
    for name in (REGISTRY if models is None else models):
        m = get_model(name)
        if codegen_gap(m) is not None:
            continue
        P = m.make_params()
        variants = {m.name: P}
        for f in dataclasses.fields(P):
            if f.init and getattr(P, f.name) is None:
                try:
                    variants[f"{m.name} ({f.name} set)"] = m.make_params(**{f.name: 10.0})
                except (InputError, TypeError, ValueError):
                    pass
        for label, PP in variants.items():
            sysm = NetworkSystem(m, dumbbell(1000.0, [0.05, 0.1]), PP, 0.2)
            if supported(sysm) is None:
                out[label] = sysm
    return out


def ship() -> dict:
    """Write the generated sources of the registry models (default options) and their index into
    ``ecocc/dde/shipped`` (package data: setup.py compiles each into an extension module at install time,
    so the first run after installing neither generates nor compiles).  Removes the files there that no
    model uses any more.  Returns ``{model name: module name}``.

    Returns
    -------
    dict
        The model names and their generated modules' names.
    """
    import json
    out, keep = {}, set()
    d = _shipped()
    for name, sysm in _registry_systems().items():
        g = Generated(sysm.model, sysm.P, list(sysm.st), list(sysm.lst))
        _write(d / f"{g.name}.py", g.source)
        key = _laws_key(sysm)
        _write(d / "index" / f"{key}.json", json.dumps({k: getattr(g, k) for k in _META}, indent=0))
        keep |= {f"{g.name}.py", f"{key}.json"}
        out[name] = g.name
        # the "sent" variant's index entry where it is the same module (the two readings the same equations,
        # sent_differs): a map or a single run under load_rtt="sent" finds it without SymPy; where the readings
        # differ its module is generated on first use (not shipped)
        gs = Generated(sysm.model, sysm.P, list(sysm.st), list(sysm.lst), sent=True)
        if not gs.sent:
            assert gs.name == g.name, f"{name}: the 'sent' variant reads nothing at the sending time yet differs"
            skey = _laws_key(_read_sent(sysm))
            _write(d / "index" / f"{skey}.json", json.dumps({k: getattr(gs, k) for k in _META}, indent=0))
            keep.add(f"{skey}.json")
    from . import codegen_mixed
    for label, (mod, idx) in codegen_mixed.ship().items():  # the shipped mixed composites
        keep |= {f"{mod}.py", idx}
        out[label] = mod
    for p in list(d.glob("ecocc_gen_*.py")) + list(d.glob("ecocc_mix_*.py")) + list((d / "index").glob("*.json")):
        if p.name not in keep:
            p.unlink()
        else:
            p.chmod(0o644)  # package data (the cache's files are private: mkstemp)
    return out


def supported(sysm) -> str | None:
    """None if the generated kernel computes ``sysm``, else why not.

    Parameters
    ----------
    sysm : NetworkSystem
        The model on its network.

    Returns
    -------
    str or None
        Why the generated kernels cannot run it (a batched system), or None.  Forward delays and
        ``rtt_includes_queueing`` are served by the adaptive kernel (:func:`variant_flags`); the lock-step and
        fixed-step kernels refuse them (:func:`ecocc.dde.engine.check_engine`, ``solve_fixed``).
    """
    if np.ndim(sysm.rtt_s) != 1:
        return "a batched system"
    return None


#: what the on-disk index keeps of a generated module (``sent``: it reads some delayed load at the sending time,
#: :func:`sent_differs`)
_META = ("name", "model_name", "param_names", "st_keys", "lst_keys", "hist_blocks", "n_flow_states",
         "n_link_states", "flow_used", "link_used", "q_used", "agg", "lazy", "lanes", "sent", "drop_levels",
         "empty_images", "queue_gain", "empty_weight")


class _Cached(Generated):
    """A generated module known from the on-disk index (no SymPy needed); its source is read on demand."""

    def __init__(self, meta):  # noqa: D107  (Generated.__init__ generates; this one only restores)
        for k in _META:
            setattr(self, k, meta[k])

    @property
    def source(self):
        p = generated_dir() / f"{self.name}.py"
        return (p if p.is_file() else _shipped() / f"{self.name}.py").read_text()


def _shipped() -> Path:
    from .aot import SHIPPED
    return SHIPPED


def _laws_key(sysm):
    """A hash of everything the generated text depends on, readable without SymPy: the generator's and the
    template's sources, the source files of the model's classes (the laws and the module-level helpers they
    call) and of its parameter class, the options, the static fields.  None for a model defined without a
    source file (an interactive session): always generated then."""
    import inspect
    h = hashlib.sha256(f"{GEN_VERSION}".encode())
    for f in ("codegen.py", "integrator.py", "lanes.py", "rk4.py", "kernels.py", "history.py", "aot.py"):
        h.update((_HERE / f).read_bytes())
    m = sysm.model
    try:
        files = {inspect.getsourcefile(c) for c in type(m).__mro__ + type(sysm.P).__mro__ if c is not object}
    except TypeError:
        return None
    if None in files:
        return None
    for f in sorted(files):
        h.update(Path(f).read_bytes())
    if any(variant_flags(sysm)):  # the variants' texts differ; the default key is unchanged
        h.update(repr(("variant", variant_flags(sysm))).encode())
    opts = [(k, v) for k, v in sorted(sysm.P.as_dict().items()) if k not in numeric_params(sysm.P)]
    h.update(repr((type(m).__module__, type(m).__qualname__, type(sysm.P).__qualname__, opts, list(sysm.st),
                   list(sysm.lst))).encode())
    return h.hexdigest()[:24]


def variant_flags(sysm) -> tuple:
    """Which variant of the generated right-hand side ``sysm`` needs: ``(sdd, fwd, sent)``.

    Parameters
    ----------
    sysm : NetworkSystem
        The model on its network.

    Returns
    -------
    tuple of bool
        ``sdd``: the feedback delays include the path's queueing delay (``rtt_includes_queueing``); ``fwd``: some
        (link, flow) pair has a positive forward delay (``delay_split="propagation"`` or ``forward_delays_s``);
        ``sent``: delayed rates are read at the sending time (``load_rtt="sent"``).
    """
    return (bool(getattr(sysm, "rtt_includes_queueing", False)), bool(getattr(sysm, "has_fwd", False)),
            getattr(sysm, "load_rtt", "current") == "sent")


def sent_differs(sysm) -> bool:
    """Whether ``load_rtt="sent"`` changes ``sysm``'s equations, derived from its model's laws: some delayed load
    the signal reads, or (with forward delays) some forward-delayed rate, reads the queueing delay
    (``Generated.sent``; the generated text of the "sent" variant differs from the "current" one exactly then).
    Otherwise the two readings are the same equations (AECP, CLTCP, PE-TCP, Symbiosis' default load: the delayed
    load does not read the queueing delay, or the signal reads no delayed load).  Reno's, HSTCP's and Scalable
    TCP's signals read their load where the queue sits at its bound (drop-tail's full buffer, RED's max_th).

    Parameters
    ----------
    sysm : NetworkSystem
        The model on its network (any ``load_rtt``; the answer is for "sent").  Its generated module's index
        entry answers without SymPy (the shipped index holds the "sent" entries of the shipped models where
        the two readings coincide: :func:`ship`); else the laws are read with SymPy once (then cached).

    Returns
    -------
    bool
        True where the readings differ.
    """
    return bool(generate(sysm if variant_flags(sysm)[2] else _read_sent(sysm)).sent)


def _read_sent(sysm):
    """``sysm`` read at the sending time: a shallow copy with ``load_rtt="sent"`` (only the variant flag and the
    index key consult it; nothing is rebuilt)."""
    import copy
    other = copy.copy(sysm)
    other.load_rtt = "sent"
    return other


def generate_for(sysm, P) -> Generated:
    """:func:`generate` for ``sysm`` run with the parameters ``P`` (their options select the laws).

    Parameters
    ----------
    sysm : NetworkSystem
    P : ModelParams

    Returns
    -------
    Generated
    """
    saved = sysm.P
    try:
        sysm.P = P
        return generate(sysm)
    finally:
        sysm.P = saved


def generate(sysm) -> Generated:
    """The generated module's description for a NetworkSystem's model, options and static fields: from this
    process's memory, else from the on-disk index (``generated/index``, then the shipped one; no SymPy), else
    generated now.

    Parameters
    ----------
    sysm : NetworkSystem
        The model on its network.

    Returns
    -------
    Generated
        The description (name, parameter names, history blocks; the source on demand).
    """
    num = set(numeric_params(sysm.P))
    opts = tuple((k, v) for k, v in sorted(sysm.P.as_dict().items()) if k not in num)
    ck = (type(sysm.model), opts, tuple(sysm.st), tuple(sysm.lst), variant_flags(sysm))
    g = _gen_cache.get(ck)
    if g is not None:
        return g
    key = _laws_key(sysm)
    g = indexed(key and f"{key}.json", _Cached)
    if g is None:
        sdd, fwd, sent = variant_flags(sysm)
        g = Generated(sysm.model, sysm.P, list(sysm.st), list(sysm.lst), sdd=sdd, fwd=fwd, sent=sent)
        _write(generated_dir() / f"{g.name}.py", g.source)
        if key is not None:
            import json
            _write(generated_dir() / "index" / f"{key}.json", json.dumps({k: getattr(g, k) for k in _META}))
    _gen_cache[ck] = g
    return g


def indexed(index_name, cls):
    """The generated module an index entry names, from the cache's index, else the one shipped with the package
    (``ship``): no SymPy needed.

    Parameters
    ----------
    index_name : str or None
        The index file's name (``<key>.json``); None (no key: a model without a source file) finds nothing.
    cls : type
        The class restoring a module from its index entry (``_Cached``, ``codegen_mixed._CachedMixed``).

    Returns
    -------
    object or None
        ``cls(entry)``, or None when neither index has a readable entry whose source file exists.
    """
    if index_name is None:
        return None
    import json
    for base in (generated_dir(), _shipped()):
        idx = base / "index" / index_name
        if idx.is_file():
            try:
                meta = json.loads(idx.read_text())
                if (base / f"{meta['name']}.py").is_file():
                    return cls(meta)
            except (ValueError, KeyError, OSError):
                pass
    return None


def _write(path: Path, text: str):
    """Write ``text`` to ``path`` atomically (a temporary file renamed): another process sees all or nothing."""
    import tempfile  # here: its import (shutil, random, bz2, lzma) is not needed when nothing is written
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


_gen_cache: dict = {}


def kernel_data(sysm, gen: Generated):
    """The tuples ``D`` and ``Wk`` of the generated right-hand side for a NetworkSystem.

    Parameters
    ----------
    sysm : NetworkSystem
        The model on its network.
    gen : Generated
        Its generated module's description.

    Returns
    -------
    tuple
        ``(D, Wk)``: the network's arrays (sizes, routing, delays in s, start/stop times in s, capacities in
        packets/s, cross traffic, static fields, parameters) and the work arrays.
    """
    a = sysm.a
    P, L = sysm.n_flows, sysm.n_links
    f64 = lambda v: np.array(v, dtype=float, order="C")  # noqa: E731  (fresh, writable, contiguous)
    i64 = lambda v: np.array(v, dtype=np.int64, order="C")  # noqa: E731
    lptr, lflows = a.flows_by_link()
    FST = np.zeros((len(gen.st_keys), P))
    for i, k in enumerate(gen.st_keys):
        FST[i] = np.broadcast_to(np.asarray(sysm.st[k], dtype=float), (P,))
    LST = np.zeros((len(gen.lst_keys), L))
    for i, k in enumerate(gen.lst_keys):
        LST[i] = np.broadcast_to(np.asarray(sysm.lst[k], dtype=float), (L,))
    par = f64([float(getattr(sysm.P, nm)) for nm in gen.param_names])
    npair = a.pair_link.size
    D = (int(P), int(L), i64(a.flow_pair_start), i64(a.pair_link), f64(sysm.bwd), f64(a.rtt_s), i64(lptr),
         i64(lflows), f64(getattr(sysm, "start_s", a.start_s)), f64(a.stop_s), f64(sysm.C), f64(sysm.cross_times),
         f64(sysm.cross_table), f64(FST), f64(LST), par)
    Wk = (np.zeros(P), np.zeros(P), np.zeros(L), np.zeros(npair, dtype=np.int64), np.zeros(P, dtype=np.int64))
    if variant_flags(sysm)[1]:
        # forward delay of each (link, flow) entry in the order of lflows (flows_by_link's), and the history
        # segments of the arrival's and the load's lookups per entry
        order = np.argsort(a.pair_link, kind="stable")
        D = D + (f64(np.asarray(a.pair_fwd_s)[order]),)
        Wk = Wk + (np.zeros(lflows.size, dtype=np.int64), np.zeros(lflows.size, dtype=np.int64))
    return D, Wk


def member_fields(sysm, gen: Generated, P):
    """The per-member fields of a generated kernel: ``sysm`` run with the parameters ``P`` instead of ``sysm.P``.

    Parameters
    ----------
    sysm : NetworkSystem
    gen : Generated
        The generated module of ``sysm``'s model; ``P`` must select the same laws (options).
    P : ModelParams

    Returns
    -------
    y0 : ndarray
        ``(n,)`` initial state.
    FST, LST : ndarray
        Static fields ``(len(gen.st_keys), n_flows)`` and ``(len(gen.lst_keys), n_links)``.
    par : ndarray
        The numeric parameters in ``gen.param_names`` order.
    """
    m, net = sysm.model, sysm.net
    saved = sysm.P
    try:
        sysm.P = P
        y0 = sysm.initial_state()
    finally:
        sysm.P = saved
    # the link constants at the system's queue bound (a map of members that differ in it runs at the largest)
    st, lst = m.flow_static(net, P), m.link_static_at(net, P, sysm.a.buffer_pkts)
    nP, nL = sysm.n_flows, sysm.n_links
    FST = np.zeros((len(gen.st_keys), nP))
    for i, k in enumerate(gen.st_keys):
        FST[i] = st[k]  # a scalar or one value per flow (numpy raises for a shape that does not broadcast to a row)
    LST = np.zeros((len(gen.lst_keys), nL))
    for i, k in enumerate(gen.lst_keys):
        LST[i] = lst[k]
    par = np.array([float(getattr(P, nm)) for nm in gen.param_names])
    return y0, FST, LST, par


if __name__ == "__main__":  # python -m ecocc.dde.codegen: refresh the shipped sources of the registry models
    for _m, _n in ship().items():
        print(f"{_m}: {_n}")
