"""The ``--load-rtt`` and ``--past`` options shared by every command that simulates a scenario
(``simulate``, ``sim-map``, ``sweep``), and ``--rtt-includes-queueing / --constant-rtt`` (``simulate``,
``sweep``): one definition, one rule for the scenario's defaults."""
from __future__ import annotations

import click

_LOAD_RTT_HELP = ("How a delayed Reno-type rate W/(tau + Q) is read (default: the scenario's [scenario].load_rtt, "
                  "else current): current = W(t - d)/(tau + Q(t)); sent = W(t - d)/(tau + Q(t - d)), the rate at "
                  "the sending time (the standard fluid models' reading).")
_PAST_HELP = ("The past before t = 0 (default: the scenario's [scenario].past, else silent): silent = no traffic "
              "before the flows start (their delayed loads switch on one round trip later, a jump per distinct "
              "RTT); steady = the flows starting at 0 were sending at their initial state before (no jumps).")


def reading_options(extra_load_rtt_help: str = ""):
    """A click decorator adding ``--load-rtt`` and ``--past`` (parameters ``load_rtt``, ``past``; None when not
    given, resolved against the scenario by :func:`resolve_readings`).

    Parameters
    ----------
    extra_load_rtt_help : str, optional
        A sentence appended to ``--load-rtt``'s help (what the reading costs in this command).

    Returns
    -------
    callable
        The decorator.
    """
    def deco(f):
        f = click.option("--past", type=str, default=None, metavar="silent|steady", help=_PAST_HELP)(f)
        return click.option("--load-rtt", type=str, default=None, metavar="current|sent",
                            help=" ".join(s for s in (_LOAD_RTT_HELP, extra_load_rtt_help) if s))(f)
    return deco


def check_readings(load_rtt, past):
    """Validate the values of ``--load-rtt`` and ``--past`` that were given (None: not given, kept).

    Parameters
    ----------
    load_rtt, past : str or None
        The options' values.

    Returns
    -------
    load_rtt, past : str or None
        The validated values.

    Raises
    ------
    ecocc.errors.InputError
        For a value that is not allowed, naming ``--load-rtt`` or ``--past``.
    """
    from .system import check_load_rtt, check_past
    return (None if load_rtt is None else check_load_rtt(load_rtt, "--load-rtt"),
            None if past is None else check_past(past, "--past"))


def resolve_readings(sc, load_rtt, past):
    """The readings a command runs: the command line's where given (validated, the option named in the error),
    else the scenario's (never silently the defaults).

    Parameters
    ----------
    sc : ecocc.scenarios.Scenario
        The loaded scenario.
    load_rtt, past : str or None
        The values of ``--load-rtt`` and ``--past`` (None: not given).

    Returns
    -------
    load_rtt : {"current", "sent"}
    past : {"silent", "steady"}

    Raises
    ------
    ecocc.errors.InputError
        For a value that is not allowed, naming ``--load-rtt`` or ``--past``.
    """
    load_rtt, past = check_readings(load_rtt, past)
    return sc.load_rtt if load_rtt is None else load_rtt, sc.past if past is None else past


def readings_stem(stem, load_rtt, past):
    """``stem`` with the readings that are not the defaults (``past="silent"``, ``load_rtt="current"``) appended:
    ``sim_map``, ``sim_map_past-steady``, ``sim_map_load_rtt-sent``, ``sim_map_past-steady_load_rtt-sent``.  The
    output files of one --out directory under different readings then never replace each other, and the defaults
    keep the names they had.

    Parameters
    ----------
    stem : str
        The file name stem (``"sim_map"``).
    load_rtt, past : str
        The resolved readings (:func:`resolve_readings`).

    Returns
    -------
    str
    """
    from .system import check_load_rtt, check_past
    past, load_rtt = check_past(past), check_load_rtt(load_rtt)
    return stem + ("" if past == "silent" else f"_past-{past}") + ("" if load_rtt == "current" else
                                                                     f"_load_rtt-{load_rtt}")


_RTT_HELP = ("Each feedback delay plus the path's queueing delay (state-dependent delays; adaptive solver) or the "
             "constant delays of the papers (default: the scenario's [scenario].rtt_includes_queueing, else "
             "constant).")


def rtt_option(f):
    """A click decorator adding ``--rtt-includes-queueing / --constant-rtt`` (parameter ``rtt_includes_queueing``;
    None when not given, resolved against the scenario by :func:`resolve_rtt`).

    Parameters
    ----------
    f : callable
        The command function.

    Returns
    -------
    callable
        The decorated command.
    """
    return click.option("--rtt-includes-queueing/--constant-rtt", "rtt_includes_queueing", default=None,
                        help=_RTT_HELP)(f)


def resolve_rtt(sc, rtt_includes_queueing, solver="adaptive"):
    """Whether a command's runs include the queueing delay in the round trip: the command line's where given,
    else the scenario's; checked against the solver.

    Parameters
    ----------
    sc : ecocc.scenarios.Scenario
        The loaded scenario.
    rtt_includes_queueing : bool or None
        The option's value (None: not given).
    solver : {"adaptive", "fixed"}, optional
        The command's solver: state-dependent delays need the adaptive one.

    Returns
    -------
    bool

    Raises
    ------
    ecocc.errors.InputError
        With ``solver="fixed"`` when the queueing delay is asked for, naming where it was asked for
        (``--rtt-includes-queueing`` or ``[scenario].rtt_includes_queueing``).
    """
    from .errors import InputError
    value = sc.rtt_includes_queueing if rtt_includes_queueing is None else bool(rtt_includes_queueing)
    if value and solver != "adaptive":
        field = "--rtt-includes-queueing" if rtt_includes_queueing else "[scenario].rtt_includes_queueing"
        raise InputError(field, True, "only with --solver adaptive (state-dependent delays need the adaptive "
                                      "solver); --constant-rtt runs the constant delays")
    return value


def refuse_rtt(sc, command):
    """Refuse a scenario that puts the queueing delay in the round trip in a command that runs constant delays
    only (``sim-map``: the lock-step kernel; the linear tools: the loop's delays are constant).

    Parameters
    ----------
    sc : ecocc.scenarios.Scenario
        The loaded scenario.
    command : str
        What the command runs, for the message (``"sim-map (the lock-step map kernel)"``).

    Raises
    ------
    ecocc.errors.InputError
        Naming ``[scenario].rtt_includes_queueing`` where it is true.
    """
    from .errors import InputError
    if sc.rtt_includes_queueing:
        raise InputError("[scenario].rtt_includes_queueing", True,
                         f"false for {command}: it runs the constant delays only (ecocc simulate and ecocc sweep "
                         "follow the queueing delay)")
