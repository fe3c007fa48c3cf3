"""Free TCP ports on the loopback interface, picked at run time (no fixed ports)."""

from __future__ import annotations

import contextlib
import random
import socket
import time
from pathlib import Path

LOOPBACK = "127.0.0.1"
# Listening ports are taken from below the kernel's ephemeral range: an outgoing client
# connection (kafka-python, the JVMs) then never takes a broker's port between the pick
# and the bind, or while a broker is stopped for a restart test.
LOWEST_PORT = 15000
EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_low() -> int:
    try:
        return int(EPHEMERAL_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def free_ports(count: int) -> list[int]:
    """Return ``count`` distinct ports, free on 127.0.0.1 a moment ago, outside the
    ephemeral range when there is room (else any port the kernel hands out)."""
    high = _ephemeral_low() - 1
    if high - LOWEST_PORT >= 1000:
        chosen: list[int] = []
        for port in random.sample(range(LOWEST_PORT, high + 1), min(high - LOWEST_PORT, 400)):
            if _bindable(port):
                chosen.append(port)
                if len(chosen) == count:
                    return chosen
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOOPBACK, 0))
            sockets.append(sock)
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.close()


def port_open(port: int, host: str = LOOPBACK, timeout: float = 0.5) -> bool:
    """True if something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_port(port: int, timeout: float, host: str = LOOPBACK) -> bool:
    """Wait (bounded) until ``host:port`` accepts connections; False on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_open(port, host):
            return True
        time.sleep(0.2)
    return False
