"""The fluid queue: projection onto [0, buffer], tail-drop loss counted, conservation.

Driven by cross traffic alone (the only flow starts after the horizon), so the
exact queue is piecewise linear and derived by hand below.
"""
import numpy as np
import pytest

from ecocc import CrossTraffic, Flow, Link, Network, simulate


@pytest.mark.parametrize("solver, kw", [("adaptive", {}), ("fixed", {"step_s": 1e-3})])
def test_tail_drop_fill_hold_drain(solver, kw):
    C, B = 1000.0, 2000.0  # packets/s, packets
    burst = 1.5 * C  # from 0 s to 10 s, then silence
    net = Network((Link("l", C, buffer_pkts=B),),
                  (Flow("idle", ("l",), 0.1, start_s=100.0),),
                  (CrossTraffic("l", kind="schedule", schedule=((0.0, burst), (10.0, 0.0))),))
    tr = simulate(net, "aecp", t_end_s=20.0, output_dt_s=0.01, solver=solver, **kw)
    assert tr.ok
    t_full = B / (burst - C)          # 4 s: the buffer is full
    t_empty = 10.0 + B / C            # 12 s: drained
    exact_q = np.where(tr.t_s < t_full, (burst - C) * tr.t_s,
                       np.where(tr.t_s < 10.0, B, np.maximum(B - C * (tr.t_s - 10.0), 0.0)))
    # 1e-6 packets (adaptive) / 1e-6 (fixed): the queue is piecewise linear, both methods are exact on
    # linear pieces; the only error is where a switch falls inside a step (located by the adaptive
    # solver; on the 1 ms grid all switches here are grid points)
    assert np.max(np.abs(tr.queue_pkts[:, 0] - exact_q)) < 1e-6
    lost = tr.lost_pkts[-1, 0]
    assert lost == pytest.approx((burst - C) * (10.0 - t_full), rel=1e-9)  # 3000 packets dropped
    # conservation: arrived = departed + lost + queue, at every sample (cumulative counters)
    resid = tr.arrived_pkts[:, 0] - tr.departed_pkts[:, 0] - tr.lost_pkts[:, 0] - tr.queue_pkts[:, 0]
    assert np.max(np.abs(resid)) < 1e-6 * tr.arrived_pkts[-1, 0]
    s = tr.summary(window_s=20.0)
    # utilization: the link serves C for 12 s of 20 s
    assert s["links"][0]["utilization"] == pytest.approx(t_empty / 20.0, rel=1e-6)
    assert s["links"][0]["loss_ratio"] == pytest.approx(lost / (burst * 10.0), rel=1e-9)
    assert tr.queue_pkts.min() >= 0.0 and tr.queue_pkts.max() <= B


def test_release_from_the_bound_is_located():
    """A queue held at 0 whose raw derivative g(t) = t - 1 turns positive at t = 1 leaves the bound there:
    exact q(t) = max(t - 1, 0)^2 / 2.  The release is located (root of the raw derivative's linear
    interpolant over the step, exact here) and becomes a mesh point, so each step integrates one polynomial
    piece, which Dormand-Prince 5(4) does exactly: round-off only.  A step that straddles the kink is only
    within the tolerance (2e-9 at rtol 1e-8 when the release is not located)."""
    from ecocc.dde.adaptive import solve_dde
    from ecocc.dde.problem import DDEProblem
    prob = DDEProblem(n=1, rhs=lambda t, y, Z, lo, hi: np.array([t - 1.0]), y0=np.array([0.0]),
                      bounded=np.array([0]), lower=[0.0], upper=[np.inf])
    t = np.linspace(0.0, 6.0, 601)
    sol = solve_dde(prob, 6.0, rtol=1e-8, atol=1e-10, t_eval=t, max_step=1.0)
    assert sol.status.value == "success"
    assert np.max(np.abs(sol.y[:, 0] - np.maximum(t - 1.0, 0.0) ** 2 / 2)) < 1e-12


# A run started exactly at the equilibrium rate with an empty queue: N x0 = C, so the queue's raw derivative
# N x - C is round-off (-1.5e-11 packets/s here) and the queue is held at 0 until the rates rise and it fills.
# Locating that "release" at a root of round-off cut every step into pieces too short for the rates (log
# states near 10) to move in floating point: both adaptive solvers stalled -- AECP (x0 = r0 = C/N, rtol 1e-8)
# at t = 0.05 s, PE-TCP without feedback delay (x0 = B/N) at t = 1e-6 s, 10^7 steps in the compiled kernel;
# the NumPy solver reached max_steps = 2000 at t = 0.050037 s.  Since, the release is located only where the
# clamped inward flow is not negligible (ecocc.dde.history.release_matters).
STALL_C, STALL_N, STALL_RTT = 62500.0, 3, 0.05   # 500 Mbps at 1000 B, 3 flows (the aecp.thm3 delay run's link)
STALL_CASES = [("aecp", {}), ("petcp", {"delayed_feedback": False})]
# steps over 1 s: measured 21 for both (AECP: the 0.05 s delay caps every step, so at least 20); 200 = ~10x
# that, and far below what the stall took (max_steps = 2000 reached within 0.05 s)
STALL_MAX_STEPS = 200


def _stall_system(model, params):
    from ecocc import dumbbell
    from ecocc.models import get_model
    from ecocc.system import NetworkSystem
    net = dumbbell(STALL_C, [STALL_RTT] * STALL_N, initial_rate_pps=STALL_C / STALL_N)
    m = get_model(model)
    return NetworkSystem(m, net, m.make_params(None, **params), 1.0)


@pytest.mark.parametrize("model, params", STALL_CASES)
def test_start_at_equilibrium_rate_with_empty_queue_does_not_stall(model, params):
    from ecocc.dde.adaptive import solve_dde
    sysm = _stall_system(model, params)
    t = np.linspace(0.0, 1.0, 101)
    sol = solve_dde(sysm.problem(), 1.0, rtol=1e-8, atol=sysm.default_atol(), t_eval=t, max_steps=2000)
    assert sol.status.value == "success", sol.message
    assert sol.n_steps <= STALL_MAX_STEPS
    q = sol.y[:, sysm.layout["queue"].start]
    assert q[-1] > 0.0  # the queue does fill (both targets are above 0: AECP q0, PE-TCP q* = aTN/b)
    if model == "aecp":  # empty for the first RTT (rates constant at C/N), then it fills (r grew: q < q0)
        assert np.all(q[t <= STALL_RTT] == 0.0)


@pytest.mark.slow  # compiles the AECP and PE-TCP kernels on a fresh machine
@pytest.mark.parametrize("model, params", STALL_CASES)
def test_start_at_equilibrium_rate_with_empty_queue_does_not_stall_compiled(model, params):
    pytest.importorskip("numba")
    from ecocc.dde import engine
    from ecocc.dde.adaptive import solve_dde
    sysm = _stall_system(model, params)
    t = np.linspace(0.0, 1.0, 101)
    kw = dict(rtol=1e-8, atol=sysm.default_atol(), t_eval=t, max_steps=2000)
    one = engine.solve_adaptive(sysm, 1.0, **kw)
    assert one.status.value == "success", one.message
    assert one.n_steps <= STALL_MAX_STEPS
    ref = solve_dde(sysm.problem(), 1.0, **kw)
    assert one.n_steps == ref.n_steps  # the compiled kernel takes the NumPy solver's steps (test_kernels.py)
    out, status, counters = engine.solve_adaptive_batch([sysm], [0, 0], [sysm.P] * 2, 1.0, **kw)
    assert all(s.value == "success" for s in status)
    # the generated lock-step kernel (ecocc.dde.lanes) likewise, both lanes the same point: the single kernel's
    # steps.  PE-TCP without feedback delay reads no history, so neither kernel checks the summed load's columns it
    # keeps (checking them took 35 steps in both where the NumPy solver takes 22: docs/notes/aggload.md)
    assert [int(c[0]) for c in counters] == [one.n_steps] * 2
