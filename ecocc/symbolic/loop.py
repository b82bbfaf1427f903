"""Symbolic linearization of N synchronous flows on one bottleneck.

The equations are *not* re-typed here: :func:`synchronous_loop` calls the
model's own laws (``flow_rate``, ``flow_load``, ``own_load``,
``link_signal``, ``flow_law``, ``link_law``) with SymPy symbols through
:data:`ecocc.models.base.SYMPY_OPS`, wired exactly as
:class:`ecocc.system.NetworkSystem` wires them for a dumbbell with
``delay_split="feedback"`` (forward delay 0, the whole round trip ``tau`` on
the feedback path):

* flows send ``x = flow_rate(s(t), q(t)/C)``; the link sees ``N x(t)``;
* the link publishes ``link_signal(ls(t - tau), q(t - tau), y(t - tau), C)``
  with ``y`` the load ``N flow_load(s(t - tau))`` (only if the model's signal
  uses the arrival);
* the flow gets that signal (one link: the path aggregate is the identity)
  and, if ``needs_own_delayed``, its own ``own_load(s(t - tau))``;
* ``q' = N x - C``.

Units: rates packets/s, queue packets, ``tau`` seconds, ``s`` rad/s.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import sympy

from ..errors import InputError, check
from ..models import get_model
from ..models.base import NUMPY_OPS, SYMPY_OPS

_SUFFIXES = ("_per_s", "_pps2", "_pps", "_pkts", "_s")


def _short(name: str) -> str:
    for suf in _SUFFIXES:
        if name.endswith(suf) and len(name) > len(suf):
            return name[: -len(suf)]
    return name


@dataclass(frozen=True)
class SyncLoop:
    """Linearized synchronous loop (all fields SymPy objects unless noted).

    Attributes
    ----------
    model : str
        Registry name of the model.
    state_names : tuple of str
        Names of the states, e.g. ``("x", "r", "q")`` (natural units: flow
        and link states as the model defines them, queue in packets).
    states, delayed : tuple of sympy.Symbol
        Current states ``z(t)`` and delayed states ``z(t - tau)``.
    rhs : tuple of sympy.Expr
        ``z'(t)`` as built from the model's laws (non-smooth ``Min``/``Max``
        already resolved to the branch active at the equilibrium).
    param_symbols : dict
        Parameter field name -> symbol (or the number substituted).
    C, N, tau, s : sympy.Symbol
        Capacity (packets/s), number of flows, feedback delay (s), Laplace
        variable (rad/s).
    reference : dict
        Symbol -> number: the numeric point used to pick branches and check
        the equilibrium (model defaults, ``C_ref``, ``N_ref``, ``tau_ref``).
    equilibrium : dict
        State symbol -> closed-form equilibrium value.
    A0, A1 : sympy.Matrix
        Jacobians at the equilibrium w.r.t. current and delayed states:
        ``dz' = A0 dz(t) + A1 dz(t - tau)``.
    L : sympy.Expr
        Open loop (delay factor ``exp(-s tau)`` kept apart), negative-feedback
        convention: characteristic equation ``1 + L(s) exp(-s tau) = 0``
        (times the hidden modes ``hidden_poles``).
    hidden_factor : sympy.Expr
        ``det(sI - A0)`` divided by the denominator of ``L``: modes that do
        not appear in ``L`` (e.g. a queue that does not feed back).
    loop_cut : str
        Where the loop was cut (human-readable).
    equilibrium_check : dict
        Relative differences against ``model.equilibrium`` on a numeric
        dumbbell (``rate``, ``queue``).
    messages : tuple of str
    """

    model: str
    state_names: tuple
    states: tuple
    delayed: tuple
    rhs: tuple
    param_symbols: dict
    C: sympy.Symbol
    N: object
    tau: sympy.Symbol
    s: sympy.Symbol
    reference: dict
    equilibrium: dict
    A0: sympy.Matrix
    A1: sympy.Matrix
    L: sympy.Expr
    hidden_factor: sympy.Expr
    loop_cut: str
    equilibrium_check: dict = field(default_factory=dict)
    messages: tuple = ()
    rhs_raw: tuple = ()
    load_rtt: str = "current"

    # -- numeric helpers ---------------------------------------------------
    def values(self, **overrides) -> dict:
        """Return the numeric point: the reference values with overrides by name.

        Parameters
        ----------
        **overrides
            Names are parameter field names (``alpha_per_s``), ``capacity_pps`` (packets/s), ``n_flows``
            (when N is a symbol) or ``rtt_s`` (seconds); None values are skipped.

        Returns
        -------
        dict
            ``{sympy.Symbol: float}``.

        Raises
        ------
        InputError
            For a name that is not a symbol of this loop.
        """
        vals = dict(self.reference)
        by_name = {k: v for k, v in self.param_symbols.items() if isinstance(v, sympy.Symbol)}
        by_name.update({"capacity_pps": self.C, "rtt_s": self.tau})
        if isinstance(self.N, sympy.Symbol):
            by_name["n_flows"] = self.N
        for k, v in overrides.items():
            if v is None:
                continue
            if k not in by_name:
                raise InputError(f"{self.model} loop parameter", k, f"one of {sorted(by_name)}")
            vals[by_name[k]] = float(v)
        return vals

    def rational(self, **overrides) -> "RationalLoop":
        """Return the numeric ``L(s)`` as polynomial coefficients plus its delay.

        Parameters
        ----------
        **overrides
            Values by name, as for :meth:`values`.

        Returns
        -------
        RationalLoop
            ``num``, ``den`` (highest power of s first, ``den`` monic; s in rad/s), ``delay_s`` (the RTT,
            seconds), the hidden modes and the numeric Jacobians.

        Raises
        ------
        InputError
            For an unknown override name.
        """
        vals = self.values(**overrides)
        num, den = sympy.fraction(sympy.cancel(sympy.together(self.L)))
        num_c = _poly_coeffs(num, self.s, vals)
        den_c = _poly_coeffs(den, self.s, vals)
        lead = den_c[0]
        hid = _poly_coeffs(sympy.numer(sympy.cancel(self.hidden_factor)), self.s, vals)
        hd = _poly_coeffs(sympy.denom(sympy.cancel(self.hidden_factor)), self.s, vals)
        hidden = np.roots(hid) if len(hid) > 1 else np.array([])
        if len(hd) > 1:  # should not happen: det(sI-A0) is a multiple of den
            hidden = np.array([])
        A0 = np.array(self.A0.subs(vals).evalf(), dtype=float)
        A1 = np.array(self.A1.subs(vals).evalf(), dtype=float)
        return RationalLoop(num=num_c / lead, den=den_c / lead, delay_s=float(vals[self.tau]),
                            hidden_poles=hidden, A0=A0, A1=A1, label=f"{self.model}: L(s) = {self.L}")

    def rhs_numeric(self, state: dict, delayed: dict, **overrides) -> np.ndarray:
        """Evaluate the *model's laws* numerically (NumPy ops) at the given current and delayed states.

        Used to check the symbolic Jacobians by finite differences.

        Parameters
        ----------
        state, delayed : dict
            ``{state name: value}`` at ``t`` and at ``t - tau``, natural units (flow and link states as the
            model defines them, ``q`` in packets).  A model with ``delayed_feedback=False`` reads ``state``
            for both.
        **overrides
            Values by name, as for :meth:`values`.

        Returns
        -------
        numpy.ndarray
            ``z'(t)`` in the order of :attr:`state_names` (state units per second).

        Raises
        ------
        InputError
            For an unknown override name.
        """
        vals = self.values(**overrides)
        return _numeric_rhs(self, state, delayed, vals)


@dataclass(frozen=True)
class RationalLoop:
    """A numeric open loop ``L(s) exp(-s delay_s)``.

    Attributes
    ----------
    num, den : ndarray
        Polynomial coefficients of ``L`` in ``s`` (rad/s), highest first,
        ``den`` monic.
    delay_s : float
        Loop delay (s).
    hidden_poles : ndarray
        Modes of ``det(sI - A0)`` cancelled from ``L`` (they are characteristic
        roots whatever the delay).
    A0, A1 : ndarray
        Numeric Jacobians of the DDE (for the characteristic roots).
    label : str
    """

    num: np.ndarray
    den: np.ndarray
    delay_s: float
    hidden_poles: np.ndarray
    A0: np.ndarray | None = None
    A1: np.ndarray | None = None
    label: str = ""

    def __call__(self, s):
        """``L(s)`` without the delay factor."""
        return np.polyval(self.num, s) / np.polyval(self.den, s)

    def with_delay(self, delay_s: float) -> "RationalLoop":
        """Return the same loop with another delay.

        Parameters
        ----------
        delay_s : float
            The new loop delay, seconds.

        Returns
        -------
        RationalLoop
            A copy with ``delay_s`` replaced (polynomials, hidden poles and Jacobians unchanged).
        """
        return RationalLoop(self.num, self.den, float(delay_s), self.hidden_poles, self.A0, self.A1, self.label)


def _poly_coeffs(expr, s, vals):
    e = sympy.expand(expr.subs({k: v for k, v in vals.items() if k != s}))
    p = sympy.Poly(e, s)
    return np.array([float(c) for c in p.all_coeffs()], dtype=float)


# ---------------------------------------------------------------------------
def _fake_net(tau, C):
    arr = SimpleNamespace(rtt_s=np.array([tau], dtype=object), physical_bw_pps=np.array([C], dtype=object),
                          target_queue_pkts=np.array([np.nan]), capacity_pps=np.array([C], dtype=object))
    return SimpleNamespace(arrays=arr, n_links=1, n_flows=1, cross_traffic=())


def _scalarize(d):
    out = {}
    for k, v in d.items():
        v = np.asarray(v, dtype=object).ravel()
        out[k] = v[0] if v.size else v
    return out


def _build(model, P, Ps, N, C, tau, ops, s_now, s_del, ls_now, ls_del, q_now, q_del, st, lst, load_rtt="current"):
    """Wire the model's laws for N synchronous flows on one link (any ops)."""
    m = model
    qdelay = q_now / C
    rate = m.flow_rate(ops, s_now, qdelay, Ps, st)
    y_del = None
    if m.signal_uses_arrival:
        # NetworkSystem's load_rtt: the delayed flow states with the *current* queueing delay ("current", the
        # default), or the load at the sending time, the queue delayed too ("sent"); mirrored so both agree
        ql = q_del / C if load_rtt == "sent" else qdelay
        load = m.flow_load(ops, s_del, ql, Ps, st) if m.separate_load else m.flow_rate(ops, s_del, ql, Ps, st)
        y_del = N * load
    if m.pair_extras:  # N synchronous flows: all active and seen by the link, each at the flow's current rate
        lst = dict(lst, n_active=N, rate=rate, self_seen=1)
    sig = m.link_signal(ops, ls_del, q_del, y_del, C, Ps, lst)
    own = m.own_load(ops, s_del, Ps, st) if m.needs_own_delayed else None
    dflow = m.flow_law(ops, s_now, sig, own, qdelay, Ps, st)
    arrival = N * rate
    dlink = m.link_law(ops, ls_now, q_now, arrival, C, Ps, lst)
    pdrop = m.link_drop_fraction(ops, ls_now, q_now, arrival, C, Ps, lst)  # AQM drops never queued (system.py)
    queued = arrival if pdrop is None else arrival * (1 - pdrop)
    return ([dflow[v] for v in m.flow_states] + [dlink[v] for v in m.link_states] + [queued - C])


def _nonsmooth_atoms(exprs):
    atoms = set()
    for e in exprs:
        atoms |= set(sympy.sympify(e).atoms(sympy.Min, sympy.Max))
    return sorted(atoms, key=sympy.default_sort_key)


def synchronous_loop(model, params=None, n_flows=None, *, C_ref=1000.0, N_ref=4, tau_ref=0.1,
                     check_equilibrium=True, load_rtt="current") -> SyncLoop:
    """Linearize ``model`` for N synchronous flows on one bottleneck.

    Parameters
    ----------
    model : str or NetworkModel
        Registry name (``"aecp"``, ``"cltcp"``, ``"petcp"``, ``"symbiosis"``).
    params : None, the model's Params object or dict
        ``None``: every real parameter stays a symbol (reference values: the
        model's defaults).  A Params object or a dict of overrides: those
        values are substituted as exact rationals.
    n_flows : int or sympy.Symbol, optional
        Number of flows ``N``; default a positive integer symbol ``N``.
    C_ref, N_ref, tau_ref : float
        Numeric reference point (packets/s, flows, s) used to choose the
        active branch of ``Min``/``Max`` and to check the equilibrium against
        ``model.equilibrium``.
    check_equilibrium : bool, optional
        Compare the closed-form equilibrium with ``model.equilibrium`` on a numeric dumbbell at the
        reference point (result in :attr:`SyncLoop.equilibrium_check`; empty when False).
    load_rtt : {"current", "sent"}, optional
        The reading of the delayed load (:class:`ecocc.system.NetworkSystem`): with ``"sent"`` a load that
        reads the queueing delay (TCP Symbiosis with ``available="measured"``) reads the delayed queue, which
        moves its queue derivative from ``A0`` to ``A1``; the equilibrium is the same.

    Returns
    -------
    SyncLoop
        The states, equilibrium, Jacobians ``A0``/``A1`` and open loop ``L(s)`` (s in rad/s).

    Raises
    ------
    InputError
        For Reno (not supported) or parameters the model refuses.
    """
    m = get_model(model)
    from ..system import check_load_rtt
    load_rtt = check_load_rtt(load_rtt)
    if m.name == "reno":
        raise InputError("model", m.name, "one of aecp, cltcp, petcp, symbiosis (reno: its equilibrium has no "
                                          "closed form; its loop is ecocc.stability.reno_loop, linearized from the "
                                          "same laws)")
    defaults = m.default_params()
    if isinstance(params, dict):
        Pnum = m.make_params(None, **params)
        substitute = set(params)
    elif params is None:
        Pnum, substitute = defaults, set()
    else:
        Pnum = m.make_params(params)
        substitute = set(Pnum.field_names())
    msgs = []
    psyms, ref = {}, {}
    for f in Pnum.field_names():
        v = getattr(Pnum, f)
        if f in m.Params._positive or f in m.Params._nonneg:
            if f in substitute:
                psyms[f] = sympy.nsimplify(v, rational=True)
            else:
                sym = (sympy.Symbol(_short(f), positive=True) if f in m.Params._positive
                       else sympy.Symbol(_short(f), nonnegative=True))
                psyms[f] = sym
                ref[sym] = float(v)
        else:
            psyms[f] = v  # strings, bools, None: structural choices stay as they are
    Ps = SimpleNamespace(**psyms)
    C = sympy.Symbol("C", positive=True)
    tau = sympy.Symbol("tau", positive=True)
    s = sympy.Symbol("s")
    if n_flows is None:
        N = sympy.Symbol("N", positive=True, integer=True)
    elif isinstance(n_flows, sympy.Basic):
        N = n_flows
    else:
        check(int(n_flows) == n_flows and n_flows >= 1, "n_flows", n_flows, "an integer >= 1 or a sympy symbol")
        N = sympy.Integer(int(n_flows))
    ref.update({C: float(C_ref), tau: float(tau_ref)})
    if isinstance(N, sympy.Symbol):
        ref[N] = float(N_ref)
    fake = _fake_net(tau, C)
    st = _scalarize(m.flow_static(fake, Ps))
    lst = _scalarize(m.link_static(fake, Ps))
    names = list(m.flow_states) + list(m.link_states) + ["q"]
    now = [sympy.Symbol(n, positive=True) for n in names[:-1]] + [sympy.Symbol("q", nonnegative=True)]
    dly = [sympy.Symbol(n + "_d", positive=True) for n in names[:-1]] + [sympy.Symbol("q_d", nonnegative=True)]
    nf = len(m.flow_states)
    delayed_fb = getattr(Pnum, "delayed_feedback", True)
    if not delayed_fb:
        msgs.append("delayed_feedback=False: no delay in the loop (A1 = 0)")
        dly_used = now
    else:
        dly_used = dly
    s_now = dict(zip(m.flow_states, now[:nf])); s_del = dict(zip(m.flow_states, dly_used[:nf]))
    ls_now = dict(zip(m.link_states, now[nf:-1])); ls_del = dict(zip(m.link_states, dly_used[nf:-1]))
    rhs_raw = _build(m, Pnum, Ps, N, C, tau, SYMPY_OPS, s_now, s_del, ls_now, ls_del, now[-1], dly_used[-1], st, lst,
                     load_rtt)
    rhs_raw = [sympy.sympify(e) for e in rhs_raw]
    to_now = dict(zip(dly, now))

    # --- equilibrium, branch by branch of the non-smooth atoms ----------------
    atoms = _nonsmooth_atoms(rhs_raw)
    chosen = None
    for combo in itertools.product(*[range(len(a.args)) for a in atoms]):
        rep = {a: a.args[i] for a, i in zip(atoms, combo)}
        rhs = [e.xreplace(rep) for e in rhs_raw]
        eqs = [e.xreplace(to_now) for e in rhs]
        try:
            sols = sympy.solve(eqs, now, dict=True)
        except NotImplementedError:
            sols = []
        for sol in sols:
            if set(sol) != set(now):
                continue
            vals = {k: float(sympy.N(v.subs(ref))) if v.subs(ref).is_number else np.nan for k, v in sol.items()}
            if not all(np.isfinite(list(vals.values()))):
                continue
            if any(vals[k] <= 0 for k in now[:-1]) or vals[now[-1]] < 0:
                continue
            # the chosen branch must be the active one at this point
            ok = True
            point = {**ref, **vals}
            for a, i in zip(atoms, combo):
                argv = [float(sympy.N(arg.xreplace(to_now).subs(point))) for arg in a.args]
                target = min(argv) if isinstance(a, sympy.Min) else max(argv)
                if abs(argv[i] - target) > 1e-9 * max(1.0, abs(target)):
                    ok = False
                elif sum(abs(v - target) <= 1e-9 * max(1.0, abs(target)) for v in argv) > 1:
                    msgs.append(f"{a} has a kink at the equilibrium: one-sided linearization (branch {a.args[i]})")
            if ok:
                chosen = (rhs, {k: sympy.simplify(v) for k, v in sol.items()})
                break
        if chosen:
            break
    if chosen is None:
        raise InputError(f"{m.name} equilibrium", "none found", "a model with a positive equilibrium on one link")
    rhs, eq = chosen
    eq_point = {**eq, **{d: eq[n] for d, n in zip(dly, now)}}
    A0 = sympy.Matrix([[sympy.simplify(sympy.diff(e, z).subs(eq_point)) for z in now] for e in rhs])
    A1 = sympy.Matrix([[sympy.simplify(sympy.diff(e, z).subs(eq_point)) for z in dly] for e in rhs])
    n = len(now)
    # --- open loop: cut at the delayed feedback (A1 = b c^T, rank 1) -----------
    nz = [(i, j) for i in range(n) for j in range(n) if A1[i, j] != 0]
    sI = s * sympy.eye(n)
    charpoly = sympy.factor(sympy.det(sI - A0))
    if not nz:
        L = sympy.Integer(0)
        cut = "no delayed feedback (A1 = 0)"
        hidden = charpoly
    else:
        i0, j0 = nz[0]
        b = A1[:, j0] / A1[i0, j0]
        c = A1[i0, :]
        check(sympy.simplify(b * c - A1) == sympy.zeros(n, n), f"{m.name} A1", A1, "a rank-1 delayed coupling")
        G = (c * (sI - A0).adjugate() * b)[0, 0]
        L = sympy.factor(sympy.cancel(-G / sympy.det(sI - A0)))
        cut = (f"cut at the delayed input of d{names[i0]}/dt: u = c^T z(t - tau), "
               f"c^T = {list(c)}; 1 + L(s) exp(-s tau) = 0")
        den_L = sympy.denom(sympy.cancel(sympy.together(L)))
        hidden = sympy.factor(sympy.cancel(charpoly / den_L))
    # --- numeric check against model.equilibrium --------------------------------
    eq_check = {}
    if check_equilibrium:
        eq_check = _check_against_model(m, Pnum, Ps, psyms, ref, eq, now, names, C, N, tau, st)
    return SyncLoop(model=m.name, state_names=tuple(names), states=tuple(now), delayed=tuple(dly), rhs=tuple(rhs),
                    param_symbols=psyms, C=C, N=N, tau=tau, s=s, reference=ref, equilibrium=eq, A0=A0, A1=A1,
                    L=L, hidden_factor=hidden, loop_cut=cut, equilibrium_check=eq_check, messages=tuple(msgs),
                    rhs_raw=tuple(rhs_raw), load_rtt=load_rtt)


def _numeric_params(loop, vals):
    m = get_model(loop.model)
    kw = {}
    for f, sym in loop.param_symbols.items():
        if isinstance(sym, sympy.Symbol):
            kw[f] = vals[sym]
        elif isinstance(sym, sympy.Basic):
            kw[f] = float(sym)
        else:
            kw[f] = sym
    return m, m.make_params(None, **kw)


def _numeric_rhs(loop, state, delayed, vals):
    m, P = _numeric_params(loop, vals)
    C = vals[loop.C]
    N = vals[loop.N] if isinstance(loop.N, sympy.Symbol) else float(loop.N)
    tau = vals[loop.tau]
    fake = _fake_net(tau, C)
    fake.arrays.rtt_s = np.array([tau]); fake.arrays.physical_bw_pps = np.array([C])
    st = _scalarize(m.flow_static(fake, P)); lst = _scalarize(m.link_static(fake, P))
    st = {k: float(v) for k, v in st.items()}; lst = {k: float(v) for k, v in lst.items()}
    nf = len(m.flow_states)
    names = loop.state_names
    if not getattr(P, "delayed_feedback", True):
        delayed = state
    s_now = {v: np.float64(state[v]) for v in m.flow_states}
    s_del = {v: np.float64(delayed[v]) for v in m.flow_states}
    ls_now = {v: np.float64(state[v]) for v in m.link_states}
    ls_del = {v: np.float64(delayed[v]) for v in m.link_states}
    out = _build(m, P, P, N, C, tau, NUMPY_OPS, s_now, s_del, ls_now, ls_del, np.float64(state["q"]),
                 np.float64(delayed["q"]), st, lst, getattr(loop, "load_rtt", "current"))
    del nf, names
    return np.array([float(v) for v in out])


def _check_against_model(m, Pnum, Ps, psyms, ref, eq, now, names, C, N, tau, st):
    from ..network import dumbbell
    kw = {f: ref[sym] for f, sym in psyms.items() if isinstance(sym, sympy.Symbol)}
    P = m.make_params(Pnum, **kw) if kw else Pnum
    Nn = int(round(ref[N])) if isinstance(N, sympy.Symbol) else int(N)
    net = dumbbell(ref[C], [ref[tau]] * Nn)
    got = m.equilibrium(net, P)
    if got is None:
        return {"status": "model.equilibrium returned None"}
    point = {**ref}
    if not isinstance(N, sympy.Symbol):
        pass
    eqv = {k: float(sympy.N(v.subs(point))) for k, v in eq.items()}
    fs = {v: eqv[now[i]] for i, v in enumerate(m.flow_states)}
    qn = eqv[now[-1]]
    stn = {k: float(sympy.N(sympy.sympify(v).subs(point))) for k, v in st.items()}
    rate = float(m.flow_rate(NUMPY_OPS, fs, qn / ref[C], P, stn))
    r_model = float(got["rate_pps"][0]); q_model = float(got["queue_pkts"][0])
    rel_rate = abs(rate - r_model) / max(abs(r_model), 1e-300)
    rel_q = abs(qn - q_model) / max(abs(q_model), 1.0)
    return {"rate_symbolic_pps": rate, "rate_model_pps": r_model, "queue_symbolic_pkts": qn,
            "queue_model_pkts": q_model, "rel_rate": rel_rate, "rel_queue": rel_q,
            "status": "ok" if rel_rate < 1e-9 and rel_q < 1e-9 else "MISMATCH", "source": got.get("source", "")}

