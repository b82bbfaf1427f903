"""The numbers behind tests/test_overlap_single.py::test_overlap_converges_to_the_capped_solution (AECP, RTTs
2-16 ms, 10 s): overlap runs at rtol 1e-6 .. 1e-9 against the capped compiled run at rtol 1e-11 (atol / 1e4).

    PYTHONPATH=. python docs/notes/overlap1_tools/convergence.py"""
import json
import sys

import numpy as np

sys.path.insert(0, "tests")
from test_overlap_single import T_END, _system  # noqa: E402

from ecocc.dde import engine  # noqa: E402
from ecocc.simulate import output_grid  # noqa: E402

sysm = _system("aecp-small-rtt")
te = output_grid(T_END, 0.05)
atol = sysm.default_atol()
dyn = np.s_[:, :sysm.layout["queue"].sl.stop]
ref = engine.solve_adaptive(sysm, T_END, rtol=1e-11, atol=atol * 1e-4, t_eval=te)
qrange = float(np.ptp(ref.y[:, sysm.layout["queue"].sl]))
for rtol, af in ((1e-6, 10.0), (1e-7, 1.0), (1e-8, 0.1), (1e-9, 1e-2)):
    for ov in (False, True):
        got = engine.solve_adaptive(sysm, T_END, rtol=rtol, atol=atol * af, t_eval=te, overlap=ov)
        print(json.dumps(dict(rtol=rtol, overlap=ov, steps=got.n_steps, nfev=got.nfev,
                              err=float(np.max(np.abs(got.y[dyn] - ref.y[dyn]))), qrange=qrange)))
