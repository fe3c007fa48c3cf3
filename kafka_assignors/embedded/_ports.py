"""Free TCP ports on the loopback interface, picked at run time (no fixed ports)."""

from __future__ import annotations

import socket
import time

LOOPBACK = "127.0.0.1"


def free_ports(count: int) -> list[int]:
    """Return ``count`` distinct ports that were free on 127.0.0.1 a moment ago.

    All sockets are held open until every port is chosen, so the ports differ; a
    small race with other processes remains (callers retry on "address in use").
    """
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOOPBACK, 0))
            sockets.append(sock)
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for sock in sockets:
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
