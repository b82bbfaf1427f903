"""The numba kernels (ecocc.dde.kernels) against the NumPy solvers on the same problems.

The fixed-step kernel is a transcription of ``solve_fixed`` (same grid, same
Hermite weights, same masks), so the two agree to round-off.  The adaptive
kernel (generated from the model's laws, ecocc.dde.codegen, with the generic
integrator ecocc.dde.integrator) follows ``solve_dde`` (RK45); it takes the
same steps unless round-off flips an accept/reject decision, so it is compared
within the tolerance it was run at.  Every model: tests/test_codegen.py.
"""
import math

import numpy as np
import pytest

# compiled kernels (fixed-step, lock-step, ahead-of-time builds): each kind compiles on a fresh machine (1-2 min); run by .ci/run with -m slow
pytestmark = pytest.mark.slow

pytest.importorskip("numba")

from ecocc import dumbbell, parking_lot, random_network, simulate  # noqa: E402
from ecocc.batch import simulate_batch  # noqa: E402
from ecocc.dde import aot, engine  # noqa: E402
from ecocc.dde.adaptive import solve_dde  # noqa: E402
from ecocc.dde.fixed import solve_fixed  # noqa: E402
from ecocc.errors import InputError  # noqa: E402
from ecocc.models import get_model  # noqa: E402
from ecocc.network import CrossTraffic  # noqa: E402
from ecocc.simulate import output_grid  # noqa: E402
from ecocc.system import NetworkSystem  # noqa: E402


def _staggered():
    # starts and stops off the 5 ms grid (kinks inside steps), a UDP burst, a finite buffer (loss counter)
    ct = (CrossTraffic("bottleneck", kind="schedule", schedule=((4.0, 3000.0), (6.5, 0.0))),)
    return dumbbell(15000, [0.05, 0.1, 0.2, 0.4], starts_s=[0.0, 1.0, 2.3, 3.0],
                    stops_s=[math.inf, 7.0, math.inf, 8.21], buffer_pkts=150.0, cross_traffic=ct,
                    initial_rate_pps=10.0)


NETWORKS = {
    "staggered-dumbbell": _staggered,
    "parking-lot": lambda: parking_lot([8000.0, 12000.0, 10000.0], 0.02),
    "random": lambda: random_network(12, 5, max_hops=3, capacity_pps=(2e3, 5e3), seed=3),
}


def _system(net, t_end, **kw):
    m = get_model("aecp")
    return NetworkSystem(m, net, m.make_params(r0_pps=10.0, **kw), t_end)


def _scaled_err(a, b):
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_fixed_kernel_matches_numpy(name):
    t_end = 10.0
    sysm = _system(NETWORKS[name](), t_end)
    te = output_grid(t_end, 0.05)
    ref = solve_fixed(sysm.problem(), t_end, 0.005, t_eval=te)
    got = engine.solve_fixed(sysm, t_end, 0.005, t_eval=te)
    assert got.status == ref.status
    assert got.y.shape == ref.y.shape
    assert got.nfev == ref.nfev and got.n_clamp_events == ref.n_clamp_events
    # same arithmetic up to the order of a few sums (sparse products, einsum) and libm exp/log:
    # differences are a few ulp per step, grown over 2000 steps of a stable system -> 1e-10 (seen: ~1e-12)
    assert _scaled_err(got.y, ref.y) < 1e-10


def test_fixed_kernel_step_not_dividing_delays_and_extrapolation():
    # h = 7 ms > the smallest delay (5 ms): the c = 1 stage extrapolates, as in solve_fixed
    net = dumbbell(5000, [0.005, 0.033, 0.1], initial_rate_pps=10.0)
    sysm = _system(net, 5.0)
    te = output_grid(5.0, 0.1)
    ref = solve_fixed(sysm.problem(), 5.0, 0.007, t_eval=te)
    got = engine.solve_fixed(sysm, 5.0, 0.007, t_eval=te)
    assert _scaled_err(got.y, ref.y) < 1e-10  # round-off only (see above)


def test_batch_engine_matches_numpy():
    net = dumbbell(15000, [0.05, 0.1, 0.2, 0.4], starts_s=[0, 1, 2, 3], initial_rate_pps=10.0)
    plist = [dict(alpha_per_s=a, r0_pps=10.0, q0_pkts=q) for a, q in ((1.0, 100.0), (2.0, 50.0), (3.5, 100.0))]
    kw = dict(rtt_scale=[1.0, 0.5, 2.0], t_end_s=8.0, step_s=0.005, output_dt_s=0.1)
    a = simulate_batch(net, "aecp", plist, **kw)
    b = simulate_batch(net, "aecp", plist, engine="numba", **kw)
    for v in ("rate", "queue", "lost", "arrived", "departed", "sent", "link_r"):
        # round-off only (same arithmetic, see test_fixed_kernel_matches_numpy)
        assert _scaled_err(b[v].values, a[v].values) < 1e-10, v
    assert list(b.status.values) == list(a.status.values)


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_adaptive_kernel_matches_numpy(name):
    t_end = 10.0
    sysm = _system(NETWORKS[name](), t_end)
    te = output_grid(t_end, 0.05)
    rtol = 1e-8
    atol = sysm.default_atol()
    ref = solve_dde(sysm.problem(), t_end, rtol=rtol, atol=atol, t_eval=te)
    got = engine.solve_adaptive(sysm, t_end, rtol=rtol, atol=atol, t_eval=te)
    assert got.status == ref.status
    assert got.y.shape == ref.y.shape
    # the same steps unless round-off flips one accept/reject decision: allow 10 % in the count
    assert abs(got.n_steps - ref.n_steps) <= 0.1 * ref.n_steps
    lay = sysm.layout
    u = np.s_[:, : lay["queue"].start]  # log-rates and log rate factors
    q = np.s_[:, lay["queue"].sl]
    # within the tolerance the runs were made at: 100 x rtol on log-states (a global error is
    # a sum of local ones), queue within 100 x its atol (1e-4 packet)
    assert np.max(np.abs(got.y[u] - ref.y[u])) < 100 * rtol
    assert np.max(np.abs(got.y[q] - ref.y[q])) < 1e-2


def test_simulate_engine_numba_trajectory():
    net = _staggered()
    kw = dict(t_end_s=10.0, r0_pps=10.0, output_dt_s=0.05)
    a = simulate(net, "aecp", engine="numpy", **kw)
    b = simulate(net, "aecp", engine="numba", **kw)
    assert b.status == a.status
    # default rtol 1e-7: log-rates within 100 x rtol (relative rates), queues within 1e-2 packet
    assert np.max(np.abs(b.rate_pps - a.rate_pps) / np.maximum(a.rate_pps, 1.0)) < 1e-5
    assert np.max(np.abs(b.queue_pkts - a.queue_pkts)) < 1e-2
    f = simulate(net, "cltcp", solver="fixed", step_s=0.005, engine="numpy", **kw)
    g = simulate(net, "cltcp", solver="fixed", step_s=0.005, engine="numba", **kw)
    assert _scaled_err(g.queue_pkts, f.queue_pkts) < 1e-10  # round-off only
    assert _scaled_err(g.lost_pkts, f.lost_pkts) < 1e-10


def test_compiled_fixed_step_samples_conserve_packets():
    # a queue that empties between two grid nodes: the cubic between the projected nodes dips below 0 at the
    # samples inside the step.  The compiled kernel clipped the sample's queue without booking the clipped
    # volume (found by benchmarks/engines_fuzz.py): arrived - departed - lost - queue was -0.206 packets at
    # t = 3.695 s with status success, where the NumPy solver books it as over-counted departures (8.9e-11)
    net = dumbbell(8895.0, [0.0178], initial_rate_pps=180.0, buffer_pkts=119.5)
    kw = dict(t_end_s=5.0, solver="fixed", step_s=0.0089, alpha_per_s=1.262, beta_per_s=1.51, q0_pkts=63.48,
              T_s=1.014)
    f = simulate(net, "cltcp", engine="numpy", **kw)
    g = simulate(net, "cltcp", engine="numba", **kw)
    assert f.ok and g.ok and np.any(g.queue_pkts == 0.0)
    for tr in (f, g):
        resid = tr.arrived_pkts - tr.departed_pkts - tr.lost_pkts - tr.queue_pkts
        # round-off of cumulative counters (~1e-16 relative per step, < 600 steps, counters <= 4e4 packets)
        assert np.max(np.abs(resid)) <= 1e-10 * tr.arrived_pkts.max(), np.max(np.abs(resid))
    # the two engines do the same arithmetic (test above): every counter to round-off
    for a, b in ((f.departed_pkts, g.departed_pkts), (f.lost_pkts, g.lost_pkts)):
        assert _scaled_err(b, a) < 1e-10


def test_engine_errors():
    net = dumbbell(1000, [0.1, 0.2])
    with pytest.raises(InputError, match="engine"):
        simulate(net, "aecp", t_end_s=1.0, engine="fortran")
    with pytest.raises(InputError, match="forward delays"):  # the lock-step kernel does not follow them yet
        from ecocc.batch import simulate_map
        simulate_map(parking_lot([1000, 1000], 0.02, delay_split="propagation"), "aecp", x_name="rtt_scale",
                     x_values=[1.0], y_name="alpha_per_s", y_values=[2.0], t_end_s=1.0, window_s=0.5, engine="numba")
    with pytest.raises(InputError, match="forward delays"):  # the fixed-step kernel does not follow them yet
        pl = parking_lot([1000, 1000], 0.02, delay_split="propagation")
        simulate(pl, "aecp", t_end_s=1.0, engine="numba", solver="fixed", step_s=0.01)
    # auto: the NumPy solver where the compiled one does not apply, no error
    assert simulate_batch(net, "reno", t_end_s=0.1, step_s=0.01).attrs["solver"] == "RK4-fixed"


def _map(engine_name="numba", t_end=10.0):
    from ecocc.batch import simulate_map
    net = dumbbell(15000, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
    return simulate_map(net, "aecp", x_values=[1.0, 2.5, 4.0], y_values=[0.5, 1.0, 2.0], t_end_s=t_end,
                        window_s=0.2 * t_end, r0_pps=10.0, engine=engine_name)


def _runs_by_kernel(flag, monkeypatch):
    """The map's run with ECOCC_AOT=flag: (kernel info, arrays to compare, steps)."""
    monkeypatch.setenv("ECOCC_AOT", flag)
    aot.reset()
    try:
        ds = _map()
        return (engine.lanes_kernel_info(), np.stack([ds.queue_swing_pkts.values, ds.queue_mean_pkts.values]),
                (list(ds.status.values.ravel()), list(ds.n_steps.values.ravel())))
    finally:
        aot.reset()


# building the module into an empty cache compiles with numba.pycc (minutes on a busy 2-core machine): slow
@pytest.mark.slow
def test_aot_lanes_kernel_matches_jit(monkeypatch, tmp_path):
    """The generated lock-step kernel compiled ahead of time (numba.pycc, built on first use into the cache,
    ecocc.dde.codegen.kernel) is the JIT kernel's own code: same steps, same numbers."""
    monkeypatch.setenv("ECOCC_CACHE_DIR", str(tmp_path))
    a_info, a, a_steps = _runs_by_kernel("1", monkeypatch)
    j_info, j, j_steps = _runs_by_kernel("0", monkeypatch)
    assert j_info["compiled"] == "jit"
    if a_info["compiled"] != "aot":
        pytest.skip(f"no ahead-of-time kernel here: {a_info['aot_unavailable']}")
    assert a_info["built_now"] and list(tmp_path.glob("ecocc_aot_*"))
    assert a_steps == j_steps
    # the same LLVM code for the same CPU; allow round-off in case instruction selection differs
    assert _scaled_err(a, j) < 1e-12


def test_engine_without_numba_says_so(monkeypatch):
    """Without numba, engine='numba' refuses the map and the fixed-step kernel and says why; 'auto' runs the
    NumPy solver (one run per point)."""
    from ecocc.batch import simulate_map
    net = dumbbell(15000, [0.05, 0.1])
    monkeypatch.setattr(engine, "HAVE_NUMBA", False)
    with pytest.raises(InputError, match="numba is not installed"):
        simulate(net, "aecp", t_end_s=2.0, engine="numba", solver="fixed", step_s=0.01)
    with pytest.raises(InputError, match="numba is not installed"):
        simulate_map(net, "aecp", x_values=[1.0], y_values=[1.0], t_end_s=1.0, window_s=0.5, engine="numba")
    ds = simulate_map(net, "aecp", x_values=[1.0], y_values=[1.0], t_end_s=1.0, window_s=0.5)
    assert ds.attrs["engine"] == "auto (per point)" and ds.status.values.item() == "success"  # one run per point


def test_map_threads_follow_numba_num_threads(monkeypatch):
    """The map's thread pool takes numba's thread-count knob, as the parallel loops it replaced did."""
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    assert engine._n_threads() == 1
    one = _map()
    monkeypatch.delenv("NUMBA_NUM_THREADS")
    assert engine._n_threads() >= 1
    # each group is integrated alone whatever thread runs it: identical results
    assert np.array_equal(_map().queue_swing_pkts.values, one.queue_swing_pkts.values)
    monkeypatch.setenv("NUMBA_NUM_THREADS", "two")
    with pytest.raises(InputError, match="NUMBA_NUM_THREADS = 'two' is not allowed"):
        _map()


def test_aot_mode_is_checked(monkeypatch):
    monkeypatch.setenv("ECOCC_AOT", "yes")
    aot.reset()
    with pytest.raises(InputError, match="ECOCC_AOT = 'yes' is not allowed"):
        _map(t_end=1.0)
    aot.reset()


def test_fixed_kernel_large_network_matches_numpy():
    """One run of a 6000-flow network (the generated fixed-step kernel runs it on one core; the hand-written
    AECP kernel it replaced spread such runs over the cores): the same arithmetic per flow, so round-off
    agreement with the NumPy solver."""
    net = random_network(6000, 60, max_hops=5, seed=2)
    kw = dict(t_end_s=1.0, r0_pps=10.0, output_dt_s=0.1, solver="fixed", step_s=0.005)
    a = simulate(net, "aecp", engine="numpy", **kw)
    b = simulate(net, "aecp", engine="numba", **kw)
    assert b.status == a.status
    assert _scaled_err(b.queue_pkts, a.queue_pkts) < 1e-10  # round-off only
    assert _scaled_err(b.rate_pps, a.rate_pps) < 1e-10


def test_adaptive_argument_names_match_the_kernel():
    from ecocc.dde import codegen
    sysm = _system(_staggered(), 1.0)
    mod = codegen.load(codegen.generate(sysm))  # loading compiles nothing
    code = mod.adaptive_kernel.py_func.__code__
    assert code.co_varnames[:code.co_argcount] == engine.ADAPTIVE_ARGS
    code = mod.lanes_kernel_strided.py_func.__code__
    assert code.co_varnames[:code.co_argcount] == engine.LANES_ARGS
    code = mod.fixed_kernel_strided.py_func.__code__
    assert code.co_varnames[:code.co_argcount] == engine.FIXED_ARGS



@pytest.mark.parametrize("name", ["staggered-dumbbell", "parking-lot"])
def test_adaptive_kernel_rk23_matches_numpy(name):
    """Bogacki-Shampine 3(2): the same generic integrator with the NumPy solver's RK23 tableau (no other
    kernel: the tableau is an argument).  Bounds as for RK45 (test_adaptive_kernel_matches_numpy)."""
    t_end = 10.0
    sysm = _system(NETWORKS[name](), t_end)
    te = output_grid(t_end, 0.05)
    rtol, atol = 1e-7, sysm.default_atol()
    ref = solve_dde(sysm.problem(), t_end, rtol=rtol, atol=atol, t_eval=te, method="RK23")
    got = engine.solve_adaptive(sysm, t_end, rtol=rtol, atol=atol, t_eval=te, method="RK23")
    assert got.method == "RK23" and got.status == ref.status
    assert abs(got.n_steps - ref.n_steps) <= 0.1 * ref.n_steps  # the same steps unless round-off flips one
    lay = sysm.layout
    u = np.s_[:, : lay["queue"].start]
    q = np.s_[:, lay["queue"].sl]
    assert np.max(np.abs(got.y[u] - ref.y[u])) < 100 * rtol
    assert np.max(np.abs(got.y[q] - ref.y[q])) < 1e-2
    with pytest.raises(InputError, match="method"):
        engine.solve_adaptive(sysm, t_end, t_eval=te, method="RK4")


def test_simulate_method_option():
    """simulate(method=...) picks the adaptive pair on both engines; bad values are refused naming the field."""
    net = _staggered()
    kw = dict(t_end_s=3.0, r0_pps=10.0, output_dt_s=0.1, method="RK23")
    a = simulate(net, "aecp", engine="numpy", **kw)
    b = simulate(net, "aecp", engine="numba", **kw)
    assert a.solver["method"] == b.solver["method"] == "RK23"
    assert np.max(np.abs(b.queue_pkts - a.queue_pkts)) < 1e-2  # as test_simulate_engine_numba_trajectory
    with pytest.raises(InputError, match="method = 'RK4' is not allowed"):
        simulate(net, "aecp", t_end_s=1.0, method="RK4")
    with pytest.raises(InputError, match="method = 'RK23' is not allowed"):
        simulate(net, "aecp", t_end_s=1.0, method="RK23", solver="fixed", step_s=0.01)
