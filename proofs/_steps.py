"""Helpers of the proofs/ scripts: print a step and its check; dimension checks.

Units: a positive symbol ``pkt`` (packets) and ``sec`` (seconds) stand in for
the units; a term's dimension is what remains when its symbols are replaced by
unit-bearing values.  Two terms are dimensionally equal when their ratio
simplifies to a pure number.
"""
import sympy as sp

pkt, sec = sp.symbols("pkt sec", positive=True)
RESULTS = []


def step(name, ok, detail=""):
    """Print one step with FOLLOWS / DOES NOT FOLLOW and record it."""
    ok = bool(ok)
    RESULTS.append((name, ok))
    print(f"[{'FOLLOWS' if ok else 'DOES NOT FOLLOW'}] {name}" + (f": {detail}" if detail else ""))
    return ok


def same_dims(a, b, units):
    """True if expressions ``a`` and ``b`` have the same units under ``units`` (symbol -> unit expression)."""
    r = sp.simplify(sp.powsimp((a.subs(units) / b.subs(units)), force=True))
    return not (r.has(pkt) or r.has(sec))


def terms_same_dims(expr, ref, units):
    """Every additive term of ``expr`` has the units of ``ref``."""
    return all(same_dims(t, ref, units) for t in sp.Add.make_args(sp.expand(expr)))


def summary():
    bad = [n for n, ok in RESULTS if not ok]
    print(f"\n{len(RESULTS)} steps checked; {len(bad)} do not follow" + (": " + "; ".join(bad) if bad else ""))
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
