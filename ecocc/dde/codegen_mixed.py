"""Compiled kernels for mixed-protocol networks, generated from the member models' own laws.

A :class:`ecocc.mixed.MixedSystem` (flows of several protocols on one network) runs on the same compiled
integrators as a single model (:mod:`ecocc.dde.integrator`, adaptive Dormand--Prince 5(4) / Bogacki--Shampine
3(2); :mod:`ecocc.dde.rk4`, fixed-step RK4), copied verbatim into one generated module per *member
combination*.  Nothing is transcribed by hand: each member's laws are evaluated on SymPy symbols by
:class:`ecocc.dde.codegen.Laws` (the very code that generates the single-model kernels) and printed as scalar
functions ``_m<i>_rate``, ``_m<i>_load``, ``_m<i>_own``, ``_m<i>_signal``, ``_m<i>_flow``, ``_m<i>_link``
(member ``i`` in the composite's order).  A generated composite right-hand side ``_model_rhs`` applies them
with the semantics of :meth:`ecocc.mixed.MixedSystem.rhs`:

* each flow's rate by its member's ``flow_rate``; the arrival at a link is the sum over all flows plus cross
  traffic;
* a member's signal on the (link, flow) pairs of its own flows, aggregated along the path with that member's
  ``path_aggregate``; the load it reads counts the member's own flows by its ``flow_load`` and the flows of
  the other members by their ``flow_rate``, each delayed by the pair's backward delay;
* flow laws per member on its own flows; link laws per member on every link (total arrival, shared queue);
* the shared queue and counters as in the single-model kernel, with no AQM drops taken out of the queue
  input (``MixedSystem.rhs`` treats RED as a loss signal only, and says so once).

The load sums follow the single-model kernels (docs/notes/mixagg.md): a delayed law that does not read the current
queueing delay (TCP Symbiosis' own ``w/tau``, PE-TCP's load, AECP's rate) is an *aggregated group*, summed per link
over the member's flows in the history at each accepted step (value and slopes, as
:func:`ecocc.dde.codegen._agg_hooks`), so a pair reads it in O(1) where its delayed time falls in a stored
segment; a law that reads the current queueing delay (Reno's ``W/(tau + Q(t))``, Symbiosis' rate) has no per-link
sum ahead of time for distinct RTTs (MixedSystem.rhs evaluates the delayed windows with the current ``qdelay``,
docs/notes/renoagg.md): where it has the form ``g(u) c/(c + Q)`` it is a *Chebyshev group* (docs/notes/mixcur.md:
``c/(c + Q)`` expanded in Chebyshev polynomials of ``Q`` on the path's range, truncated at round-off; the
per-term sums kept per (link, path) slot like the aggregated groups, a pair reads them in O(terms)), else, and
where a group cannot be read, a per-flow sum -- unless ``load_rtt="sent"``: then such a law is read at
the sending time (its queueing delay from the path queues' history) and is an aggregated group too, its slopes
through the queues' (docs/notes/renosent.md); a piecewise signal reads the load only where its
branch does (drop-tail: at a full buffer, ``_m<i>_reads_y``, :func:`ecocc.dde.codegen._reads_when`).

The flows are dispatched to their member inside the loops (``fmem``: each flow's member, ``floc``: its
index among the member's flows); state offsets and history columns are computed from the member flow
counts at run time, so one compiled module serves every network of a member combination (the generated
text depends on the member models, their options and the names of their static fields, not on sizes or
numeric parameters: those are kernel arrays).

Queueing delay in the round trip (``rtt_includes_queueing``, a variant of the text as in
:class:`ecocc.dde.codegen.Generated`: the default text is unchanged): every positive feedback delay of flow ``p``
-- its pairs' link signals, the loads they read, its own load one round trip back -- is lengthened by
``Q_p = max(sum_{l in p} q_l / C_l, 0)`` of the state the right-hand side is called with
(:meth:`ecocc.mixed.MixedSystem.rhs`), flow activity and cross traffic read at the constant delays; the loads are
then summed per flow (no aggregated or Chebyshev groups, as the single kernels' aggregated load).  Forward
delays (``fwd``, a third variant; adaptive kernel only, as the single models'): the arrival at link ``l`` sums each
flow's rate at ``t - d_f(l, k)`` (its member's rate law on its state from the history, its queueing delay the
current one, or the sending time's under ``load_rtt="sent"``), and the load a pair reads is each flow's at
``d_b(l, p) + d_f(l, k)`` (plus ``Q_p`` with ``rtt_includes_queueing``), summed per flow, as
:meth:`ecocc.mixed.MixedSystem.rhs`.

Scope (:func:`gap`): one network (not a batch), forward delays on the adaptive kernel only; the lock-step map
kernel (:mod:`ecocc.dde.lanes`) does not serve composites.  The NumPy composite stays the
reference (tests/test_mixed_compiled.py).
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np

from . import codegen
from .codegen import (OV, Laws, _agg_cur_code, _function, _index_code, _load_dot_function, _reads_when, _sdd_delay,
                      _seg_code, _sent_qd_code, _shared_exps, _val_code, _with_exps, numeric_params, rhs_variants)

_HERE = Path(__file__).resolve().parent
#: bump to regenerate every composite module (a change of this generator not visible in its text)
MIX_VERSION = 3
_AGG_INIT = {"min": "math.inf", "max": "-math.inf", "sum": "0.0"}
#: the names the generated functions give the fields of the composite's ``D`` (:func:`kernel_data`)
_D_NAMES = ("P, L, fps, pl, bwd, rtt, lptr, lflows, start, stop, C, ctimes, ctable, FST, LST, par, NF, fmem, floc, "
            "lsmin, mlptr, mlflows, lsl, sptr, sfl, srep, QA, QB, CF, CNO, SOK")
#: the most Chebyshev terms a group keeps per slot (rows of ``CF`` per group); a flow needing more is summed per flow
NT_MAX = 64
#: a Chebyshev group's interval of the queueing delay reaches this fraction of the path's largest one below 0 and
#: above it (Runge-Kutta stages may overshoot the clipped queue a little; outside, the pair sums per flow)
Q_MARGIN = 1.0 / 64.0
_CHEB_COEFS = f'''

@njit(cache=True)
def _cheb_coefs(cp, qa, qb, CF, r0, kf):
    """Chebyshev coefficients of Q -> cp / (cp + Q) on [qa - qb, qa + qb] into CF[r0:r0 + {NT_MAX}, kf] (with
    x = (Q - qa) / qb, beta = (cp + qa) / qb > 1: cp / qb / (beta + x) = a0 + sum_(n >= 1) 2 a0 (-r)^n T_n(x),
    a0 = cp / qb / sqrt(beta^2 - 1), r = beta - sqrt(beta^2 - 1)); returns the terms whose truncation leaves a
    relative error <= 2^-53 on the interval (the tail 2 a0 r^n / (1 - r) against the least value
    cp / qb / (beta + 1)), or -1 (cp, qb not positive and finite, beta <= 1, or more than {NT_MAX} terms)."""
    if not (cp > 0.0 and qb > 0.0 and math.isfinite(cp) and math.isfinite(qa) and math.isfinite(qb)):
        return -1
    be = (cp + qa) / qb
    if not be > 1.0:
        return -1
    sq = math.sqrt((be - 1.0) * (be + 1.0))
    rr = 1.0 / (be + sq)
    a0 = cp / qb / sq
    CF[r0, kf] = a0
    an = 2.0 * a0
    for n in range(1, {NT_MAX}):
        an *= -rr
        CF[r0 + n, kf] = an
    tail = 2.0 * (be + 1.0) / ((1.0 - rr) * sq)
    nt = 1
    while tail * rr ** nt > 2.0 ** -53:
        nt += 1
        if nt > {NT_MAX}:
            return -1
    return nt
'''
_gen_cache: dict = {}


def gap(sysm, kernel="adaptive") -> str | None:
    """Why the generated composite kernel cannot run ``sysm`` (a MixedSystem), or None.

    Parameters
    ----------
    sysm : MixedSystem
        The composite on its network.
    kernel : {"adaptive", "fixed"}, optional
        The compiled method: the fixed-step kernel does not follow forward delays (as the single models').

    Returns
    -------
    str or None
        One sentence naming what is missing, or None.
    """
    if sysm.has_fwd and kernel != "adaptive":
        return ("forward delays (delay_split='propagation' or explicit forward_delays_s) with the fixed-step "
                "kernel: only the adaptive compiled kernel follows them")
    return None


class _MemberLaws:
    """One member's generated functions and what the composite right-hand side needs to call them."""

    def __init__(self, i, model, P, st_keys, lst_keys):
        self.i, self.model = i, model
        self.lw = lw = Laws(model, P, st_keys, lst_keys)
        self.param_names = numeric_params(P)
        self.st_keys, self.lst_keys = list(st_keys), list(lst_keys)
        self.par_args = [x.name for x in lw.par]
        # the composite's local names of this member's parameters (two members may share a parameter name)
        self.par_loc = [f"m{i}_{a}" for a in self.par_args]
        m = model
        self.uses_y = m.signal_uses_arrival and lw.uses(lw.signal, lw.yy)
        # the load read only where the signal's branch reads it (codegen.Generated.lazy, docs/notes/renoagg.md):
        # drop-tail's 1 - C/y only at a full buffer; elsewhere the pair skips its load sum (the same values)
        import sympy as sp
        ycond = _reads_when(lw.signal, lw.yy) if self.uses_y else sp.true
        self.ycond = ycond
        self.lazy = bool(self.uses_y and ycond is not sp.true and ycond is not sp.false
                         and ycond.free_symbols <= set(lw.lv) | {lw.qq, lw.CC} | set(lw.ls) | set(lw.par))
        self.link_used = [j for j, s in enumerate(lw.lv) if lw.uses(lw.signal, s)]
        self.q_used = lw.uses(lw.signal, lw.qq)
        # a signal linear in the delayed queue: its emptying's images and its slope (codegen.Generated)
        self.empty_images = codegen._linear_in(lw.signal, lw.qq) if self.q_used else False
        self.queue_gain = codegen._queue_gain(lw) if self.empty_images else None
        self.fn_rate = ["u_" + v for v in m.flow_states] + ["qd"] + [s.name for s in lw.st]
        self.fn_sig = [s.name for s in lw.lv] + ["qq", "yy", "CC"] + [s.name for s in lw.ls]
        self.fn_ry = [a for a in self.fn_sig if a != "yy"]
        self.fn_flow = ["u_" + v for v in m.flow_states] + ["fb", "own", "qd"] + [s.name for s in lw.st]
        self.fn_link = [s.name for s in lw.lc] + ["q", "y", "C"] + [s.name for s in lw.ls]
        self.fn_own = ["u_" + v for v in m.flow_states] + [s.name for s in lw.st]
        # the exponentials of a flow's current state both the rate and the flow laws compute (codegen._shared_exps):
        # computed once per flow and call (in the composite, where the states and static fields have the laws'
        # names), kept in the flow's derivative slots of ``out`` (at most one per state)
        sh = _shared_exps(_function("r", self.fn_rate + self.par_args, [lw.rate], False),
                          _function("f", self.fn_flow + self.par_args, lw.dflow, True),
                          [a for a in self.fn_rate if a in self.fn_flow])  # no parameters: local names differ
        self.shared = sh if len(sh) <= len(m.flow_states) else []
        self.ex_args = "".join(f", ex_{j}" for j in range(len(self.shared)))
        self.xs = "_x" if self.shared else ""

    def law_expr(self, law):
        """The SymPy expression of the delayed law ``law`` ("load", "rate", "own")."""
        lw = self.lw
        return {"load": lw.load, "rate": lw.rate, "own": lw.own}[law]

    def reads_qd(self, law) -> bool:
        """Whether the delayed law ``law`` reads the current queueing delay (then it cannot be summed per link
        ahead of time: MixedSystem.rhs evaluates the delayed states with the current ``qdelay``; see
        :meth:`qd_pole`)."""
        return self.lw.uses(self.law_expr(law), self.lw.qd)

    def qd_pole(self, law):
        """The SymPy expression ``c`` (of the static fields and parameters) with ``law(u, qd) = law(u, 0) * c /
        (c + qd)``, or None if the delayed law ``law`` does not read the queueing delay in that form (Reno's
        ``W/(tau + qd)``: ``c = tau``).  Such a law is a *Chebyshev group* under ``load_rtt="current"``
        (:class:`GeneratedMixed`)."""
        import sympy as sp
        lw = self.lw
        e = self.law_expr(law)
        if not self.reads_qd(law):
            return None
        e0 = e.subs(lw.qd, 0)
        if e0 == 0:
            return None
        inv = sp.simplify(e0 / e)  # 1 + qd / c
        slope = sp.simplify(sp.diff(inv, lw.qd))
        if (inv.free_symbols & set(lw.u)) or slope == 0 or slope.free_symbols & ({lw.qd} | set(lw.u)):
            return None
        c = sp.simplify(1 / slope)
        return c if sp.simplify(inv - 1 - lw.qd / c) == 0 else None

    def flow_vars_read(self, law) -> set:
        """Indices of the flow states the delayed law ``law`` ("load", "rate", "own") reads."""
        lw = self.lw
        e = {"load": lw.load, "rate": lw.rate, "own": lw.own}[law]
        return {j for j, s in enumerate(lw.u) if lw.uses(e, s)}

    def source(self, read_as_other: bool):
        """The member's scalar functions (``read_as_other``: another member's signal reads this member's rate
        through a delay, so the rate function is also the load of these flows there)."""
        lw, m, i, pa = self.lw, self.model, self.i, self.par_args
        rate_src = _function(f"_m{i}_rate", self.fn_rate + pa, [lw.rate], False)
        src = list(rate_src)
        if self.uses_y:
            src += _function(f"_m{i}_load", self.fn_rate + pa, [lw.load], False)
        if m.needs_own_delayed:
            src += _function(f"_m{i}_own", self.fn_own + pa, [lw.own], False)
        src += _function(f"_m{i}_signal", self.fn_sig + pa, [lw.signal], False)
        flow_src = _function(f"_m{i}_flow", self.fn_flow + pa, lw.dflow, True)
        src += flow_src
        if self.shared:  # as codegen.Generated: the same operations, each shared exponential's call its value
            src += (_with_exps(rate_src, f"_m{i}_rate_x", self.shared)
                    + _with_exps(flow_src, f"_m{i}_flow_x", self.shared))
        if m.link_states:
            src += _function(f"_m{i}_link", self.fn_link + pa, lw.dlink, True)
        if self.lazy:
            from sympy.printing.pycode import PythonCodePrinter
            pr = PythonCodePrinter(dict(fully_qualified_modules=True))
            src += ["", "", "@njit(cache=True)", f"def _m{i}_reads_y({', '.join(self.fn_ry + pa)}):",
                    f"    return bool({pr.doprint(self.ycond)})"]
        return src


class GeneratedMixed:
    """The generated module of a member combination (see the module docstring): its source, name, the history
    columns and the offsets of each member's rows in the stacked static fields and parameters.

    Parameters
    ----------
    members : list of (NetworkModel, ModelParams, list of str, list of str)
        Per member in the composite's order: model, parameters (their options select the laws), the names of
        its per-flow and per-link static fields.
    """

    def __init__(self, members, sent=False, sdd=False, fwd=False):
        ml = [_MemberLaws(i, m, P, st, lst) for i, (m, P, st, lst) in enumerate(members)]
        self.n_members = len(ml)
        # rtt_includes_queueing and forward delays (module docstring): variants of the text
        self.sdd, self.fwd = bool(sdd), bool(fwd)
        self.model_name = "mixed(" + "+".join(x.model.name for x in ml) + ")"
        # the flow states each member's delayed laws read: its own load (its signal), its rate (another member's
        # signal), its own-load law
        any_other_y = [any(o.uses_y for o in ml if o is not x) for x in ml]
        self.flow_used = []
        for x, other in zip(ml, any_other_y):
            used = set()
            if x.uses_y:
                used |= x.flow_vars_read("load")
            if other:
                used |= x.flow_vars_read("rate")
            if x.model.needs_own_delayed:
                used |= x.flow_vars_read("own")
            if self.fwd:  # the arrival reads every flow's rate one forward delay back
                used |= x.flow_vars_read("rate")
            self.flow_used.append(sorted(used))
        self.link_used = [x.link_used for x in ml]
        # load_rtt="sent": a delayed law that reads the queueing delay reads it at the sending time, from the
        # history of the flow's path queues (codegen.Generated's sent variant); the default text is unchanged
        self._sent = {(z.i, law): bool(sent and z.reads_qd(law))
                      for x in ml if x.uses_y for z in ml for law in (("load",) if z is x else ("rate",))}
        # with forward delays and "sent", the arrival's delayed rates read their queueing delay at the sending time
        self._sent_f = {x.i: bool(self.fwd and sent and x.reads_qd("rate")) for x in ml}
        self.sent = any(self._sent.values()) or any(self._sent_f.values())
        self.q_used = any(x.q_used for x in ml) or self.sent
        self.empty_images = any(x.empty_images for x in ml)
        self.queue_gains = [x.queue_gain for x in ml]
        self.n_flow_states = [len(x.model.flow_states) for x in ml]
        self.n_link_states = [len(x.model.link_states) for x in ml]
        self.param_names = [x.param_names for x in ml]
        self.st_keys = [x.st_keys for x in ml]
        self.lst_keys = [x.lst_keys for x in ml]
        self.st_row = list(np.cumsum([0] + [len(k) for k in self.st_keys])[:-1].tolist())
        self.lst_row = list(np.cumsum([0] + [len(k) for k in self.lst_keys])[:-1].tolist())
        self.par_off = list(np.cumsum([0] + [len(k) for k in self.param_names])[:-1].tolist())
        # the aggregated groups (docs/notes/mixagg.md; the single models' aggregated load, codegen._agg_hooks):
        # a member z's delayed law that some member's signal sums over z's flows on a link -- z's own load for
        # z's signal, z's rate for another member's -- kept per link in the history (value and slopes per
        # accepted segment) where the law does not read the current queueing delay (MixedSystem.rhs evaluates
        # the delayed states with the current qdelay: a sum over the flows that cannot be formed ahead of time)
        summed = [(z, "load" if z is x else "rate") for x in ml if x.uses_y for z in ml]
        if self.sdd or self.fwd:  # the loads summed per flow, as the single kernels' (codegen.Generated's aggl)
            summed = []
        self.agg_groups = []
        for z, law in summed:
            if (z.model.flow_states and (self._sent[(z.i, law)] or not z.reads_qd(law))
                    and [z.i, law] not in self.agg_groups):
                self.agg_groups.append([z.i, law])
        # the Chebyshev groups (docs/notes/mixcur.md): a delayed law read with the *current* queueing delay,
        # law(u(t - d), Q(t)) = g(u(t - d)) c / (c + Q(t)) (Reno's W/(tau + Q), Symbiosis' rate), cannot be summed per
        # link ahead of time; expanded in Chebyshev polynomials of Q on [0, the path's largest queueing delay],
        # c / (c + Q) = sum_n a_n(c) T_n(x(Q)), the sums sum_k a_n(c_k) g(u_k) are one time's state: kept per
        # (link, path) slot and term in the history as the aggregated groups, a pair reads them in O(terms)
        # (one group per member and expression: Reno's load is its rate)
        self._pole, self._cheb_of = {}, {}
        self.cheb_groups = []
        for z, law in summed:
            if not z.model.flow_states or self._sent[(z.i, law)] or (z.i, law) in self._cheb_of:
                continue
            c = z.qd_pole(law)
            if c is None:
                continue
            same = [g for g, (zi, lw2) in enumerate(self.cheb_groups)
                    if zi == z.i and z.law_expr(lw2) == z.law_expr(law)]
            if same:
                self._cheb_of[(z.i, law)] = same[0]
            else:
                self._pole[(z.i, law)] = c
                self._cheb_of[(z.i, law)] = len(self.cheb_groups)
                self.cheb_groups.append([z.i, law])
        src = ["import math  # noqa", "import numpy as np  # noqa", "from numba import njit  # noqa"]
        for x, other in zip(ml, any_other_y):
            src += x.source(other)
        for zi, law in self.agg_groups + self.cheb_groups:
            z = ml[zi]
            src += _load_dot_function(f"_m{zi}_{law}_dot", z.lw, z.law_expr(law), z.fn_rate, z.par_args,
                                      qd=self._sent.get((zi, law), False))
        for zi, law in self.cheb_groups:
            z = ml[zi]
            src += _function(f"_m{zi}_{law}_pole", [x.name for x in z.lw.st] + z.par_args, [self._pole[(zi, law)]],
                             False)
        # a full buffer's images (MixedSystem.hold_images), and an emptying's where a member's signal reads the
        # queue linearly (MixedSystem.empty_images)
        r = rhs_variants(self._rhs(ml)) + codegen._HOLD_IMAGES_CODE
        r += codegen._EMPTY_IMAGES_CODE if self.empty_images else []
        if self.agg_groups or self.cheb_groups:
            if self.cheb_groups:
                r += _CHEB_COEFS.splitlines()
            r += self._agg_hooks(ml)
        template = ((_HERE / "integrator.py").read_text() + "\n\n# --- the fixed-step RK4 method ---\n"
                    + (_HERE / "rk4.py").read_text())
        stamp = hashlib.sha256(b"".join((_HERE / f).read_bytes() for f in ("kernels.py", "history.py"))).hexdigest()
        header = ['"""Generated by ecocc.dde.codegen_mixed from the member models\' laws; do not edit."""',
                  f"# composite generator {MIX_VERSION} / {codegen.GEN_VERSION}; helpers {stamp[:16]}",
                  "# members: " + ", ".join(f"{i}: {x.model.name} (par: {', '.join(x.param_names)})"
                                            for i, x in enumerate(ml))]
        self.source = ("\n".join(header) + "\n" + template + "\n\n# --- the members' laws and the composite ---\n"
                       + "\n".join(src + r) + "\n")
        self.digest = hashlib.sha256(self.source.encode()).hexdigest()[:20]
        self.name = f"ecocc_mix_{self.digest}"

    # -- the composite right-hand side -------------------------------------------------------------------
    def _rhs(self, ml):
        n = len(ml)

        def pars(x):
            return [f"{a} = par[{self.par_off[x.i] + j}]" for j, a in enumerate(x.par_loc)]

        def stf(x, idx, pre=""):
            return [f"{pre}st_{k} = FST[{self.st_row[x.i] + j}, {idx}]" for j, k in enumerate(x.st_keys)]

        def lsf(x, idx):
            return [f"ls_{k} = LST[{self.lst_row[x.i] + j}, {idx}]" for j, k in enumerate(x.lst_keys)]

        def ind(k, lines):
            return [" " * k + s for s in lines]

        def branch(k, body_of):
            """``if mi == 0: ... elif mi == 1: ...`` at indent ``k`` (body_of(x) -> lines at indent 0)."""
            out = []
            for x in ml:
                out += [" " * k + ("if" if x.i == 0 else "elif") + f" mi == {x.i}:"]
                out += ind(k + 4, body_of(x) or ["pass"])
            return out

        r = ["", "", "@njit(cache=True, forceinline=True)",  # not inline="always": see codegen._function (numba IR inlining is slow to compile)
             "def _model_rhs(s, nud, y, sat_lo, sat_hi, out, D, Wk, t0, y0, HT, HY, HFA, HFB, m, n_pass, t_cur, h_cur, QV,",
             "               yc):",
             '    """MixedSystem.rhs of this member combination, generated (ecocc.dde.codegen_mixed)."""',
             f"    {_D_NAMES}{', FWL, FWM' if self.fwd else ''} = D",
             "    qdel, rate, arrival, kcur, kown" + (", karr, kld" if self.fwd else "") + " = Wk",
             "    tt = s + nud",
             "    md, k, w0, w1, w2, w3, th = 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0"]
        r += self._offsets(ml)
        r += ["    ISENT = IQ + 5 * L", "    hc = 0"]
        # history columns (hsrc's order)
        for x in ml:
            for j in self.flow_used[x.i]:
                r += [f"    HF{x.i}_{j} = hc", f"    hc += NF[{x.i}]"]
        for x in ml:
            for j in self.link_used[x.i]:
                r += [f"    HL{x.i}_{j} = hc", "    hc += L"]
        r += ["    HQ = hc"]
        if self.agg_groups or self.cheb_groups:
            # after the delayed components (hsrc): per aggregated group g and link its value at the segment's left
            # end (XA; slopes in HFA, HFB) and right end (XB); then per Chebyshev group, term and slot the same
            # (from XC); absent in the fixed-step kernel's history (it shares this function): the per-flow sum there
            r += [f"    XH = HQ + {'L' if self.q_used else '0'}",
                  "    use_agg = HY.shape[1] > XH",
                  f"    XC = XH + {2 * len(self.agg_groups)} * L",
                  "    NS = srep.size",
                  "    use_ch = HY.shape[1] > XC"]
        if any(x.uses_y for x in ml) and not self.fwd:  # the per-link sums before t0 (_flow_block), on first use
            r += [f"    LM = L * {self.n_members}",
                  "    PRE = np.full(2 * LM, math.nan)"]
        for x in ml:
            r += ind(4, pars(x))
        # rates and queueing delays
        # each link's queueing delay once (arrival: scratch until the arrival sums), summed per path (same operations)
        r += ["    for l in range(L):",
              "        arrival[l] = y[IQ + l] / C[l]",
              "    for p in range(P):",
              "        qd = 0.0",
              "        for j in range(fps[p], fps[p + 1]):",
              "            qd += arrival[pl[j]]",
              "        qdel[p] = qd",
              "        if start[p] <= tt and tt < stop[p]:",
              "            mi = fmem[p]",
              "            i = floc[p]"]
        r += branch(12, lambda x: [f"u_{v} = y[OF{x.i}_{v} + i]" for v in x.model.flow_states] + stf(x, "p")
                    + sum(([f"ex_{j} = math.exp({a})",
                            f"out[OF{x.i}_{x.model.flow_states[j]} + i] = ex_{j}  # read back by the flow loop"]
                           for j, a in enumerate(x.shared)), [])
                    + [f"rate[p] = _m{x.i}_rate{x.xs}({', '.join(x.fn_rate + x.par_loc)}{x.ex_args})"])
        r += ["        else:",
              "            rate[p] = 0.0",
              "        out[ISENT + p] = rate[p]"]
        r += _index_code(4, "kc", "ctimes", "tt")
        r += ["    for l in range(L):",
              "        a = 0.0",
              "        for jj in range(lptr[l], lptr[l + 1]):"]
        r += self._fwd_arrival(ml, stf) if self.fwd else ["            a += rate[lflows[jj]]"]
        r += ["        arrival[l] = a + ctable[kc, l]",
              "    for p in range(P):",
              "        mi = fmem[p]",
              "        i = floc[p]",
              "        if not (start[p] <= tt and tt < stop[p]):"]
        r += branch(12, lambda x: [f"out[OF{x.i}_{v} + i] = 0.0" for v in x.model.flow_states])
        r += ["            continue"]
        r += branch(8, lambda x: self._flow_block(ml, x, pars, stf, lsf))
        # link laws per member on every link, shared queue and counters
        r += ["    for l in range(L):",
              "        q = y[IQ + l]",
              "        C_l = C[l]",
              "        a = arrival[l]"]
        for x in ml:
            if not x.model.link_states:
                continue
            r += [f"        lc_{v} = y[OL{x.i}_{v} + l]" for v in x.model.link_states]
            r += ind(8, lsf(x, "l"))
            args = ", ".join([s.name for s in x.lw.lc] + ["q", "a", "C_l"] + [s.name for s in x.lw.ls] + x.par_loc)
            r += [f"        dl = _m{x.i}_link({args})"]
            r += [f"        out[OL{x.i}_{v} + l] = dl[{j}]" for j, v in enumerate(x.model.link_states)]
        r += ["        dq = a - C_l",
              "        out[IQ + L + l] = (dq if dq > 0.0 else 0.0) if sat_hi[l] else 0.0",
              "        out[IQ + l] = dq",
              "        out[IQ + 2 * L + l] = a",
              "        out[IQ + 3 * L + l] = (a if a < C_l else C_l) if sat_lo[l] else C_l",
              "        out[IQ + 4 * L + l] = q"]
        return r

    def _fwd_arrival(self, ml, stf):
        """Source (indent 12, in the arrival loop over ``jj``, link ``l``'s flows in ``lflows`` order): add flow
        ``kf``'s rate at ``t - d_f(l, kf)`` (``FWL[jj]``) by its member's rate law, its state read from the history
        and its queueing delay the current one (the sending time's under ``load_rtt="sent"``), zero while the flow
        is inactive then; a zero forward delay reads the current rate (``codegen._fwd_arrival_code``'s, per member)."""
        out = ["kf = lflows[jj]",
               "if FWL[jj] <= 0.0:",
               "    a += rate[kf]",
               "else:",
               "    tf = tt - FWL[jj]",
               "    if start[kf] <= tf and tf < stop[kf]:"]
        out += [s[4:] for s in _seg_code(12, "FWL[jj]", "karr[jj]")]
        out += ["        ik = floc[kf]", "        mi = fmem[kf]"]
        for z in ml:
            out += [("        if" if z.i == 0 else "        elif") + f" mi == {z.i}:"]
            out += ["            " + s for s in self._delayed_law(z, "rate", self._sent_f[z.i], stf, "a += ", "the rate")]
        return ["            " + s for s in out]

    @staticmethod
    def _delayed_law(z, law, sent, stf, lhs, unread):
        """Source (indent 0): member ``z``'s delayed law ``law`` ("load", "rate") of flow ``kf`` (index ``ik`` among
        ``z``'s flows) where :func:`ecocc.dde.codegen._seg_code` points -- the states it reads from the history, its
        static fields, its queueing delay (the current one, or the sending time's under ``load_rtt="sent"``:
        ``sent``) -- added by ``lhs`` (``"yy += "``, ``"a += "``); ``unread`` names it in the comment of a state it
        does not read."""
        used = z.flow_vars_read(law)
        b = []
        for jv, v in enumerate(z.model.flow_states):
            if jv in used:
                b += [s[8:] for s in _val_code(8, f"k_u_{v}", f"HF{z.i}_{jv} + ik", f"OF{z.i}_{v} + ik")]
            else:
                b += [f"k_u_{v} = 0.0  # not read by {unread}"]
        b += stf(z, "kf", "k_")
        if sent:  # load_rtt="sent": the queueing delay at the sending time, where the state was read
            b += _sent_qd_code(0, "kf", "k_qd", "HQ")
        args = [(("k_qd" if sent else "qdel[kf]") if a == "qd" else "k_" + a) for a in z.fn_rate] + z.par_loc
        return b + [f"{lhs}_m{z.i}_{law}({', '.join(args)})"]

    def _offsets(self, ml):
        """Source (indent 4): the state offsets (MixedSystem.layout: per member its flow blocks over its flows,
        then its link blocks), ``IQ`` the queues'."""
        r = ["    o = 0"]
        for x in ml:
            for v in x.model.flow_states:
                r += [f"    OF{x.i}_{v} = o", f"    o += NF[{x.i}]"]
            for v in x.model.link_states:
                r += [f"    OL{x.i}_{v} = o", "    o += L"]
        return r + ["    IQ = o"]

    def _agg_hooks(self, ml):
        """Source of ``_model_hist_cols`` and ``_model_hist_seg`` (as :func:`ecocc.dde.codegen._agg_hooks`, which
        see): per aggregated group ``g`` (member ``z``, law) and link ``l``, over ``z``'s flows on ``l`` active on
        the accepted segment (at its midpoint), the sum of the law at the segment's left end (``HY`` column
        ``nh + 2 g L + l``), its slopes at both ends (``HFA``, ``HFB``: the chain rule through the stored states)
        and its value at the right end (column ``nh + (2 g + 1) L + l``: the left limit).  Per Chebyshev group
        ``c`` (from column ``XC = nh + 2 G L``, ``G`` aggregated groups), term ``n`` and slot ``s`` (a link and a
        path, ``NS`` slots) the same for ``sum_k a_n(c_k) g(u_k)`` over ``z``'s flows in the slot (``g`` the law at
        ``qd = 0``): left end and slopes at column ``XC + 2 (CNO[c] + n) NS + s``, right end ``NS`` columns on.
        ``_model_hist_cols`` computes the coefficients (``CF``, ``CNO``, ``SOK``: :func:`_cheb_coefs`) first."""
        nm1 = self.n_members + 1
        ng = len(self.agg_groups)
        r = ["", "", "@njit(cache=True)",
             "def _model_hist_cols(D):",
             ('    """The aggregated groups\' history columns (ecocc.dde.codegen_mixed); first the Chebyshev groups\' '
              'coefficients (CF), terms (CNO) and usable slots (SOK)."""'),
             f"    {_D_NAMES} = D",
             "    NS = srep.size"]
        if self.cheb_groups:
            r += ["    nt_k = np.zeros(P, dtype=np.int64)",
                  "    CNO[0] = 0"]
        for c, (zi, law) in enumerate(self.cheb_groups):
            z = ml[zi]
            r += [f"    {a} = par[{self.par_off[zi] + j}]" for j, a in enumerate(z.par_loc)]
            r += ["    ntc = 0",
                  "    for kf in range(P):",
                  f"        if fmem[kf] == {zi}:"]
            r += [f"            st_{k} = FST[{self.st_row[zi] + j}, kf]" for j, k in enumerate(z.st_keys)]
            r += [f"            cp = _m{zi}_{law}_pole({', '.join([x.name for x in z.lw.st] + z.par_loc)})",
                  f"            nt_k[kf] = _cheb_coefs(cp, QA[kf], QB[kf], CF, {c * NT_MAX}, kf)",
                  "            ntc = max(ntc, nt_k[kf])",
                  f"    CNO[{c + 1}] = CNO[{c}] + ntc",
                  "    for ss in range(NS):",
                  "        ok = 1",
                  f"        for jj in range(sptr[ss * {nm1} + {zi}], sptr[ss * {nm1} + {zi} + 1]):",
                  "            if nt_k[sfl[jj]] < 0:",
                  "                ok = 0",
                  f"        SOK[{c} * NS + ss] = ok"]
        r += [f"    return {2 * ng} * L" + (f" + 2 * CNO[{len(self.cheb_groups)}] * NS" if self.cheb_groups else ""),
              "", "", "@njit(cache=True)",
              "def _model_hist_seg(t, h, y, y_new, fa, fe, HY, HFA, HFB, r, nh, D):",
              '    """The aggregated and Chebyshev groups of history row r (ecocc.dde.codegen_mixed)."""',
              f"    {_D_NAMES} = D"]
        r += self._offsets(ml)
        r += ["    tm = t + 0.5 * h", "    NS = srep.size", f"    XC = nh + {2 * ng} * L"]

        def law_lines(zi, law, ind):
            """Per flow ``kf`` (member ``zi``, index ``ik``): ``a0, d0`` / ``a1, d1`` the law and its slope at the
            segment's ends (at qd = 0 for a Chebyshev group)."""
            z = ml[zi]
            x = " " * ind
            sq = self._sent.get((zi, law), False) and [zi, law] in self.agg_groups
            args = ", ".join([("qd_e" if sq else "0.0") if a == "qd" else a for a in z.fn_rate] + z.par_loc)
            dargs = ", ".join([("qd_e" if sq else "0.0") if a == "qd" else a for a in z.fn_rate]
                              + [f"du_{v}" for v in z.model.flow_states] + (["dqd_e"] if sq else []) + z.par_loc)
            used = z.flow_vars_read(law)
            out = [f"{x}st_{k} = FST[{self.st_row[zi] + j}, kf]" for j, k in enumerate(z.st_keys)]
            for ys, fs, a, d in (("y", "fa", "a0", "d0"), ("y_new", "fe", "a1", "d1")):
                for jv, v in enumerate(z.model.flow_states):
                    if jv in used:
                        out += [f"{x}u_{v} = {ys}[OF{zi}_{v} + ik]", f"{x}du_{v} = {fs}[OF{zi}_{v} + ik]"]
                    else:
                        out += [f"{x}u_{v} = 0.0  # not read by the law", f"{x}du_{v} = 0.0"]
                if sq:
                    out += [x + t[16:] for t in codegen._sent_qd_segment_lines(ys, fs)]
                out += [f"{x}{a} += _m{zi}_{law}({args})", f"{x}{d} += _m{zi}_{law}_dot({dargs})"]
            return out

        for g, (zi, law) in enumerate(self.agg_groups):
            z = ml[zi]
            r += [f"    {a} = par[{self.par_off[zi] + j}]" for j, a in enumerate(z.par_loc)]
            r += [f"    XA = nh + {2 * g} * L",
                  "    XB = XA + L",
                  "    for l in range(L):",
                  "        a0 = 0.0",
                  "        a1 = 0.0",
                  "        d0 = 0.0",
                  "        d1 = 0.0",
                  f"        for jj in range(mlptr[l * {nm1} + {zi}], mlptr[l * {nm1} + {zi} + 1]):",
                  "            kf = mlflows[jj]",
                  "            if start[kf] <= tm and tm < stop[kf]:",
                  "                ik = floc[kf]"]
            r += law_lines(zi, law, 16)
            r += ["        HY[r, XA + l] = a0",
                  "        HFA[r, XA + l] = d0",
                  "        HFB[r, XA + l] = d1",
                  "        HY[r, XB + l] = a1"]
        for c, (zi, law) in enumerate(self.cheb_groups):
            z = ml[zi]
            r += [f"    {a} = par[{self.par_off[zi] + j}]" for j, a in enumerate(z.par_loc)]
            r += ["    for ss in range(NS):",
                  f"        for nn in range(CNO[{c}], CNO[{c + 1}]):",
                  "            ca = XC + 2 * nn * NS + ss",
                  "            HY[r, ca] = 0.0",
                  "            HFA[r, ca] = 0.0",
                  "            HFB[r, ca] = 0.0",
                  "            HY[r, ca + NS] = 0.0",
                  f"        if SOK[{c} * NS + ss] == 0:",
                  "            continue",
                  f"        for jj in range(sptr[ss * {nm1} + {zi}], sptr[ss * {nm1} + {zi} + 1]):",
                  "            kf = sfl[jj]",
                  "            if start[kf] <= tm and tm < stop[kf]:",
                  "                ik = floc[kf]",
                  "                a0 = 0.0",
                  "                a1 = 0.0",
                  "                d0 = 0.0",
                  "                d1 = 0.0"]
            r += law_lines(zi, law, 16)
            r += [f"                for nn in range(CNO[{c + 1}] - CNO[{c}]):",
                  f"                    cf = CF[{c * NT_MAX} + nn, kf]",
                  f"                    ca = XC + 2 * (CNO[{c}] + nn) * NS + ss",
                  "                    HY[r, ca] += cf * a0",
                  "                    HFA[r, ca] += cf * d0",
                  "                    HFB[r, ca] += cf * d1",
                  "                    HY[r, ca + NS] += cf * a1"]
        return r + self._agg_check(ml)

    def _agg_check(self, ml):
        """Source of ``MODEL_HIST_CHECK`` and ``_model_hist_err`` (as :func:`ecocc.dde.codegen._agg_hooks`'): the
        cubic Hermite of each column :meth:`_agg_hooks` writes, at mid-step, against its sum over the flows at
        the step's continuous extension there.  An aggregated group's error is relative to its sum
        (``rtol * max`` of the two ends); a Chebyshev slot's is the sum of its terms' errors (a bound of the
        expansion's error at any queueing delay, ``|T_n| <= 1``) relative to its first term's (the mean of the
        expanded load over the interval)."""
        nm1 = self.n_members + 1
        ng = len(self.agg_groups)
        r = ["", "", "MODEL_HIST_CHECK = True  # the aggregated groups' cubics are error-checked (_model_hist_err)",
             "", "", "@njit(cache=True)",
             "def _model_hist_err(t, h, y, K, n_st, Pd, half_pow, rtol, HY, HFA, HFB, r, nh, D):",
             '    """The aggregated and Chebyshev groups\' error at mid-step, in tolerance units'
             ' (ecocc.dde.codegen_mixed)."""',
             f"    {_D_NAMES} = D"]
        r += self._offsets(ml)
        r += ["    tm = t + 0.5 * h", "    NS = srep.size", f"    XC = nh + {2 * ng} * L",
              "    err = 0.0"] + codegen._MID_WEIGHTS
        mid = codegen._mid_value_lines

        def law_mid(zi, law, ind):
            """Per flow ``kf`` (member ``zi``, index ``ik``): ``lm``, the law at mid-step (at qd = 0 for a
            Chebyshev group)."""
            z = ml[zi]
            x = " " * ind
            sq = self._sent.get((zi, law), False) and [zi, law] in self.agg_groups
            args = ", ".join([("qd_e" if sq else "0.0") if a == "qd" else a for a in z.fn_rate] + z.par_loc)
            used = z.flow_vars_read(law)
            out = [f"{x}st_{k} = FST[{self.st_row[zi] + j}, kf]" for j, k in enumerate(z.st_keys)]
            for jv, v in enumerate(z.model.flow_states):
                out += mid(f"u_{v}", f"OF{zi}_{v} + ik", x) if jv in used else [f"{x}u_{v} = 0.0  # not read"]
            out += codegen._mid_qd_lines(x) if sq else []  # the queueing delay at the sending time
            return out + [f"{x}lm = _m{zi}_{law}({args})"]

        for g, (zi, law) in enumerate(self.agg_groups):
            z = ml[zi]
            r += [f"    {a} = par[{self.par_off[zi] + j}]" for j, a in enumerate(z.par_loc)]
            r += [f"    XA = nh + {2 * g} * L",
                  "    XB = XA + L",
                  "    for l in range(L):"] + codegen._sum_check_lines("XA + l", "XB + l") + [
                  "        am = 0.0",
                  f"        for jj in range(mlptr[l * {nm1} + {zi}], mlptr[l * {nm1} + {zi} + 1]):",
                  "            kf = mlflows[jj]",
                  "            if start[kf] <= tm and tm < stop[kf]:",
                  "                ik = floc[kf]"]
            r += law_mid(zi, law, 16) + ["                am += lm"]
            r += ["        herm = 0.5 * (a0 + a1) + 0.125 * h * (HFA[r, XA + l] - HFB[r, XA + l])",
                  "        err = max(err, abs(am - herm) / sc)"]
        if self.cheb_groups:
            r += [f"    GM = np.zeros({NT_MAX})  # a slot's terms at mid-step"]
        for c, (zi, law) in enumerate(self.cheb_groups):
            z = ml[zi]
            r += [f"    {a} = par[{self.par_off[zi] + j}]" for j, a in enumerate(z.par_loc)]
            r += [f"    nt = CNO[{c + 1}] - CNO[{c}]",
                  "    for ss in range(NS):",
                  f"        if SOK[{c} * NS + ss] == 0 or nt == 0:",
                  "            continue  # the slot is summed per flow (no columns)",
                  f"        ca = XC + 2 * CNO[{c}] * NS + ss"] + codegen._sum_check_lines("ca", "ca + NS") + [
                  "        GM[:nt] = 0.0",
                  f"        for jj in range(sptr[ss * {nm1} + {zi}], sptr[ss * {nm1} + {zi} + 1]):",
                  "            kf = sfl[jj]",
                  "            if start[kf] <= tm and tm < stop[kf]:",
                  "                ik = floc[kf]"]
            r += law_mid(zi, law, 16)
            r += ["                for nn in range(nt):",
                  f"                    GM[nn] += CF[{c * NT_MAX} + nn, kf] * lm",
                  "        es = 0.0",
                  "        for nn in range(nt):",
                  f"            ca = XC + 2 * (CNO[{c}] + nn) * NS + ss",
                  "            herm = 0.5 * (HY[r, ca] + HY[r, ca + NS]) + 0.125 * h * (HFA[r, ca] - HFB[r, ca])",
                  "            es += abs(GM[nn] - herm)",
                  "        err = max(err, es / sc)"]
        return r + ["    return err"]

    def _cheb_read(self, c, zi):
        """Source (indent 0, in a pair's load sum on link ``l``): ``cok``, whether Chebyshev group ``c`` (member
        ``zi``'s flows) is read here -- inside a stored segment or the step being taken (as the aggregated groups),
        each of the link's slots holding ``zi``'s flows usable and its path's current queueing delay inside the
        expansion's interval -- and then ``yy`` plus, per slot, the Clenshaw sum ``sum_n G_n T_n(x)`` of the
        terms' Hermite values ``G_n`` at ``td`` (``x`` from the slot's current queueing delay, ``qdel`` of its
        first flow: every flow of a slot has that path, so the same value)."""
        nm1 = self.n_members + 1
        return ["cok = False",
                "if use_ch and (ina or inc):",
                "    cok = True",
                "    cs = 0.0",
                "    if inc:",
                "        th2 = th * th",
                "        th3 = th2 * th",
                "        w0 = 2 * th3 - 3 * th2 + 1",
                "        w1 = (th3 - 2 * th2 + th) * h_cur",
                "        w2 = -2 * th3 + 3 * th2",
                "        w3 = (th3 - th2) * h_cur",
                "        k = m - 1",
                "    for ss in range(lsl[l], lsl[l + 1]):",
                f"        if sptr[ss * {nm1} + {zi}] == sptr[ss * {nm1} + {zi} + 1]:",
                "            continue",
                "        kr = srep[ss]",
                "        xc = (qdel[kr] - QA[kr]) / QB[kr]",
                f"        if SOK[{c} * NS + ss] == 0 or not (-1.0 <= xc and xc <= 1.0):",
                "            cok = False",
                "            break",
                "        b1 = 0.0",
                "        b2 = 0.0",
                f"        for nn in range(CNO[{c + 1}] - 1, CNO[{c}], -1):",
                "            ca = XC + 2 * nn * NS + ss",
                "            gv = w0 * HY[k, ca] + w1 * HFA[k, ca] + w2 * HY[k, ca + NS] + w3 * HFB[k, ca]",
                "            b0 = 2.0 * xc * b1 - b2 + gv",
                "            b2 = b1",
                "            b1 = b0",
                f"        ca = XC + 2 * CNO[{c}] * NS + ss",
                "        gv = w0 * HY[k, ca] + w1 * HFA[k, ca] + w2 * HY[k, ca + NS] + w3 * HFB[k, ca]",
                "        cs += xc * b1 - b2 + gv",
                "    if cok:",
                "        yy += cs"]

    def _flow_block(self, ml, x, pars, stf, lsf):
        """The body (indent 0) for an active flow ``p`` of member ``x``: its feedback along the path, its own
        delayed load, its flow law."""
        m = x.model
        agg = m.path_aggregate
        # rtt_includes_queueing: the receiving flow's queueing delay Q_p >= 0 lengthens each positive feedback delay
        r = [f"fb = {_AGG_INIT[agg]}"] + (["qx = qdel[p] if qdel[p] > 0.0 else 0.0"] if self.sdd else []) + [
             "for j in range(fps[p], fps[p + 1]):",
             "    l = pl[j]"]
        r += [s[8:] for s in _seg_code(12, _sdd_delay("bwd[j]") if self.sdd else "bwd[j]", "kcur[j]")]
        for j, v in enumerate(m.link_states):
            if j in x.link_used:
                r += [s[8:] for s in _val_code(12, f"lv_{v}", f"HL{x.i}_{j} + l", f"OL{x.i}_{v} + l")]
            else:
                r += [f"    lv_{v} = 0.0  # not read by the signal"]
        r += ([s[8:] for s in _val_code(12, "qq", "HQ + l", "IQ + l")] if x.q_used
              else ["    qq = 0.0  # not read by the signal"])
        r += ["    CC = C[l]"]
        r += ["    " + s for s in lsf(x, "l")]
        if x.uses_y:
            nm1 = self.n_members + 1
            groups = [g for g, (zi, law) in enumerate(self.agg_groups) if law == ("load" if zi == x.i else "rate")]
            agg_of = {self.agg_groups[g][0]: g for g in groups}  # member -> its aggregated group for this signal
            ld = ["td = tt - bwd[j]",
                  "yy = 0.0",
                  # before the link's earliest flow start no flow on it is active at td: no per-flow loop
                  "if td >= lsmin[l]:"]
            cheb_of = {z.i: self._cheb_of[(z.i, law)] for z in ml for law in ("load" if z is x else "rate",)
                       if (z.i, law) in self._cheb_of}  # member -> its Chebyshev group for this signal
            if groups or cheb_of:
                # a segment inside the history (not the extrapolated last one, not before t0): the aggregated groups'
                # sums, O(1); flow starts and stops are nodes, so the segment's activity is the activity at td
                # overlap (codegen's single kernel alike): the last segment extrapolated (pass 0, td past the last
                # node: only while overlapping) and the step being taken (mode 4: row m - 1, filled by the kernel
                # from the previous pass, codegen._agg_cur_code)
                ld += ["    ina = use_agg and md == 3 and HT[k] <= td and (td < HT[k + 1] or k == m - 2)",
                       "    inc = use_agg and md == 4"]
            if groups:
                ld += ["    if ina:"]
                ld += [f"        yy += (w0 * HY[k, XH + {2 * g} * L + l] + w1 * HFA[k, XH + {2 * g} * L + l]"
                       f" + w2 * HY[k, XH + {2 * g + 1} * L + l] + w3 * HFB[k, XH + {2 * g} * L + l])" for g in groups]
                ld += [f"    elif inc:{OV}"]
                ld += _agg_cur_code(8, "yy += ", [f"XH + {2 * g} * L + l" for g in groups],
                                    [f"XH + {2 * g + 1} * L + l" for g in groups])
            # before t0 (md == 1: the initial state y0 read) the loads of the flows active there are constant: the
            # link's sum for this signal's member once per call (PRE: the time from which the flows' activity is that
            # of t0's left limit, start < t0 <= stop; the sum), the per-flow loops' operations in their order (the
            # aggregated groups are not read there: yy starts at 0.0), so the same values bit for bit; a pair then
            # reads it in O(1) (docs/notes/prelink.md)
            ipre = f"l * {self.n_members} + {x.i}"
            pre_loops, loops = [], []
            for z in ml:
                own = z is x
                if not own and not z.model.flow_states:
                    continue
                law = "load" if own else "rate"
                # a member's own flows load its signal by its flow_load, the others' by their flow_rate (summed per
                # member, as MixedSystem.rhs)
                body = self._delayed_law(z, law, self._sent[(z.i, law)], stf, "yy += ", "this load")
                head = [f"for jj in range(mlptr[l * {nm1} + {z.i}], mlptr[l * {nm1} + {z.i} + 1]):",
                        "    kf = mlflows[jj]"]
                if self.fwd:  # flow kf's load at d_b(l, p) + d_f(l, kf) (+ Q_p): its own history point
                    dl_ = "bwd[j] + FWM[jj]"
                    loop = head + ["    tdk = td - FWM[jj]", "    if start[kf] <= tdk and tdk < stop[kf]:"] + [
                        "        " + s for s in _seg_code(0, _sdd_delay(dl_) if self.sdd else dl_, "kld[jj]")] + [
                        "        ik = floc[kf]"] + ["        " + s for s in body]
                else:  # and the before-t0 sum (read below only without forward delays)
                    loop = head + ["    if start[kf] <= td and td < stop[kf]:",
                                   "        ik = floc[kf]"] + ["        " + s for s in body]
                    pre_loops += head + ["    if start[kf] < t0 and t0 <= stop[kf]:",
                                         "        ik = floc[kf]"] + ["        " + s for s in body] + [
                        "    if start[kf] < t0:",
                        "        bp = max(bp, start[kf])",
                        "    if stop[kf] < t0:",
                        "        bp = max(bp, stop[kf])"]
                if z.i in agg_of:  # the per-flow sum where the aggregated group cannot be read
                    loops += ["if not (ina or inc):"] + ["    " + s for s in loop]
                elif z.i in cheb_of:  # the Chebyshev group's terms where they can be read, else the per-flow sum
                    loops += self._cheb_read(cheb_of[z.i], z.i) + ["if not cok:"] + ["    " + s for s in loop]
                else:
                    loops += loop
            if self.fwd:  # each flow read at its own time: no per-link sum before t0 (codegen.Generated's)
                ld += ["    " + s for s in loops]
            else:
                ld += ["    pre = False",
                       "    if md == 1 and td < t0:",
                       f"        if PRE[{ipre}] != PRE[{ipre}]:  # NaN: the first such pair on link l in this call",
                       "            bp = -math.inf",
                       "            yy = 0.0"]
                ld += ["            " + s for s in pre_loops]
                ld += [f"            PRE[{ipre}] = bp",
                       f"            PRE[LM + {ipre}] = yy",
                       f"        pre = PRE[{ipre}] <= td",
                       "    if pre:",
                       f"        yy = PRE[LM + {ipre}]",
                       "    else:"]
                ld += ["        " + s for s in loops]
            ld += [s[4:] for s in _index_code(4, "kd", "ctimes", "td")]
            ld += ["yy += ctable[kd, l]"]
            if x.lazy:  # the load only where the signal's branch reads it (codegen.Generated.lazy)
                ld = [f"if _m{x.i}_reads_y({', '.join(x.fn_ry + x.par_loc)}):"] + ["    " + s for s in ld]
                ld += ["else:", "    yy = 0.0  # the signal's branch here does not read the load"]
            r += ["    " + s for s in ld]
        else:
            r += ["    yy = 0.0  # the signal does not read the load"]
        r += [f"    sg = _m{x.i}_signal({', '.join(x.fn_sig + x.par_loc)})"]
        r += {"min": ["    fb = min(fb, sg)"], "max": ["    fb = max(fb, sg)"], "sum": ["    fb += sg"]}[agg]
        if m.needs_own_delayed:
            r += [s[4:] for s in _seg_code(4, _sdd_delay("rtt[p]") if self.sdd else "rtt[p]", "kown[p]")]
            r += ["to = tt - rtt[p]",
                  "own = 0.0",
                  "if start[p] <= to and to < stop[p]:"]
            used = x.flow_vars_read("own")
            for jv, v in enumerate(m.flow_states):
                if jv in used:
                    r += [s[4:] for s in _val_code(8, f"u_{v}", f"HF{x.i}_{jv} + i", f"OF{x.i}_{v} + i")]
                else:
                    r += [f"    u_{v} = 0.0  # not read by the own load"]
            r += ["    " + s for s in stf(x, "p")]
            r += [f"    own = _m{x.i}_own({', '.join(x.fn_own + x.par_loc)})"]
        else:
            r += ["own = 0.0"]
        r += [f"u_{v} = y[OF{x.i}_{v} + i]" for v in m.flow_states] + stf(x, "p")
        r += ["qd = qdel[p]"]
        r += [f"ex_{j} = out[OF{x.i}_{m.flow_states[j]} + i]" for j in range(len(x.shared))]
        r += [f"d = _m{x.i}_flow{x.xs}({', '.join(x.fn_flow + x.par_loc)}{x.ex_args})"]
        r += [f"out[OF{x.i}_{v} + i] = d[{j}]" for j, v in enumerate(m.flow_states)]
        return r

    def hsrc(self, sysm) -> np.ndarray:
        """The state components the history stores, in column order (as ``_model_rhs`` reads them).

        Parameters
        ----------
        sysm : MixedSystem
            The composite on its network.

        Returns
        -------
        numpy.ndarray
            Indices into the state vector (int64).
        """
        parts = []
        for M, used in zip(sysm.mem, self.flow_used):
            for j in used:
                b = sysm.layout[f"flow:{M.name}.{M.model.flow_states[j]}"]
                parts.append(np.arange(b.start, b.start + b.size))
        for M, used in zip(sysm.mem, self.link_used):
            for j in used:
                b = sysm.layout[f"link:{M.name}.{M.model.link_states[j]}"]
                parts.append(np.arange(b.start, b.start + b.size))
        if self.q_used:
            b = sysm.layout["queue"]
            parts.append(np.arange(b.start, b.start + b.size))
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def _member_spec(M):
    return (M.model, M.P, list(M.st_all), list(M.lst))


_META = ("name", "model_name", "n_members", "flow_used", "link_used", "q_used", "n_flow_states", "n_link_states",
         "param_names", "st_keys", "lst_keys", "st_row", "lst_row", "par_off", "agg_groups", "cheb_groups",
         "empty_images", "queue_gains", "sdd", "fwd")


class _CachedMixed(GeneratedMixed):
    """A composite module known from the on-disk index (no SymPy needed); its source is read on demand."""

    def __init__(self, meta):  # noqa: D107  (GeneratedMixed.__init__ generates; this one only restores)
        for k in _META:
            setattr(self, k, meta[k])

    @property
    def source(self):
        p = codegen.generated_dir() / f"{self.name}.py"
        return (p if p.is_file() else codegen._shipped() / f"{self.name}.py").read_text()


def _index_key(sysm):
    """A hash of everything the composite's text depends on, readable without SymPy: this generator's source,
    each member's :func:`ecocc.dde.codegen._laws_key` (the generator's and the templates' sources, the model's
    and its parameters' source files, options, static field names), in the composite's order.  None if a
    member has no source file (an interactive session): generated then."""
    from types import SimpleNamespace
    h = hashlib.sha256(f"mixed {MIX_VERSION}".encode())
    h.update((_HERE / "codegen_mixed.py").read_bytes())
    for M in sysm.mem:
        k = codegen._laws_key(SimpleNamespace(model=M.model, P=M.P, st=M.st_all, lst=M.lst))
        if k is None:
            return None
        h.update(k.encode())
    if getattr(sysm, "load_rtt", "current") == "sent":  # the sent variant's text differs; the default key does not
        h.update(b"load_rtt=sent")
    if getattr(sysm, "rtt_includes_queueing", False):  # so does the queueing-delay variant's
        h.update(b"rtt_includes_queueing")
    if getattr(sysm, "has_fwd", False):  # and the forward-delay variant's
        h.update(b"forward delays")
    return h.hexdigest()[:24]


def generate(sysm) -> GeneratedMixed:
    """The generated composite module for a MixedSystem's member combination (cached in this process, keyed
    by the member models, their options and the names of their static fields, in the composite's order).

    Parameters
    ----------
    sysm : MixedSystem
        The composite on its network.

    Returns
    -------
    GeneratedMixed
        Its description (source, name, history columns).
    """
    key = []
    for M in sysm.mem:
        num = set(numeric_params(M.P))
        opts = tuple((k, v) for k, v in sorted(M.P.as_dict().items()) if k not in num)
        key.append((type(M.model), opts, tuple(M.st_all), tuple(M.lst)))
    sent = getattr(sysm, "load_rtt", "current") == "sent"
    sdd = bool(getattr(sysm, "rtt_includes_queueing", False))
    fwd = bool(getattr(sysm, "has_fwd", False))
    key = (tuple(key) + ((("load_rtt", "sent"),) if sent else ()) + ((("rtt_includes_queueing", True),) if sdd else ())
           + ((("forward_delays", True),) if fwd else ()))
    g = _gen_cache.get(key)
    if g is not None:
        return g
    import json
    ik = _index_key(sysm)
    idx = codegen.generated_dir() / "index" / f"mixed-{ik}.json"
    # the cache's index, else the one shipped with the package (SHIP_MIXED, ship): a later process or the first
    # run after installing needs no SymPy (a second or so per process)
    g = codegen.indexed(ik and f"mixed-{ik}.json", _CachedMixed)
    if g is None:
        g = GeneratedMixed([_member_spec(M) for M in sysm.mem], sent=sent, sdd=sdd, fwd=fwd)
        codegen._write(codegen.generated_dir() / f"{g.name}.py", g.source)
        if ik is not None:
            codegen._write(idx, json.dumps({k: getattr(g, k) for k in _META}))
    _gen_cache[key] = g
    return g


#: the member combinations whose composite kernels are shipped and compiled at install time, as the single
#: models of :data:`ecocc.dde.codegen.SHIP_MODELS` (members as ``simulate(protocols=...)`` takes them; options
#: select the laws, numeric parameters do not): TCP Symbiosis against drop-tail Reno, issue 14's mixed
#: first-run case and TCP Symbiosis' Reno-competition figures (symbiosis-fig3 to -fig5); about 17 s of CPU
SHIP_MIXED = ({"symbiosis": {"model": "symbiosis"}, "reno": {"model": "reno", "aqm": "droptail"}},)


def _ship_systems():
    """``{label: MixedSystem}`` of :data:`SHIP_MIXED` on a two-flow dumbbell (the text depends on the members'
    laws, options and static field names, not on the network's values)."""
    from ..mixed import Mixed, MixedSystem, resolve_protocols
    from ..network import dumbbell
    out = {}
    for combo in SHIP_MIXED:
        names = list(combo)
        net = dumbbell(1000.0, [0.05] * len(names), protocols=names, buffer_pkts=100.0)
        members, flow_member = resolve_protocols(net, names[0], None, combo, {})
        out["+".join(names)] = MixedSystem(Mixed(members, flow_member), net, 0.2)
    return out


def ship() -> dict:
    """Write the generated sources of :data:`SHIP_MIXED` and their index entries into ``ecocc/dde/shipped``
    (called by :func:`ecocc.dde.codegen.ship`; setup.py compiles each at install time).

    Returns
    -------
    dict
        ``{label: (module name, index file name)}``.
    """
    import json
    out = {}
    d = codegen._shipped()
    for label, sysm in _ship_systems().items():
        g = GeneratedMixed([_member_spec(M) for M in sysm.mem])
        ik = _index_key(sysm)
        codegen._write(d / f"{g.name}.py", g.source)
        codegen._write(d / "index" / f"mixed-{ik}.json", json.dumps({k: getattr(g, k) for k in _META}))
        out[label] = (g.name, f"mixed-{ik}.json")
    return out


def kernel_data(sysm, gen: GeneratedMixed):
    """The tuples ``D`` and ``Wk`` of the generated composite right-hand side.

    Parameters
    ----------
    sysm : MixedSystem
        The composite on its network.
    gen : GeneratedMixed
        Its generated module.

    Returns
    -------
    tuple
        ``(D, Wk)``: the network's arrays (sizes, routing, backward delays in s, RTTs in s, start/stop times in
        s, capacities in packets/s, cross traffic in packets/s), the members' stacked static fields and
        parameters, each member's flow count, each flow's member and index among its member's flows, each link's
        earliest start in s and flows by member; the Chebyshev groups' slots (per link, their flows by member,
        the flows, a flow of each), each flow's queueing-delay interval (centre and half-width in s) and the
        arrays the kernel fills (coefficients, cumulative terms, usable slots); the work arrays.
    """
    a = sysm.a
    nP, L = sysm.n_flows, sysm.n_links
    f64 = lambda v: np.array(v, dtype=float, order="C")  # noqa: E731  (fresh, writable, contiguous)
    i64 = lambda v: np.array(v, dtype=np.int64, order="C")  # noqa: E731
    lptr, lflows = a.flows_by_link()
    FST = np.zeros((max(sum(len(k) for k in gen.st_keys), 1), nP))
    LST = np.zeros((max(sum(len(k) for k in gen.lst_keys), 1), L))
    par = []
    for i, M in enumerate(sysm.mem):
        for j, k in enumerate(gen.st_keys[i]):
            FST[gen.st_row[i] + j] = M.st_all[k]
        for j, k in enumerate(gen.lst_keys[i]):
            LST[gen.lst_row[i] + j] = M.lst[k]
        par += [float(getattr(M.P, nm)) for nm in gen.param_names[i]]
    if not par:
        par = [0.0]
    NF = i64([M.flows.size for M in sysm.mem])
    floc = np.zeros(nP, dtype=np.int64)
    for M in sysm.mem:
        floc[M.flows] = np.arange(M.flows.size)
    # each link's earliest flow start (inf: no flow), and its flows grouped by member: member z's flows on link l
    # are mlflows[mlptr[l * (n + 1) + z]:mlptr[l * (n + 1) + z + 1]] (n members)
    nm = len(sysm.mem)
    fmem = np.asarray(sysm.flow_member_index, dtype=np.int64)
    start = np.asarray(getattr(sysm, "start_s", a.start_s), dtype=float)  # the reading of the past (ecocc.system)
    lsmin = np.full(L, np.inf)
    mlptr = np.zeros(L * (nm + 1), dtype=np.int64)
    mlflows = np.zeros(lflows.size, dtype=np.int64)
    for l in range(L):
        on = np.asarray(lflows[lptr[l]:lptr[l + 1]], dtype=np.int64)
        if on.size:
            lsmin[l] = float(np.min(start[on]))
        on = on[np.argsort(fmem[on], kind="stable")]
        mlflows[lptr[l]:lptr[l + 1]] = on
        mlptr[l * (nm + 1):(l + 1) * (nm + 1)] = lptr[l] + np.searchsorted(fmem[on], np.arange(nm + 1))
    # the Chebyshev groups' slots (GeneratedMixed): per link its flows grouped by path (first appearance), each
    # slot's flows grouped by member; per flow its path's interval of the queueing delay [QA - QB, QA + QB] s
    fps, pl = np.asarray(a.flow_pair_start), np.asarray(a.pair_link)
    paths = [tuple(pl[fps[k]:fps[k + 1]].tolist()) for k in range(nP)]
    lsl, sptr, sfl, srep = [0], [], [], []
    for l in range(L):
        slots = {}
        for k in lflows[lptr[l]:lptr[l + 1]]:
            slots.setdefault(paths[k], []).append(int(k))
        for on in slots.values():
            on = np.asarray(on, dtype=np.int64)
            on = on[np.argsort(fmem[on], kind="stable")]
            sptr += (len(sfl) + np.searchsorted(fmem[on], np.arange(nm + 1))).tolist()
            srep.append(int(on[0]))
            sfl += on.tolist()
        lsl.append(len(srep))
    qlink = np.asarray(sysm.a.buffer_pkts, dtype=float) / np.asarray(sysm.C, dtype=float)  # s (inf: no buffer)
    qmax = np.array([float(np.sum(qlink[list(pt)])) for pt in paths])
    QA = 0.5 * qmax
    QB = (0.5 + Q_MARGIN) * qmax
    nc = len(gen.cheb_groups)
    D = (int(nP), int(L), i64(a.flow_pair_start), i64(a.pair_link), f64(sysm.bwd), f64(a.rtt_s), i64(lptr),
         i64(lflows), f64(start), f64(a.stop_s), f64(sysm.C), f64(sysm.cross_times), f64(sysm.cross_table),
         f64(FST), f64(LST), f64(par), NF, i64(fmem), i64(floc), f64(lsmin), i64(mlptr), i64(mlflows),
         i64(lsl), i64(sptr), i64(sfl), i64(srep), f64(QA), f64(QB), np.zeros((max(nc, 1) * NT_MAX, nP)),
         np.zeros(nc + 1, dtype=np.int64), np.zeros(max(nc, 1) * len(srep), dtype=np.int64))
    npair = a.pair_link.size
    Wk = (np.zeros(nP), np.zeros(nP), np.zeros(L), np.zeros(npair, dtype=np.int64), np.zeros(nP, dtype=np.int64))
    if gen.fwd:
        # forward delay of each (link, flow) entry in the order of lflows (the arrival's loop) and of mlflows (the
        # loads', by member), and the history segments of the arrival's and the load's lookups per entry
        pair_of = {(int(l_), int(k_)): j for j, (l_, k_) in enumerate(zip(a.pair_link, a.pair_flow))}
        links = np.repeat(np.arange(L), np.diff(lptr))
        fw = np.asarray(a.pair_fwd_s, dtype=float)
        D = D + (f64([fw[pair_of[(l_, int(k_))]] for l_, k_ in zip(links, lflows)]),
                 f64([fw[pair_of[(l_, int(k_))]] for l_, k_ in zip(links, mlflows)]))
        Wk = Wk + (np.zeros(lflows.size, dtype=np.int64), np.zeros(lflows.size, dtype=np.int64))
    return D, Wk


def generic_args(sysm, t_end, **kw):
    """:func:`ecocc.dde.engine.generic_args` for a MixedSystem: ``(GeneratedMixed, adaptive kernel arguments)``.

    Parameters
    ----------
    sysm : MixedSystem
        The composite on its network.
    t_end : float
        End time, seconds.
    **kw
        ``rtol``, ``atol``, ``t_eval``, ``max_step``, ``first_step``, ``max_steps``, ``method`` as
        :func:`ecocc.dde.engine.generic_args`.

    Returns
    -------
    tuple
        ``(GeneratedMixed, dict of the kernel's arguments)``.

    Raises
    ------
    InputError
        For a composite the generated kernel does not serve (:func:`gap`).
    """
    from ..errors import InputError
    from .engine import _method_args, sdd_keep_s
    why = gap(sysm)
    if why is not None:
        raise InputError("engine", "numba", f"'numpy' for {why}")
    args = _method_args(sysm, t_end, **kw)
    gen = generate(sysm)
    D, Wk = kernel_data(sysm, gen)
    if gen.sdd:  # the past kept back to the largest constant delay plus the largest queueing delay (engine.generic_args)
        args["keep_s"] = sdd_keep_s(sysm)
    qb = sysm.layout["queue"]
    args.update(hsrc=gen.hsrc(sysm), iq=int(qb.start), L=int(sysm.n_links),
                buf=np.array(sysm.a.buffer_pkts, dtype=float, order="C"), D=D, Wk=Wk)
    return gen, args


def fixed_args(sysm, t_end, h, n_grid, t_eval_arr, dmax):
    """The arguments of the generated fixed-step kernel (:func:`ecocc.dde.rk4.fixed_kernel`) for one composite run.

    Parameters
    ----------
    sysm : MixedSystem
    t_end : float
        End time, seconds.
    h : float
        The grid step, seconds.
    n_grid : int
        Number of steps.
    t_eval_arr : numpy.ndarray
        Output times, seconds.
    dmax : float
        The largest delay, seconds.

    Returns
    -------
    tuple
        ``(GeneratedMixed, list of the kernel's positional arguments, the ``res`` array)``.
    """
    from ..errors import InputError
    why = gap(sysm, "fixed")
    if why is not None:
        raise InputError("engine", "numba", f"'numpy' for {why}")
    gen = generate(sysm)
    D, Wk = kernel_data(sysm, gen)
    prob = sysm.problem()
    t0 = 0.0
    tiny = max(1e-7 * h, 8 * np.finfo(float).eps * max(1.0, abs(t0), abs(t_end)))
    kinks = prob.kinks[(prob.kinks > t0) & (prob.kinks <= t_end)]
    special = np.zeros(n_grid + 2, dtype=np.bool_)
    ks = np.ceil((kinks - t0) / h - 1e-9).astype(np.int64)
    special[ks[(ks >= 0) & (ks <= n_grid + 1)]] = True
    qb = sysm.layout["queue"]
    res = np.zeros(4)
    args = [np.ascontiguousarray(sysm.initial_state(), dtype=float), t0, float(h), int(n_grid), float(tiny), special,
            np.ascontiguousarray(t_eval_arr, dtype=float), np.empty((t_eval_arr.size, sysm.n)), 1.5 * dmax + 3 * h,
            gen.hsrc(sysm), int(qb.start), int(sysm.n_links), np.array(sysm.a.buffer_pkts, dtype=float, order="C"),
            D, Wk, res]
    return gen, args, res


def solve_fixed(sysm, t_end, step_s, *, t_eval=None, progress=None):
    """:func:`ecocc.dde.engine.solve_fixed` (classical RK4 on a uniform grid) for one MixedSystem run.

    Parameters
    ----------
    sysm : MixedSystem
        The composite on its network.
    t_end : float
        End time, seconds.
    step_s : float
        Requested step, seconds (shrunk so that the grid ends at ``t_end``).
    t_eval : array of float, optional
        Output times, seconds (default: the grid).
    progress : callable, optional
        Called once with the time reached, seconds.

    Returns
    -------
    DDESolution
        As :func:`ecocc.dde.engine.solve_fixed` returns for one run.
    """
    import time as _time

    from ..errors import InputError
    from .adaptive import DDESolution, Status
    from .engine import _warn_once
    wall0 = _time.perf_counter()
    t0 = 0.0
    t_end = float(t_end)
    if not t_end > t0:
        raise ValueError(f"t_end = {t_end!r} is not allowed: a time after t0 = {t0}")
    if not (step_s > 0 and math.isfinite(step_s)):
        raise ValueError(f"step_s = {step_s!r} is not allowed: a finite number > 0")
    prob = sysm.problem()
    jumps = prob.jumps[(prob.jumps >= t0) & (prob.jumps <= t_end)]
    if jumps.size:
        raise InputError("engine", "numba", "'numpy' for problems with state jumps")
    n_grid = max(1, int(math.ceil((t_end - t0) / step_s - 1e-9)))
    h = (t_end - t0) / n_grid
    if t_eval is None:
        t_eval_arr = t0 + h * np.arange(n_grid + 1)
        t_eval_arr[-1] = t_end
    else:
        t_eval_arr = np.array(t_eval, dtype=float)
        if t_eval_arr.size and (t_eval_arr.min() < t0 or t_eval_arr.max() > t_end + 1e-12 * max(1, abs(t_end))):
            raise ValueError("t_eval must lie in [t0, t_end]")
    dmax = float(np.max(sysm.bwd, initial=0.0))
    dmax = max(dmax, float(np.max(sysm.rtt_s, initial=0.0)))
    gen, args, res = fixed_args(sysm, t_end, h, n_grid, t_eval_arr, dmax)
    if not codegen._numba_cached(gen.name, codegen.generated_dir(), "fixed_kernel"):
        _warn_once(f"compile-{gen.name}-fixed", f"compiling the {gen.model_name} fixed-step kernel for this machine "
                   f"with numba's JIT, once (a minute or so; cached in {codegen.generated_dir()})")
    codegen.load(gen).fixed_kernel(*args)
    out_y = args[7]
    t_failed = res[0]
    status, message = Status.SUCCESS, (
        f"integration reached t_end (fixed step h = {h:.6g} s, classical RK4, numba kernel: order 4 in smooth "
        "regions, lower near queue clamps, kinks and jumps off the grid)")
    t_reached, ty, yy = t_end, t_eval_arr, out_y
    if math.isfinite(t_failed):
        status, message = Status.FAILED, f"non-finite state at t = {t_failed:.9g} s"
        t_reached = float(t_failed)
        keep = ty <= t_reached + 1e-12 * max(1.0, abs(t_reached))
        ty, yy = ty[keep], yy[keep]
    if progress is not None:
        progress(t_reached)
    settings = dict(step_s=h, step_requested_s=float(step_s), n_grid_steps=n_grid, delay_max_s=dmax,
                    batch_size=None, engine="numba", kernel=gen.name, compiled="jit")
    return DDESolution(ty, yy, status, message, t_reached, int(res[3]), 0, int(res[2]), int(res[1]), 0, h, h,
                       _time.perf_counter() - wall0, "RK4-fixed", settings)


__all__ = ["GeneratedMixed", "gap", "generate", "kernel_data", "generic_args", "fixed_args", "solve_fixed"]
