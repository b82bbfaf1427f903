import json, numpy as np, glob
rows = {}
for v in ("before", "after"):
    for r in (1, 2, 3):
        f = f"benchmarks/map_models_mapsfast_{v}{r}.json"
        try:
            d = json.load(open(f))
        except FileNotFoundError:
            continue
        for mm in d["maps"]:
            rows.setdefault(mm["model"], {}).setdefault(v, []).append((r, mm["wall_s"], mm["cpu_s"], mm["mean_steps"], mm["n_settled"], mm["loadavg_before"][0]))
print("| model | round | before wall / CPU (load) | after wall / CPU (load) | wall ratio | CPU ratio |")
print("|---|---|---|---|---|---|")
for m, d in rows.items():
    for (rb, wb, cb, sb, nb, lb), (ra, wa, ca, sa, na, la) in zip(d["before"], d["after"]):
        print(f"| {m} | {rb} | {wb:.1f} / {cb:.1f} ({lb:.1f}) | {wa:.1f} / {ca:.1f} ({la:.1f}) | {wa/wb:.2f} | {ca/cb:.2f} |")
print()
print("| model | median wall before -> after | median CPU before -> after | mean steps before -> after | settled before / after | 5 s target |")
print("|---|---|---|---|---|---|")
for m, d in rows.items():
    b, a = np.array([x[1:] for x in d["before"]]), np.array([x[1:] for x in d["after"]])
    mw = np.median(a[:, 0])
    print(f"| {m} | {np.median(b[:,0]):.1f} -> {mw:.1f} s | {np.median(b[:,1]):.1f} -> {np.median(a[:,1]):.1f} s | {b[0,2]:.0f} -> {a[0,2]:.0f} | {int(b[0,3])} / {int(a[0,3])} | {'met' if mw < 5 else 'missed'} |")
