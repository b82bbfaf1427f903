"""Case 149 of benchmarks/engines_fuzz.py (seed 0): is the lanes-vs-NumPy difference the problem's amplification?
Runs the worst member (red_p_max 0.3933, rtt_scale 0.6052) on the NumPy solver at rtol 1e-7 and the same with
the capacity 1e-9 relative larger, and compiled tight runs (rtol 1e-10, atol 1e-11) of both; differences in the
fuzz's units (queue 1e-4 + rtol|q| packets, rate 1e-6 + (rtol + 1e-8)|x| packets/s, rtol = 1e-7)."""
import sys, time
import numpy as np
from ecocc import simulate, dumbbell

RED_P_MAX, RTT_SCALE = (float(sys.argv[1]), float(sys.argv[2])) if len(sys.argv) == 3 else (0.3933, 0.6052)


def net(eps):
    return dumbbell(27910.0 * (1 + eps), [0.00522, 0.00664, 0.0104], starts_s=[0.0, 1.17, 1.899],
                    initial_rate_pps=203.7, buffer_pkts=355.6).scaled(rtt_scale=RTT_SCALE)


P = dict(aqm="red", red_min_th_pkts=62.45, red_max_th_pkts=136.7, red_p_max=RED_P_MAX)
def run(eps, **kw):
    t = time.perf_counter()
    tr = simulate(net(eps), "reno", t_end_s=8.7, output_dt_s=0.01, **P, **kw)
    return tr, time.perf_counter() - t

def units(a, b, rt=1e-7):
    r = np.max(np.abs(a.rate_pps - b.rate_pps) / (1e-6 + (rt + 1e-8) * np.abs(b.rate_pps)))
    q = np.max(np.abs(a.queue_pkts - b.queue_pkts) / (1e-4 + rt * np.abs(b.queue_pkts)))
    return max(r, q)


def main():
    n0, _ = run(0.0, engine="numpy", rtol=1e-7)
    n1, _ = run(1e-9, engine="numpy", rtol=1e-7)
    t0, _ = run(0.0, engine="numba", rtol=1e-10, atol=1e-11)
    t1, _ = run(1e-9, engine="numba", rtol=1e-10, atol=1e-11)
    print("red_p_max", RED_P_MAX, "rtt_scale", RTT_SCALE)
    print("NumPy rtol 1e-7: C x (1 + 1e-9) vs C: %.3g units" % units(n1, n0))
    print("tight compiled: C x (1 + 1e-9) vs C: %.3g units" % units(t1, t0))
    print("NumPy rtol 1e-7 vs tight: %.3g units" % units(n0, t0))
    print("queue range %.1f-%.1f packets" % (n0.queue_pkts.min(), n0.queue_pkts.max()))


if __name__ == "__main__":
    main()
