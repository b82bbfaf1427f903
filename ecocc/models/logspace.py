"""The laws in log space, derived by SymPy from the one description.

A state integrated as its logarithm ``u = ln x`` (``flow_log`` / ``link_log``)
needs ``du/dt = f(x)/x``.  Evaluating ``f(exp(u)) / exp(u)`` numerically fails
when ``exp(u)`` underflows to 0: ``0/0``, or ``log(0)`` inside the law (AECP
at 1 kbps with x0 = 1e9 packets/s and alpha = 100 /s: the rate factor's
logarithm falls below -745 within microseconds, the NumPy solver stopped with
"non-finite state" while the compiled AECP kernel, written in log space by
hand, ran on).

Here the same law functions run once on SymPy symbols with ``x = exp(u)``
(``u`` real); SymPy's automatic evaluation cancels ``exp(u)/exp(u)`` and turns
``log(exp(u))`` into ``u``, so ``f(exp(u))/exp(u)`` becomes an expression in
``u`` itself wherever the law allows it (AECP: ``alpha (phi - u)`` and
``beta (1 - (y + (q - q0)/T)/C)``).  The result is expanded (so that
``(a + b e^u) e^-u`` becomes ``a e^-u + b`` rather than ``inf * 0``) and
compiled to NumPy with :func:`sympy.lambdify`.

The link signal goes to log space too when the model aggregates it with
``min`` or ``max`` (monotone, so ``AGG log = log AGG``) and ``log(signal)``
simplifies to an expression free of ``exp`` and ``log`` (AECP's ``r = exp(w)``
gives ``w``): the flow law then receives ``fb = exp(phi)`` with ``phi`` the
aggregated log-signal, and ``log(fb)`` in the law becomes ``phi``.

Where the law does not allow it (a term like ``a e^-u``, PE-TCP's additive
increase divided by the rate) the derived form is still exact; an
``e^-u`` that overflows is then a genuine non-finite derivative, reported by
the solver with the component named.

The natural-unit laws stay what the symbolic layer linearizes and what the
model states; this module only changes how the NumPy reference evaluates the
log derivative.  A model can opt out with ``derive_log_laws = False`` (the
NumPy right-hand side then divides by ``exp(u)`` as before).
"""
from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass

import numpy as np

_AGG_LOG_OK = ("min", "max")


def _param_items(P):
    """(name, value) of the parameter fields (ModelParams or a BatchParams)."""
    if hasattr(P, "as_dict"):
        return list(P.as_dict().items())
    return [(f.name, getattr(P, f.name)) for f in dataclasses.fields(P)]


def _is_number(v):
    return (isinstance(v, (numbers.Real, np.ndarray)) and not isinstance(v, (bool, np.bool_)))


@dataclass
class LogSpaceLaws:
    """Compiled derivatives of a model's states, log states in log space.

    Call ``flow(u_flow, fb_or_phi, own, qdelay, st, P)`` and
    ``link(u_link, q, y, C, lst, P)`` with the *stored* state values (logs for
    log states); ``signal_log(u_link, q, y, C, lst, P)`` when
    ``signal_in_log`` is set.  Each returns a list in the model's state order.
    """

    flow_fns: list
    link_fns: list
    signal_fn: object
    signal_in_log: bool
    st_keys: tuple
    lst_keys: tuple
    p_keys: tuple
    exprs: dict

    def _p(self, P):
        return [getattr(P, k) for k in self.p_keys]

    def flow(self, u, fb, own, qdelay, st, P):
        """Derivatives of the stored flow states (``d ln x/dt`` for log states).

        Parameters
        ----------
        u : sequence of array_like
            Stored flow states in the model's order (logarithms for log states).
        fb : array_like
            Path feedback, or its logarithm ``phi`` when ``signal_in_log`` (unit of the signal).
        own : array_like or None
            The flow's delayed own load (None becomes 0).
        qdelay : array_like
            Current queueing delay of the path (s).
        st : dict
            Per-flow static arrays (``st_keys``).
        P : ModelParams
            The numeric parameters, passed at call time (``p_keys``).

        Returns
        -------
        list of array_like
            One derivative per flow state, in the model's order (1/s for log states).
        """
        args = list(u) + [fb, 0.0 if own is None else own, qdelay] + [st[k] for k in self.st_keys] + self._p(P)
        return [fn(*args) for fn in self.flow_fns]

    def link(self, u, q, y, C, lst, P):
        """Derivatives of the stored link states (``d ln r/dt`` for log states).

        Parameters
        ----------
        u : sequence of array_like
            Stored link states in the model's order (logarithms for log states).
        q : array_like
            Queue (packets).
        y : array_like
            Arrival rate (packets/s).
        C : array_like
            Capacity (packets/s).
        lst : dict
            Per-link static arrays (``lst_keys``).
        P : ModelParams
            The numeric parameters.

        Returns
        -------
        list of array_like
            One derivative per link state, in the model's order (1/s for log states).
        """
        args = list(u) + [q, y, C] + [lst[k] for k in self.lst_keys] + self._p(P)
        return [fn(*args) for fn in self.link_fns]

    def signal_log(self, u, q, y, C, lst, P):
        """Logarithm of the link signal from the stored link states (only when ``signal_in_log``).

        Parameters
        ----------
        u, q, C, lst, P
            As in :meth:`link` (per (link, flow) pair).
        y : array_like or None
            The link's load (packets/s); None becomes 0.

        Returns
        -------
        array_like
            ``log(signal)`` (AECP: ``ln r_l``, the stored state itself).
        """
        args = list(u) + [q, 0.0 if y is None else y, C] + [lst[k] for k in self.lst_keys] + self._p(P)
        return self.signal_fn(*args)


def derive(model, P, st_keys, lst_keys) -> LogSpaceLaws | None:
    """Derive the log-space laws of ``model`` (cached per process); None if the model opts out.

    Cached by model class, instance attributes, parameter class, non-numeric
    parameter values and static keys; numeric parameters stay symbols and are
    passed at call time.

    Parameters
    ----------
    model : NetworkModel
        The model (its laws run once on SymPy symbols).
    P : ModelParams or BatchParams
        Parameters; their numeric fields become arguments, the others (choices, flags) are fixed.
    st_keys, lst_keys : sequence of str
        Names of the flow and link static arrays the laws read.

    Returns
    -------
    LogSpaceLaws or None
        Compiled laws; None if ``model.derive_log_laws`` is False or the model has no log state.
    """
    if not getattr(model, "derive_log_laws", True) or not (any(model.flow_log) or any(model.link_log)):
        return None
    items = _param_items(P)
    p_keys = tuple(k for k, v in items if _is_number(v))
    fixed = tuple((k, v) for k, v in items if not _is_number(v))
    # one derivation per process for each model class, parameter choices (strings, flags) and static keys;
    # numeric parameters are symbols, passed at call time.  Instance attributes of a model enter the key
    # (registry models have none: ``get_model`` makes a new instance per call)
    inst = tuple(sorted((k, repr(v)) for k, v in vars(model).items() if not k.startswith("_")))
    key = (type(model), inst, type(P).__name__, fixed, tuple(st_keys), tuple(lst_keys))
    try:
        hash(key)
    except TypeError:  # an unhashable parameter value: derive without caching
        return _derive(model, dict(fixed), p_keys, tuple(st_keys), tuple(lst_keys))
    if key not in _CACHE:
        _CACHE[key] = _derive(model, dict(fixed), p_keys, tuple(st_keys), tuple(lst_keys))
    return _CACHE[key]


_CACHE: dict = {}


def _derive(model, fixed, p_keys, st_keys, lst_keys):
    import sympy as sp
    from types import SimpleNamespace
    from .base import SYMPY_EXACT_OPS as ops  # the whole laws (no linearization branch choice)

    R = dict(real=True)
    Ps = SimpleNamespace(**fixed, **{k: sp.Symbol(f"P_{k}", **R) for k in p_keys})
    psyms = [getattr(Ps, k) for k in p_keys]
    uf = [sp.Symbol(f"u_{v}", **R) for v in model.flow_states]
    ul = [sp.Symbol(f"w_{v}", **R) for v in model.link_states]
    fs = {v: (sp.exp(u) if lg else u) for v, u, lg in zip(model.flow_states, uf, model.flow_log)}
    ls = {v: (sp.exp(u) if lg else u) for v, u, lg in zip(model.link_states, ul, model.link_log)}
    st = {k: sp.Symbol(f"st_{k}", **R) for k in st_keys}
    lst = {k: sp.Symbol(f"lst_{k}", **R) for k in lst_keys}
    q, y, C = sp.Symbol("q", **R), sp.Symbol("y", **R), sp.Symbol("C", positive=True)
    fb, own, qdelay = sp.Symbol("fb", **R), sp.Symbol("own", **R), sp.Symbol("qdelay", **R)
    phi = sp.Symbol("phi", **R)

    # the link signal in log space where the aggregate is monotone and log(signal) needs no log/exp
    signal_in_log, sig_expr = False, None
    if model.path_aggregate in _AGG_LOG_OK:
        try:
            sig = model.link_signal(ops, ls, q, y if model.signal_uses_arrival else None, C, Ps, lst)
            lsig = sp.expand_log(sp.log(sig), force=False)
            if not lsig.has(sp.log, sp.exp):
                signal_in_log, sig_expr = True, lsig
        except Exception:  # a law SymPy cannot run: keep the natural signal
            signal_in_log = False
    fb_sym = sp.exp(phi) if signal_in_log else fb
    own_arg = own if model.needs_own_delayed else None
    dflow = model.flow_law(ops, fs, fb_sym, own_arg, qdelay, Ps, st)
    dlink = model.link_law(ops, ls, q, y, C, Ps, lst)

    def logform(d, state, lg):
        e = sp.sympify(d)
        if lg:
            e = sp.expand(e / state, power_exp=False, log=False, multinomial=False)
        return e

    fexprs = [logform(dflow[v], fs[v], lg) for v, lg in zip(model.flow_states, model.flow_log)]
    lexprs = [logform(dlink.get(v, 0), ls[v], lg) for v, lg in zip(model.link_states, model.link_log)]
    fargs = uf + [phi if signal_in_log else fb, own, qdelay] + [st[k] for k in st_keys] + psyms
    largs = ul + [q, y, C] + [lst[k] for k in lst_keys] + psyms
    lam = lambda args, e: sp.lambdify(args, e, modules="numpy")  # noqa: E731
    return LogSpaceLaws(
        flow_fns=[lam(fargs, e) for e in fexprs],
        link_fns=[lam(largs, e) for e in lexprs],
        signal_fn=lam(largs, sig_expr) if signal_in_log else None,
        signal_in_log=signal_in_log, st_keys=st_keys, lst_keys=lst_keys, p_keys=p_keys,
        exprs=dict(flow=dict(zip(model.flow_states, fexprs)), link=dict(zip(model.link_states, lexprs)),
                   signal_log=sig_expr))
