import sys, numpy as np
a, b = np.load(sys.argv[1], allow_pickle=True), np.load(sys.argv[2], allow_pickle=True)
print(sorted(a.files))
for k in ("stable", "regime", "status"):
    if k in a.files:
        d = a[k] != b[k]
        print(k, "differ at", int(d.sum()), "points")
sw_a, sw_b = a["queue_swing_pkts"], b["queue_swing_pkts"]
ma, mb = np.nanmax(sw_a, axis=-1), np.nanmax(sw_b, axis=-1)
print("max |swing diff| (packets):", np.nanmax(np.abs(ma - mb)), "median", np.nanmedian(np.abs(ma - mb)))
settled_either = (a["stable"] | b["stable"])
print("max |swing diff| where settled in either:", np.nanmax(np.abs(ma - mb)[settled_either]) if settled_either.any() else None)
for k in ("stable", "regime"):
    d = np.argwhere(a[k] != b[k])
    for ix in d[:20]:
        ix = tuple(ix)
        print(k, ix, a[k][ix], b[k][ix], "swing", ma[ix], mb[ix], "growth", a["swing_growth_rate_per_s"][ix] if "swing_growth_rate_per_s" in a.files else "")
