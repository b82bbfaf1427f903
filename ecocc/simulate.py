"""``simulate``: one call from a network and a model to a :class:`Trajectory`."""
from __future__ import annotations

import math

import numpy as np

from .dde.adaptive import Status, solve_dde
from .errors import InputError, check, check_finite
from .models import get_model
from .network import Network
from .results import Trajectory
from .system import NetworkSystem

SOLVERS = ("adaptive", "fixed")


def output_grid(t_end: float, output_dt_s: float | None) -> np.ndarray:
    """Output times of a run.

    Parameters
    ----------
    t_end : float
        Simulated time in seconds.
    output_dt_s : float, optional
        Sampling interval in seconds (default ``t_end / 2000``).

    Returns
    -------
    numpy.ndarray
        ``0, dt, 2 dt, ...`` and ``t_end``.
    """
    if output_dt_s is None:
        output_dt_s = t_end / 2000
    output_dt_s = check_finite("output_dt_s", output_dt_s, positive=True)
    t_eval = np.arange(0.0, t_end + 0.5 * output_dt_s, output_dt_s)
    t_eval = t_eval[t_eval <= t_end]
    if t_eval[-1] < t_end:
        t_eval = np.append(t_eval, t_end)
    return t_eval


def simulate(network: Network, model="aecp", params=None, *, t_end_s: float, output_dt_s: float | None = None,
             solver: str = "adaptive", rtol: float = 1e-7, atol=None, step_s: float | None = None,
             max_step_s: float = math.inf, summary_window_s: float | None = None, progress: bool = False,
             name: str | None = None, engine: str = "numpy", checkpoint=None, checkpoint_every_s: float = 30.0,
             keep_checkpoint: bool = False, **param_overrides) -> Trajectory:
    """Simulate ``model`` on ``network`` from 0 to ``t_end_s`` seconds.

    Parameters
    ----------
    network : Network
    model : str or NetworkModel
        A registry name (``"aecp"``, ``"cltcp"``, ``"petcp"``, ``"symbiosis"``,
        ``"reno"``) or a model instance.
    params : the model's parameter object, optional (defaults: the papers')
    t_end_s : float
        Simulated time in seconds.
    output_dt_s : float, optional
        Sampling interval of the output (default ``t_end_s / 2000``).
    solver : {"adaptive", "fixed"}
        The adaptive method of steps (default) or the fixed-step RK4 batch
        integrator (``step_s`` required).
    rtol, atol : tolerances of the adaptive solver (``atol`` default:
        :meth:`NetworkSystem.default_atol`).
    summary_window_s : float, optional
        Length of the final window the summary averages over (default 10 %
        of the run).
    progress : bool
        Show a progress bar (tqdm) on stderr.
    engine : {"numpy", "numba"}
        ``"numpy"`` (default): the generic solvers.  ``"numba"``: compiled
        kernels of the same methods (:mod:`ecocc.dde.engine`; AECP/CLTCP
        without forward delays).  The adaptive kernel is compiled when ecocc
        is installed (:mod:`ecocc.dde.aot`) and loads in milliseconds, with or
        without numba; the fixed-step kernel needs numba (the ``fast``
        extra) and compiles on its first use on a machine, cached on disk.
    checkpoint : path, optional
        Adaptive NumPy solver only: save the solver state there every
        ``checkpoint_every_s`` seconds and on Ctrl-C; an existing checkpoint of
        the same run is resumed (see :func:`ecocc.dde.adaptive.solve_dde`).
        It is removed when the run completes unless ``keep_checkpoint``: the
        command line keeps it until the outputs are written, then removes it.
    **param_overrides : model parameters to change, e.g. ``alpha_per_s=1``.

    Returns
    -------
    Trajectory
        The sampled run with its status and message (:class:`ecocc.results.Trajectory`).

    Raises
    ------
    InputError
        For a bad input, or a run too large to finish (:mod:`ecocc.limits`).
    """
    m = get_model(model)
    P = m.make_params(params, **param_overrides)
    check(isinstance(network, Network), "network", type(network).__name__, "a Network")
    t_end = check_finite("t_end_s", t_end_s, positive=True)
    check(solver in SOLVERS, "solver", solver, f"one of {SOLVERS}")
    # tolerances and steps (the solver would raise a bare ValueError, hang at max_step_s = 0, or allocate
    # t_end / step_s samples at a tiny fixed step)
    rtol = check_finite("rtol", rtol, positive=True)
    check(rtol < 1, "rtol", rtol, "a relative tolerance in (0, 1)")
    if atol is not None:
        a = np.asarray(atol, dtype=float) if not isinstance(atol, (bool, str)) else None
        check(a is not None and np.all(np.isfinite(a)) and np.all(a > 0), "atol", atol, "numbers > 0")
    if max_step_s != math.inf:
        max_step_s = check_finite("max_step_s", max_step_s, positive=True)
    if summary_window_s is not None:
        summary_window_s = check_finite("summary_window_s", summary_window_s, positive=True)
    checkpoint_every_s = check_finite("checkpoint_every_s", checkpoint_every_s, positive=True)
    if step_s is not None:
        step_s = check_finite("step_s", step_s, positive=True)
    from .dde.engine import check_engine
    check_engine(engine, m, network, kernel="adaptive" if solver == "adaptive" else None)
    from .limits import check_run_size
    check_run_size(network, m, P, t_end, output_dt_s, step_s=step_s if solver == "fixed" else None,
                   max_step_s=max_step_s)  # no run that would hang or exhaust memory
    t_eval = output_grid(t_end, output_dt_s)
    sysm = NetworkSystem(m, network, P, t_end)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=round(t_end, 6), unit="s(sim)", desc=name or network.name, leave=False)

        def cb(t):
            bar.n = round(min(t, t_end), 6)
            bar.refresh()
    else:
        cb = None
    try:
        if engine == "numba":
            from .dde import engine
            if solver == "adaptive":
                sol = engine.solve_adaptive_aecp(
                    sysm, t_end, rtol=rtol, atol=sysm.default_atol() if atol is None else atol, t_eval=t_eval,
                    max_step=max_step_s, progress=cb)
            else:
                if step_s is None:
                    raise InputError("step_s", step_s, "a step in seconds (> 0) for solver='fixed'")
                sol = engine.solve_fixed_aecp(sysm, t_end, check_finite("step_s", step_s, positive=True),
                                              t_eval=t_eval, progress=cb)
        elif solver == "adaptive":
            prob = sysm.problem()
            sol = solve_dde(prob, t_end, rtol=rtol, atol=sysm.default_atol() if atol is None else atol,
                            t_eval=t_eval, record_steps=False, max_step=max_step_s, progress=cb,
                            checkpoint=checkpoint, checkpoint_every_s=checkpoint_every_s,
                            keep_checkpoint=keep_checkpoint)
        else:
            from .dde.fixed import solve_fixed
            if step_s is None:
                raise InputError("step_s", step_s, "a step in seconds (> 0) for solver='fixed'")
            sol = solve_fixed(sysm.problem(), t_end, check_finite("step_s", step_s, positive=True),
                              t_eval=t_eval, progress=cb)
    finally:
        if bar is not None:
            bar.close()
    return Trajectory.from_solution(sol, sysm, name=name or network.name,
                                    summary_window_s=summary_window_s or 0.1 * t_end)


__all__ = ["simulate", "Status"]
