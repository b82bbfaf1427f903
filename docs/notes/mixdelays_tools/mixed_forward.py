"""Targeted differential check of the compiled composite with forward delays: the fuzz's own cases
(benchmarks/engines_fuzz.py draw_case / run_case) of model "mixed" with forward delays (``fwd_frac``), seeds 3-8.

    PYTHONPATH=<repo> python mixed_forward.py MAX_CASES BUDGET_MIN    # writes mixed_forward.json beside it

NumPy runs are abandoned after 90 s (the forward delays are the smallest delays, so the NumPy runs take many steps).
"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import engines_fuzz as ef
cases = []
for seed in range(3, 9):
    for k in range(0, 1500):
        c = ef.draw_case(seed, k)
        if c["kind"] == "single" and c["model"] == "mixed" and c["topo"].get("fwd_frac"):
            cases.append(c)
print(len(cases), "cases", flush=True)
w = ef.Worker()
rows = []
t0 = time.time()
for c in cases[: int(sys.argv[1])]:
    row = w.run(c, 90.0, 900.0)
    rows.append(row)
    print(c["seed"], c["k"], c["topo"]["type"], c["topo"].get("protocols"), c["opts"], row["verdict"], row.get("worst"),
          row.get("suspicious"), row.get("wall_s"), flush=True)
    json.dump(rows, open(Path(__file__).with_name("mixed_forward.json"), "w"), default=ef._json_default)
    if time.time() - t0 > 60 * float(sys.argv[2]):
        break
w.kill()
