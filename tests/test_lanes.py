"""The lock-step kernel (ecocc.dde.lanes, generated per model) against the single-member kernel and itself.

Chain of references: the single kernel takes the NumPy solver's steps (test_kernels.py); identical lanes
take the single kernel's steps; different lanes stay within tolerance of their own single runs; steps
longer than the smallest delay (``overlap``) converge to the capped solution as the tolerance shrinks.
"""
import numpy as np
import pytest

# the generated lock-step kernel compiles on a fresh machine (1-2 min); run by .ci/run with -m slow
pytestmark = pytest.mark.slow

pytest.importorskip("numba")

from ecocc import dumbbell  # noqa: E402
from ecocc.batch import simulate_map  # noqa: E402
from ecocc.dde import engine  # noqa: E402
from ecocc.dde.aot import LANES  # noqa: E402
from ecocc.errors import InputError  # noqa: E402
from ecocc.models import get_model  # noqa: E402
from ecocc.simulate import output_grid  # noqa: E402
from ecocc.system import NetworkSystem  # noqa: E402
from test_kernels import NETWORKS, _scaled_err  # noqa: E402


def _batch(sysm, alphas, t_end, betas=None, **kw):
    m = get_model("aecp")
    B = len(alphas)
    betas = [1.0] * B if betas is None else betas
    Ps = [m.make_params(r0_pps=10.0, alpha_per_s=a, beta_per_s=b) for a, b in zip(alphas, betas)]
    return engine.solve_adaptive_batch([sysm], [0] * B, Ps, t_end, **kw)


def _system(net, t_end):
    m = get_model("aecp")
    return NetworkSystem(m, net, m.make_params(r0_pps=10.0), t_end)


# since the single-run kernel predicts queue events (docs/notes/xpred2.md) and the lock-step lanes do not, identical
# lanes no longer take its steps on networks whose queues empty (CI 2026-11-26: parking-lot 254 against 258 steps,
# random 944 against 949): reported until the lanes predict too
_PREDICTED = pytest.mark.xfail(reason="the single-run kernel predicts queue events, the lanes do not", strict=False)


@pytest.mark.parametrize("name", [pytest.param(k, marks=_PREDICTED) if k in ("parking-lot", "random") else k
                                  for k in sorted(NETWORKS)])
def test_identical_lanes_take_the_single_kernels_steps(name):
    """Three identical members (a group of LANES lanes, padded) on networks with staggered flows, a UDP
    burst, a finite buffer, a parking lot, random routes: the single kernel's steps, rejections and
    right-hand sides, and its values to round-off (the same generated laws, the same operations per lane)."""
    t_end = 10.0
    sysm = _system(NETWORKS[name](), t_end)
    te = output_grid(t_end, 0.05)
    kw = dict(rtol=1e-8, atol=sysm.default_atol(), t_eval=te)
    one = engine.solve_adaptive(sysm, t_end, **kw)
    a = sysm.P.alpha_per_s
    out, status, counters = _batch(sysm, [a] * 3, t_end, **kw)
    for b in range(3):
        assert status[b] == one.status
        assert tuple(counters[b, :3]) == (one.n_steps, one.n_rejected, one.nfev)
        assert counters[b, 3] == one.n_clamp_events
        assert _scaled_err(out[b], one.y) < 1e-9  # round-off (measured: 0, the same operations), grown over 10 s


def test_lanes_stay_within_tolerance_of_their_single_runs():
    """Different gains in one group share the steps (a mesh chosen for all lanes); each lane stays within
    the tolerance of its own single run: 100 x rtol on the log-states, 1e-2 packet on the queues (as the
    single kernel against the NumPy solver)."""
    t_end = 10.0
    sysm = _system(NETWORKS["staggered-dumbbell"](), t_end)
    te = output_grid(t_end, 0.05)
    rtol = 1e-8
    kw = dict(rtol=rtol, atol=sysm.default_atol(), t_eval=te)
    alphas = [0.5, 1.0, 2.0, 4.0, 6.0]
    out, status, counters = _batch(sysm, alphas, t_end, **kw)
    lay = sysm.layout
    for b, a in enumerate(alphas):
        sysm.P = get_model("aecp").make_params(r0_pps=10.0, alpha_per_s=a)
        one = engine.solve_adaptive(sysm, t_end, **kw)
        assert status[b] == one.status
        u = np.s_[:, : lay["queue"].start]
        q = np.s_[:, lay["queue"].sl]
        assert np.max(np.abs(out[b][u] - one.y[u])) < 100 * rtol
        assert np.max(np.abs(out[b][q] - one.y[q])) < 1e-2


def _small_rtt_row():
    # RTTs 12.5/25/50/100 ms: the smallest delay caps the steps at 12.5 ms, far below what the error allows
    net = dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0).scaled(rtt_scale=0.25)
    return _system(net, 30.0)


def _parking_lot_quarter():
    # the shipped parking lot (three links, delays 10 and 30 ms at a quarter of its RTTs)
    from ecocc import scenarios
    return _system(scenarios.load("aecp-parking-lot").network.scaled(rtt_scale=0.25), 30.0)


# the tight tolerance the overlap mode is checked at.  Parking lot: at rtol 1e-9 the error of the two slowest lanes
# (alpha 1 and 1.7) after 30 s is at the level of the problem's sensitivity to round-off, not of the method: the
# hand-written AECP kernel this generic one replaced and the generic one agree bit for bit up to 7.5 s, differ by
# 4e-10 packet at 10 s (a few-ulp exp and SymPy's order of the law's operations) and end 0.023 and 0.127 packet
# from the capped reference (2e-6 and 1.2e-5 of the queue range; measured).  A bound there would test which
# round-off a build has, so the parking lot is checked one decade tighter (measured: 0.014 packet, 1.4e-6).
@pytest.mark.parametrize("make,tight", [(_small_rtt_row, 1e-9), (_parking_lot_quarter, 1e-10)],
                         ids=["dumbbell", "parking-lot"])
def test_overlap_converges_to_the_capped_solution(make, tight):
    """Steps longer than the smallest delay (delayed values inside a step corrected pass after pass) take
    several times fewer steps and converge to the capped solution as rtol shrinks.  Reference: capped steps
    at rtol 1e-10.  The queues oscillate (ranges of 5000-10,000 packets) and drain to zero, so a local error
    grows along the run: at the tight rtol the queues must be within 1e-5 of their range, and 1e-6 -> tight
    must shrink the error at least 10x."""
    sysm = make()
    qs = sysm.layout["queue"].sl
    te = output_grid(30.0, 0.05)
    alphas = list(np.linspace(1.0, 6.0, LANES))
    kw = dict(t_eval=te, components=np.arange(qs.start, qs.stop), dynamics_only=True)
    ref, st, cnt_ref = _batch(sysm, alphas, 30.0, rtol=1e-10, overlap=False, **kw)
    assert all(s.value == "success" for s in st)
    qrange = float(np.ptp(ref))
    errs = {}
    for rtol in (1e-6, tight):
        out, st, cnt = _batch(sysm, alphas, 30.0, rtol=rtol, overlap=True, **kw)
        assert all(s.value == "success" for s in st)
        assert cnt[0, 0] < cnt_ref[0, 0] / 3
        errs[rtol] = float(np.max(np.abs(out - ref)))
    assert errs[tight] < 1e-5 * qrange, errs
    assert errs[tight] < errs[1e-6] / 10, errs


def test_a_failed_lane_leaves_the_others_running():
    """A lane whose state overflows (beta = 1e300) fails with its time; the other lanes of its group finish
    and agree with the same group run without it (the failed lane cut some steps short: within tolerance)."""
    sysm = _small_rtt_row()
    iq = sysm.layout["queue"].start
    te = output_grid(10.0, 0.05)
    kw = dict(rtol=1e-7, t_eval=te, components=[iq], dynamics_only=True, overlap=True)
    out, st, _ = _batch(sysm, [1.0, 2.0, 3.0], 10.0, betas=[1.0, 1e300, 1.0], **kw)
    assert [s.value for s in st] == ["success", "failed", "success"]
    assert np.isnan(out[1, -1]).all() and not np.isnan(out[[0, 2]]).any()
    ok, st2, _ = _batch(sysm, [1.0, 3.0], 10.0, **kw)
    assert np.max(np.abs(out[[0, 2]] - ok)) < 1e-2  # packets: tolerance level, far below the map's 1-packet rule


def test_a_reused_output_buffer_gives_a_fresh_ones_outputs():
    """``out=``: a buffer larger than needed and full of garbage from an earlier batch (as simulate_map reuses
    one) gives bit for bit the outputs of a fresh array, the failed lane's NaN included; a buffer of the wrong
    shape, type or layout is refused, naming the field."""
    sysm = _small_rtt_row()
    iq = sysm.layout["queue"].start
    te = output_grid(10.0, 0.05)
    kw = dict(rtol=1e-7, t_eval=te, components=[iq], dynamics_only=True, overlap=True)
    args = ([1.0, 2.0, 3.0], 10.0)
    fresh, st, cnt = _batch(sysm, *args, betas=[1.0, 1e300, 1.0], **kw)
    buf = np.full((9, te.size, 1), 123.0)
    got, st2, cnt2 = _batch(sysm, *args, betas=[1.0, 1e300, 1.0], out=buf, **kw)
    assert np.shares_memory(got, buf) and got.shape == fresh.shape
    assert np.array_equal(got, fresh, equal_nan=True) and np.isnan(got[1, -1]).all()
    assert st2 == st and np.array_equal(cnt2, cnt)
    for bad in (np.empty((3, te.size, 1)), np.empty((9, te.size, 2)), np.empty((9, te.size, 1), dtype=np.float32),
                np.empty((18, te.size, 1))[::2], [[[0.0]]]):
        with pytest.raises(InputError, match="out"):
            _batch(sysm, *args, out=bad, **kw)


def test_components_must_be_integrated():
    sysm = _small_rtt_row()
    with pytest.raises(InputError, match="components"):
        _batch(sysm, [1.0], 1.0, rtol=1e-7, t_eval=[1.0], components=[sysm.layout["lost"].start],
               dynamics_only=True)


def test_simulate_map_overlap_and_capped_steps_agree():
    """The map's default (steps past the smallest delay) and capped steps: same verdicts, swings within
    tolerance, the method recorded in the attributes."""
    net = dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
    kw = dict(x_values=[1.0, 3.0, 6.0], y_values=[0.25, 1.0, 3.0], t_end_s=40.0, window_s=5.0, r0_pps=10.0)
    a = simulate_map(net, "aecp", **kw)
    b = simulate_map(net, "aecp", overlap=False, **kw)
    assert "may exceed the smallest delay" in a.attrs["solver"] and "never longer" in b.attrs["solver"]
    assert (a.stable.values == b.stable.values).all()
    assert a.stable.values.any() and not a.stable.values.all()
    # swings: within 1e-2 packet near the 1-packet threshold (a hundredth of it, so no verdict can hinge on the
    # step rule) and within 1 % where the queue oscillates (both runs at rtol 1e-7; the trajectories drift apart
    # through the queue's clamp events, as in test_overlap_converges_to_the_capped_solution)
    near = b.queue_swing_pkts.values < 10.0
    assert np.max(np.abs(a.queue_swing_pkts.values - b.queue_swing_pkts.values)[near]) < 1e-2
    osc = ~near
    assert np.max(np.abs(a.queue_swing_pkts.values - b.queue_swing_pkts.values)[osc]
                  / b.queue_swing_pkts.values[osc]) < 1e-2
    assert (a.n_steps.values[0] < b.n_steps.values[0] / 3).all()  # at RTT scale 0.25


def test_simulate_map_resumed_equals_uninterrupted():
    """The map runs whole lock-step groups fixed over the grid, so an interrupted map (here: stopped after its
    first kernel call) resumed with ``previous`` gives the uninterrupted numbers exactly, however the kernel
    calls were cut (by time: ``partial_every_s``; by size: ``chunk``)."""
    net = dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
    kw = dict(x_values=[1.0, 2.0, 3.0, 4.0, 5.0], y_values=[0.5, 1.0, 2.0], t_end_s=10.0, window_s=2.0, r0_pps=10.0)
    full = simulate_map(net, "aecp", **kw)

    def stop(part):
        raise KeyboardInterrupt  # as Ctrl-C between two kernel calls
    part = simulate_map(net, "aecp", on_partial=stop, partial_every_s=0.0, chunk=1, **kw)
    st = part.status.values
    assert (st == "interrupted").any() and (st == "success").any()
    again = simulate_map(net, "aecp", previous=part, **kw)
    for v in ("status", "queue_swing_pkts", "queue_mean_pkts", "n_steps", "swing_growth_rate_per_s"):
        np.testing.assert_array_equal(again[v].values, full[v].values, err_msg=v)


def test_lanes_samples_conserve_packets():
    # a queue's continuous extension inside a step may overshoot a bound; the lanes clipped the sampled queue
    # without booking the clipped volume in the output counters: arrived - departed - lost - queue reached
    # 2.2e-5 packets here (found by benchmarks/engines_fuzz.py's line of checks), where the projection's rule
    # (kernels._project, the single kernels' samples) keeps it at round-off
    m = get_model("aecp")
    net = dumbbell(1000.0, [0.05, 0.2], initial_rate_pps=2000.0, buffer_pkts=150.0)
    sysm = NetworkSystem(m, net, m.make_params(), 10.0)
    t = np.linspace(0.0, 10.0, 4001)
    out, status, _ = engine.solve_adaptive_batch([sysm], [0, 0], [sysm.P] * 2, 10.0, rtol=1e-7,
                                                 atol=sysm.default_atol(), t_eval=t)
    assert all(s.value == "success" for s in status)
    lay = sysm.layout
    for y in out:
        q = y[:, lay["queue"].sl]
        assert np.any(q == 0.0) and np.any(q == 150.0)  # both bounds held at some samples
        resid = sum(sg * y[:, lay[k].sl] for sg, k in ((1, "arrived"), (-1, "departed"), (-1, "lost"), (-1, "queue")))
        # round-off of cumulative counters, as tests/test_solver_robustness.py's bound
        assert np.max(np.abs(resid)) <= 1e-10 * y[:, lay["arrived"].sl].max() + 1e-9, np.max(np.abs(resid))
