"""ecocc: fluid models of congestion control inspired by population ecology.

Internally everything is in seconds, packets and packets/s; see
:mod:`ecocc.units` for conversions at the edges.
"""
from .dde.adaptive import DDESolution, Status, solve_dde
from .dde.problem import DDEProblem, Lookup
from .errors import EcoccError, InputError
from .models import (AECP, CLTCP, PETCP, REGISTRY, AECPParams, PETCPParams, Reno, RenoParams, Symbiosis,
                     SymbiosisParams, get_model)
from .network import CrossTraffic, Flow, Link, Network, dumbbell, parking_lot, random_network
from .results import Trajectory, jain_index
from .simulate import simulate
from .system import NetworkSystem
from .units import mbps_to_pps, pps_to_mbps

__version__ = "0.1.0"

__all__ = [
    "AECP", "AECPParams", "CLTCP", "CrossTraffic", "DDEProblem", "DDESolution", "EcoccError", "Flow",
    "InputError", "Link", "Lookup", "Network", "NetworkSystem", "PETCP", "PETCPParams", "REGISTRY", "Reno",
    "RenoParams", "Status", "Symbiosis", "SymbiosisParams", "Trajectory", "dumbbell", "get_model",
    "jain_index", "mbps_to_pps", "parking_lot", "pps_to_mbps", "random_network", "simulate", "solve_dde",
]
