"""Computations shared by the ledgers of the three Huang et al. papers.

CLTCP (001) and AECP (004) state the same theorems about one model, eq. (6);
PE-TCP (000) is eq. (4)-(5).  The papers' proofs ignore the feedback delay,
so besides runs of the project's DDE engine (:func:`ecocc.simulate`, delay
kept) this module integrates the **delay-free** equations exactly as printed
with SciPy's LSODA (``rtol = atol = 1e-10``).  The queue is projected at 0
(eq. 5: ``q' = X - C`` only while ``q > 0`` or ``X > C``) by a hybrid integration
that locates each switch with an event (:func:`solve_projected`).

Units: rates in packets/s, queues in packets, times in seconds.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

from ..units import mbps_to_pps

PKT_BYTES = 1000  # Huang et al.: 1000-byte data packets (all three papers)
ODE_TOL = 1e-10   # rtol = atol of the delay-free reference integrations

# CLTCP/AECP parameters of eq. (43) and Section V/5 (alpha = 2, beta = 1, T = 2, q0 = 100)
AECP_P = {"alpha": 2.0, "beta": 1.0, "T": 2.0, "q0": 100.0}
# PE-TCP Section 4.3 (a = 1 Mbps/s = 125 pkt/s^2 at 1000-byte packets, b = 1, T = 0.01 s)
PETCP_P = {"a": 125.0, "b": 1.0, "T": 0.01}

# the regimes users care about: 10 Mbps to 10 Gbps
CAPACITIES_MBPS = (10.0, 100.0, 1000.0, 10000.0)


def pps(mbps):
    return mbps_to_pps(mbps, PKT_BYTES)


class _Sol:
    """The pieces of a hybrid integration glued together (the subset of ``OdeResult`` the ledger uses)."""

    def __init__(self, t, y, t_events, status):
        self.t, self.y, self.t_events, self.status = t, y, t_events, status


def solve_projected(rhs, y0, t_end, qi, load, C, *, events=None, t_eval=None):
    """Integrate ``y' = rhs(t, y, queue_free)`` with the queue ``y[qi]`` projected at 0 (eq. 5).

    A hybrid integration: while the queue is positive (``queue_free``) q' = load - C, an event stops the
    segment when q reaches 0; while it is empty q is held at 0 until the load exceeds C.  Switching is
    located by events, so LSODA never steps across the discontinuity (stepping across it stalls it).
    ``events`` are the caller's terminal events ``ev(t, y)``; ``t_events`` holds their times.
    """
    events = list(events or [])
    y = np.asarray(y0, float).copy()
    t0 = 0.0
    busy = y[qi] > 0 or load(y) > C
    T, Y = [t0], [y.copy()]
    found = [np.empty(0) for _ in events]
    while t0 < t_end:
        # switching surfaces offset by a hair (1e-9 packet, 1e-12 C) so that a segment never starts on its own
        # surface (SciPy's event location needs a strict sign change)
        if busy:
            sw = lambda t, yy: yy[qi] + 1e-9  # noqa: E731
            sw.terminal, sw.direction = True, -1
        else:
            sw = lambda t, yy: load(yy) - C * (1 + 1e-12)  # noqa: E731
            sw.terminal, sw.direction = True, 1
        te = None if t_eval is None else [x for x in t_eval if t0 <= x <= t_end]
        sol = solve_ivp(lambda t, yy, b=busy: rhs(t, yy, b), (t0, t_end), y, method="LSODA", rtol=ODE_TOL,
                        atol=ODE_TOL, events=events + [sw], t_eval=te or None)
        if sol.status < 0:
            raise RuntimeError(f"LSODA failed: {sol.message}")
        if t_eval is None:
            T.extend(sol.t[1:])
            Y.extend(sol.y[:, 1:].T)
        elif te:
            T.extend(sol.t)
            Y.extend(np.asarray(sol.y).T)
        stop = False
        for k in range(len(events)):
            if sol.t_events[k].size:
                found[k] = sol.t_events[k][:1]
                stop = True
        if stop or sol.status == 0:
            break
        # a switch: restart from the switching state
        t0 = float(sol.t_events[-1][0])
        y = sol.y_events[-1][0].copy()
        if busy:
            y[qi] = 0.0
        busy = not busy
    if t_eval is not None:
        T, Y = [x for x in T[1:]], Y[1:]
    return _Sol(np.asarray(T), np.asarray(Y).T if len(Y) else np.empty((len(y), 0)), found,
                1 if any(f.size for f in found) else 0)


# ---------------------------------------------------------------------------
# CLTCP / AECP, delay free (eq. 6 with tau = 0), one bottleneck
# ---------------------------------------------------------------------------

def aecp_dumbbell_ode(C, x0, r0, t_end, *, alpha=2.0, beta=1.0, T=2.0, q0=100.0, q_init=0.0, events=None,
                      t_eval=None, weights=None):
    """Delay-free eq. (6) on one link: flows ``x0`` (array, pkt/s), rate factor ``r0``.

    ``weights`` (optional) counts each state flow as that many identical
    flows (synchronous groups).  States are ``ln x``, ``ln r`` and ``q``.
    Returns the ``solve_ivp`` solution with ``x``, ``r``, ``q`` attached.
    """
    x0 = np.atleast_1d(np.asarray(x0, float))
    w = np.ones_like(x0) if weights is None else np.asarray(weights, float)
    n = x0.size

    def load(y):
        return float(w @ np.exp(y[:n]))

    def rhs(t, y, busy):
        u, v, q = y[:n], y[n], y[n + 1]
        X = float(w @ np.exp(u))
        du = alpha * (v - u)
        dv = beta * (1.0 - (X + (q - q0) / T) / C)
        return np.concatenate([du, [dv, (X - C) if busy else 0.0]])

    y0 = np.concatenate([np.log(x0), [math.log(r0), q_init]])
    sol = solve_projected(rhs, y0, t_end, n + 1, load, C, events=events, t_eval=t_eval)
    sol.x = np.exp(sol.y[:n])
    sol.r = np.exp(sol.y[n])
    sol.q = sol.y[n + 1]
    return sol


def aecp_t_theta(C, N, x0, theta, r0, **P):
    """Delay-free time (s) for N synchronous flows from ``x0`` to reach ``sum x = theta C``."""
    ev = lambda t, y: N * math.exp(y[0]) - theta * C  # noqa: E731
    ev.terminal, ev.direction = True, 1
    sol = aecp_dumbbell_ode(C, [x0], r0, 400.0, weights=[N], events=[ev], **_aecp_kw(P))
    return float(sol.t_events[0][0]) if sol.t_events[0].size else math.nan


def aecp_t_eps(C, N, x0, eps, **P):
    """Delay-free time (s) after a flow joins N flows at equilibrium until min/max >= eps."""
    kw = _aecp_kw(P)
    ev = lambda t, y: (y[1] - y[0]) - math.log(eps)  # noqa: E731  ln(x_new/x_old) - ln eps
    ev.terminal, ev.direction = True, 1
    sol = aecp_dumbbell_ode(C, [C / N, x0], C / N, 400.0, weights=[N, 1], events=[ev],
                            q_init=kw.get("q0", 100.0), **kw)
    return float(sol.t_events[0][0]) if sol.t_events[0].size else math.nan


def _aecp_kw(P):
    kw = dict(AECP_P)
    kw.update(P)
    return kw


def thm2_bounds(C, N, x0, theta, alpha=2.0, beta=1.0):
    """Eq. (18)/(27): t1, t2 and the claimed interval (max(t1, t2), t1 + t2), in seconds."""
    t1 = math.log(C / (N * x0) * theta / (1 - theta)) / beta
    t2 = math.log(math.log(N * x0 / C) / math.log(theta)) / alpha
    return t1, t2


def thm3_printed(C, N, x0, eps, alpha=2.0):
    """Eq. (29)/(33) as printed: ln ln(C eps / (N x0)) / alpha (s)."""
    return math.log(math.log(C * eps / (N * x0))) / alpha


def thm3_solved(C, N, x0, eps, alpha=2.0):
    """Eq. (31) solved: ln g(t) = ln g(0) e^{-alpha t}, g(0) = C/(N x0), g(t_eps) = 1/eps."""
    return math.log(math.log(C / (N * x0)) / math.log(1 / eps)) / alpha


def aecp_engine_run(C, rtts, t_end, *, x0=10.0, r0=None, starts=0.0, stops=math.inf, output_dt=0.01, rtol=1e-7,
                    **params):
    """A run of the project's DDE engine (compiled AECP kernel, feedback delay = RTT)."""
    from ..network import dumbbell
    from ..simulate import simulate
    kw = {} if r0 is None else {"r0_pps": r0}
    kw.update(params)
    net = dumbbell(C, list(rtts), initial_rate_pps=x0, starts_s=starts, stops_s=stops)
    return simulate(net, "aecp", t_end_s=t_end, output_dt_s=output_dt, engine="numba", rtol=rtol, **kw)


# ---------------------------------------------------------------------------
# PE-TCP, delay free (eq. 4-5 as printed), one bottleneck
# ---------------------------------------------------------------------------

def petcp_dumbbell_ode(B, x0, t_end, *, a=125.0, b=1.0, T=0.01, q_init=0.0, events=None, weights=None,
                       t_eval=None):
    """Delay-free eq. (4)-(5): ``x_i' = a + b x_i (1 - (X + q/T)/B)``, ``q' = X - B`` (projected)."""
    x0 = np.atleast_1d(np.asarray(x0, float))
    w = np.ones_like(x0) if weights is None else np.asarray(weights, float)
    n = x0.size

    def load(y):
        return float(w @ y[:n])

    def rhs(t, y, busy):
        x, q = y[:n], y[n]
        X = float(w @ x)
        dx = a + b * x * (1.0 - (X + q / T) / B)
        return np.concatenate([dx, [(X - B) if busy else 0.0]])

    return solve_projected(rhs, np.concatenate([x0, [q_init]]), t_end, n, load, B, events=events, t_eval=t_eval)


def petcp_t_theta(B, N, x0, theta, **P):
    """Delay-free time (s) for N synchronous PE-TCP flows from ``x0`` to reach X = theta B."""
    ev = lambda t, y: N * y[0] - theta * B  # noqa: E731
    ev.terminal, ev.direction = True, 1
    sol = petcp_dumbbell_ode(B, [x0], 1e6, weights=[N], events=[ev], **P)
    return float(sol.t_events[0][0]) if sol.t_events[0].size else math.nan


def petcp_t_eps(B, N, x0, eps, **P):
    """Delay-free time (s) after a flow joins N PE-TCP flows at equilibrium until min/max >= eps."""
    kw = dict(PETCP_P)
    kw.update(P)
    ev = lambda t, y: y[1] - eps * y[0]  # noqa: E731
    ev.terminal, ev.direction = True, 1
    q_star = kw["a"] * kw["T"] * N / kw["b"]
    sol = petcp_dumbbell_ode(B, [B / N, x0], 50.0 * B / (kw["a"] * N) + 100.0, weights=[N, 1], events=[ev],
                             q_init=q_star, **kw)
    return float(sol.t_events[0][0]) if sol.t_events[0].size else math.nan


def fit_slope(x, y):
    """Least-squares slope and intercept of y against x, with the max residual."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    A = np.vstack([x, np.ones_like(x)]).T
    (m, c), *_ = np.linalg.lstsq(A, y, rcond=None)
    return float(m), float(c), float(np.max(np.abs(A @ [m, c] - y)))


def savefig(fig, figdir, stem):
    """Write ``fig`` as PNG and PDF into ``figdir``; return the two file names."""
    figdir.mkdir(parents=True, exist_ok=True)
    names = [f"{stem}.png", f"{stem}.pdf"]
    fig.savefig(figdir / names[0], dpi=110)
    fig.savefig(figdir / names[1])
    import matplotlib.pyplot as plt
    plt.close(fig)
    return names
