"""The fuzz's case 52 of seed 2 (lock-step Scalable TCP, drop-tail) rerun with overlap and kinks on and off: its first
two members at RTT scale 1.  Run from the repository root: PYTHONPATH=. python docs/notes/fuzz_seed2_tools/case52.py"""
import sys, json
sys.path.insert(0, "benchmarks")
import engines_fuzz as ef
c = ef.draw_case(2, 52)
c["values"] = c["values"][:2]; c["rtt_scale"] = [1.0]
for ov, kk in ((True, True), (False, True), (True, False), (False, False)):
    c["opts"] = {"overlap": ov, "kinks": kk}
    row = ef.run_batch(c, 60.0)
    print("overlap", ov, "kinks", kk, row["verdict"], "worst %.3g" % (row.get("worst") or 0), [s[:200] for s in row.get("suspicious", [])][:1], flush=True)
