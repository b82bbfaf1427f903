"""The dimension-check helper of the proofs/ scripts (proofs/_steps.py).

Every step of every script carries a dimension check; which steps' units do not match is asserted where
each script is already run: tests/test_proofs_huang.py, tests/test_claims_symbiosis.py,
tests/test_claims_iguchi.py.
"""
import sys
from pathlib import Path

import pytest
import sympy as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "proofs"))
from _steps import DimensionError, check_dims, dims, pkt, sec, unit_of  # noqa: E402


# --- the helper -------------------------------------------------------------------------------------------

def test_unit_of_products_sums_and_functions():
    a, b, x, T, q, t = sp.symbols("a b x T q t", positive=True)
    U = {a: pkt / sec ** 2, b: 1 / sec, x: pkt / sec, T: sec, q: pkt, t: sec}
    assert unit_of(a + b * x, U) == pkt / sec ** 2          # PE-TCP eq. (4): both terms packets/s^2
    assert unit_of(sp.log(x * T / q) / b, U) == sec          # a logarithm of a pure number, over a rate
    assert unit_of(sp.Integral(x, (t, 0, T)), U) == pkt      # packets/s over seconds
    assert unit_of(sp.Derivative(q, t), U) == pkt / sec
    assert unit_of(sp.log(x) - sp.log(q / T), U) == 1        # ln a - ln b with a/b dimensionless
    with pytest.raises(DimensionError):
        unit_of(x + q, U)                                    # packets/s + packets
    with pytest.raises(DimensionError):
        unit_of(sp.exp(t), U)                                # exp of seconds
    with pytest.raises(DimensionError):
        unit_of(x + sp.Symbol("z"), U)                       # an undeclared symbol is refused, not assumed


def test_dims_text_and_every_step_needs_one():
    x, q, T = sp.symbols("x q T", positive=True)
    U = {x: pkt / sec, q: pkt, T: sec}
    ok, txt = dims(q / T, x, U)
    assert ok and txt == "[packets/s] = [packets/s]"
    ok, txt = dims(q, x, U)
    assert not ok and "!=" in txt
    with pytest.raises(ValueError, match="no dimension check"):
        check_dims("a step", None)
    assert check_dims("a step", "pure number")[0]
