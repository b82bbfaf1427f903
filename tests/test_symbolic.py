"""Symbolic linearization built from the models' own laws (issue #3)."""
import numpy as np
import pytest
import sympy

from ecocc.symbolic import symmetric_optimum, synchronous_loop


@pytest.fixture(scope="module")
def aecp():
    return synchronous_loop("aecp")


def _sym(loop, name):
    return loop.param_symbols[name]


def test_aecp_open_loop_is_paper_eq38(aecp):
    a, b, T = _sym(aecp, "alpha_per_s"), _sym(aecp, "beta_per_s"), _sym(aecp, "T_s")
    s = aecp.s
    paper = a * b * (s + 1 / T) / (s ** 2 * (s + a))          # eq. (38) of 004
    assert sympy.simplify(aecp.L - paper) == 0               # exact symbolic identity, no tolerance
    assert aecp.equilibrium[aecp.states[0]] == aecp.C / aecp.N  # eq. (16): x* = C/N
    assert aecp.equilibrium[aecp.states[2]] == _sym(aecp, "q0_pkts")


def test_aecp_symmetric_optimum_from_model(aecp):
    a, b, T = _sym(aecp, "alpha_per_s"), _sym(aecp, "beta_per_s"), _sym(aecp, "T_s")
    so = symmetric_optimum(aecp, values={a: 2})
    assert so.status == "ok"
    assert sympy.simplify(so.solution[b] - a / 2) == 0       # eq. (43): beta = alpha/2
    assert sympy.simplify(so.solution[T] - 4 / a) == 0       # eq. (43): T = 4/alpha
    T0 = sympy.Symbol("T_0", positive=True)
    assert sympy.simplify(so.conditions["K0/Ti"] - 1 / (8 * T0 ** 2)) == 0   # Ti = 8 K0 T0^2 derived, eq. (41)
    # 1e-9: exact expressions evaluated in floating point
    assert float(so.phase_margin_deg) == pytest.approx(np.degrees(np.arctan(0.75)), abs=1e-9)
    assert float(so.crossover_rad_s.subs(a, 2)) == pytest.approx(1.0, abs=1e-12)
    # delay-free closed loop s^3 + 2 s^2 + s + 1/2: poles -1, -1/2 +- j sqrt(3)/2 (np.roots accuracy ~1e-12)
    expected = np.sort_complex(np.array([-1, -0.5 + 0.5j * np.sqrt(3), -0.5 - 0.5j * np.sqrt(3)]))
    assert np.allclose(np.sort_complex(so.closed_loop_poles), expected, atol=1e-9)


@pytest.mark.parametrize("model", ["aecp", "petcp", "symbiosis"])
def test_jacobians_match_finite_differences(model):
    loop = synchronous_loop(model)
    vals = loop.values()
    eqn = {z.name: float(v.subs(vals)) for z, v in loop.equilibrium.items()}
    A0 = np.array(loop.A0.subs(vals).evalf(), float)
    A1 = np.array(loop.A1.subs(vals).evalf(), float)
    f0 = loop.rhs_numeric(eqn, eqn)
    # equilibrium of the numeric laws: residual at round-off of the state scale
    assert np.max(np.abs(f0)) < 1e-9 * max(eqn.values())
    for j, name in enumerate(loop.state_names):
        h = 1e-6 * max(1.0, abs(eqn[name]))   # central differences: error O(h^2) ~ 1e-12 relative
        for which, A in (("now", A0), ("delayed", A1)):
            up = dict(eqn); dn = dict(eqn)
            up[name] += h; dn[name] -= h
            if which == "now":
                fd = (loop.rhs_numeric(up, eqn) - loop.rhs_numeric(dn, eqn)) / (2 * h)
            else:
                fd = (loop.rhs_numeric(eqn, up) - loop.rhs_numeric(eqn, dn)) / (2 * h)
            scale = 1 + np.max(np.abs(A))
            # 1e-6 relative: central-difference truncation + round-off of the laws
            assert np.allclose(fd, A[:, j], atol=1e-6 * scale), (model, which, name, fd, A[:, j])


def test_equilibrium_agrees_with_model_equilibrium():
    for model in ("aecp", "petcp", "symbiosis"):
        loop = synchronous_loop(model)
        assert loop.equilibrium_check["status"] == "ok", loop.equilibrium_check   # 1e-9 relative, see loop.py


def test_petcp_and_symbiosis_loops():
    pe = synchronous_loop("petcp")
    a, b, T = _sym(pe, "a_pps2"), _sym(pe, "b_per_s"), _sym(pe, "T_s")
    s, C, N = pe.s, pe.C, pe.N
    assert sympy.simplify(pe.L - b * (s + 1 / T) / (s * (s + N * a / C))) == 0
    assert symmetric_optimum(pe).status == "not applicable"        # only one integrator
    sy = synchronous_loop("symbiosis")
    eps, g = _sym(sy, "epsilon_per_s"), _sym(sy, "gamma")
    k = eps / (1 + g * (sy.N - 1))
    assert sympy.simplify(sy.L - k * g * (sy.N - 1) / (sy.s + k)) == 0
    # the queue does not feed back: a hidden mode at -(1 + gamma (N-1))/(N tau)
    assert sympy.solve(sympy.numer(sympy.together(sy.hidden_factor)), sy.s)[0].equals(
        -(1 + g * (sy.N - 1)) / (sy.N * sy.tau))


def test_substituted_params_and_int_flows():
    loop = synchronous_loop("aecp", params={"alpha_per_s": 2, "beta_per_s": 1, "T_s": 2}, n_flows=3)
    s = loop.s
    assert sympy.simplify(loop.L - 2 * (s + sympy.Rational(1, 2)) / (s ** 2 * (s + 2))) == 0
