"""Helpers of the proofs/ scripts: print a step and its check; dimension checks.

Units: positive symbols ``pkt`` (packets) and ``sec`` (seconds) stand in for the
units.  :func:`unit_of` computes the unit of an expression from a table
``{symbol: unit}`` (``1`` for a dimensionless symbol): products multiply
units, a sum needs every term in one unit, the argument of ``exp``/``log`` and
of any other function must be dimensionless.  :func:`dims` compares the two
sides of a step and says what each side's unit is; every step of every script
carries one (``step(..., dims=...)``), so a step whose sides do not match in
units is pinpointed (``[DIMENSIONS DO NOT MATCH]``) whatever its algebra.

A step's ``dims`` is ``(lhs, rhs, units)``, a list of such triples (several
equalities in one step), or a string saying why the step has no physical
quantity (``"pure number"``: an inequality between numbers computed from
runs, for instance, whose units are checked where the numbers are made).
"""
import sympy as sp
from sympy.core.function import AppliedUndef

pkt, sec = sp.symbols("pkt sec", positive=True)
PACKETS, SECONDS, RATE, PER_SECOND = pkt, sec, pkt / sec, 1 / sec
RESULTS = []
DIMS = []          # (step name, ok, text) of every step's dimension check


class DimensionError(ValueError):
    """An expression mixes units (a sum of unlike terms, or a unit inside exp/log)."""


def _same(u1, u2):
    return sp.simplify(sp.powsimp(u1 / u2, force=True)) == 1


def unit_of(expr, units):
    """The unit of ``expr`` (a SymPy expression in ``pkt`` and ``sec``; 1 if dimensionless).

    Parameters
    ----------
    expr : sympy expression
    units : dict
        ``{symbol: unit}`` for every free symbol of ``expr`` (``1`` for dimensionless ones).

    Returns
    -------
    sympy expression
        A monomial in ``pkt`` and ``sec``.

    Raises
    ------
    DimensionError
        A sum of terms in different units, a dimensioned exponent or function argument, or a symbol that
        ``units`` does not list.
    """
    expr = sp.sympify(expr)
    if expr.is_Number or expr in (sp.pi, sp.E, sp.I, sp.oo, -sp.oo, sp.zoo):
        return sp.Integer(1)
    if expr.is_Symbol:
        if expr in (pkt, sec):
            return expr
        if expr not in units:
            raise DimensionError(f"no unit given for the symbol {expr}")
        return sp.sympify(units[expr])
    if isinstance(expr, AppliedUndef):  # x(t): the unit given for x (the function or a symbol of its name)
        for key in (expr, expr.func, sp.Symbol(expr.func.__name__)):
            if key in units:
                return sp.sympify(units[key])
        raise DimensionError(f"no unit given for the function {expr.func.__name__}")
    if expr.is_Add and expr.has(sp.log):  # ln a - ln b is fine when a/b is dimensionless: combine first
        comb = sp.logcombine(expr, force=True)
        if comb != expr:
            try:
                return unit_of(comb, units)
            except DimensionError:
                pass
    if expr.is_Add or isinstance(expr, (sp.Min, sp.Max)):
        us = [unit_of(a, units) for a in expr.args]
        for u in us[1:]:
            if not _same(u, us[0]):
                raise DimensionError(f"{expr} adds {us[0]} to {u}")
        return us[0]
    if expr.is_Mul:
        out = sp.Integer(1)
        for a in expr.args:
            out *= unit_of(a, units)
        return sp.powsimp(out, force=True)
    if expr.is_Pow:
        ub = unit_of(expr.base, units)
        ue = unit_of(expr.exp, units)
        if not _same(ue, 1):
            raise DimensionError(f"exponent of {expr} has unit {ue}")
        if _same(ub, 1):
            return sp.Integer(1)
        if not expr.exp.is_number:
            raise DimensionError(f"{expr}: a dimensioned base {ub} to a symbolic power")
        return sp.powsimp(ub ** expr.exp, force=True)
    if isinstance(expr, sp.Derivative):
        u = unit_of(expr.expr, units)
        for v, n in expr.variable_count:
            u = u / unit_of(v, units) ** n
        return sp.powsimp(u, force=True)
    if isinstance(expr, sp.Subs):  # f(x)|_{x = x0}: x0 must carry x's unit
        for v, pt in zip(expr.variables, expr.point):
            uv, up = unit_of(v, units), unit_of(pt, units)
            if not _same(uv, up):
                raise DimensionError(f"{v} (in {uv}) evaluated at {pt} (in {up})")
        return unit_of(expr.expr, units)
    if isinstance(expr, sp.Integral):
        u = unit_of(expr.function, units)
        for lim in expr.limits:
            u = u * unit_of(lim[0], units)
        return sp.powsimp(u, force=True)
    if isinstance(expr, (sp.Eq, sp.Rel)):
        ul, ur = unit_of(expr.lhs, units), unit_of(expr.rhs, units)
        if not _same(ul, ur):
            raise DimensionError(f"{expr}: {ul} vs {ur}")
        return ul
    if isinstance(expr, sp.Abs):
        return unit_of(expr.args[0], units)
    if isinstance(expr, sp.Function) or expr.is_Function:
        for a in expr.args:
            ua = unit_of(a, units)
            if not _same(ua, 1):
                raise DimensionError(f"{expr.func.__name__} of a quantity in {ua}")
        return sp.Integer(1)
    raise DimensionError(f"cannot take the unit of {expr!r}")


def _fmt(u):
    u = sp.powsimp(sp.sympify(u), force=True)
    if u == 1:
        return "1"
    return str(u).replace("pkt", "packets").replace("sec", "s")


def dims(lhs, rhs, units):
    """Compare the units of the two sides of a step.

    Parameters
    ----------
    lhs, rhs : sympy expressions
    units : dict ``{symbol: unit}``

    Returns
    -------
    (bool, str)
        Whether both sides have one unit and the same, and a text ``[lhs unit] = [rhs unit]`` (or where a
        side mixes units).
    """
    try:
        ul = unit_of(lhs, units)
    except DimensionError as e:
        return False, f"left side mixes units: {e}"
    try:
        ur = unit_of(rhs, units)
    except DimensionError as e:
        return False, f"right side mixes units: {e}"
    ok = _same(ul, ur)
    return ok, f"[{_fmt(ul)}] {'=' if ok else '!='} [{_fmt(ur)}]"


def check_dims(name, spec):
    """Run a step's dimension check ``spec`` (see the module docstring); returns ``(ok, text)``."""
    if spec is None:
        raise ValueError(f"step {name!r}: no dimension check (every step carries one: dims=(lhs, rhs, units) "
                         "or a string saying why it has no physical quantity)")
    if isinstance(spec, str):
        return True, f"no units: {spec}"
    triples = [spec] if isinstance(spec, tuple) else list(spec)
    oks, texts = [], []
    for lhs, rhs, units in triples:
        ok, txt = dims(lhs, rhs, units)
        oks.append(ok)
        texts.append(txt)
    return all(oks), "; ".join(texts)


def report_dims(name, spec, printer=print):
    """Check and print a step's dimensions; record them in :data:`DIMS`."""
    ok, txt = check_dims(name, spec)
    DIMS.append((name, ok, txt))
    printer(f"    dims {txt}" if ok else f"[DIMENSIONS DO NOT MATCH] {name}: {txt}")
    return ok


def step(name, ok, detail="", dims=None):
    """Print one step with FOLLOWS / DOES NOT FOLLOW and its dimension check; record both."""
    ok = bool(ok)
    RESULTS.append((name, ok))
    print(f"[{'FOLLOWS' if ok else 'DOES NOT FOLLOW'}] {name}" + (f": {detail}" if detail else ""))
    report_dims(name, dims)
    return ok


def same_dims(a, b, units):
    """True if expressions ``a`` and ``b`` have the same units under ``units`` (symbol -> unit expression)."""
    return dims(a, b, units)[0]


def terms_same_dims(expr, ref, units):
    """Every additive term of ``expr`` has the units of ``ref``."""
    return all(same_dims(t, ref, units) for t in sp.Add.make_args(sp.expand(expr)))


def summary():
    bad = [n for n, ok in RESULTS if not ok]
    print(f"\n{len(RESULTS)} steps checked; {len(bad)} do not follow" + (": " + "; ".join(bad) if bad else ""))
    mism = [n for n, ok, _ in DIMS if not ok]
    print(f"{len(DIMS)} dimension checks; {len(mism)} do not match" + (": " + "; ".join(mism) if mism else ""))
    return bad


def equal(a, b, points):
    """Symbolic equality, or (if SymPy cannot simplify the difference to 0) equality to 1e-12 relative at
    each substitution in ``points`` (a list of dicts of values inside the claim's assumptions)."""
    if sp.simplify(a - b) == 0:
        return True
    for p in points:
        va, vb = complex(sp.N(a.subs(p), 30)), complex(sp.N(b.subs(p), 30))
        if abs(va - vb) > 1e-12 * max(1.0, abs(vb)):
            return False
    return True
