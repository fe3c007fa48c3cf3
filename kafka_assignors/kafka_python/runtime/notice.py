"""A thread that drives a consumer's ``poll()`` learns at once that a rejoin is due.

kafka-python marks a rejoin (``request_rejoin``, ``reset_generation``) from its IO thread
and from heartbeat answers; a caller that polls its membership client only when there is
something to do (the confluent bridge's membership thread, which rests between polls while
the group is stable) would otherwise see the mark only at its next poll. :class:`
RejoinNoticeMixin` sets the caller's ``threading.Event`` after kafka-python's method set the
mark, so the woken poll sees it. Behaviour of kafka-python's is unchanged: the mixin only
tells.
"""

from __future__ import annotations

import threading
from typing import Any

from . import compose, manifest
from .compose import RuntimeMixin

_STATE = "_kafka_assignors_rejoin_notice"


class RejoinNoticeMixin(RuntimeMixin):
    """Sets the caller's event whenever kafka-python marks a rejoin as needed."""

    FEATURE = "rejoin_notice"
    TITLE = "rejoin notice"

    @classmethod
    def kafka_assignors_setup(cls, coordinator: Any) -> None:
        setattr(coordinator, _STATE, None)

    def request_rejoin(self, *args: Any, **kwargs: Any) -> None:
        """Tells the waiting poller once kafka-python has marked the rejoin."""
        try:
            super().request_rejoin(*args, **kwargs)
        finally:
            _tell(self)

    def reset_generation(self, *args: Any, **kwargs: Any) -> None:
        """Tells the waiting poller once kafka-python has reset the generation."""
        try:
            super().reset_generation(*args, **kwargs)
        finally:
            _tell(self)


def _tell(coordinator: Any) -> None:
    event: threading.Event | None = getattr(coordinator, _STATE, None)
    if event is not None:
        event.set()


def notify_rejoins(coordinator: Any, event: threading.Event) -> tuple[str, ...]:
    """Give ``coordinator`` the rejoin notice, setting ``event``; what kafka-python lacks for
    it (empty when in place; nothing is changed otherwise)."""
    lacking = manifest.missing(coordinator, {RejoinNoticeMixin.FEATURE})
    if lacking:
        return lacking
    try:
        compose.enable(coordinator, {RejoinNoticeMixin.FEATURE})
    except compose.IncompatibleCoordinatorError as exc:
        return (str(exc),)
    setattr(coordinator, _STATE, event)
    return ()
