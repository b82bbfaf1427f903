"""Packet-level cross-check in ns-3: the same scenario files, run packet by packet.

``run_packet(scenario)`` runs a scenario in ns-3 (the ``packet`` extra: ``pip install
'ecocc[packet]'``) in a child process and returns a :class:`ecocc.results.Trajectory` shaped
like a fluid run; ``compare(scenario)`` runs both and puts them side by side.  The protocols
are C++ (``ecocc/packet/cpp/ecocc_ns3.cc``) compiled into the child with ``cppyy.cppdef``:
see that file and :mod:`ecocc.packet.spec` for what is modelled and the choices made.
"""
from .runner import PacketBackendError, available, run_packet, run_spec, to_trajectory
from .spec import PROTOCOLS, RATE_PROTOCOLS, TCP_TYPES, build_spec, protocol_for

__all__ = ["run_packet", "run_spec", "to_trajectory", "available", "PacketBackendError", "build_spec",
           "protocol_for", "PROTOCOLS", "RATE_PROTOCOLS", "TCP_TYPES", "compare"]


def __getattr__(name):
    if name == "compare":
        from .comparison import compare
        return compare
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
