"""Unit conversions.  Inside ecocc: seconds, packets, packets/s.

Mbps and bytes appear only at the edges (scenario files, CLI, plots), and the
packet size is always an explicit argument: the Huang et al. papers
(PE-TCP, CLTCP, AECP) use 1000-byte data packets, Hasegawa & Murata
(TCP Symbiosis) imply 1500-byte packets.
"""
from __future__ import annotations

from .errors import check_finite

#: Packet size of the PE-TCP / CLTCP / AECP ns-2 experiments (bytes).
HUANG_PACKET_BYTES = 1000
#: Packet size implied by TCP Symbiosis (41 pkt = BDP at 10 Mbps, 50 ms).
SYMBIOSIS_PACKET_BYTES = 1500


def mbps_to_pps(rate_mbps, packet_bytes):
    """Convert a rate in Mbit/s to packets/s for ``packet_bytes``-byte packets.

    Parameters
    ----------
    rate_mbps : float or array_like
        Rate in Mbit/s (10^6 bit/s); not validated, arrays convert elementwise.
    packet_bytes : float
        Packet size in bytes (> 0), e.g. :data:`HUANG_PACKET_BYTES` or :data:`SYMBIOSIS_PACKET_BYTES`.

    Returns
    -------
    float or numpy.ndarray
        The rate in packets/s.

    Raises
    ------
    InputError
        If ``packet_bytes`` is not a finite number > 0.
    """
    pb = check_finite("packet_bytes", packet_bytes, positive=True)
    return rate_mbps * 1e6 / (8.0 * pb)


def pps_to_mbps(rate_pps, packet_bytes):
    """Convert packets/s to Mbit/s for ``packet_bytes``-byte packets.

    Parameters
    ----------
    rate_pps : float or array_like
        Rate in packets/s; not validated, arrays convert elementwise.
    packet_bytes : float
        Packet size in bytes (> 0).

    Returns
    -------
    float or numpy.ndarray
        The rate in Mbit/s (10^6 bit/s).

    Raises
    ------
    InputError
        If ``packet_bytes`` is not a finite number > 0.
    """
    pb = check_finite("packet_bytes", packet_bytes, positive=True)
    return rate_pps * 8.0 * pb / 1e6


def bytes_to_packets(size_bytes, packet_bytes):
    """Convert a size in bytes to packets of ``packet_bytes`` bytes (not rounded).

    Parameters
    ----------
    size_bytes : float or array_like
        Size in bytes (a buffer, a window); not validated.
    packet_bytes : float
        Packet size in bytes (> 0).

    Returns
    -------
    float or numpy.ndarray
        The size in packets, fractional where ``size_bytes`` is not a multiple of ``packet_bytes``.

    Raises
    ------
    InputError
        If ``packet_bytes`` is not a finite number > 0.
    """
    pb = check_finite("packet_bytes", packet_bytes, positive=True)
    return size_bytes / pb


def ms_to_s(t_ms):
    """Convert milliseconds to seconds.

    Parameters
    ----------
    t_ms : float or array_like
        Time in milliseconds; not validated.

    Returns
    -------
    float or numpy.ndarray
        The time in seconds.
    """
    return t_ms * 1e-3
