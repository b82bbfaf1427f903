"""Where a map's steps go: one point alone vs a lock-step group, and the NumPy mesh around queue events.

``python benchmarks/lanes_profile.py [--model petcp] [--scales 0.25,1,4]``

1. For each RTT scale: a lock-step group of 8 neighbouring gains of the 100 x 100 map of ``benchmarks/map_models.py``
   (indices 40..47, rtol 1e-7, 60 s, dynamics only, steps past the smallest delay: the map's settings) against each
   member alone (8 identical lanes take exactly the single kernel's steps): steps, rejections, clamp events.
2. The NumPy solver's accepted-step mesh (default point, 20 s, ``record_steps``): how many of the small steps
   (below a quarter of the median) lie within half a median step of a queue event (the queue reaching or leaving 0),
   of a queue event shifted by a backward delay (a kink the delay propagates), and of a control (events shifted by a
   random 0.5-1.5 s); with the base rate of each window.  Prints; writes nothing.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def union(name, gain, scales, rtol=1e-7):
    from ecocc import dumbbell
    from ecocc.dde import engine
    from ecocc.models import get_model
    from ecocc.system import NetworkSystem
    m = get_model(name)
    g0 = getattr(m.make_params(), gain)
    gains = np.linspace(0.25, 3.0, 100)[40:48] * g0
    for sc in scales:
        net = dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0).scaled(rtt_scale=sc)
        sysm = NetworkSystem(m, net, m.make_params(), 60.0)
        iq = sysm.layout["queue"].start
        kw = dict(rtol=rtol, t_eval=np.arange(40.0, 60.0 + 1e-9, 0.01), dynamics_only=True, overlap=True,
                  components=[iq])
        Ps = [m.make_params(**{gain: g}) for g in gains]
        t0 = time.perf_counter()
        _, _, cnt = engine.solve_adaptive_batch([sysm], [0] * 8, Ps, 60.0, **kw)
        wg = time.perf_counter() - t0
        own = []
        for P in Ps:
            _, _, c = engine.solve_adaptive_batch([sysm], [0] * 8, [P] * 8, 60.0, **kw)
            own.append((int(c[0, 0]), int(c[0, 1]), int(c[0, 3])))
        print(f"{name} rtt x {sc}: group of 8 gains: {cnt[0, 0]} steps, {cnt[0, 1]} rejected ({wg:.2f} s wall); "
              f"each alone: steps {[o[0] for o in own]}, rejected {[o[1] for o in own]}, clamps {[o[2] for o in own]}; "
              f"sum alone {sum(o[0] for o in own)}", flush=True)


def mesh(name, T=20.0, rtol=1e-7):
    from ecocc import dumbbell
    from ecocc.dde.adaptive import solve_dde
    from ecocc.models import get_model
    from ecocc.system import NetworkSystem
    m = get_model(name)
    rtts = np.array([0.05, 0.1, 0.2, 0.4])
    sysm = NetworkSystem(m, dumbbell(15000.0, list(rtts), initial_rate_pps=10.0), m.make_params(), T)
    sol = solve_dde(sysm.problem(), T, rtol=rtol, atol=sysm.default_atol(), t_eval=[T], record_steps=True)
    print(f"NumPy {name} {T:g} s: {sol.n_steps} steps, {sol.n_rejected} rejected, {sol.n_clamp_events} clamps")
    t, q = sol.t, sol.y[:, sysm.layout["queue"].start]
    h = np.diff(t)
    z = q <= 1e-9
    ev = t[1:][z[1:] != z[:-1]]
    ev = ev[ev > 4.0]
    sel = t[:-1] > 5.0
    ts, hs = t[:-1][sel], h[sel]
    small = hs < np.median(hs) / 4
    rng = np.random.default_rng(0)
    for lab, kk in (("queue events", ev), ("queue events + a backward delay", (ev[:, None] + rtts).ravel()),
                    ("control: events + random 0.5-1.5 s", (ev[:, None] + rng.uniform(0.5, 1.5, (ev.size, 4))).ravel())):
        near = np.min(np.abs(ts[:, None] - np.sort(kk)[None, :]), axis=1) < 0.5 * np.median(hs)
        print(f"  small steps near {lab}: {int(np.sum(small & near))} of {int(small.sum())} "
              f"(base rate of the window {np.mean(near):.2f})")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="petcp")
    ap.add_argument("--gain", default="a_pps2")
    ap.add_argument("--scales", default="0.25,1,4")
    a = ap.parse_args()
    union(a.model, a.gain, [float(s) for s in a.scales.split(",")])
    mesh(a.model)
