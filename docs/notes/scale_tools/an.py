import numpy as np, json, sys
model, N = sys.argv[1], int(sys.argv[2])
L = np.load(f"/tmp/scale/log_{model}_{N}.npy"); M = json.load(open(f"/tmp/scale/meta_{model}_{N}.json"))
lay = M["layout"]
def comp(q):
    for k, (a, b) in lay.items():
        if a <= q < b: return f"{k}"
    return "?"
acc = L[L[:,2]==0]; rej = L[L[:,2]==1]; ret = L[L[:,2]==3]
print("layout", lay, "dmin", M["dmin"])
print("accepted", len(acc), "rejected", len(rej), "retakes(crossings located)", len(ret), "nfev", M["nfev"])
print("accepted flags: hit_bp", int(((acc[:,7].astype(int)&1)>0).sum()), "was_retake", int(((acc[:,7].astype(int)&2)>0).sum()), "projected", int(((acc[:,7].astype(int)&4)>0).sum()))
# per second
for a in range(0, 30, 1):
    s = (acc[:,0]>=a)&(acc[:,0]<a+1); r=(rej[:,0]>=a)&(rej[:,0]<a+1); x=(ret[:,0]>=a)&(ret[:,0]<a+1)
    hs = acc[s,1]
    print(f"t {a:2d}-{a+1:2d}: acc {s.sum():5d} rej {r.sum():5d} retake {x.sum():4d} h median {np.median(hs) if len(hs) else 0:.2e} min {hs.min() if len(hs) else 0:.1e}")
dc = set(M["dcomp"])
# which criterion limits: for accepted steps, err (total) vs err_n (norm)
lim_dc = (acc[:,4] > acc[:,3]*1.0000001)
print("accepted: err set by dcomp mid-step check", int(lim_dc.sum()), "by max-norm", int((~lim_dc).sum()))
lim_dc_r = (rej[:,4] > rej[:,3]*1.0000001)
print("rejected: err set by dcomp", int(lim_dc_r.sum()), "by norm", int((~lim_dc_r).sum()), "rejected with err_n>1", int((rej[:,3]>1).sum()))
from collections import Counter
print("argmax component kind (accepted):", Counter(comp(int(q)) for q in acc[:,5] if q>=0).most_common())
print("argmax component kind (rejected):", Counter(comp(int(q)) for q in rej[:,5] if q>=0).most_common())
print("top argmax components (accepted):", Counter(int(q) for q in acc[:,5]).most_common(10))
print("top argmax components (rejected):", Counter(int(q) for q in rej[:,5]).most_common(10))
print("accepted step histogram (log10 h):", np.histogram(np.log10(acc[:,1]), bins=[-9,-6,-5,-4,-3.5,-3,-2.5,-2,-1.5])) 
print("err of accepted: median", np.median(acc[:,4]), "frac err<0.1", (acc[:,4]<0.1).mean())
print("rejected err median", np.median(rej[:,4]))
