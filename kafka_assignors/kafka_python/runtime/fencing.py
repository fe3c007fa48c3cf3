"""A static member fenced by a newer instance stops, as the Java consumer does.

When a second member joins with the same ``group_instance_id``, the broker gives it the
first one's place; the first one's next heartbeat is answered FENCED_INSTANCE_ID.
kafka-python 3.0.x then only turns that member's heartbeat off: it goes on polling (and
fetching what it held) beside its replacement. Java's heartbeat thread keeps the error and
every later ``poll()`` raises it (``FencedInstanceIdException``; Kafka's system test
``fencing_static_consumer`` expects the fenced consumer to stop). :class:`FencedMemberMixin`
does the same with kafka-python's ``FencedInstanceIdError`` (docs/upstream.md#7). Where the
installed kafka-python raises it from ``poll()`` itself (its own fix, found by the probe
``fenced-member-stops`` in :mod:`.probes`), the mixin steps aside: kafka-python's error and
log line, nothing of ours.
"""

from __future__ import annotations

import logging
from typing import Any

from . import probes
from .compose import RuntimeMixin

log = logging.getLogger("kafka_assignors")

_STATE = "_kafka_assignors_fenced"


class FencedMemberMixin(RuntimeMixin):
    """Every ``poll()`` after a heartbeat was answered FENCED_INSTANCE_ID raises it."""

    FEATURE = "fencing"
    TITLE = "fenced stop"

    @classmethod
    def kafka_assignors_setup(cls, coordinator: Any) -> None:
        setattr(coordinator, _STATE, None)

    def _handle_heartbeat_response(self, response: Any, send_time: float,
                                   *args: Any, **kwargs: Any) -> Any:
        """Keeps the fencing error kafka-python only logs (it turns the heartbeat off)."""
        from kafka import errors as Errors

        try:
            return super()._handle_heartbeat_response(response, send_time, *args, **kwargs)
        except Errors.FencedInstanceIdError as exc:
            if getattr(self, _STATE) is None and probes.workaround_needed("fenced-member-stops"):
                log.error("group %s: another consumer joined with this member's "
                          "group_instance_id %r: this one is fenced; its poll() raises "
                          "FencedInstanceIdError from now on (close it)", self.group_id,
                          self.group_instance_id)
                setattr(self, _STATE, exc)
            raise

    def poll(self, *args: Any, **kwargs: Any) -> bool:
        """Raises ``FencedInstanceIdError`` once the member was fenced, as Java's ``poll()``
        raises ``FencedInstanceIdException`` (kafka-python polls on, docs/upstream.md#7)."""
        from kafka import errors as Errors

        if getattr(self, _STATE) is not None:
            raise Errors.FencedInstanceIdError(
                f"group {self.group_id}: group_instance_id {self.group_instance_id!r} was "
                "taken over by another consumer; this one is fenced (close it)")
        return bool(super().poll(*args, **kwargs))
