"""Which of ecocc and jitcdde is nearer the solution in test_queueing_delay_in_the_rtt_matches_jitcdde?

Usage (from the worktree root, PYTHONPATH=.):
    python benchmarks/sddref_tools/sdd_truth.py run NAME   # one run, saved to $OUT/NAME.npz (OUT default /tmp/sddref)
    python benchmarks/sddref_tools/sdd_truth.py compare    # the table of every saved run against every tight one

Runs (NAME): ecocc_test, jit_test: the test's settings when this was written (ecocc's default atol; the test now
passes atol = 1e-10, the run ecocc_atol10); ecocc_t2 / ecocc_t3: ecocc NumPy at rtol and atol 1e2 /
1e3 times tighter than the test's (atol: NetworkSystem.default_atol scaled); ecocc_t4: rtol 2.5e-14 (ecocc's floor
is 2.22e-14), atol 1e4 times tighter; ecocc_qatol: the test's rtol with the queue's atol 1e-10 packets;
ecocc_atol10(_numba): the test's rtol with atol = 1e-10 on every component (NumPy / compiled engine); jit_t12 / jit_t13: jitcdde at
rtol = atol = 1e-12 / 1e-13, max_step 0.002 / 0.001.  Every run reports its CPU time (time.process_time).
Samples: the test's, t = 0.25, 0.5, ..., 30 s; columns x_1, x_2 (packets/s), r (packets/s), q (packets).
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests"))
import test_state_dependent_delays as T  # noqa: E402  (the test's constants and its jitcdde system)

from ecocc import dumbbell, simulate  # noqa: E402
from ecocc.models import get_model  # noqa: E402
from ecocc.system import NetworkSystem  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/sddref")
TS = np.arange(0.25, T.T_END + 1e-9, 0.25)
N = len(T.RTTS)


def _jit(rtol, atol, max_step):
    import jitcdde as jm
    import symengine as se
    y, t = jm.y, jm.t
    q = y(N + 1)
    X = sum(se.exp(y(i)) for i in range(N))
    f = [T.ALPHA * (y(N, t - T.RTTS[i] - q / T.C) - y(i)) for i in range(N)]
    f.append(T.BETA * (1 - (X + (q - T.Q0) / T.T) / T.C))
    dq = X - T.C
    f.append(se.Piecewise((dq, se.Or(q > 0, dq > 0)), (0, True)))
    dde = jm.jitcdde(f, max_delay=T.MAX_DELAY, verbose=False)
    dde.constant_past([np.log(T.X0)] * (N + 1) + [0.0])
    dde.set_integration_parameters(rtol=rtol, atol=atol, max_step=max_step, first_step=0.001, min_step=1e-14)
    dde.adjust_diff()
    c0 = time.process_time()
    J = np.array([dde.integrate(tt) for tt in TS])
    print(f"jitcdde integration CPU {time.process_time() - c0:.1f} s")
    return np.column_stack([np.exp(J[:, :N + 1]), J[:, N + 1]])


def _ecocc(rtol_scale, atol_scale, queue_atol_pkts=1e-4, atol=None, engine="numpy"):
    net = dumbbell(T.C, T.RTTS, initial_rate_pps=T.X0)
    if atol is None and (atol_scale, queue_atol_pkts) != (1, 1e-4):
        m = get_model("aecp")
        sysm = NetworkSystem(m, net, m.make_params(), T.T_END, rtt_includes_queueing=True)
        atol = sysm.default_atol(queue_atol_pkts) / atol_scale
    tr = simulate(net, "aecp", t_end_s=T.T_END, r0_pps=T.X0, output_dt_s=0.25, rtol=1e-10 / rtol_scale, atol=atol,
                  rtt_includes_queueing=True, engine=engine)
    assert tr.ok, tr.message
    idx = np.searchsorted(tr.t_s, TS - 1e-9)
    print(f"ecocc solver: {tr.solver}")
    return np.column_stack([tr.rate_pps[idx], tr.link_vars["r"][idx, 0], tr.queue_pkts[idx, 0]])


RUNS = {"jit_test": lambda: _jit(1e-10, 1e-10, 0.01), "jit_t12": lambda: _jit(1e-12, 1e-12, 0.002),
        "jit_t13": lambda: _jit(1e-13, 1e-13, 0.001), "ecocc_test": lambda: _ecocc(1, 1),
        "ecocc_qatol": lambda: _ecocc(1, 1, 1e-10),  # the test's rtol, queue atol 1e-10 packets (not 1e-4)
        # the test's rtol with atol 1e-10 on every component, as jitcdde's (and as the Reno test passes)
        "ecocc_atol10": lambda: _ecocc(1, 1, atol=1e-10),
        "ecocc_atol10_numba": lambda: _ecocc(1, 1, atol=1e-10, engine="numba"),
        "ecocc_t2": lambda: _ecocc(1e2, 1e2), "ecocc_t3": lambda: _ecocc(1e3, 1e3),
        "ecocc_t4": lambda: _ecocc(4e3, 1e4)}  # rtol 2.5e-14: ecocc refuses rtol < 100 machine epsilons


def _diff(a, b):
    xr = np.abs(a[:, :N] / b[:, :N] - 1).max()
    rr = np.abs(a[:, N] / b[:, N] - 1).max()
    qa = np.abs(a[:, N + 1] - b[:, N + 1])
    return xr, rr, qa.max(), TS[qa.argmax()]


def compare():
    have = {k: np.load(f"{OUT}/{k}.npz")["y"] for k in RUNS if os.path.exists(f"{OUT}/{k}.npz")}
    refs = [k for k in have if k.split("_")[1] in ("t2", "t3", "t4", "t12", "t13")]
    print("| run | reference | max rel x | max rel r | max abs q (pkts) | at t (s) |\n|---|---|---|---|---|---|")
    for a in have:
        for b in refs:
            if a != b:
                xr, rr, qa, tq = _diff(have[a], have[b])
                print(f"| {a} | {b} | {xr:.3g} | {rr:.3g} | {qa:.3g} | {tq:g} |")
    print(f"peak queue {max(h[:, N + 1].max() for h in have.values()):.4g} pkts")


if __name__ == "__main__":
    if sys.argv[1] == "compare":
        compare()
    else:
        name = sys.argv[2]
        os.makedirs(OUT, exist_ok=True)
        c0 = time.process_time()
        y = RUNS[name]()
        print(f"{name}: total CPU {time.process_time() - c0:.1f} s")
        np.savez(f"{OUT}/{name}.npz", y=y)
