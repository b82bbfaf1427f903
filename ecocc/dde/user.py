"""A user's delay-differential equation, given as SymPy expressions, at compiled speed.

The notation is jitcdde's::

    from ecocc.dde import sympy_dde, t, y
    f = [0.25 * y(0, t - 15) / (1 + y(0, t - 15) ** 10) - 0.1 * y(0)]   # Mackey--Glass
    sol = sympy_dde(f, history=[1.0]).solve(1000.0, t_eval=np.arange(0, 1000.01, 10), rtol=1e-10, atol=1e-10)

``y(i)`` is component ``i`` now, ``y(i, t - d)`` its value ``d`` time units ago, ``t`` the time.  The
delays are found from the expressions (``d = t - argument``): numbers, or expressions of the symbols
given in ``params`` (a sweep of a parameter, a delay included, reuses one compiled kernel), or (with
bounds, below) expressions of ``t`` and the current state.  jitcdde's own SymPy symbols
(``jitcdde.sympy_symbols``: ``current_y``, ``past_y``, ``anchors``)
and SymEngine expressions of ``jitcdde.y`` are read too; so are states given as SymPy functions of time
(``states=[x, z]`` with ``x = sympy.Function("x")``: ``x(t)`` now, ``x(t - d)`` delayed).

What runs (one integrator, two engines):

* ``engine="numba"`` (the default where numba is installed): the expressions are printed as plain Python
  (``sympy.printing.pycode``, common subexpressions eliminated) into a right-hand side with the delayed
  values read from the Hermite history written out in line, exactly as the network models' generated
  kernels (:mod:`ecocc.dde.codegen`), under the same generic Dormand--Prince integrator
  (:mod:`ecocc.dde.integrator`, its queue handling switched off: no bounded components).  The module is
  cached on disk under a hash of its source (:func:`ecocc.dde.codegen.kernel`: compiled once per machine
  by ``numba.pycc``, else numba's JIT).
* ``engine="numpy"``: the same problem as a :class:`~ecocc.dde.problem.DDEProblem` (the expressions
  lambdified) on the NumPy reference solver :func:`ecocc.dde.adaptive.solve_dde`, which takes the same steps.

Both: RK45 with max-norm error control, the mid-step check of the Hermite history of the delayed
components, steps no longer than the smallest positive delay, breakpoints (the initial time and its images
through the delays, to ``breakpoint_depth``) stepped onto.  The past before ``t0`` is ``history``: a
constant per component, or SymPy expressions of ``t`` (then the state at ``t0`` is their value there).

Delays that depend on ``t`` or on the current state (``y(0, t - 1 - y(1) ** 2)``) need the bounds
``min_delay`` (> 0: steps are capped at it) and ``max_delay``; they are evaluated at each stage (the NumPy
reference: :attr:`~ecocc.dde.problem.DDEProblem.state_delays`, the same semantics).

Not supported (refused with :class:`~ecocc.errors.InputError`): delays that read delayed states, neutral
terms (derivatives of the past), undefined functions other than the states, symbols not in ``params``.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..errors import InputError
from .adaptive import DDESolution
from .userint import TYPES_SRC

#: the time symbol of the notation (the same symbol as ``jitcdde.sympy_symbols.t``)
t = sp.Symbol("t", real=True)
#: the state function: ``_Y(i)`` now, ``_Y(i, time)`` at ``time``
_Y = sp.Function("y", real=True)

__all__ = ["t", "y", "sympy_dde", "SympyDDE"]


def y(index, time=None):
    """Component ``index`` of the state: now (``time`` omitted or ``t``), else at ``time`` (``t - delay``).

    Parameters
    ----------
    index : int
        The component, ``0 <= index < n``.
    time : SymPy expression, optional
        ``t - delay`` with a constant delay (time units, >= 0); default: now.

    Returns
    -------
    SymPy expression
        The symbolic state value.
    """
    if time is None or sp.sympify(time) == t:
        return _Y(index)
    return _Y(index, time)


def _convert(expr, field, states):
    """``expr`` as SymPy with every state reference written ``_Y(i)`` / ``_Y(i, time)``."""
    if hasattr(expr, "_sympy_") and not isinstance(expr, sp.Basic):  # SymEngine (jitcdde.y)
        try:
            expr = expr._sympy_()
        except Exception as exc:  # noqa: BLE001  (a SymEngine object SymPy cannot read)
            raise InputError(field, str(expr), f"an expression SymPy can read ({exc})") from None
    try:
        expr = sp.sympify(expr)
    except (sp.SympifyError, TypeError) as exc:
        raise InputError(field, expr, f"a SymPy expression ({exc})") from None
    if not isinstance(expr, sp.Expr):
        raise InputError(field, expr, "a SymPy expression (a number-valued one, not a relation or a set)")
    from sympy.core.function import AppliedUndef
    rep = {}
    for a in expr.atoms(AppliedUndef):
        nm = a.func.__name__
        if nm == "anchors" and len(a.args) == 1:  # inside jitcdde's past_y: goes with it (checked below)
            continue
        if nm in ("current_y", "y") and len(a.args) == 1:  # jitcdde's current_y(i) or y(i)
            rep[a] = _Y(*a.args)
        elif nm == "past_y" and len(a.args) == 3:  # jitcdde: past_y(time, index, anchors(time))
            rep[a] = _Y(a.args[1], a.args[0])
        elif nm == "y" and len(a.args) == 2:
            rep[a] = _Y(a.args[0], a.args[1])
        elif states is not None and a.func in states and len(a.args) == 1:
            rep[a] = _Y(states.index(a.func), a.args[0])
        else:
            raise InputError(field, str(a), "known functions only: the states y(i), y(i, t - delay)"
                             + (f" or {[str(s) for s in states]}(time)" if states else "")
                             + "; past derivatives (neutral terms) are not supported")
    expr = expr.xreplace(rep) if rep else expr
    left = [a for a in expr.atoms(AppliedUndef) if a.func is not _Y]
    if left:
        raise InputError(field, str(left[0]), "known functions only: the states y(i), y(i, t - delay)")
    return expr


@dataclass
class _Lookup:
    comp: int
    delay: sp.Expr  # an expression of the parameter symbols (or a number); variable: of t and y_i too
    variable: bool = False


class SympyDDE:
    """A DDE ``y_i'(t) = f_i(t, y(t), y(t - d_1), ...)`` given as SymPy expressions (see the module docstring).

    Parameters
    ----------
    f : sequence of SymPy expressions
        ``f[i]`` is the derivative of component ``i`` (per time unit); written with :func:`y` and :data:`t`
        (or jitcdde's symbols, or the functions in ``states``).
    history : sequence
        The past before ``t0``, one entry per component: a number (constant past) or a SymPy expression of
        ``t`` (and of ``params``' symbols).
    params : dict, optional
        ``{symbol: value}``: the symbols other than ``t`` the expressions (delays included) use, with their
        numeric values.  They are entries of the compiled kernel's parameter array: changing a value
        (:meth:`with_params`) reuses the kernel.
    t0 : float, optional
        The initial time (time units; default 0).
    states : sequence of SymPy functions, optional
        Names for the states instead of ``y(i)``: ``states[i](t)`` is component ``i`` now,
        ``states[i](t - d)`` delayed.
    names : sequence of str, optional
        Component names for messages and results.
    breakpoint_depth : int, optional
        How many times ``t0`` is propagated through the delays into breakpoints stepped onto (default 1,
        as :class:`~ecocc.dde.problem.DDEProblem`).
    min_delay, max_delay : float, optional
        Required when a delay depends on ``t`` or on the current state (``y(0, t - 1 - y(1) ** 2)``): a lower
        bound > 0 of every such delay (steps are capped at it; a value below it is read as ``min_delay``)
        and an upper bound (how much past is kept), time units.  Breakpoints propagate through ``min_delay``
        only (the error control meets the rest, as in :class:`~ecocc.dde.problem.DDEProblem`).
    """

    def __init__(self, f, *, history, params=None, t0=0.0, states=None, names=None, breakpoint_depth=1,
                 min_delay=None, max_delay=None):
        from . import options as opt
        if isinstance(f, (sp.Basic, str)) or not hasattr(f, "__len__"):
            f = [f]
        n = len(f)
        if n == 0:
            raise InputError("f", f, "one expression per state component (at least one)")
        self.n = n
        self.t0 = opt.real("t0", t0)
        self.breakpoint_depth = opt.integer("breakpoint_depth", breakpoint_depth, lo=0)
        if states is not None:
            states = list(states)
            if len(states) != n or not all(isinstance(s, sp.FunctionClass) for s in states):
                raise InputError("states", states, f"{n} SymPy functions (sympy.Function('x')), one per expression")
        # parameters: user symbols -> p_k
        params = dict(params or {})
        self.param_symbols, self.param_values = [], []
        for k, (s, v) in enumerate(params.items()):
            if isinstance(s, str):
                s = sp.Symbol(s)
            if not isinstance(s, sp.Symbol) or s.name == "t":
                raise InputError("params", str(s), "SymPy symbols other than t as keys")
            self.param_symbols.append(s)
            self.param_values.append(opt.real(f"params[{s}]", v))
        self._p = [sp.Symbol(f"p_{k}", real=True) for k in range(len(self.param_symbols))]
        self._pmap = dict(zip(self.param_symbols, self._p))
        exprs = [_convert(e, f"f[{i}]", states) for i, e in enumerate(f)]
        self.names = list(names) if names is not None else [f"y{i}" for i in range(n)]
        if len(self.names) != n:
            raise InputError("names", names, f"{n} names, one per component")
        # time symbols: ours, and any other symbol named "t" (jitcdde's SymPy t is ours)
        self._ys = [sp.Symbol(f"y_{i}", real=True) for i in range(n)]
        lookups: list[_Lookup] = []
        zsyms = []
        clean = []
        for i, e in enumerate(exprs):
            e = self._rename_time(e)
            rep = {}
            for a in sorted(e.atoms(sp.core.function.AppliedUndef), key=sp.default_sort_key):
                comp = self._index(a.args[0], f"f[{i}]", str(a))
                if len(a.args) == 1:
                    rep[a] = self._ys[comp]
                    continue
                arg = self._rename_time(sp.sympify(a.args[1]))
                delay = sp.expand(t - arg)
                inner = delay.atoms(sp.core.function.AppliedUndef)
                if any(u.func is not _Y or len(u.args) != 1 for u in inner):
                    raise InputError(f"f[{i}]", str(a), "a delay of constants, t and current states y(j) "
                                     "(not of delayed states)")
                variable = bool(inner) or t in delay.free_symbols
                if variable:
                    if min_delay is None or max_delay is None:
                        raise InputError("min_delay, max_delay", (min_delay, max_delay),
                                         f"bounds of the state- or time-dependent delay of {a}: numbers with "
                                         "0 < min_delay <= every delay (steps are capped at it; a smaller value "
                                         "is read as min_delay) and max_delay >= every delay (how much past is kept)")
                    delay = delay.xreplace({u: self._ys[self._index(u.args[0], f"f[{i}]", str(u))] for u in inner})
                    delay = self._params_only(delay, f"f[{i}]", f"the delay of {a}", extra={t, *self._ys})
                else:
                    delay = self._params_only(delay, f"f[{i}]", f"the delay of {a}")
                if delay == 0:
                    rep[a] = self._ys[comp]
                    continue
                key = (comp, delay)
                for j, lk in enumerate(lookups):
                    if (lk.comp, lk.delay) == key:
                        rep[a] = zsyms[j]
                        break
                else:
                    lookups.append(_Lookup(comp, delay, variable))
                    zsyms.append(sp.Symbol(f"z_{len(zsyms)}", real=True))
                    rep[a] = zsyms[-1]
            e = e.xreplace(rep)
            e = self._params_only(e, f"f[{i}]", "the expression", extra={t, *self._ys, *zsyms})
            clean.append(e)
        self.exprs = clean
        self.lookups = lookups
        self._zs = zsyms
        self.variable_delays = any(lk.variable for lk in lookups)
        self.min_delay = self.max_delay = None
        if self.variable_delays:
            self.min_delay = opt.real("min_delay", min_delay, lo=0.0, lo_open=True,
                                      allowed="a finite number > 0 (time units)")
            self.max_delay = opt.real("max_delay", max_delay, lo=self.min_delay,
                                      allowed=f"a finite number >= min_delay = {self.min_delay:g} (time units)")
        # history
        if not hasattr(history, "__len__") or isinstance(history, (str, sp.Basic)) or len(history) != n:
            raise InputError("history", history, f"{n} entries (numbers or SymPy expressions of t), one per component")
        hist = []
        for i, h in enumerate(history):
            if isinstance(h, (int, float, np.integer, np.floating)) and not isinstance(h, (bool, np.bool_)):
                hist.append(sp.Float(opt.real(f"history[{i}]", h)))
                continue
            try:
                he = self._rename_time(sp.sympify(h))
            except (sp.SympifyError, TypeError):
                raise InputError(f"history[{i}]", h, "a number or a SymPy expression of t") from None
            if he.atoms(sp.core.function.AppliedUndef):
                raise InputError(f"history[{i}]", str(h),
                                 "a number or an expression of t and params (not of the states)")
            hist.append(self._params_only(he, f"history[{i}]", "the expression", extra={t}))
        self.history_exprs = hist
        self.constant_history = all(t not in h.free_symbols for h in hist)
        self._check_values()
        self._gen = None

    # -- parsing helpers ------------------------------------------------------------------------------
    def _rename_time(self, e):
        ts = {s: t for s in e.free_symbols if isinstance(s, sp.Symbol) and s.name == "t" and s != t
              and s not in self._pmap}
        return e.xreplace(ts) if ts else e

    def _index(self, a, field, term):
        try:
            i = int(a)
        except (TypeError, ValueError):
            i = None
        if i is None or i != a or not 0 <= i < self.n:
            raise InputError(field, term, f"a state index, an integer in [0, {self.n})")
        return i

    def _params_only(self, e, field, what, extra=frozenset()):
        """``e`` with the user's parameter symbols renamed; InputError for any other unknown symbol."""
        unknown = [s for s in e.free_symbols if s not in self._pmap and s not in extra]
        if unknown:
            names = ", ".join(sorted(str(s) for s in unknown))
            raise InputError(field, str(e), f"{what} uses unknown symbol(s) {names}: give their values in params "
                             "(only t, y(i), y(i, t - delay) and params' symbols are known)")
        return e.xreplace(self._pmap)

    def _check_values(self):
        """The numeric delays and the printability of every expression (InputError otherwise)."""
        from sympy.printing.pycode import PythonCodePrinter
        pr = PythonCodePrinter(dict(fully_qualified_modules=True, strict=True))
        for lk in self.lookups:
            if lk.variable:
                try:
                    pr.doprint(lk.delay)
                except Exception as exc:  # noqa: BLE001
                    raise InputError("f", str(lk.delay), f"delays with a Python math equivalent ({exc})") from None
        for i, e in enumerate(self.exprs + self.history_exprs):
            field = f"f[{i}]" if i < self.n else f"history[{i - self.n}]"
            try:
                pr.doprint(e)
            except Exception as exc:  # noqa: BLE001  (SymPy's printer: a function without a Python form)
                raise InputError(field, str(e), f"functions with a Python math equivalent ({exc})") from None
        self.delay_values()

    # -- values ---------------------------------------------------------------------------------------
    def _subs(self):
        return {p: sp.Float(v) for p, v in zip(self._p, self.param_values)}

    def delay_values(self) -> np.ndarray:
        """The delays (time units), one per distinct delayed term ``(component, delay)``, at the parameters'
        values.

        Returns
        -------
        numpy.ndarray
            Delays, each finite and > 0 (InputError otherwise: the term names the delay).
        """
        sub = self._subs()
        out = []
        for lk in self.lookups:
            if lk.variable:  # the constant part: the lower bound (the rest is added per evaluation)
                out.append(self.min_delay)
                continue
            v = lk.delay.xreplace(sub)
            try:
                d = float(v)
            except TypeError:
                raise InputError("f", f"y({lk.comp}, t - ({lk.delay}))", "a delay that evaluates to a number") from None
            if not (math.isfinite(d) and d >= 0):
                raise InputError("f", f"y({lk.comp}, t - {d:g})",
                                 "delays that are finite and >= 0 (y(i, t - d), d >= 0)")
            out.append(d)
        return np.array(out, dtype=float)

    def with_params(self, values=None, *, t0=None) -> "SympyDDE":
        """A copy with some parameters' values (and the initial time) changed; the compiled kernel is reused.

        Parameters
        ----------
        values : dict, optional
            New values by the parameter symbol (or its name).
        t0 : float, optional
            New initial time (time units).

        Returns
        -------
        SympyDDE
        """
        import copy
        from . import options as opt
        new = copy.copy(self)
        new.param_values = list(self.param_values)
        names = [s.name for s in self.param_symbols]
        for k, v in (values or {}).items():
            k = k.name if isinstance(k, sp.Symbol) else k
            if k not in names:
                raise InputError("params", k, f"one of the DDE's parameters {names}")
            new.param_values[names.index(k)] = opt.real(f"params[{k}]", v)
        if t0 is not None:
            new.t0 = opt.real("t0", t0)
        new.delay_values()
        return new

    def _history_fn(self):
        """Numeric ``history(t_array, comps)`` (None for a constant past) and the state at ``t0``."""
        sub = self._subs()
        hs = [h.xreplace(sub) for h in self.history_exprs]
        y0 = np.array([float(h.xreplace({t: self.t0})) for h in hs])
        if self.constant_history:
            return None, y0
        fns = [sp.lambdify([t], h, "numpy") for h in hs]

        def history(tt, comps):
            tt = np.asarray(tt, dtype=float)
            comps = np.asarray(comps)
            out = np.empty(np.broadcast_shapes(tt.shape, comps.shape))
            tb, cb = np.broadcast_arrays(tt, comps)
            for c in np.unique(cb):
                sel = cb == c
                out[sel] = np.broadcast_to(fns[int(c)](tb[sel]), tb[sel].shape)
            return out
        return history, y0

    # -- the NumPy reference ----------------------------------------------------------------------------
    def problem(self, t0=None):
        """The DDE as a :class:`~ecocc.dde.problem.DDEProblem` (the NumPy reference solver's input).

        Parameters
        ----------
        t0 : float, optional
            Start time (time units); default ``self.t0``.  The compiled path builds it with ``t0 = 0`` and
            the time shifted.

        Returns
        -------
        DDEProblem
        """
        from .problem import DDEProblem, Lookup
        shift = 0.0 if t0 is None else self.t0 - float(t0)  # problem time + shift = the user's time
        fn = sp.lambdify([t, self._ys, self._zs, self._p], self.exprs, "math")
        par = list(self.param_values)
        history, y0 = self._history_fn()
        hist = None if history is None else (lambda tt, comps: history(np.asarray(tt) + shift, comps))
        n = self.n

        def rhs(tt, yv, Z, lo, hi):
            zs = Z[0] if Z else ()
            return np.array(fn(tt + shift, list(yv), list(zs), par), dtype=float).reshape(n)

        lk = [Lookup([lk.comp for lk in self.lookups], self.delay_values())] if self.lookups else []
        state_delays = None
        if self.variable_delays:
            var = [j for j, lk in enumerate(self.lookups) if lk.variable]
            dfn = sp.lambdify([t, self._ys, self._p], [self.lookups[j].delay for j in var], "math")
            dmin = self.min_delay
            nz = len(self.lookups)

            def state_delays(tt, yv):
                extra = np.zeros(nz)
                extra[var] = np.asarray(dfn(tt + shift, list(yv), par), dtype=float) - dmin  # < 0: read as 0
                return [extra]
        return DDEProblem(n=n, rhs=rhs, y0=y0, t0=self.t0 if t0 is None else float(t0), lookups=lk, history=hist,
                          breakpoint_depth=self.breakpoint_depth, names=self.names, state_delays=state_delays,
                          state_delay_max_s=(self.max_delay - self.min_delay) if self.variable_delays else 0.0)

    # -- the compiled kernel ------------------------------------------------------------------------------
    def generated(self, fp=False):
        """The generated module's description (see :mod:`ecocc.dde.codegen`): source, name, history columns.

        Parameters
        ----------
        fp : bool
            The right-hand side alone for the shared integrator (``kernel="shared"``), else the whole
            kernel (``kernel="inline"``).

        Returns
        -------
        object
            With ``source``, ``name``, ``hsrc``.
        """
        if self._gen is None:
            self._gen = {}
        if fp not in self._gen:
            self._gen[fp] = _Generated(self, fp)
        return self._gen[fp]

    def solve(self, t_end, *, t_eval=None, rtol=1e-6, atol=1e-6, engine="auto", max_step=math.inf,
              first_step=None, max_steps=10_000_000, kernel="auto", max_history_gib=None) -> DDESolution:
        """Integrate from ``t0`` to ``t_end``.

        Parameters
        ----------
        t_end : float
            End time (time units, > t0).
        t_eval : array, optional
            Output times (time units, in ``[t0, t_end]``, increasing); default 1001 points from ``t0`` to
            ``t_end`` (the compiled kernel outputs at given times only).
        rtol, atol : float
            Tolerances per component: ``|err_i| <= atol + rtol |y_i|`` (atol may be one per component).
        engine : {"auto", "numba", "numpy"}
            ``"auto"`` (``$ECOCC_ENGINE`` overrides what it means, as everywhere in ecocc): compiled if numba
            is installed, else the NumPy solver.
        max_step, first_step, max_steps
            As :func:`ecocc.dde.adaptive.solve_dde`.
        max_history_gib : float or None
            Memory bound of the stored history, GiB (> 0, ``inf`` for none; None: the default
            :data:`ecocc.dde.options.DEFAULT_MAX_HISTORY_GIB`): a run whose past would need more stops with
            status ``failed`` and a message saying why (as :func:`ecocc.dde.adaptive.solve_dde`).
        kernel : {"auto", "shared", "inline"}
            How the compiled engine gets its kernel.  ``"shared"``: one integrator for every user DDE,
            compiled once per machine (numba's cache), calling this DDE's right-hand side, compiled on its
            own (about a second), through a function pointer.  ``"inline"``: the integrator compiled with
            this right-hand side inlined (:func:`ecocc.dde.codegen.kernel`: a ``numba.pycc`` module in the
            cache, which later processes load without importing numba; its first build takes tens of
            seconds).  ``"auto"``: the inline module if it is already built, else shared.

        Returns
        -------
        DDESolution
            Samples ``t`` (time units) and ``y`` (one row per output time), status and counters;
            ``settings["engine"]`` says which engine ran.
        """
        from . import options as opt
        from .engine import ENGINES, HAVE_NUMBA, default_engine
        if engine not in ENGINES:
            raise InputError("engine", engine, f"one of {ENGINES}")
        if engine == "auto":
            engine = default_engine()
        if kernel not in ("auto", "shared", "inline"):
            raise InputError("kernel", kernel, "one of ('auto', 'shared', 'inline')")
        max_history_gib = opt.max_history_gib(opt.DEFAULT_MAX_HISTORY_GIB if max_history_gib is None
                                              else max_history_gib)
        t_end = opt.t_end(t_end, self.t0)
        if t_eval is None:
            t_eval = np.linspace(self.t0, t_end, 1001)
        t_eval = opt.t_eval(t_eval, self.t0, t_end)
        if engine == "auto":
            engine = "numba" if HAVE_NUMBA else "numpy"
            if not HAVE_NUMBA:
                from .engine import warn_no_numba
                warn_no_numba()
        if engine == "numba" and not HAVE_NUMBA:
            raise InputError("engine", engine, "'numpy' or 'auto': numba is not installed (pip install 'ecocc[fast]')")
        if engine == "numpy":
            from .adaptive import solve_dde
            sol = solve_dde(self.problem(), t_end, t_eval=t_eval, rtol=rtol, atol=atol, max_step=max_step,
                            first_step=first_step, max_steps=max_steps, max_history_gib=max_history_gib)
            sol.settings["engine"] = "numpy"
            return sol
        return self._solve_compiled(t_end, t_eval, rtol=opt.rtol(rtol), atol=opt.atol(atol, self.n),
                                    max_step=opt.max_step(max_step), first_step=opt.first_step(first_step),
                                    max_steps=opt.integer("max_steps", max_steps, lo=1), kernel=kernel,
                                    max_history_gib=max_history_gib)

    def _solve_compiled(self, t_end, t_eval, *, rtol, atol, max_step, first_step, max_steps, kernel, max_history_gib):
        import time as _time

        from . import codegen
        from .engine import ADAPTIVE_ARGS, _adaptive_status, _method_args
        wall0 = _time.perf_counter()
        prob = self.problem(t0=0.0)
        delays = prob.positive_delays()
        cap = min(float(delays.min()) if delays.size else math.inf, max_step)
        if (t_end - self.t0) / cap > max_steps:
            raise InputError("max_steps", max_steps, f"at least {(t_end - self.t0) / cap:.3g}: the smallest delay "
                             f"or max_step ({cap:.3g}) caps every step")
        shim = _Shim(prob)
        kw = _method_args(shim, t_end - self.t0, rtol=rtol, atol=atol, t_eval=np.asarray(t_eval) - self.t0,
                          max_step=max_step, first_step=first_step, max_steps=max_steps, max_history_gib=max_history_gib)
        if kernel == "auto":
            kernel = "inline" if _inline_ready(self.generated(), kw) else "shared"
        gen = self.generated(fp=kernel == "shared")
        nz = len(self.lookups)
        D = (np.array(self.param_values + [0.0], dtype=float), np.array(list(self.delay_values()) + [0.0]),
             float(self.t0))
        Wk = (np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(max(nz, 1), dtype=np.int64), np.zeros(1, dtype=np.int64))
        kw.update(hsrc=gen.hsrc, iq=int(self.n), L=0, buf=np.zeros(1), D=D, Wk=Wk)
        if self.variable_delays:  # keep the past as the NumPy solver does (1.5 (dmax + extra max))
            kw["keep_s"] = 1.5 * (float(delays.max()) + self.max_delay - self.min_delay) + 1e-9
        if kernel == "shared":
            integ, how = _shared_kernel()
            rhs = codegen.load(gen)._model_rhs
            info = dict(how, kernel_variant="shared")
            code = integ(rhs, *(kw[k] for k in ADAPTIVE_ARGS))
        else:
            fn, info = codegen.kernel(gen, kw)
            info = dict(info, kernel_variant="inline")
            code = fn(*(kw[k] for k in ADAPTIVE_ARGS))
        counters, reals = kw["counters"], kw["reals"]
        n_steps, n_rej, nfev, n_clamp, n_inacc, n_out = (int(v) for v in counters)
        status, message = _adaptive_status(code, counters, reals, max_steps, kw["max_hist_bytes"], kw["keep_s"],
                                           unit="", dmin=kw["dmin"], t0=self.t0)
        t_reached = float(reals[2]) + self.t0
        return DDESolution(np.asarray(t_eval)[:n_out].copy(), kw["out_y"][:n_out], status, message, t_reached,
                           n_steps, n_rej, nfev, n_clamp, n_inacc, float(reals[0]) if n_steps else math.nan,
                           float(reals[1]) if n_steps else math.nan, _time.perf_counter() - wall0, "RK45",
                           dict(rtol=rtol, atol=np.asarray(atol).tolist(), max_step=max_step,
                                n_breakpoints=int(kw["bps"].size), delay_min_s=kw["dmin"], engine="numba",
                                kernel=gen.name, **info))


def _inline_ready(gen, kw) -> bool:
    """Whether the inline kernel of ``gen`` is loaded in this process or built (``numba.pycc``) in the cache."""
    import sys as _sys

    from . import aot, codegen
    if gen.name in codegen._kernels or (gen.name, "adaptive") in codegen._kernels:
        return True
    if aot.aot_mode() == "0":
        return False
    name = "ecocc_aot_" + hashlib.sha256(
        f"{gen.name}|{aot._cpu_id()}|{aot._numba_version()}|{_sys.version}".encode()).hexdigest()[:16]
    return aot._module_path(name) is not None


class _Shim:
    """What :func:`ecocc.dde.engine._method_args` reads of a system: ``n`` and ``problem()``."""

    def __init__(self, prob):
        self.n = prob.n
        self._prob = prob

    def problem(self):
        return self._prob


def _fp_integrator():
    """The shared integrator compiled by numba's JIT (:func:`ecocc.dde.userint.source`: the generic integrator,
    right-hand side as a first-class function argument, explicit signature), once per machine into numba's
    cache, for every user DDE; each DDE then compiles only its own small right-hand side."""
    from . import codegen, userint
    if "fp" in _FP:
        return _FP["fp"]

    class G:
        source = userint.source()
        name = userint.name()
    _FP["fp"] = codegen.load(G)
    return _FP["fp"]


def _shared_kernel():
    """The shared integrator's kernel: the install-time module if there is one for this source, CPU and numba
    (:func:`ecocc.dde.userint.installed`), else numba's JIT (cached on disk).

    Returns
    -------
    tuple
        ``(kernel, how)``: ``how`` is ``"installed"`` or ``"jit"``, with the reason the installed one is not used.
    """
    if "kernel" not in _FP:
        from . import userint
        fn, where = userint.installed()
        if fn is not None:
            _FP["kernel"] = (fn, dict(compiled="installed", integrator_module=str(where)))
        else:
            _FP["kernel"] = (_fp_integrator().adaptive_kernel, dict(compiled="jit", integrator_aot=where))
    return _FP["kernel"]


_FP: dict = {}


class _Generated:
    """The generated module of a :class:`SympyDDE` (the interface :func:`ecocc.dde.codegen.kernel` reads:
    ``name``, ``model_name``, ``source``) and its history columns ``hsrc``.  ``fp``: the right-hand side
    alone, compiled with the explicit signature ``RHS_SIG`` for the function-pointer integrator
    (:func:`_fp_integrator`); else the integrator's source with the right-hand side inlined into it."""

    def __init__(self, dde: SympyDDE, fp: bool = False):
        from .codegen import GEN_VERSION, _HERE, _function, _seg_code
        n = dde.n
        lks = dde.lookups
        hcomps = sorted({lk.comp for lk in lks})
        col = {c: k for k, c in enumerate(hcomps)}
        self.hsrc = np.array(hcomps, dtype=np.int64)
        pargs = [s.name for s in dde._p]
        args = ["t"] + [s.name for s in dde._ys] + [s.name for s in dde._zs] + pargs
        src = ["import math  # noqa", "from numba import njit  # noqa"]
        # the laws written out in the right-hand side's body (not a function of the scalars: CPython compiles a
        # call with more than about 30 arguments as f(*args), which numba's inliner refuses)
        law = _function("_law_f", args, dde.exprs, True)
        if not (law[2].startswith("@njit") and law[3].startswith("def _law_f(") and law[-1].startswith("    return (")):
            raise RuntimeError("ecocc.dde.codegen._function: its output's layout changed")
        law = law[4:-1] + ["    d = " + law[-1][len("    return "):]]
        if not dde.constant_history:
            for i, h in enumerate(dde.history_exprs):
                src += _function(f"_hist_{i}", ["t"] + pargs, [h], False)
        deco = '@njit(RHS_SIG, cache=True)' if fp else '@njit(cache=True, inline="always")'
        r = ["", "", deco,
             "def _model_rhs(s, nud, y, sat_lo, sat_hi, out, D, Wk, t0, y0, HT, HY, HFA, HFB, m, n_pass, t_cur, h_cur, QV,",
             "               yc):",
             '    """The user\'s DDE (ecocc.dde.user), generated (the overlap arguments n_pass .. yc unused: a user DDE'
             ' runs without overlap)."""',
             "    par, DL, T0 = D",
             "    ks = Wk[3]",
             "    t = s + T0",
             "    md, k, w0, w1, w2, w3 = 0, 0, 0.0, 0.0, 0.0, 0.0"]
        r += [f"    {p} = par[{k}]" for k, p in enumerate(pargs)]
        r += [f"    {s.name} = y[{i}]" for i, s in enumerate(dde._ys)]
        from sympy.printing.pycode import PythonCodePrinter
        pr = PythonCodePrinter(dict(fully_qualified_modules=True))
        for j, lk in enumerate(lks):
            c = lk.comp
            # a variable delay below its declared lower bound is read as the bound (as the NumPy solver)
            r += _seg_code(4, f"max(float({pr.doprint(lk.delay)}), DL[{j}])" if lk.variable else f"DL[{j}]",
                           f"ks[{j}]", cur=False)
            past = (f"y0[{c}]" if dde.constant_history else f"_hist_{c}(tau + T0{''.join(', ' + p for p in pargs)})")
            cc = col[c]
            r += [f"    if md == 3:",
                  f"        z_{j} = w0 * HY[k, {cc}] + w1 * HFA[k, {cc}] + w2 * HY[k + 1, {cc}] + w3 * HFB[k, {cc}]",
                  "    elif md == 0:",
                  f"        z_{j} = y[{c}]",
                  "    elif md == 1:",
                  f"        z_{j} = {past}",
                  "    else:",
                  f"        z_{j} = HY[0, {cc}]"]
        r += law
        r += [f"    out[{i}] = d[{i}]" for i in range(n)]
        if not fp:  # the integrator's overlap passes call _model_rhs_cur: never here (no overlap for a user DDE)
            r += ["", "", "_model_rhs_cur = _model_rhs"]
        template = TYPES_SRC if fp else (_HERE / "integrator.py").read_text()
        stamp = hashlib.sha256(b"".join((_HERE / f).read_bytes() for f in ("kernels.py", "history.py"))).hexdigest()
        header = ['"""Generated by ecocc.dde.user from a user\'s DDE; do not edit."""',
                  f"# generator {GEN_VERSION}; helpers {stamp[:16]}",
                  "# parameters (par): " + ", ".join(s.name for s in dde.param_symbols)]
        self.source = "\n".join(header) + "\n" + template + "\n\n# --- the DDE ---\n" + "\n".join(src + r) + "\n"
        self.digest = hashlib.sha256(self.source.encode()).hexdigest()[:20]
        self.name = f"ecocc_gen_{self.digest}"
        self.model_name = "user DDE"
        self.fp = fp


def sympy_dde(f, *, history, params=None, t0=0.0, states=None, names=None, breakpoint_depth=1, min_delay=None,
              max_delay=None) -> SympyDDE:
    """A user's DDE from SymPy expressions, for the compiled engine and the NumPy reference (see
    :class:`SympyDDE`, whose parameters these are).

    Parameters
    ----------
    f : sequence of SymPy expressions
        Derivatives, one per component, in :func:`y` and :data:`t` (jitcdde's notation).
    history : sequence
        The past before ``t0``: numbers or SymPy expressions of ``t``, one per component.
    params : dict, optional
        ``{symbol: value}`` for every other symbol.
    t0 : float, optional
        Initial time (default 0).
    states : sequence of SymPy functions, optional
        Named states instead of ``y(i)``.
    names : sequence of str, optional
        Component names.
    breakpoint_depth : int, optional
        Propagation depth of ``t0`` through the delays (default 1).
    min_delay, max_delay : float, optional
        Bounds (time units) of the state- or time-dependent delays; required if there are any.

    Returns
    -------
    SympyDDE
        Call :meth:`SympyDDE.solve`.
    """
    return SympyDDE(f, history=history, params=params, t0=t0, states=states, names=names,
                    breakpoint_depth=breakpoint_depth, min_delay=min_delay, max_delay=max_delay)
