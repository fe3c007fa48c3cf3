"""Lifetime helpers shared by clusters and group runners: ``with`` support, and closing at
exit whatever the process started and did not close (containers, member processes)."""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from typing import Generic, Self, TypeVar

T = TypeVar("T")


class Closing:
    """``with`` support for a class with ``close()``."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class OpenAtExit(Generic[T]):
    """What is still open; ``close_all()`` runs at interpreter exit once anything was added."""

    def __init__(self, close: Callable[[T], object]) -> None:
        self._close = close
        self._open: set[T] = set()
        self._lock = threading.Lock()
        self._registered = False

    def remember(self, item: T) -> None:
        with self._lock:
            self._open.add(item)
            if not self._registered:
                atexit.register(self.close_all)
                self._registered = True

    def forget(self, item: T) -> None:
        with self._lock:
            self._open.discard(item)

    def close_all(self) -> None:
        with self._lock:
            items = list(self._open)  # close() forgets: do not hold the lock meanwhile
        for item in items:
            self._close(item)
