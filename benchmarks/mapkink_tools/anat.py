"""Where a lock-step group's attempts go: each rejected attempt attributed to the non-smooth event inside it.

``python benchmarks/mapkink_tools/anat.py MODEL SCALE_INDEX [GAIN_INDEX] [alone]``: the map's group (benchmarks/
map_models.py settings: 4-flow dumbbell, x = the model's gain ``linspace(0.25, 3, 100)[GAIN_INDEX:GAIN_INDEX+W]``
times its default, RTT scale ``linspace(0.25, 4, 100)[SCALE_INDEX]``, rtol 1e-7, overlap, kinks, 60 s), run once
through the instrumented kernel (``instr.py``: the map's own steps).  ``alone``: the first member on all lanes
(the point alone).  Events per lane, from the accepted steps' Hermite segments (the kernel's history):

* queue: hold start (its derivative jumps to 0) and release (its second derivative jumps) at 0 or the buffer;
* RED levels: the queue crosses ``min_th``/``max_th`` (the drop law's kink in the current queue);
* HSTCP: a window crosses ``low_window_pkts`` (``max(W, Low_Window)`` of ``hstcp_functions``);
* loss models: ``W(t - tau) p(t - d_b)`` crosses 1 (``loss_events_per_rtt``'s ``min(., 1)``);
* images: a queue event seen by flow ``j`` one backward delay ``bwd[j]`` later (the flows' first-generation
  kinks; the hold starts and RED crossings among them are the kernel's propagated breakpoints), and a flow's
  kink (window events, first-generation images) seen one delay later again (second generation: through the
  load by every flow ``i`` at ``+ fwd_p + bwd_i``, through the own window by flow ``p`` at ``+ rtt_p``);
* static breakpoints (the DDE's start-up discontinuities).

A rejected attempt ``(t, t + h)`` is attributed to the first class (in the order above, current before images)
with an event of its worst lane strictly inside it; ``none`` if there is none.  Counts are exact.
"""
from __future__ import annotations

import math
import sys
from collections import Counter, OrderedDict

import numpy as np

sys.path.insert(0, "benchmarks")
sys.path.insert(0, "benchmarks/mapkink_tools")
import instr  # noqa: E402
from map_models import GAIN, C_PPS  # noqa: E402

CLASSES = ["queue hold start (current)", "queue release (current)", "RED level (current queue)",
           "W crosses low_window", "W(t-tau) p crosses 1", "image: hold start", "image: release",
           "image: RED level", "image (2nd gen.): flow kink", "static breakpoint", "none"]


def hermite(seg_t, seg_h, ya, yb, fa, fb, s):
    """The history's cubic Hermite at times ``s`` (before the first node: the first value)."""
    k = np.clip(np.searchsorted(seg_t, s, side="right") - 1, 0, seg_t.size - 1)
    h = seg_h[k]
    th = np.clip((s - seg_t[k]) / h, 0.0, 1.0)
    th2, th3 = th * th, th * th * th
    v = (2 * th3 - 3 * th2 + 1) * ya[k] + (th3 - 2 * th2 + th) * h * fa[k] + (-2 * th3 + 3 * th2) * yb[k] \
        + (th3 - th2) * h * fb[k]
    return np.where(s < seg_t[0], ya[0], v)


def roots(fun, grid):
    """Sign changes of ``fun`` on ``grid`` refined by bisection (vectorized)."""
    g = fun(grid)
    i = np.flatnonzero((g[:-1] < 0) != (g[1:] < 0))
    a, b = grid[i], grid[i + 1]
    ga = g[i]
    for _ in range(50):
        c = 0.5 * (a + b)
        gc = fun(c)
        left = (gc < 0) == (ga < 0)
        a = np.where(left, c, a)
        ga = np.where(left, gc, ga)
        b = np.where(left, b, c)
    return 0.5 * (a + b)


def events(st, sysm, P, w, W, name):
    """Event times of lane ``w`` by class."""
    MS, m_int = st["MS"], st["m_int"]
    n_int = m_int // W
    t, h = MS[:, 0], MS[:, 1]

    def comp(c):
        o = c * W + w
        return (MS[:, 2 + o], MS[:, 2 + m_int + o], MS[:, 2 + 2 * m_int + o], MS[:, 2 + 3 * m_int + o])

    Pn = sysm.n_flows
    nF = n_int - sysm.n_links
    iq = nF  # flow states first, then the queue (one link, no link states here)
    assert sysm.layout["queue"].start == iq
    qa, qb, qfa, qfb = comp(iq)
    buf = float(sysm.a.buffer_pkts[0])
    ev = {c: [] for c in CLASSES}
    # holds at a bound: segments on it at both ends with zero derivatives
    for lvl in (0.0, buf):
        if not math.isfinite(lvl):
            continue
        held = (qa == lvl) & (qb == lvl) & (qfa == 0.0) & (qfb == 0.0)
        d = np.diff(held.astype(int))
        ev["queue hold start (current)"] += list(t[1:][d == 1])
        ev["queue release (current)"] += list((t + h)[:-1][d == -1])
    grid = np.unique(np.concatenate([t, t + h] + [t + h * f for f in (0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875)]))
    qf = lambda s: hermite(t, h, qa, qb, qfa, qfb, s)  # noqa: E731
    red = hasattr(P, "red_min_th_pkts") and getattr(P, "aqm", "") == "red"
    if red:
        for lev in (P.red_min_th_pkts, P.red_max_th_pkts):
            ev["RED level (current queue)"] += list(roots(lambda s: qf(s) - lev, grid))
    bwd, rtt = np.asarray(sysm.bwd), np.asarray(sysm.a.rtt_s)
    fwd = rtt - bwd
    flow_kinks = [[] for _ in range(Pn)]  # first-generation kinks of each flow (for the second generation)
    for p in range(Pn):
        ya, yb, fa, fb = comp(p)  # (one state per flow here: W or x, as its logarithm)
        Wf = lambda s: np.exp(hermite(t, h, ya, yb, fa, fb, s))  # noqa: E731,B023
        if name == "hstcp":
            r = roots(lambda s: Wf(s) - P.low_window_pkts, grid)  # noqa: B023
            ev["W crosses low_window"] += list(r)
            flow_kinks[p] += list(r)
        if red and sysm.model.needs_own_delayed:
            def red_p(q):
                return np.where(q < P.red_min_th_pkts, 0.0, np.where(
                    q < P.red_max_th_pkts, P.red_p_max * (q - P.red_min_th_pkts) / (P.red_max_th_pkts - P.red_min_th_pkts), 1.0))
            g2 = np.unique(np.concatenate([grid, grid + rtt[p], grid + bwd[p]]))
            g2 = g2[g2 <= t[-1] + h[-1]]
            r = roots(lambda s: Wf(s - rtt[p]) * red_p(qf(s - bwd[p])) - 1.0, g2)  # noqa: B023
            ev["W(t-tau) p crosses 1"] += list(r)
            flow_kinks[p] += list(r)
    # first-generation images of the queue's events (one link: the pair of flow p is p)
    for src, dst in (("queue hold start (current)", "image: hold start"), ("queue release (current)", "image: release"),
                     ("RED level (current queue)", "image: RED level")):
        for p in range(Pn):
            im = [x + bwd[p] for x in ev[src]]
            ev[dst] += im
            if dst != "image: release":  # a release's image is a third-derivative jump: its images not followed
                flow_kinks[p] += im
    for p in range(Pn):
        for x in flow_kinks[p]:
            ev["image (2nd gen.): flow kink"] += [x + fwd[p] + bwd[i] for i in range(Pn)] + [x + rtt[p]]
    ev["static breakpoint"] = list(st["bps"])
    return {k: np.sort(np.asarray(v, dtype=float)) for k, v in ev.items()}


def classify(LG, evs, codes=(3, 4)):
    """The class of every attempt with an outcome in ``codes`` (default: rejected on the error) and the number of
    attempts with an event of each class inside."""
    out = []
    anyc = Counter()
    for t, h, code, wl, err, nfev, bpk in LG:
        if code not in codes:
            continue
        ev = evs[int(wl)]
        a, b = t + 1e-9 * h, t + h * (1 - 1e-9)
        found = [c for c in CLASSES[:-1] if np.any((ev[c] > a) & (ev[c] < b))]
        for c in found:
            anyc[c] += 1
        out.append(found[0] if found else "none")
    return Counter(out), anyc


def run(name, si, gi, alone=False):
    from ecocc import dumbbell
    from ecocc.dde import engine
    from ecocc.models import get_model
    from ecocc.system import NetworkSystem
    from ecocc.dde import codegen
    store = {}
    instr.install(store)
    m = get_model(name)
    g0 = getattr(m.make_params(), GAIN[name])
    sc = float(np.linspace(0.25, 4.0, 100)[si])
    net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0).scaled(rtt_scale=sc)
    sysm = NetworkSystem(m, net, m.make_params(), 60.0)
    W = codegen.generate(sysm).lanes
    gains = np.linspace(0.25, 3.0, 100)[gi:gi + W] * g0
    if alone:
        gains = np.full(W, gains[0])
    Ps = [m.make_params(**{GAIN[name]: g}) for g in gains]
    iq = sysm.layout["queue"].start
    kw = dict(rtol=1e-7, t_eval=np.arange(50.0, 60.0 + 1e-9, 0.01), dynamics_only=True, overlap=True,
              components=[iq], kinks=True)
    _, status, cnt = engine.solve_adaptive_batch([sysm], [0] * W, Ps, 60.0, **kw)
    LG = store["LG"]
    assert not store["overflow"]
    evs = [events(store, sysm, Ps[w], w, W, name) for w in range(W)]
    codes = Counter(LG[:, 2].astype(int))
    nfev = np.diff(np.r_[LG[:, 5], cnt[0, 2]])  # right-hand sides from each attempt's start to the next one's
    by_code_nfev = Counter()
    for c, n in zip(LG[:, 2].astype(int), nfev):
        by_code_nfev[c] += int(n)
    cls, anyc = classify(LG, evs)
    acls, aany = classify(LG, evs, (0,))
    acc = LG[LG[:, 2] == 0]
    res = OrderedDict(model=name, scale=sc, gains=[float(g) for g in gains], W=W, alone=alone,
                      status=[s.value for s in status], steps=int(cnt[0, 0]), rejected=int(cnt[0, 1]),
                      nfev=int(cnt[0, 2]), attempts=int(LG.shape[0]), codes={int(k): int(v) for k, v in codes.items()},
                      nfev_by_code={int(k): int(v) for k, v in by_code_nfev.items()},
                      accepted_at_static_bp=int((acc[:, 6] == 1).sum()), accepted_at_kink_bp=int((acc[:, 6] == 2).sum()),
                      err_rejections_by_class={c: int(cls.get(c, 0)) for c in CLASSES},
                      err_rejections_any_class={c: int(anyc.get(c, 0)) for c in CLASSES[:-1]},
                      accepted_by_class={c: int(acls.get(c, 0)) for c in CLASSES},
                      accepted_any_class={c: int(aany.get(c, 0)) for c in CLASSES[:-1]},
                      events_lane0={c: int(evs[0][c].size) for c in CLASSES[:-1]},
                      h_median_accepted=float(np.median(acc[:, 1])))
    return res, store, evs


if __name__ == "__main__":
    import json
    name = sys.argv[1]
    sis = [int(x) for x in sys.argv[2].split(",")]
    gi = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    alone = len(sys.argv) > 4 and sys.argv[4] == "alone"
    tot = Counter()
    for si in sis:
        res, _, _ = run(name, si, gi, alone)
        print(json.dumps(res), flush=True)
        for k in ("steps", "rejected", "nfev", "attempts"):
            tot[k] += res[k]
        for k in ("codes", "nfev_by_code", "err_rejections_by_class", "err_rejections_any_class", "accepted_by_class",
                  "accepted_any_class"):
            for c, v in res[k].items():
                tot[(k, c)] += v
    if len(sis) > 1:
        print(json.dumps({"total_over_scales": {str(k): v for k, v in tot.items()}}), flush=True)
