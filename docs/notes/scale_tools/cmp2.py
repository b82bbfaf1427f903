import numpy as np
def err(a, R):
    rel = np.max(np.abs(a["rate"] - R["rate"]) / np.maximum(np.abs(R["rate"]).max(axis=0), 1e-300))
    return rel, np.max(np.abs(a["queue"] - R["queue"])), np.max(np.abs(a["lost"] - R["lost"]))
for model in ("aecp", "symbiosis"):
    T = np.load(f"/tmp/scale/acc_{model}_1000_tight.npz"); TB = np.load(f"/tmp/scale/acc_{model}_1000_tightbase.npz")
    print(model, "tight(new) vs tight(base): rate %.2e queue %.2e lost %.2e" % err(TB, T))
    for tag in ("base", "new"):
        a = np.load(f"/tmp/scale/acc_{model}_1000_{tag}.npz")
        print(f"  {tag} (defaults) vs tight(new): rate %.2e queue %.2e pkts lost %.2e pkts" % err(a, T),
              "| vs tight(base): rate %.2e queue %.2e lost %.2e" % err(a, TB))
