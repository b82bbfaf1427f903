"""A full buffer's loss signal reaches the flows as a jump: both solvers end steps there (docs/notes/holdimages.md).

Case: drop-tail Reno on a dumbbell of 15,000 packets/s, RTTs 0.05/0.1/0.2/0.4 s, buffer 100 packets; the queue
fills at t = 31.59 s (and twice more before 60 s).  The loss signal ``max(0, 1 - C/y)`` at a full buffer
(:mod:`ecocc.models.loss`) switches on when the queue is held at its buffer and off when it leaves the buffer's
band, and flow ``j`` reads it one backward delay later.  Before the solvers ended steps at those images
(2026-11-29) a step straddled each jump and passed its error estimate: the windows were 6.5e-2 (relative) off a
rtol 1e-12 run at rtol 1e-7 and 2.3e-3 at rtol 1e-8, while the problem itself moves by 4.5e-7 for a capacity
1e-9 relative off (well conditioned).
"""
import numpy as np
import pytest

from ecocc import dumbbell
from ecocc.dde.adaptive import solve_dde
from ecocc.models import get_model
from ecocc.system import NetworkSystem

T_END = 60.0
T_OUT = np.linspace(1.0, T_END, 600)


def _system():
    m = get_model("reno")
    return NetworkSystem(m, dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], buffer_pkts=100.0), m.Params(aqm="droptail"),
                         T_END)


def _windows(sysm, y):
    b = sysm.layout["flow:W"]
    return np.exp(y[:, b.sl]) if b.log else y[:, b.sl]


def test_numpy_solver_steps_onto_every_image_of_the_buffer_filling():
    """For each filling of the buffer in the NumPy solver's own run, and each pair's backward delay ``d``, some
    accepted step ends exactly ``d`` after a step end at which the queue was at its buffer (within 1e-3 packets,
    the solvers' "a hair inside" rule: 10 x the queue's tolerance), i.e. at the image of the hold's start.
    Without the images a step end falling there, to 1e-12 relative, would be a coincidence (before them the
    closest step end was 3.2e-8 s from the first image)."""
    s = _system()
    sol = solve_dde(s.problem(), 45.0, rtol=1e-7, atol=s.default_atol(), record_steps=True)
    assert sol.status == "success"
    qi = s.layout["queue"].sl.start
    at_buf = sol.t[sol.y[:, qi] >= 100.0 - 1e-3]
    fillings = np.split(at_buf, np.flatnonzero(np.diff(at_buf) > 1.0) + 1)
    assert len(fillings) >= 2, fillings  # the buffer fills at 31.6 s and 42.0 s
    for ts in fillings:
        for d in s.bwd:
            gap = np.min(np.abs(sol.t[:, None] - (ts[None, :] + d)))
            assert gap <= 1e-12 * (ts[0] + d), (ts[0], d, gap)  # the step ends at t + d itself (a rounding)


def test_drop_tail_windows_against_a_tight_reference():
    """Compiled: the windows at rtol 1e-7 and 1e-8 against rtol = atol = 1e-12.  Measured after the change:
    1.3e-4 and 2.1e-5 (before it: 6.5e-2 and 2.3e-3).  What remains is where the solver finds the queue's
    release from the buffer: 6.8e-6 s late at the second filling (42.07 s), which shifts the queue by 1.4e-3
    packets (docs/notes/holdimages.md).  Bounds: 10x the measured values, far below the errors before."""
    pytest.importorskip("numba")
    from ecocc.dde import engine
    s = _system()
    ref = engine.solve_adaptive(s, T_END, rtol=1e-12, atol=np.full(s.n, 1e-12), t_eval=T_OUT)
    W_ref = _windows(s, ref.y)
    for rtol, bound in ((1e-7, 1.3e-3), (1e-8, 2.1e-4)):
        got = engine.solve_adaptive(_system(), T_END, rtol=rtol, atol=s.default_atol(), t_eval=T_OUT)
        err = np.max(np.abs(_windows(s, got.y) - W_ref) / W_ref)
        assert err <= bound, (rtol, err)


@pytest.mark.slow  # compiles Reno's lock-step kernel (53 s of the default suite on empty caches); in .ci/run
@pytest.mark.parametrize("overlap", [True, False])
def test_drop_tail_lock_step_windows_against_a_tight_reference(overlap):
    """The lock-step kernel (stability maps; ``overlap`` and ``kinks`` on, a map's default, or both off) steps onto
    the same images: its windows at rtol 1e-7 against the single-run kernel at rtol = atol = 1e-12.  Measured
    after the change (2026-11-29): 5.0e-5 with overlap and kinks, 1.3e-4 without (the single-run kernel's own
    1.3e-4, which it then matches step for step); before it 4.6e-2 and 3.7e-2, as the fuzz's case 52 of seed 2
    found on Scalable TCP (docs/notes/fuzz52.md).  Bound: the single-run test's, 10x the single kernel's error."""
    pytest.importorskip("numba")
    from ecocc.dde import engine
    s = _system()
    ref = engine.solve_adaptive(s, T_END, rtol=1e-12, atol=np.full(s.n, 1e-12), t_eval=T_OUT)
    W_ref = _windows(s, ref.y)
    out, st, _ = engine.solve_adaptive_batch([s], np.zeros(1, dtype=np.int64), [s.model.Params(aqm="droptail")], T_END, rtol=1e-7,
                                             t_eval=T_OUT, components=np.arange(s.layout["queue"].sl.stop),
                                             dynamics_only=True, overlap=overlap, kinks=overlap)
    assert st[0].value == "success"
    err = np.max(np.abs(_windows(s, out[0]) - W_ref) / W_ref)
    assert err <= 1.3e-3, err


def test_drop_tail_compiled_and_numpy_take_the_same_steps():
    """With the images in both solvers the compiled kernel and the NumPy solver take the same steps on this
    case (before the change they did not: 1,994 against 1,999 accepted steps at rtol 1e-7), and agree to
    round-off amplified through three buffer fillings (measured 1.2e-7 packets or packets/s at most; bound
    1e-5 of max(1, |y|))."""
    pytest.importorskip("numba")
    from ecocc.dde import engine
    s = _system()
    c = engine.solve_adaptive(s, T_END, rtol=1e-7, atol=s.default_atol(), t_eval=T_OUT)
    n = solve_dde(_system().problem(), T_END, rtol=1e-7, atol=s.default_atol(), t_eval=T_OUT)
    assert (c.n_steps, c.n_rejected) == (n.n_steps, n.n_rejected)
    assert np.max(np.abs(c.y - n.y) / np.maximum(1.0, np.abs(n.y))) <= 1e-5


# -- RED's drop-law levels: the drop fraction's kink at min_th reaches the flows one backward delay later ---------

def _red_net():
    """benchmarks/reno_accuracy.py's case: four flows, 15,000 packets/s, a 500-packet buffer (RED is Reno's default)."""
    return dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], buffer_pkts=500.0)


def _red_system(t_end):
    m = get_model("reno")
    return NetworkSystem(m, _red_net(), m.Params(), t_end)


def test_numpy_solver_steps_onto_every_image_of_a_min_th_crossing():
    """RED (``min_th`` 50 packets; benchmarks/reno_accuracy.py's case, whose queue first reaches it at 29.8 s and
    peaks at 51.8 packets): the drop fraction of the current queue has a kink where the queue crosses ``min_th``,
    a step ends at the located crossing (docs/notes/redlevels.md), and since 2026-11-29 the flows' reading of it,
    one backward delay later, is a breakpoint too.  For each crossing in the solver's own run (a step end within
    1e-3 packets of the level next to it: 10 x the queue's tolerance, the solvers' "a hair" rule) and each pair's
    backward delay ``d``, some step ends within 1e-6 s of ``crossing + d``.  Without the images step ends fall
    there only by chance (steps are 1e-3 to 1e-2 s long)."""
    t_end = 36.0
    s = _red_system(t_end)
    sol = solve_dde(s.problem(), t_end, rtol=1e-7, atol=s.default_atol(), record_steps=True)
    assert sol.status == "success"
    q = sol.y[:, s.layout["queue"].sl.start] - 50.0
    idx = np.flatnonzero(np.sign(q[1:]) != np.sign(q[:-1]))
    assert idx.size >= 6, sol.t[idx]  # 29.84, 29.94, 31.94, 32.08, 34.10, 34.19 s
    for i in idx:
        assert min(abs(q[i]), abs(q[i + 1])) <= 1e-3, (sol.t[i], q[i], q[i + 1])
        # the crossing, a hair from a step end: linear inside that step (off the located one by the hair times
        # the step's relative curvature, far below the bound)
        tc = sol.t[i] - q[i] * (sol.t[i + 1] - sol.t[i]) / (q[i + 1] - q[i])
        for d in s.bwd:
            if tc + d < t_end:
                gap = np.min(np.abs(sol.t - (tc + d)))
                assert gap <= 1e-6, (tc, d, gap)


def test_mixed_drop_tail_rates_against_a_tight_reference():
    """TCP Symbiosis against drop-tail Reno on one 41-packet buffer (the shipped ``symbiosis-vs-reno``, 60 s):
    both engines at the defaults against the compiled engine at rtol 1e-11, atol 1e-12 (the NumPy solver over the
    first 20 s: 13 s of wall time for 60).  Measured 2026-11-29: rates 3.4e-5 (compiled, 60 s) and 9.9e-6 (NumPy,
    20 s; 4.4e-5 over 60 s) relative.  Before the full buffer's images reached mixed networks, over 60 s: 3.7e-3 /
    9.0e-4; with the images but the old put-back rule (a queue released early inside a held step and 3.7e-4 packets
    below the buffer at its end was put back onto it, the buffer full 0.44 ms too long): 4.4e-2 / 2.5e-1 (NumPy 2.3e-3
    at 6.64 s already).  Bounds: 10x the measured values."""
    pytest.importorskip("numba")
    from ecocc.scenarios import load
    from ecocc.simulate import simulate
    sc = load("symbiosis-vs-reno")

    def run(engine, t_end, **kw):
        return simulate(sc.network, t_end_s=t_end, output_dt_s=sc.output_dt_s, summary_window_s=1.0, name=sc.name,
                        protocols=sc.protocols, engine=engine, checkpoint=None, **kw)

    for engine, t_end, bound in (("numba", 60.0, 3.4e-4), ("numpy", 20.0, 9.9e-5)):
        ref = run("numba", t_end, rtol=1e-11, atol=1e-12)
        got = run(engine, t_end)
        assert got.status == ref.status == "success"
        err = np.max(np.abs(got.rate_pps - ref.rate_pps) / ref.rate_pps)
        assert err <= bound, (engine, err)


def test_queue_atol_option_meets_reno_red_accuracy():
    """``simulate(queue_atol_pkts=...)``: the queues' absolute tolerance alone (README, "Why Reno's accuracy
    misses").  Reno under RED (benchmarks/reno_accuracy.py's case, 60 s) at rtol 1e-7 against rtol = atol = 1e-13:
    the aggregate rate 1.79e-5 off with the default 1e-4 packets, 8.0e-7 with 1e-6 (measured 2026-11-29).  Checked:
    the option reaches the solver (recorded in ``solver``), and it gains at least 5x (measured 22x); the 1e-6 run
    within 2x the issue's 1e-6 target (measured 0.8x: a thin margin, so the bound is not the target itself).  At
    those 20 times only: every 0.01 s the errors are 4.0e-4 and 1.9e-5 (benchmarks/accuracy_dense.md), still 21x."""
    pytest.importorskip("numba")
    from ecocc.simulate import simulate
    net = _red_net()
    kw = dict(t_end_s=60.0, output_dt_s=3.0, engine="numba")  # the benchmark's 20 times in [3, 60] s
    ref = simulate(net, "reno", rtol=1e-13, atol=1e-13, **kw)
    agg_ref = ref.rate_pps.sum(axis=1)
    errs = {}
    for qa in (None, 1e-6):
        got = simulate(net, "reno", queue_atol_pkts=qa, **kw)
        assert got.solver["queue_atol_pkts"] == (1e-4 if qa is None else qa)
        errs[qa] = np.max(np.abs(got.rate_pps.sum(axis=1) - agg_ref)[1:] / agg_ref[1:])
    assert errs[1e-6] * 5 <= errs[None], errs
    assert errs[1e-6] <= 2e-6, errs


# -- an empty queue: a signal linear in the queue (PE-TCP's (y + q/T)/C) kinks where the queue empties ----------

def _petcp_system(t_end, **params):
    """benchmarks/models_bench.py's N = 4 PE-TCP case: 15,000 packets/s, RTTs 0.05/0.1/0.2/0.4 s, no buffer limit;
    the queue first empties at 6.36 s, then about every 1.6 s."""
    m = get_model("petcp")
    return NetworkSystem(m, dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], buffer_pkts=float("inf")), m.Params(**params),
                         t_end)


def test_numpy_solver_steps_onto_every_image_of_an_emptying():
    """As the queue empties its derivative jumps from ``y - C`` to 0, so PE-TCP's signal kinks there and flow ``j``
    reads the kink one backward delay later (docs/notes/emptyimages.md).  For each emptying in the NumPy solver's
    own run (a step end with the queue within a hair of 0 after one above it) and each pair's backward delay ``d``, some step
    ends ``d`` later, to 1e-12 relative (the image itself, as for the full buffer's above); the generated kernels
    know the signal reads the queue linearly (``empty_images``), a model whose signal ignores an empty queue
    (Reno's drop-tail loss signal, RED below ``min_th``) gets no such images."""
    t_end = 12.0
    s = _petcp_system(t_end)
    assert s.problem().empty_images is not None and _system().problem().empty_images is None
    sol = solve_dde(s.problem(), t_end, rtol=1e-7, atol=s.default_atol(rtol=1e-7), record_steps=True)
    assert sol.status == "success"
    q = sol.y[:, s.layout["queue"].sl.start]
    # a recorded step end is the state before a queue a hair above 0 is moved onto it (10 x its tolerance, the
    # solvers' "a hair" rule), where the hold and its images start
    hair = 10 * 1e-7 * 0.01 * 15000.0
    empties = sol.t[1:][(q[1:] <= hair) & (q[:-1] > hair)]
    assert empties.size >= 3, empties  # 6.36, 7.94, 9.50, 11.07 s
    for te in empties:
        for d in s.bwd:
            if te + d < t_end:
                gap = np.min(np.abs(sol.t - (te + d)))
                assert gap <= 1e-12 * (te + d), (te, d, gap)


def test_petcp_default_queue_tolerance_follows_the_signal_slope():
    """``NetworkSystem.default_atol(rtol=...)``: the queues' tolerance is at most ``rtol / g`` with ``g`` the slope of
    the signal in the queue, here ``d rho / d q = 1 / (T C)`` by hand from eq. (4) of 000, so
    ``rtol T C`` = 1e-7 x 0.01 s x 15,000 packets/s = 1.5e-5 packets; never above the other models' 1e-4; without
    ``rtol`` the 1e-4 of before.  ``simulate`` passes its rtol and records the value."""
    from ecocc.simulate import simulate
    s = _petcp_system(1.0)
    qs = s.layout["queue"].sl
    assert s.default_atol(rtol=1e-7)[qs] == pytest.approx([1e-7 * 0.01 * 15000.0], rel=1e-12)
    assert s.default_atol(rtol=1e-9)[qs] == pytest.approx([1e-9 * 0.01 * 15000.0], rel=1e-12)
    assert s.default_atol(rtol=1e-3)[qs] == pytest.approx([1e-4])  # rtol T C = 0.15: capped
    assert _petcp_system(1.0, T_s=0.002).default_atol(rtol=1e-7)[qs] == pytest.approx([3e-6], rel=1e-12)
    assert s.default_atol()[qs] == pytest.approx([1e-4])
    assert s.default_atol(1e-6, rtol=1e-7)[qs] == pytest.approx([1e-6])  # an explicit value wins
    assert _system().default_atol(rtol=1e-7)[_system().layout["queue"].sl] == pytest.approx([1e-4])  # Reno
    net = dumbbell(15000.0, [0.05, 0.1], buffer_pkts=float("inf"))
    tr = simulate(net, "petcp", t_end_s=1.0, rtol=1e-8, engine="numpy")
    assert tr.solver["queue_atol_pkts"] == pytest.approx(1e-8 * 0.01 * 15000.0, rel=1e-12)


@pytest.mark.parametrize("engine_name", ["numba", "numpy"])
def test_petcp_error_falls_with_rtol(engine_name):
    """With every absolute tolerance 1e-13 (so that rtol alone decides), PE-TCP's aggregate rate over 20 s at rtol
    1e-7 and 1e-8 against rtol = atol = 1e-12 (compiled), at 400 times.  Measured 2026-11-29 with the emptying's
    images: compiled 5.6e-8 / 3.1e-8, NumPy 1.3e-7 / 2.4e-8; before them 1.16e-6 / 4.2e-7 and 1.25e-6 / 1.9e-7 (each
    straddled image left about rtol, and the steps around it were rejected two times in three).  Bounds: 3e-7 and
    1e-7, about 2.5x and 3x the largest measured and at least 4x below the values before."""
    if engine_name == "numba":
        pytest.importorskip("numba")
    from ecocc.dde import engine
    t_end = 20.0
    t_out = np.linspace(1.0, t_end, 400)
    s = _petcp_system(t_end)
    b = s.layout["flow:x"]
    ref = engine.solve_adaptive(s, t_end, rtol=1e-12, atol=np.full(s.n, 1e-12), t_eval=t_out)
    agg_ref = np.exp(ref.y[:, b.sl]).sum(axis=1)
    for rtol, bound in ((1e-7, 3e-7), (1e-8, 1e-7)):
        atol = np.full(s.n, 1e-13)
        sys2 = _petcp_system(t_end)
        got = (engine.solve_adaptive(sys2, t_end, rtol=rtol, atol=atol, t_eval=t_out) if engine_name == "numba"
               else solve_dde(sys2.problem(), t_end, rtol=rtol, atol=atol, t_eval=t_out))
        assert got.status == "success"
        err = np.max(np.abs(np.exp(got.y[:, b.sl]).sum(axis=1) - agg_ref) / agg_ref)
        assert err <= bound, (rtol, err)


def test_pending_images_weights_and_skipping():
    """``ecocc.dde.history``: the pending breakpoints keep their weights in order (the larger of two that coincide
    within 1e-9 relative), ``pop_images`` drops those passed, and ``skip_images`` drops the leading ones a step of
    ``h`` may straddle (``w h^3 <= rtol``) up to the first one kept; a jump's ``inf`` is always kept.  Expected values
    by hand from those rules."""
    from ecocc.dde.history import add_images, pop_images, skip_images
    dbp, dbw, dbn = np.empty(8), np.empty(8), np.zeros(1, dtype=np.int64)
    pl, bwd = np.array([0, 0, 1], dtype=np.int64), np.array([0.1, 0.3, 0.2])
    add_images(dbp, dbw, dbn, pl, bwd, 1.0, 0, 10.0, 5.0)          # 1.1 and 1.3, weight 5
    add_images(dbp, dbw, dbn, pl, bwd, 1.0, 1, 10.0, np.inf)       # 1.2, a jump
    add_images(dbp, dbw, dbn, pl, bwd, 1.0 + 1e-12, 0, 10.0, 50.0)  # coincide with 1.1 and 1.3: weight 50
    add_images(dbp, dbw, dbn, pl, bwd, 9.8, 0, 10.0, 1.0)          # 9.9 kept, 10.1 past t_end dropped
    assert dbn[0] == 4
    assert np.allclose(dbp[:4], [1.1, 1.2, 1.3, 9.9]) and list(dbw[:4]) == [50.0, np.inf, 50.0, 1.0]
    # a step of h = 0.01 s to 1.25 s at rtol 1e-4: 50 x 1e-6 = 5e-5 <= 1e-4, so 1.1 goes; the jump at 1.2 stops it
    assert skip_images(dbp, dbw, dbn, 1.25, 0.01, 1e-4) == pytest.approx(1.2)
    assert dbn[0] == 3
    # at rtol 1e-5 the same step keeps an image of weight 50 (5e-5 > 1e-5): nothing dropped
    assert pop_images(dbp, dbw, dbn, 1.2) == pytest.approx(1.3)
    assert skip_images(dbp, dbw, dbn, 1.35, 0.01, 1e-5) == pytest.approx(1.3) and dbn[0] == 2
    assert skip_images(dbp, dbw, dbn, 9.95, 0.01, 1e-4) == np.inf and dbn[0] == 0  # both straddled: none left


@pytest.mark.parametrize("bad", [True, [1.0, 2.0], [-1.0], [np.nan], "without hold_images"])
def test_problem_empty_images_validated(bad):
    """``DDEProblem(empty_images=...)``: one weight >= 0 per bounded component, and only with ``hold_images`` (the
    delays the images take); anything else is an InputError naming the field."""
    from ecocc.dde.problem import DDEProblem
    from ecocc.errors import InputError
    base = dict(n=1, rhs=lambda t, y, Z, lo, hi: -y, y0=[1.0], bounded=[0], lower=[0.0], upper=[10.0])
    hold = (np.array([0]), np.array([0.1]), np.array([0]))
    with pytest.raises(InputError, match="DDEProblem.empty_images"):
        if bad == "without hold_images":
            DDEProblem(**base, empty_images=[1.0])
        else:
            DDEProblem(**base, hold_images=hold, empty_images=bad)
    assert np.array_equal(DDEProblem(**base, hold_images=hold, empty_images=[np.inf]).empty_images, [np.inf])
