"""Targeted differential check of the compiled composite's queueing-delay and forward-delay variants: the fuzz's
own cases and verdicts (benchmarks/engines_fuzz.py ``draw_case`` / ``Worker``) of model "mixed" with
``rtt_includes_queueing`` (seeds 5-9) or with forward delays (``fwd_frac``, seeds 3-8), in the order drawn.

    PYTHONPATH=<repo> python mixed_delays.py queueing MAX_CASES BUDGET_MIN   # -> mixed_queueing.json beside it
    PYTHONPATH=<repo> python mixed_delays.py forward MAX_CASES BUDGET_MIN    # -> mixed_forward.json

NumPy runs are abandoned after 20 s (queueing: the fuzz's default) or 90 s (forward: the forward delays are the
smallest delays, so the NumPy runs take many steps); the compiled run's invariants are checked either way.
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import engines_fuzz as ef  # noqa: E402

from ecocc.store import atomic_write_text  # noqa: E402

MODES = {"queueing": (range(5, 10), lambda c: c["opts"].get("rtt_includes_queueing"), 20.0),
         "forward": (range(3, 9), lambda c: c["topo"].get("fwd_frac"), 90.0)}


def main(mode, max_cases, budget_min):
    seeds, keep, numpy_timeout = MODES[mode]
    cases = [c for seed in seeds for k in range(1500) for c in [ef.draw_case(seed, k)]
             if c["kind"] == "single" and c["model"] == "mixed" and keep(c)]
    print(len(cases), "cases", flush=True)
    w, rows, t0 = ef.Worker(), [], time.time()
    out = Path(__file__).with_name(f"mixed_{mode}.json")
    for c in cases[:max_cases]:
        row = w.run(c, numpy_timeout, 10 * numpy_timeout if mode == "forward" else 600.0)
        rows.append(row)
        print(c["seed"], c["k"], c["topo"]["type"], c["topo"].get("protocols"), c["opts"], row["verdict"],
              row.get("worst"), row.get("suspicious"), row.get("wall_s"), flush=True)
        atomic_write_text(out, json.dumps(rows, default=ef._json_default))  # a killed run keeps its rows
        if time.time() - t0 > 60 * budget_min:
            break
    w.kill()


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in MODES:
        sys.exit(f"usage: python mixed_delays.py {{{'|'.join(MODES)}}} MAX_CASES BUDGET_MIN")
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
