"""The AECP dumbbell in jitcdde 1.8.3 and ddeint 0.3.0 (run by ``run.py``).

Same model and variables as ecocc (rates as logarithms)::

    u_p' = H_p(t) alpha (v(t - tau_p) - u_p)            u_p = ln x_p
    v'   = beta (1 - (S + (q - q0)/T) / C)              v = ln r
    q'   = S - C, held at 0 while q = 0 and S < C        S = sum_p H_p(t) e^{u_p}

``H_p(t)`` is 1 once flow ``p`` has started (ecocc freezes the state of a
flow before its start and counts no rate); with staggered starts jitcdde
gets a smoothed step (``conditional`` with width 1e-4 s) because it has no
explicit time breakpoints.  The queue clamp in jitcdde is the smooth
``conditional(dq, 0, conditional(q, 0, 0, dq), dq)`` (width 1e-3 packets
and 1e-3 packets/s): the queue can dip a few widths below zero, which is
reported as "negative queue".  ddeint (SciPy ``odeint`` between output
points, past by interpolation of the outputs) gets the exact conditional.

Run as a script, this file integrates one jitcdde case given as JSON on the
command line and writes an ``.npz``: it runs in a subprocess so that a
compilation or integration that fails or hangs is recorded, not fatal.
"""
from __future__ import annotations

import time

T_START = time.perf_counter()  # as a script: the wall time starts before numpy's import, as numba_case.py's

import json  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

ALPHA, BETA, T_S, Q0, C, X0, R0 = 2.0, 1.0, 2.0, 100.0, 15000.0, 10.0, 10.0


def run_jitcdde(rtts, starts, t_end, t_out, rtol, atol, out_path, t_wall0=None):
    t_wall0 = time.perf_counter() if t_wall0 is None else t_wall0
    import symengine
    from jitcdde import jitcdde, t, y
    from jitcxde_common import conditional

    N = len(rtts)
    u = [y(i) for i in range(N)]
    q = y(N + 1)  # y(N) is v = ln r, read only through its delayed values

    def H(i):
        return 1 if starts[i] <= 0 else conditional(t, starts[i], 0, 1, 1e-4)

    S = sum(H(i) * symengine.exp(u[i]) for i in range(N))
    dq = S - C
    f = [H(i) * ALPHA * (y(N, t - rtts[i]) - u[i]) for i in range(N)]
    f.append(BETA * (1 - (S + (q - Q0) / T_S) / C))
    f.append(conditional(dq, 0, conditional(q, 0, 0, dq, 1e-3), dq, 1e-3))
    dde = jitcdde(f, max_delay=max(rtts), verbose=False)
    dde.constant_past([np.log(X0)] * N + [np.log(R0), 0.0])
    t_setup = time.perf_counter()
    dde.compile_C(simplify=False, do_cse=False, chunk_size=100)
    t_compiled = time.perf_counter()
    dde.set_integration_parameters(rtol=rtol, atol=atol, first_step=1e-3, max_step=min(rtts))
    dde.adjust_diff()
    Y = np.empty((len(t_out), N + 2))
    y_init = np.array([np.log(X0)] * N + [np.log(R0), 0.0])
    for k, tt in enumerate(t_out):
        Y[k] = dde.integrate(tt) if tt > dde.t else y_init
    t_done = time.perf_counter()
    np.savez(out_path, Y=Y, setup_s=t_setup - t_wall0, compile_s=t_compiled - t_setup,
             integrate_s=t_done - t_compiled, total_s=t_done - t_wall0)


def run_ddeint(rtts, starts, t_end, dt_s):
    """ddeint at a fixed output grid ``dt_s`` (its accuracy is set by the grid)."""
    from ddeint import ddeint

    rtts = np.asarray(rtts, float)
    starts = np.asarray(starts, float)
    N = rtts.size

    def model(Y, tt):
        z = Y(tt)
        u, q = z[:N], z[N + 1]
        act = (tt >= starts).astype(float)
        S = float(np.sum(act * np.exp(u)))
        vd = np.array([Y(tt - d)[N] for d in rtts])
        du = act * ALPHA * (vd - u)
        dv = BETA * (1 - (S + (q - Q0) / T_S) / C)
        dqv = S - C
        if q <= 0 and dqv < 0:
            dqv = 0.0
        return np.concatenate([du, [dv, dqv]])

    y0 = np.concatenate([np.full(N, np.log(X0)), [np.log(R0), 0.0]])
    tt = np.arange(0.0, t_end + 0.5 * dt_s, dt_s)
    t0 = time.perf_counter()
    Y = ddeint(model, lambda s: y0, tt)
    return tt, np.asarray(Y), time.perf_counter() - t0


if __name__ == "__main__":
    args = json.loads(sys.argv[1])
    run_jitcdde(args["rtts"], args["starts"], args["t_end"], np.asarray(args["t_out"]), args["rtol"],
                args["atol"], args["out"], t_wall0=T_START)


def jitcdde_map_loop(alphas, scales, rtts=(0.05, 0.1, 0.2, 0.4), t_end=60.0, rtol=1e-6, atol=1e-6,
                     cap_steps=True):
    """The (alpha, tau) map baseline: ONE jitcdde compilation with alpha and the RTT scale as control
    parameters, then a loop over the given points (``set_parameters`` + ``integrate`` each, outputs every
    second).  ``cap_steps``: ``max_step`` = the point's smallest delay (no extrapolation of the past);
    else jitcdde's default ``max_step`` (10 s: it extrapolates delayed values inside a step).

    Returns dict(compile_s, per_point_s (list), n_points, failures).  The caller extrapolates the
    mean per-point time to the full grid.
    """
    import symengine
    from jitcdde import jitcdde, t, y
    from jitcxde_common import conditional

    N = len(rtts)
    a_sym, s_sym = symengine.Symbol("alpha"), symengine.Symbol("scale")
    u = [y(i) for i in range(N)]
    q = y(N + 1)  # y(N) is v = ln r, read only through its delayed values
    S = sum(symengine.exp(u[i]) for i in range(N))
    dq = S - C
    f = [a_sym * (y(N, t - s_sym * rtts[i]) - u[i]) for i in range(N)]
    f.append(BETA * (1 - (S + (q - Q0) / T_S) / C))
    f.append(conditional(dq, 0, conditional(q, 0, 0, dq, 1e-3), dq, 1e-3))
    t0 = time.perf_counter()
    dde = jitcdde(f, control_pars=[a_sym, s_sym], max_delay=max(scales) * max(rtts), verbose=False)
    dde.compile_C(simplify=False, do_cse=False, chunk_size=100)
    compile_s = time.perf_counter() - t0
    y_init = [np.log(X0)] * N + [np.log(R0), 0.0]
    per, failures = [], 0
    for a, sc in zip(alphas, scales):
        t1 = time.perf_counter()
        try:
            dde.purge_past()
            dde.constant_past(y_init, time=0.0)
            dde.set_parameters(float(a), float(sc))
            cap = dict(max_step=min(rtts) * float(sc)) if cap_steps else {}
            dde.set_integration_parameters(rtol=rtol, atol=atol, first_step=1e-3, **cap)
            dde.adjust_diff()
            for tt in np.arange(1.0, t_end + 1e-9, 1.0):
                dde.integrate(tt)
        except Exception:  # a failed point is counted, the loop goes on
            failures += 1
        per.append(time.perf_counter() - t1)
    return dict(compile_s=compile_s, per_point_s=per, n_points=len(per), failures=failures)
