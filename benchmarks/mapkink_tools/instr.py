"""An instrumented copy of a model's generated lock-step kernel: every attempt of ``lanes_kernel`` logged.

``run_group(model, gains, scale, kinks=True)`` runs one lock-step group (the members ``gains`` of the model's map
axis, map settings: rtol 1e-7, overlap, dynamics only, 60 s) through ``engine.solve_adaptive_batch`` with the
model's generated module patched in text (a copy under another name, numba's JIT, nothing written to the
package): the attempt log (time, step, outcome, the lane with the largest error and that error, the breakpoint
the step was cut to) and every accepted step's Hermite segment (the values and derivatives at both ends, the
segment the history lookups read) per lane.  The kernel's arithmetic is unchanged: the counts are the map's.

Outcome codes: 0 accepted, 1 overlap passes not converged (halved), 2 non-finite (quartered), 3 rejected on the
error (shrunk by the error factor), 4 rejected on the error and retaken to end at a located kink (a RED level
crossing, ``KINK_NOW``; with docs/notes/mapkink_tools/retake_release_switch.patch applied, also a release or a sign
change of a flow law's switching function), 5 a lane failed at the smallest step, 6 retaken to end at a located queue bound crossing or
release.  Breakpoint kinds (accepted steps): 0 none, 1 a static breakpoint or ``t_end``, 2 a propagated kink.

``MAPKINK_VARIANT=rel``: the experiment of docs/notes/mapkink.md -- a queue's release is propagated to the flows
as its hold start is (``KINK_BOUNDS``): not kept.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

NMAX = 2_000_000
_mods = {}


def _patch(src: str) -> str:
    i0 = src.rindex("@njit", 0, src.index("def lanes_kernel("))
    head, body = src[:i0], src[i0:]

    def rep(old, new, count=1):
        nonlocal body
        assert body.count(old) == count, (old, body.count(old))
        body = body.replace(old, new)

    rep("@njit(cache=True)\ndef lanes_kernel(", "@njit(cache=False)\ndef lanes_kernel(")
    rep("counters, reals,\n                 codes):", "counters, reals,\n                 codes, LG, LGN, MS, MSN):")
    # overlap passes not converged
    rep("                n_rej += 1\n                rej_step = True\n                h *= 0.5\n                continue",
        "                n_rej += 1\n                rej_step = True\n                _log(LG, LGN, t, h, 1, -1, 0.0, nfev, 0)\n"
        "                h *= 0.5\n                continue")
    rep("                if h > hmin * 4:\n                    h *= 0.25",
        "                if h > hmin * 4:\n                    _log(LG, LGN, t, h, 2, -1, 0.0, nfev, 0)\n                    h *= 0.25")
    var = os.environ.get("MAPKINK_VARIANT", "")
    if "rel" in var.split(","):  # experiment: a release's images are breakpoints too (KINK_BOUNDS)
        rep("if alive[w] and ((sat_lo[lw] and not used_lo[lw]) or (sat_hi[lw] and not used_hi[lw])):",
            "if alive[w] and ((sat_lo[lw] and not used_lo[lw]) or (sat_hi[lw] and not used_hi[lw]) "
            "or (used_lo[lw] and not sat_lo[lw]) or (used_hi[lw] and not sat_hi[lw])):")
    rep("                    if s_lev < 1.0 - 1e-9 and s_lev * h > 4 * hmin:\n                        h *= s_lev",
        "                    wl = 0\n                    for w in range(W):\n"
        "                        if alive[w] and err_w[w] > err_w[wl]:\n                            wl = w\n"
        "                    _log(LG, LGN, t, h, 4 if (s_lev < 1.0 - 1e-9 and s_lev * h > 4 * hmin) else 3, wl, err, nfev, 0)\n"
        "                    if s_lev < 1.0 - 1e-9 and s_lev * h > 4 * hmin:\n                        h *= s_lev")
    rep("                    if n_alive == 0:\n                        status_all = 4",
        "                    _log(LG, LGN, t, h, 5, -1, err, nfev, 0)\n                    if n_alive == 0:\n                        status_all = 4")
    rep("                    h = s_star * h\n                    retake = True\n                    continue",
        "                    _log(LG, LGN, t, h, 6, -1, 0.0, nfev, 0)\n"
        "                    h = s_star * h\n                    retake = True\n                    continue")
    rep("            was_retake = retake\n            retake = False\n            break",
        "            wl = 0\n            for w in range(W):\n"
        "                if alive[w] and err_w[w] > err_w[wl]:\n                    wl = w\n"
        "            _log(LG, LGN, t, h, 0, wl, err, nfev, (bp_kind if hit_bp else 0))\n"
        "            _mesh(MS, MSN, t, h, Y[YY], Y[YN], F[FF], F[n_st], m_int)\n"
        "            was_retake = retake\n            retake = False\n            break")
    rep("            if KINKS and dnext < next_bp:  # noqa: F821\n                next_bp = dnext",
        "            bp_kind = 1\n            if KINKS and dnext < next_bp:  # noqa: F821\n                next_bp = dnext\n"
        "                bp_kind = 2")
    rep("iq, L, buf, Dg, FST, LST, par, bwd, rtt, counters, reals, codes):",
        "iq, L, buf, Dg, FST, LST, par, bwd, rtt, counters, reals, codes, LG, LGN, MS, MSN):")
    rep("dcomp, hsrc, iq, L, buf, D, Wk, counters[g], reals[g], codes[g])",
        "dcomp, hsrc, iq, L, buf, D, Wk, counters[g], reals[g], codes[g], LG, LGN, MS, MSN)")
    helpers = '''

@njit(cache=False)
def _log(LG, LGN, t, h, code, wl, err, nfev, bpk):
    i = LGN[0]
    if i < LG.shape[0]:
        LG[i, 0] = t
        LG[i, 1] = h
        LG[i, 2] = code
        LG[i, 3] = wl
        LG[i, 4] = err
        LG[i, 5] = nfev
        LG[i, 6] = bpk
    LGN[0] = i + 1


@njit(cache=False)
def _mesh(MS, MSN, t, h, ya, yb, fa, fb, m_int):
    i = MSN[0]
    if i < MS.shape[0]:
        MS[i, 0] = t
        MS[i, 1] = h
        for k in range(m_int):
            MS[i, 2 + k] = ya[k]
            MS[i, 2 + m_int + k] = yb[k]
            MS[i, 2 + 2 * m_int + k] = fa[k]
            MS[i, 2 + 3 * m_int + k] = fb[k]
    MSN[0] = i + 1

'''
    return head + helpers + body.replace("@njit(cache=True)", "@njit(cache=False)")


class Run:
    """The logs of one group's run."""


def install(store):
    """Replace ``codegen.kernel`` for the lanes kind by the instrumented copy; ``store`` gets the logs."""
    from ecocc.dde import codegen
    orig = codegen.kernel

    def kernel(gen, args, kind="adaptive"):
        if kind != "lanes":
            return orig(gen, args, kind)
        if gen.name not in _mods:
            d = Path(os.environ.get("MAPKINK_TMP", "/tmp/mapkink-instr"))
            d.mkdir(parents=True, exist_ok=True)
            name = gen.name + "_instr" + os.environ.get("MAPKINK_VARIANT", "").replace(",", "_")
            p = d / f"{name}.py"
            p.write_text(_patch(gen.source))
            spec = importlib.util.spec_from_file_location(name, p)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            _mods[gen.name] = mod
        mod = _mods[gen.name]
        W = mod.LANES

        def run(first, stride, *a):
            m_int = int(a[LANES_ARGS.index("n_int") - 2]) * W
            LG = np.zeros((NMAX, 7))
            LGN = np.zeros(1, dtype=np.int64)
            MS = np.zeros((NMAX // 4, 2 + 4 * m_int))
            MSN = np.zeros(1, dtype=np.int64)
            mod.lanes_kernel_strided(first, stride, *a, LG, LGN, MS, MSN)
            store.update(LG=LG[:LGN[0]].copy(), MS=MS[:MSN[0]].copy(), W=W, m_int=m_int,
                         bps=a[LANES_ARGS.index("bps") - 2].copy(), overflow=(LGN[0] > NMAX or MSN[0] > NMAX // 4))
        return run, dict(compiled="jit-instrumented")

    from ecocc.dde.engine import LANES_ARGS
    codegen.kernel = kernel
    import ecocc.dde.engine as eng
    eng.codegen = codegen
    return orig
