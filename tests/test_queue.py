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
