"""Error control of states stored as logarithms (``DDEProblem.log_components``).

An error ``e`` in ``u = ln x`` is a relative error ``e`` in ``x``, so a log component is tested against
``atol + rtol`` rather than ``atol + rtol |u|``: the latter depends on the unit of ``x`` (``u`` moves by
``ln 1000`` from packets/s to packets/ms) and was ``|ln x|`` = 8 to 12 times looser for rates of 1e3 to
1e5 packets/s, which left PE-TCP 11x outside the issue's accuracy target at the default tolerances.
"""
import numpy as np
import pytest

from ecocc import DDEProblem, Lookup, dumbbell, simulate, solve_dde


def _logistic_in_log(c, log_components):
    """Hutchinson's delayed logistic ``x' = r x (1 - x(t - 1) / K)`` solved for ``u = ln x + c``: the offset
    ``c`` is a change of the unit of ``x`` (``c = ln 1000``: from thousands to units)."""
    r, K = 1.4, 50.0

    def rhs(t, y, Z, lo, hi):
        return r * (1.0 - np.exp(Z[0] - c) / K)

    prob = DDEProblem(n=1, rhs=rhs, y0=np.array([np.log(10.0) + c]), lookups=[Lookup([0], [1.0])],
                      log_components=np.array([0]) if log_components else np.zeros(0, dtype=int))
    return solve_dde(prob, 40.0, rtol=1e-6, atol=1e-9, t_eval=np.linspace(0.0, 40.0, 81))


def test_log_component_error_control_does_not_depend_on_the_unit():
    base = _logistic_in_log(0.0, True)
    assert base.status.value == "success"
    for c in (np.log(1e3), np.log(1e6)):
        other = _logistic_in_log(c, True)
        # the same steps; the states differ by round-off of the offset only (c <= 14: a few ulps of u)
        assert (other.n_steps, other.n_rejected) == (base.n_steps, base.n_rejected)
        assert np.max(np.abs((other.y[:, 0] - c) - base.y[:, 0])) < 1e-12
    # without the declaration the test reads rtol |u|: the step sequence follows the unit (the check above
    # would catch a solver that ignored log_components)
    plain = [_logistic_in_log(c, False).n_steps for c in (0.0, np.log(1e6))]
    assert plain[0] != plain[1]


@pytest.mark.parametrize("bad", [[1], [-1], [0.5], [[0]]])
def test_log_components_are_validated(bad):
    from ecocc import InputError
    with pytest.raises(InputError, match="log_components"):
        DDEProblem(n=1, rhs=lambda t, y, Z, lo, hi: -y, y0=np.array([1.0]), log_components=bad)


def test_network_system_declares_its_log_states():
    from ecocc.models import get_model
    from ecocc.system import NetworkSystem
    m = get_model("symbiosis")
    s = NetworkSystem(m, dumbbell(1000.0, [0.05, 0.1]), m.make_params(), 1.0)
    prob = s.problem()
    lay = s.layout
    assert lay["flow:w"].log
    np.testing.assert_array_equal(prob.log_components, np.arange(s.n)[lay["flow:w"].sl])
    m2 = get_model("aecp")
    s2 = NetworkSystem(m2, dumbbell(1000.0, [0.05, 0.1]), m2.make_params(), 1.0)
    logs = [i for b in s2.layout.values() if b.log for i in np.arange(s2.n)[b.sl]]
    np.testing.assert_array_equal(s2.problem().log_components, logs)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_petcp_accuracy_at_default_tolerances(engine):
    """Issue 14's accuracy target at the default settings (rtol 1e-7, the default atol): PE-TCP, 4 flows, RTTs
    50-400 ms on 15,000 packets/s, 60 s -- within 1e-6 relative in the aggregate rate and 1e-3 packets in the
    queue of a tight reference (the compiled engine at rtol 1e-12, atol 1e-11; benchmarks/models_bench.py finds
    the NumPy solver at rtol 1e-11 within 1.8e-8 of the compiled engine at rtol = atol = 1e-13).  Measured
    2026-11-25: 2.5e-7 and 1.1e-4 (compiled); before the log-state rule 1.1e-5 and 2.4e-3 (docs/notes/logtol.md).
    At the margin: the compiled run's 3.6e-7 (2026-11-29) is one draw of the mesh; at 6 of 18 rtols from 0.7e-7 to
    1.6e-7 the rate error is above 1e-6 (up to 2.7e-6, median 9.0e-7: benchmarks/accuracy_spread.md), and a
    rounding-level change of the flow law (exp(-u) as 1/exp(u), not kept) made it 1.19e-6 here
    (docs/notes/mapcost.md).  Kept at the issue's target, failing when the draw does."""
    net = dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4])
    ts = np.linspace(3.0, 60.0, 20)

    def sample(tr):
        return np.interp(ts, tr.t_s, tr.rate_pps.sum(axis=1)), np.interp(ts, tr.t_s, tr.queue_pkts[:, 0])

    S_ref, q_ref = sample(simulate(net, "petcp", t_end_s=60.0, rtol=1e-12, atol=1e-11, engine="numba"))
    tr = simulate(net, "petcp", t_end_s=60.0, engine=engine)
    assert tr.status.value == "success"
    S, q = sample(tr)
    assert np.max(np.abs(S - S_ref) / S_ref) < 1e-6
    assert np.max(np.abs(q - q_ref)) < 1e-3
