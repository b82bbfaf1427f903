"""Mixed-protocol networks on the compiled engine (ecocc.dde.codegen_mixed) against the NumPy composite.

The composite kernel is generated from the member models' laws; the NumPy composite
(:meth:`ecocc.mixed.MixedSystem.rhs`, run by :func:`ecocc.dde.adaptive.solve_dde`) is the reference.  Each
member combination compiles once per machine (about a minute on a busy 2-core machine, cached on disk), so
every test that runs a compiled kernel is ``@pytest.mark.slow``; the default suite keeps the checks that
compile nothing (what is generated, what is refused).

Tolerances (the rules of tests/test_codegen.py, whose module docstring derives them):

* the same accepted steps: the runs agree to round-off -- 1e-9 relative to ``max(1, |y_i|)`` (double
  round-off, ~1e-16 per operation, accumulated over ~10^3 steps of ~10^2 operations and amplified by the
  dynamics);
* another mesh (a round-off difference flipped one accept/reject decision or moved a located queue crossing):
  two error-controlled solutions, each within a few tens of local tolerances of the truth -- we allow
  200 x ``atol_i + rtol |y_i|``;
* conservation (arrived = departed + lost + queue) in the compiled output: 1e-6 of the arrivals -- the counters
  are integrated to atol 1e-3 packets with the queue by the same steps, the clipped volume is booked by the
  projection, so the balance holds per step to round-off of sums of ~1e4 packets.
* a composite with aggregated groups (``GeneratedMixed.agg_groups``: a member's delayed law summed per link in
  the history, docs/notes/mixagg.md) reads the Hermite of the sum of log-stored states' loads where the NumPy
  composite sums the loads of the states' Hermites: they differ at the order of the interpolation error, not
  round-off, so the same-mesh rule does not describe it even on the same steps; checked instead as
  tests/test_codegen.py's aggregated load: within 200 tolerances of the NumPy run, and no less accurate than it
  against a NumPy reference 1,000 times tighter (``2 x + 1``).  Where that one draw fails, the medians over the rtol
  and three below it (x 0.5, 0.2, 0.1) decide: once both runs lie within a few tolerances of the reference, which
  mesh lands closer is chance (the 25-packet network below since the full buffer's images, 2026-11-29: compiled 12,
  NumPy 0.80 tolerances at rtol 1e-6; at 5e-7, 2e-7, 1e-7 compiled 2.1, 1.7, 1.1 and NumPy 3.8, 1.3, 0.31; before
  the images 333 and 331).
"""
import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pytest

from ecocc import simulate
from ecocc.dde.adaptive import solve_dde
from ecocc.errors import InputError
from ecocc.mixed import Mixed, MixedSystem, resolve_protocols
from ecocc.models.base import ModelParams, NetworkModel
from ecocc.network import CrossTraffic, Flow, Link, Network, dumbbell
from ecocc.simulate import output_grid

RTOL = 1e-6


# -- a sender that ignores every signal (not in the registry): AECP beside it takes the leftover -------------
@dataclass(frozen=True)
class CBRParams(ModelParams):
    pass


class CBR(NetworkModel):
    """Constant bit rate: sends its initial rate forever, ignores every signal."""

    name = "cbr"
    Params = CBRParams
    flow_states = ("x",)
    flow_log = (False,)

    def flow_rate(self, ops, s, qdelay, P, st):
        return s["x"]

    def link_signal(self, ops, ls, q, y, C, P, lst):
        return 0.0 * q

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        return {"x": 0.0 * s["x"]}

    def initial_flow_state(self, net, P):
        return {"x": net.arrays.initial_rate_pps}


def _system(net, t_end, model="aecp", rtt_includes_queueing=False, **overrides):
    members, fm = resolve_protocols(net, model, None, None, overrides)
    return MixedSystem(Mixed(members, fm), net, t_end, rtt_includes_queueing=rtt_includes_queueing)


def _conservation(sysm, y):
    lay = sysm.layout
    bal = y[:, lay["arrived"].sl] - y[:, lay["departed"].sl] - y[:, lay["lost"].sl] - y[:, lay["queue"].sl]
    return float(np.max(np.abs(bal))), float(np.max(y[:, lay["arrived"].sl]))


def _compare(sysm, t_end, rtol=RTOL, dt=0.05, until=None):
    """Compiled against the NumPy composite (module docstring); ``until``: compare the samples up to that time
    only (conservation over the whole run)."""
    from ecocc.dde import codegen_mixed as cm
    from ecocc.dde import engine
    g = cm.generate(sysm)
    agg = bool(g.agg_groups or g.cheb_groups)  # summed per link / per slot: the aggregated rules
    te = output_grid(t_end, dt)
    atol = sysm.default_atol()
    got = engine.solve_adaptive(sysm, t_end, rtol=rtol, atol=atol, t_eval=te)
    ref = solve_dde(sysm.problem(), t_end, rtol=rtol, atol=atol, t_eval=te)
    assert got.status == ref.status == "success", (got.message, ref.message)
    assert got.settings["kernel"].startswith("ecocc_mix_")
    lay = sysm.layout
    # lost and departed compared at the end only: inside a step whose queue crossed a bound the compiled
    # kernel books the clipped volume in its output samples, the NumPy solver only clips the queue
    cols = np.ones(got.y.shape[1], dtype=bool)
    cols[lay["lost"].sl] = cols[lay["departed"].sl] = False
    keep = te <= (t_end if until is None else until)
    diff = np.abs(got.y - ref.y)[keep]
    sc = (atol + rtol * np.abs(ref.y))[keep]
    last = -1 if until is None else int(np.flatnonzero(keep)[-1])
    scaled = max(np.max(diff[:, cols] / sc[:, cols]), np.max(diff[last] / sc[last]))
    same_mesh = ((got.n_steps, got.n_rejected) == (ref.n_steps, ref.n_rejected)
                 and math.isclose(got.min_step, ref.min_step, rel_tol=1e-9))
    if agg:
        assert scaled < 200, scaled  # two error-controlled solutions (module docstring)
        tight = solve_dde(sysm.problem(), t_end, rtol=rtol * 1e-3, atol=atol * 1e-3, t_eval=te)
        sct = (atol + rtol * np.abs(tight.y))[keep][:, cols]

        def err(r):
            return np.max(np.abs(r.y - tight.y)[keep][:, cols] / sct)

        e_got, e_ref = err(got), err(ref)
        if e_got > 2 * e_ref + 1.0:  # one mesh's draw: the medians over four rtols decide (module docstring)
            draws = [(e_got, e_ref)] + [
                (err(engine.solve_adaptive(sysm, t_end, rtol=rtol * f, atol=atol, t_eval=te)),
                 err(solve_dde(sysm.problem(), t_end, rtol=rtol * f, atol=atol, t_eval=te))) for f in (0.5, 0.2, 0.1)]
            e_got, e_ref = (float(np.median([d[i] for d in draws])) for i in (0, 1))
            assert e_got <= 2 * e_ref + 1.0, draws  # no less accurate (module docstring)
    elif same_mesh:
        rel = np.max(diff[:, cols] / np.maximum(1.0, np.abs(ref.y[keep][:, cols])))
        assert rel < 1e-9, rel  # round-off (module docstring)
    else:
        assert scaled < 200, scaled  # two error-controlled solutions (module docstring)
    err, arrived = _conservation(sysm, got.y)
    assert err < 1e-6 * max(1.0, arrived), err  # module docstring
    return got, ref


def _with_forward_delays():
    """A Symbiosis + Reno dumbbell whose flows spend 20 ms of their 100 ms RTT before the link (forward)."""
    net = dumbbell(1000.0, [0.1, 0.1], buffer_pkts=50, protocols=["symbiosis", "reno"])
    return dataclasses.replace(net, flows=tuple(dataclasses.replace(f, forward_delays_s=(0.02,)) for f in net.flows))


# -- the default suite: nothing compiled -----------------------------------------------------------------------

def test_composite_source_is_generated_from_each_member_law():
    """The composite module calls each member's own generated laws, and its history keeps only components the
    NumPy composite reads through a delay."""
    from ecocc.dde import codegen_mixed as cm
    net = dumbbell(1000.0, [0.1, 0.1], buffer_pkts=50, protocols=["symbiosis", "reno"])
    sysm = _system(net, 1.0, reno__aqm="droptail")
    g = cm.generate(sysm)
    for fn in ("_m0_rate", "_m0_load", "_m0_own", "_m0_signal", "_m0_flow", "_m1_rate", "_m1_signal", "_m1_flow"):
        assert f"def {fn}(" in g.source, fn
    # Symbiosis' signal K - A counts its own flows by flow_load (w / tau) and Reno's by flow_rate (w / (tau+q/C))
    assert "yy += _m0_load(" in g.source and "yy += _m1_rate(" in g.source
    delayed = np.unique(np.concatenate([lk.comps for lk in sysm.problem().lookups]))
    assert set(g.hsrc(sysm).tolist()) <= set(delayed.tolist())
    # one module per member combination and options, not per network or numeric parameter
    other = _system(dumbbell(500.0, [0.05, 0.2, 0.3], buffer_pkts=80, protocols=["symbiosis", "reno", "reno"]),
                    2.0, reno__aqm="droptail", symbiosis__gamma=0.3)
    assert cm.generate(other) is g
    assert cm.generate(_system(net, 1.0)) is not g  # Reno on RED: other laws


def test_composite_sums_per_link_what_it_can_and_the_load_only_where_read():
    """Aggregated groups (docs/notes/mixagg.md): a member's delayed law summed per link ahead of time where it
    does not read the current queueing delay -- TCP Symbiosis' own w/tau, not Reno's w/(tau + Q(t)) nor
    Symbiosis' rate (both read the current queueing delay, as MixedSystem.rhs evaluates them); drop-tail Reno's
    signal sums its load only at a full buffer (``_m1_reads_y``, the single models' ``lazy``), and so does RED's (at
    its queue's bound)."""
    from ecocc.dde import codegen_mixed as cm
    net = dumbbell(1000.0, [0.1, 0.2, 0.3], buffer_pkts=50, protocols=["symbiosis", "reno", "reno"])
    g = cm.generate(_system(net, 1.0, reno__aqm="droptail"))
    assert g.agg_groups == [[0, "load"]]
    for fn in ("_model_hist_cols", "_model_hist_seg", "_m0_load_dot", "_m1_reads_y"):
        assert f"def {fn}(" in g.source, fn
    assert "if _m1_reads_y(" in g.source and "def _m0_reads_y(" not in g.source  # Symbiosis' K - A: always
    # the laws read with the current queueing delay, g(u) c / (c + Q(t)) with c = tau: Chebyshev groups
    # (docs/notes/mixcur.md) -- Reno's rate (= its load, one group) and Symbiosis' rate in Reno's drop-tail sum
    assert g.cheb_groups == [[1, "rate"], [0, "rate"]]
    assert "def _m1_rate_pole(st_rtt" in g.source and "return float(st_rtt)" in g.source
    # measured available bandwidth: Symbiosis' load is its rate, which reads the current queueing delay
    gm = cm.generate(_system(net, 1.0, reno__aqm="droptail", symbiosis__available="measured"))
    assert gm.agg_groups == [] and gm.cheb_groups == [[0, "load"], [1, "rate"]]
    # RED reads the load only at its queue's bound (the fraction lost there is 1 - C/y, models.loss; on a mixed
    # network the bound is the buffer): Symbiosis' rate in Reno's sum there as with drop-tail
    gr = cm.generate(_system(net, 1.0))
    assert gr.agg_groups == [[0, "load"]] and gr.cheb_groups == [[1, "rate"], [0, "rate"]]
    assert "if _m1_reads_y(" in gr.source
    # load_rtt="sent": every such law is read at the sending time, summed per link (no Chebyshev group)
    members, fm = resolve_protocols(net, "aecp", None, None, {"reno__aqm": "droptail"})
    gs = cm.generate(MixedSystem(Mixed(members, fm), net, 1.0, load_rtt="sent"))
    assert gs.cheb_groups == [] and "_cheb_coefs" not in gs.source


def test_composite_with_queueing_delay_in_the_rtt_sums_per_flow_at_lengthened_delays():
    """``rtt_includes_queueing``: a variant of the composite text (the default text unchanged, so the shipped
    composite too) whose feedback delays add the flow's queueing delay, as the single kernels' ``_sdd_delay``,
    and whose loads are summed per flow (no aggregated or Chebyshev groups); the compiled engine serves it."""
    from ecocc.dde import codegen_mixed as cm
    net = dumbbell(1000.0, [0.1, 0.2], buffer_pkts=50, protocols=["symbiosis", "reno"])
    g = cm.generate(_system(net, 1.0, reno__aqm="droptail"))
    gq = cm.generate(_system(net, 1.0, rtt_includes_queueing=True, reno__aqm="droptail"))
    assert gq is not g and gq.name != g.name and gq.sdd and not g.sdd
    assert gq.agg_groups == [] and gq.cheb_groups == []
    assert "dd = (bwd[j] + qx if bwd[j] > 0.0 else 0.0)" in gq.source and "+ qx" not in g.source
    assert "dd = (rtt[p] + qx if rtt[p] > 0.0 else 0.0)" in gq.source  # Symbiosis' own load one round trip back
    assert cm.gap(_system(net, 1.0, rtt_includes_queueing=True, reno__aqm="droptail")) is None


def test_composite_with_forward_delays_reads_each_flow_at_its_own_time():
    """Forward delays: a variant of the composite text whose arrival sums each flow's rate one forward delay back
    (by its member's rate law, ``FWL`` in ``lflows`` order) and whose loads read each flow at the pair's backward
    plus the flow's forward delay (``FWM`` in ``mlflows`` order), per flow (no groups); the history keeps every
    state a rate law reads; the kernel data carry both orders of the forward delays."""
    from ecocc.dde import codegen_mixed as cm
    fwd = _with_forward_delays()
    sysm = _system(fwd, 1.0, reno__aqm="droptail")
    g = cm.generate(sysm)
    assert g.fwd and not g.sdd and g.agg_groups == [] and g.cheb_groups == []
    assert "a += _m0_rate(" in g.source and "a += _m1_rate(" in g.source and "tdk = td - FWM[jj]" in g.source
    assert "dd = bwd[j] + FWM[jj]" in g.source and "PRE = np.full" not in g.source
    g0 = cm.generate(_system(dumbbell(1000.0, [0.1, 0.1], buffer_pkts=50, protocols=["symbiosis", "reno"]), 1.0,
                             reno__aqm="droptail"))
    assert "FWL" not in g0.source and g0.name != g.name
    D, Wk = cm.kernel_data(sysm, g)
    assert len(D) == len(cm._D_NAMES.split(",")) + 2 and len(Wk) == 7
    assert np.allclose(D[-2], 0.02) and np.allclose(D[-1], 0.02)  # 20 ms before the link, both flows
    delayed = np.unique(np.concatenate([lk.comps for lk in sysm.problem().lookups]))
    assert set(g.hsrc(sysm).tolist()) <= set(delayed.tolist())


def test_chebyshev_coefficients_reach_round_off_on_the_interval():
    """``_cheb_coefs`` (the closed form of c / (c + Q) in Chebyshev polynomials): with the terms it reports, the
    sum is within a few round-offs of c / (c + Q) on the whole interval; -1 where no expansion is kept (an
    infinite buffer, c not above the interval's negative margin, more than NT_MAX terms)."""
    from numba import njit
    from ecocc.dde import codegen_mixed as cm
    ns = {"njit": lambda cache: njit, "math": math, "np": np}  # compiled, not cached (no file)
    exec(cm._CHEB_COEFS, ns)  # noqa: S102  (the generator's own source of the function)
    f = ns["_cheb_coefs"]
    q = np.linspace(-1.0, 1.0, 2001)
    for cp, qm in ((0.01, 500 / 15000), (0.5, 500 / 15000), (0.02, 0.05), (0.1, 1e-4)):
        qa, qb = 0.5 * qm, (0.5 + cm.Q_MARGIN) * qm
        CF = np.zeros((cm.NT_MAX, 1))
        nt = f(cp, qa, qb, CF, 0, 0)
        assert 1 <= nt <= cm.NT_MAX
        got = np.polynomial.chebyshev.chebval(q, CF[:nt, 0])
        want = cp / (cp + qa + qb * q)
        # truncation <= 2^-53 relative by construction, plus the sum's round-off (a few ulps of its terms)
        assert np.max(np.abs(got - want) / want) < 1e-14, (cp, qm)
    CF = np.zeros((cm.NT_MAX, 1))
    assert f(0.01, math.inf, math.inf, CF, 0, 0) == -1  # no finite buffer: the per-flow sum
    assert f(1e-6, 0.5, 0.5 + cm.Q_MARGIN, CF, 0, 0) == -1  # pole inside the interval's margin
    assert f(0.004, 0.025, (0.5 + cm.Q_MARGIN) * 0.05, CF, 0, 0) == -1  # RTT 4 ms, 50 ms of buffer: > NT_MAX terms


def test_kernel_data_groups_each_links_flows_by_member():
    from ecocc.dde import codegen_mixed as cm
    links = (Link("a", 1000.0, buffer_pkts=50), Link("b", 800.0, buffer_pkts=50))
    flows = (Flow("f0", ("a", "b"), 0.1, protocol="reno"), Flow("f1", ("a",), 0.2, protocol="symbiosis"),
             Flow("f2", ("b",), 0.3, protocol="reno", start_s=2.0), Flow("f3", ("a", "b"), 0.1, protocol="symbiosis",
                                                                        start_s=1.5))
    sysm = _system(Network(links, flows), 1.0, model="symbiosis", reno__aqm="droptail")
    g = cm.generate(sysm)
    D, _ = cm.kernel_data(sysm, g)
    fmem, lsmin, mlptr, mlflows = D[17], D[19], D[20], D[21]
    nm1 = len(sysm.mem) + 1
    lptr, lflows = sysm.a.flows_by_link()
    for l in range(2):
        on = set(lflows[lptr[l]:lptr[l + 1]].tolist())
        assert lsmin[l] == min(sysm.a.start_s[list(on)])
        got = []
        for z in range(len(sysm.mem)):
            part = mlflows[mlptr[l * nm1 + z]:mlptr[l * nm1 + z + 1]].tolist()
            assert all(fmem[k] == z for k in part)
            got += part
        assert sorted(got) == sorted(on) and mlptr[l * nm1 + len(sysm.mem)] == lptr[l + 1]
    # the Chebyshev groups' slots: per link its flows by path, each slot's flows by member, a flow of the slot
    lsl, sptr, sfl, srep, QA, QB = D[22:28]
    paths = {k: tuple(sysm.a.pair_link[sysm.a.flow_pair_start[k]:sysm.a.flow_pair_start[k + 1]]) for k in range(4)}
    for l in range(2):
        on = lflows[lptr[l]:lptr[l + 1]].tolist()
        assert lsl[l + 1] - lsl[l] == len({paths[k] for k in on})
        seen = []
        for ss in range(lsl[l], lsl[l + 1]):
            part = sfl[sptr[ss * nm1]:sptr[ss * nm1 + len(sysm.mem)]].tolist()
            assert srep[ss] in part and {paths[k] for k in part} == {paths[srep[ss]]}
            assert [fmem[k] for k in part] == sorted(fmem[k] for k in part)
            seen += part
        assert sorted(seen) == sorted(on)
    # each flow's interval: [0, its path's largest queueing delay] with the margin on both sides
    qmax = np.array([sum(50.0 / sysm.C[l] for l in paths[k]) for k in range(4)])
    assert np.allclose(QA - QB, -cm.Q_MARGIN * qmax) and np.allclose(QA + QB, (1 + cm.Q_MARGIN) * qmax)


def test_compiled_refusals_name_what_runs_instead():
    from ecocc.dde import codegen_mixed as cm
    # XCP's router extras (n_active, self_seen, rate) exist in neither composite: refused on every engine, one
    # error naming the member, before anything runs (the NumPy composite used to fail with KeyError 'n_active')
    net = dumbbell(1000.0, [0.1, 0.1], buffer_pkts=50, protocols=["symbiosis", "xcp"])
    for engine in ("numpy", "auto", "numba"):
        with pytest.raises(InputError) as e:
            simulate(net, t_end_s=1.0, engine=engine)
        assert e.value.field == "protocols.xcp.model" and "self_seen" in e.value.allowed
    fwd = _with_forward_delays()  # forward delays: the adaptive kernel follows them, the fixed-step one does not
    with pytest.raises(InputError) as e:
        simulate(fwd, t_end_s=1.0, engine="numba", solver="fixed", step_s=0.005)
    assert e.value.field == "engine" and "'numpy'" in e.value.allowed
    assert cm.gap(_system(fwd, 1.0)) is None and "fixed-step" in cm.gap(_system(fwd, 1.0), "fixed")


def test_engine_auto_resolves_a_mixed_network_to_the_compiled_kernel(monkeypatch):
    from ecocc.dde import engine
    if not engine.HAVE_NUMBA:
        pytest.skip("numba missing")
    monkeypatch.delenv("ECOCC_ENGINE", raising=False)
    net = dumbbell(1000.0, [0.1, 0.1], buffer_pkts=50, protocols=["symbiosis", "reno"])
    assert engine.resolve_engine("auto", None, net) == "numba"


# -- compiled against the NumPy composite (slow: each member combination compiles once per machine) ---------

@pytest.mark.slow
def test_symbiosis_and_reno_droptail_compiled_matches_numpy():
    net = dumbbell(1000.0, [0.1, 0.1], buffer_pkts=50, protocols=["symbiosis", "reno"])
    _compare(_system(net, 10.0, reno__aqm="droptail"), 10.0)


@pytest.mark.slow
@pytest.mark.parametrize("buf", [400.0, 100.0, 25.0])
def test_symbiosis_and_reno_aggregated_groups_on_a_network(buf):
    """Aggregated groups, Chebyshev groups and the lazy drop-tail sum on three links, flows of both protocols on
    routes of one to three links (several path slots per link) with distinct RTTs, some starting and stopping
    mid-run, a cross-traffic burst.  Buffers 400: never full, the whole run; Reno's rates in Symbiosis' signal read
    with the current queueing delay: by the Chebyshev group on f4's slot, per flow on f2's and f5's (RTTs of 41 and
    62 ms against 0.4 and 0.67 s of buffer delay need more than NT_MAX terms); buffers 100 and 25: every flow's
    expansion kept (14 to 35 terms at 100), links overflow (the drop-tail branch reads the load through two
    Chebyshev groups), compared up to 0.4 s after the first loss, as tests/test_codegen.py's
    test_reno_family_load_compiled_matches_numpy (after it drop-tail is ill-conditioned: the jump at a full
    buffer is not located); conservation over the whole run."""
    b = buf
    links = (Link("a", 1000.0, delay_s=0.004, buffer_pkts=b), Link("b", 1500.0, delay_s=0.006, buffer_pkts=b),
             Link("c", 1200.0, delay_s=0.005, buffer_pkts=b))
    spec = [("f1", ("a", "b", "c"), 0.13, 0.0, math.inf, "symbiosis"), ("f2", ("a",), 0.041, 0.7, math.inf, "reno"),
            ("f3", ("b", "c"), 0.087, 1.3, 6.13, "symbiosis"), ("f4", ("c",), 0.29, 0.0, 7.31, "reno"),
            ("f5", ("a", "b"), 0.062, 2.1, math.inf, "reno"), ("f6", ("b",), 0.18, 3.37, math.inf, "symbiosis"),
            ("f7", ("a",), 0.11, 0.0, math.inf, "symbiosis")]
    flows = tuple(Flow(n, r, rtt, start_s=s0, stop_s=s1, initial_rate_pps=100.0, protocol=pr)
                  for n, r, rtt, s0, s1, pr in spec)
    ct = (CrossTraffic("b", kind="schedule", schedule=((4.0, 300.0), (5.2, 0.0))),)
    net = Network(links, flows, cross_traffic=ct)
    sysm = _system(net, 10.0, model="symbiosis", reno__aqm="droptail")
    if buf > 100:
        got, ref = _compare(sysm, 10.0)
        assert np.max(ref.y[:, sysm.layout["lost"].sl]) < 1e-9  # never full
        return
    ref = solve_dde(sysm.problem(), 10.0, rtol=RTOL, atol=sysm.default_atol(), t_eval=output_grid(10.0, 0.05))
    lost = ref.y[:, sysm.layout["lost"].sl].max(axis=1)
    assert lost[-1] > 1.0  # overflows
    _compare(sysm, 10.0, until=float(ref.t[np.argmax(lost > 1e-6)]) + 0.4)


@pytest.mark.slow
@pytest.mark.parametrize("members", [("symbiosis", "reno"), ("petcp", "reno", "symbiosis")])
def test_mixed_queueing_delay_in_the_rtt_compiled_matches_numpy(members):
    """``rtt_includes_queueing`` on a composite: drop-tail Reno against TCP Symbiosis on a dumbbell whose buffer
    fills (compared up to 0.4 s after the first loss, as the aggregated-groups test: drop-tail is ill-conditioned
    after it; conservation over the whole run), and three members on a parking lot (buffers never full); the
    option moves the runs by far more than the rule allows (it is not a no-op in the kernel)."""
    if len(members) == 2:
        net = dumbbell(1000.0, [0.05, 0.12], buffer_pkts=12, protocols=list(members), initial_rate_pps=300.0)
    else:
        net = Network((Link("l1", 1000.0, buffer_pkts=300), Link("l2", 800.0, buffer_pkts=300)),
                      (Flow("f1", ("l1", "l2"), 0.08, protocol="petcp"), Flow("f2", ("l1",), 0.04, protocol="reno"),
                       Flow("f3", ("l2",), 0.06, protocol="symbiosis", start_s=1.3)))
    sysm = _system(net, 10.0, model=members[0], rtt_includes_queueing=True, reno__aqm="droptail")
    ref = solve_dde(sysm.problem(), 10.0, rtol=RTOL, atol=sysm.default_atol(), t_eval=output_grid(10.0, 0.05))
    lost = ref.y[:, sysm.layout["lost"].sl].max(axis=1)
    until = float(ref.t[np.argmax(lost > 1e-6)]) + 0.4 if lost[-1] > 1e-6 else None
    if len(members) == 2:
        assert until is not None and until < 9.0  # the buffer does fill
    qmax = ref.y[:, sysm.layout["queue"].sl].max()
    assert qmax > 5.0  # queueing delays of at least 5 ms lengthen the delays
    got, _ = _compare(sysm, 10.0, until=until)
    const = _system(net, 10.0, model=members[0], reno__aqm="droptail")
    other = solve_dde(const.problem(), 10.0, rtol=RTOL, atol=const.default_atol(), t_eval=output_grid(10.0, 0.05))
    keep = got.t <= (10.0 if until is None else until)
    sc = sysm.default_atol() + RTOL * np.abs(other.y)
    assert np.max((np.abs(got.y - other.y) / sc)[keep]) > 1e3  # module docstring's rule is 200


@pytest.mark.slow
@pytest.mark.parametrize("variant", [{}, {"rtt_includes_queueing": True}, {"load_rtt": "sent"}])
def test_mixed_forward_delays_compiled_matches_numpy(variant):
    """Forward delays on a composite (``delay_split="propagation"``: each flow's RTT split by the links' one-way
    delays, so loads and arrivals are read at distinct times per (link, flow)): Reno, TCP Symbiosis and PE-TCP on
    a parking lot with drop-tail buffers, alone, with the queueing delay in the RTT and with the sending time's
    queueing delay; conservation over the run (``_compare``)."""
    from ecocc.network import parking_lot
    net = parking_lot([1000.0, 800.0], 0.02, buffer_pkts=60, delay_split="propagation")
    net = dataclasses.replace(net, flows=tuple(dataclasses.replace(f, protocol=p)
                                               for f, p in zip(net.flows, ["reno", "symbiosis", "petcp"])))
    members, fm = resolve_protocols(net, "reno", None, None, {"reno__aqm": "droptail"})
    sysm = MixedSystem(Mixed(members, fm), net, 10.0, **variant)
    assert sysm.has_fwd
    got, ref = _compare(sysm, 10.0)
    assert np.max(ref.y[:, sysm.layout["queue"].sl]) > 5.0  # the queues (and with them the delays) move


@pytest.mark.slow
def test_petcp_and_reno_compiled_matches_numpy():
    net = dumbbell(1000.0, [0.1, 0.1], buffer_pkts=600, protocols=["petcp", "reno"])
    _compare(_system(net, 10.0), 10.0, rtol=1e-7)


@pytest.mark.slow
def test_aecp_beside_flows_that_ignore_the_rate_factor_compiled_matches_numpy():
    """tests/test_mixed.py's parking lot: AECP flows, a constant-rate flow (this file's model, not in the
    registry) and a PE-TCP flow -- three members in one composite."""
    links = (Link("l1", 1000.0), Link("l2", 800.0))
    flows = (Flow("a1", ("l1", "l2"), 0.08, protocol="aecp"), Flow("a2", ("l1",), 0.04, protocol="aecp"),
             Flow("a3", ("l2",), 0.04, protocol="aecp"), Flow("c1", ("l2",), 0.04, initial_rate_pps=300.0),
             Flow("p1", ("l1",), 0.04, protocol="petcp"))
    net = Network(links, flows, name="mixed-parking-lot")
    _compare(_system(net, 10.0, model=CBR()), 10.0)


@pytest.mark.slow
def test_mixed_simulate_compiled_fixed_step_matches_numpy():
    net = dumbbell(1000.0, [0.1, 0.1], buffer_pkts=50, protocols=["symbiosis", "reno"])
    a = simulate(net, t_end_s=5.0, solver="fixed", step_s=0.002, engine="numba", reno__aqm="droptail")
    b = simulate(net, t_end_s=5.0, solver="fixed", step_s=0.002, engine="numpy", reno__aqm="droptail")
    assert a.ok and b.ok
    # the same grid, stages, masks and clamps: round-off only, 1e-9 relative to max(1, |rate|) (module docstring)
    assert np.max(np.abs(a.rate_pps - b.rate_pps) / np.maximum(1.0, np.abs(b.rate_pps))) < 1e-9
    assert np.max(np.abs(a.arrived_pkts - a.departed_pkts - a.lost_pkts - a.queue_pkts)) \
        < 1e-6 * max(1.0, float(np.max(a.arrived_pkts)))  # module docstring


@pytest.mark.slow
def test_aggregated_groups_check_is_their_hermite_error():
    """The composite kernel checks its summed columns at mid-step (``_model_hist_err``, as the single kernel's
    aggregated load: ``tests/test_codegen.py::test_aggregated_load_check_is_its_hermite_error``).  TCP Symbiosis +
    Reno, one flow each on a dumbbell, log-states moving linearly (every stage derivative ``c_k``): the Symbiosis
    load group ``w / tau`` is checked relative to its sum, and each Chebyshev group (a rate ``g(u) tau / (tau +
    Q)`` expanded in Q, terms ``a_n g(u)``, ``g = e^u / tau``) by the sum of its terms' errors relative to its
    first term: ``sum_n |a_n| e / (|a_0| max g)``, ``e`` the Hermite error of ``g`` at mid-step.  Computed here in
    NumPy from the coefficients ``a_n`` the module wrote (``_model_hist_cols``) and checked against their closed
    form ``a_n = 2 a_0 (-r)^n``."""
    from ecocc.dde import codegen
    from ecocc.dde import codegen_mixed as cm
    from ecocc.dde.engine import _TABLEAUX
    taus = np.array([0.05, 0.08])  # s: flow 0 Symbiosis, flow 1 Reno
    net = dumbbell(1000.0, list(taus), protocols=["symbiosis", "reno"], buffer_pkts=100.0)
    members, fm = resolve_protocols(net, "symbiosis", None, {"symbiosis": {"model": "symbiosis"},
                                                             "reno": {"model": "reno", "aqm": "droptail"}}, {})
    sysm = MixedSystem(Mixed(members, fm), net, 10.0)
    gen = cm.generate(sysm)
    assert gen.agg_groups == [[0, "load"]] and sorted(gen.cheb_groups) == [[0, "rate"], [1, "rate"]]
    mod = codegen.load(gen)  # the composite's module (codegen.load serves both generators)
    D, _ = cm.kernel_data(sysm, gen)
    nh = gen.hsrc(sysm).size
    ncol = nh + mod._model_hist_cols(D)  # also computes the coefficients CF and the terms CNO
    CF, CNO = D[28], D[29]
    tab = _TABLEAUX["RK45"]
    Pd = np.asarray(tab["P"], dtype=float)
    n_st = len(tab["C"])
    half_pow = 0.5 ** np.arange(1, Pd.shape[1] + 1)
    u0, c = np.log([30.0, 20.0]), np.array([2.0, -4.0])  # ln(packets), 1/s: the two flows' log-windows
    rtol, t = 1e-8, 1.0

    def herm_err(g0, g1, d0, d1, gm, h):
        return abs(gm - (0.5 * (g0 + g1) + 0.125 * h * (d0 - d1)))

    def check(h):
        y, y_new = np.zeros(sysm.n), np.zeros(sysm.n)
        y[:2], y_new[:2] = u0, u0 + c * h  # the flow blocks first (one flow per member), then the queue
        K = np.zeros((n_st + 1, sysm.n))
        K[:, :2] = c
        HY, HFA, HFB = (np.zeros((2, ncol)) for _ in range(3))
        mod._model_hist_seg(t, h, y, y_new, K[0], K[n_st], HY, HFA, HFB, 0, nh, D)
        got = mod._model_hist_err(t, h, y, K, n_st, Pd, half_pow, rtol, HY, HFA, HFB, 0, nh, D)
        g0, g1, gm = np.exp(u0) / taus, np.exp(u0 + c * h) / taus, np.exp(u0 + 0.5 * c * h) / taus
        e = herm_err(g0, g1, c * g0, c * g1, gm, h)
        want = e[0] / (rtol * max(g0[0], g1[0]))  # the Symbiosis load group
        for grp, (zi, _) in enumerate(gen.cheb_groups):
            kf = zi  # member zi's one flow
            a = CF[grp * cm.NT_MAX: grp * cm.NT_MAX + CNO[grp + 1] - CNO[grp], kf]
            want = max(want, np.sum(np.abs(a)) * e[kf] / (rtol * abs(a[0]) * max(g0[kf], g1[kf])))
            r = -a[2] / a[1]
            assert np.allclose(a[1:], 2 * a[0] * (-r) ** np.arange(1, a.size), rtol=1e-12)
        return got, want

    got1, want1 = check(0.02)
    got2, want2 = check(0.01)
    # 1e-6 relative: the same formulas in another order; measured 15.6 and 0.99 tolerance units (the Chebyshev
    # groups' bound, a sum over their terms), 1e-9 relative apart: round-off
    assert got1 == pytest.approx(want1, rel=1e-6) and got2 == pytest.approx(want2, rel=1e-6)
    assert want1 > 0.0 and want2 > 0.0
    assert 12.0 < got1 / got2 < 20.0  # O(h^4): 16 in the limit
