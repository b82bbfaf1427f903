"""Markdown tables from anat.py's JSON lines: ``python benchmarks/mapkink_tools/table.py FILE...``.

Per run: steps, attempts by outcome, right-hand sides, and the rejected-on-error attempts by the class of the
event inside them (the first class in anat.CLASSES's order), with each class's rejection rate (rejected / all
attempts of the class that were rejected on the error or accepted) where the accepted steps were classified.
"""
import json
import sys

SHORT = {"queue hold start (current)": "hold start", "queue release (current)": "release",
         "RED level (current queue)": "RED level", "W crosses low_window": "W = low_window",
         "W(t-tau) p crosses 1": "W p = 1", "image: hold start": "img hold", "image: release": "img release",
         "image: RED level": "img RED", "image (2nd gen.): flow kink": "img 2nd gen", "static breakpoint": "static bp",
         "none": "none"}
for f in sys.argv[1:]:
    rows = [json.loads(x) for x in open(f) if x.startswith('{"model"')]
    print(f"\n`{f}`\n")
    print("| RTT x | steps | rejected (error / retaken at a kink / other) | rhs | " + " | ".join(SHORT.values()) + " |")
    print("|---|---|---|---|" + "---|" * len(SHORT))
    tot = None
    for r in rows:
        c = r["codes"]
        e3, e4 = c.get("3", 0), c.get("4", 0)
        oth = r["rejected"] - e3 - e4
        cl = r["err_rejections_by_class"]
        acc = r.get("accepted_by_class")
        cells = []
        for k in SHORT:
            v = cl.get(k, 0)
            if acc is not None and v + acc.get(k, 0) > 0:
                cells.append(f"{v} ({v / (v + acc.get(k, 0)):.2f})")
            else:
                cells.append(str(v))
        print(f"| {r['scale']:.2f} | {r['steps']} | {r['rejected']} ({e3} / {e4} / {oth}) | {r['nfev']} | " + " | ".join(cells) + " |")
        if tot is None:
            tot = {"steps": 0, "rejected": 0, "nfev": 0, **{k: 0 for k in SHORT}}
        tot["steps"] += r["steps"]
        tot["rejected"] += r["rejected"]
        tot["nfev"] += r["nfev"]
        for k in SHORT:
            tot[k] += cl.get(k, 0)
    if tot and len(rows) > 1:
        print(f"| **sum** | {tot['steps']} | {tot['rejected']} | {tot['nfev']} | " + " | ".join(str(tot[k]) for k in SHORT) + " |")
