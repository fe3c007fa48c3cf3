"""``BrokerAssignedConsumer``: a consumer-protocol (KIP-848) member, assigned by the broker.

In a ``group.protocol=consumer`` group the broker runs the assignor, so librdkafka is the
member itself and nothing needs bridging: this class is a plain ``confluent_kafka.Consumer``
with the strategy mapped to ``group.remote.assignor`` and the bridge's surface kept (the
same callbacks; ``assign()`` from callbacks, or without ``subscribe()`` for manual assignment).
The protocol is incremental: ``on_assign``/``on_revoke`` get only the partitions that change,
as in cooperative mode.  A broker without the assignor asked for makes ``poll()`` and
``consume()`` raise :class:`UnsupportedAssignorError` naming the assignors it has.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import confluent_kafka

from ._broker_config import broker_assignors
from ._callback_rules import CallbackRules
from ._commits import librdkafka_commit
from ._consumer_protocol import ConsumerProtocolConfig, translate_consumer_protocol
from ._errors import UnsupportedAssignorError, is_unsupported_assignor, state_error
from ._protocol_choice import Consumer, given_config
from ._rebalance import Callback
from ._remote_assignors import unsupported_assignor_message

log = logging.getLogger("kafka_assignors.confluent")

_Base: Any = confluent_kafka.Consumer
_raw_poll = _Base.poll
_raw_consume = _Base.consume


class BrokerAssignedConsumer(CallbackRules, Consumer):
    """A confluent-kafka ``Consumer`` in a ``group.protocol=consumer`` group.

    Takes the bridge's configuration: ``partition.assignment.strategy`` picks the broker's
    assignor (``balanced-sticky`` for ours), unless ``group.remote.assignor`` is given.
    See ``docs/confluent.md``.
    """

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        settings = translate_consumer_protocol(given_config(config, kwargs))
        self._settings: ConsumerProtocolConfig = settings
        self._closed = False
        self._in_callback = False
        self._subscribed = False
        #: the UNSUPPORTED_ASSIGNOR error once seen: raised again by every poll()/consume()
        self._fatal: UnsupportedAssignorError | None = None
        super().__init__(settings.confluent)

    @property
    def remote_assignor(self) -> str:
        """The broker-side assignor this member asks for (``group.remote.assignor``)."""
        return self._settings.remote_assignor

    @property
    def cooperative(self) -> bool:
        """Always True: the consumer protocol moves partitions incrementally."""
        return True

    def _subscribe(self, topics: Sequence[str], callbacks: dict[str, Callback]) -> None:
        marked = {name: self._marked(cb) for name, cb in callbacks.items()}
        _Base.subscribe(self, list(topics), **marked)
        self._subscribed = True

    def _marked(self, callback: Callback) -> Callback:
        """The callback, run with the flag that allows assign() and forbids poll()."""
        def run(consumer: Any, partitions: list[Any]) -> None:
            self._in_callback = True
            try:
                callback(self, partitions)
            finally:
                self._in_callback = False
        return run

    def unsubscribe(self) -> None:
        """Leave the group (librdkafka calls on_revoke with every partition held)."""
        self._check_usable("unsubscribe")
        _Base.unsubscribe(self)
        self._subscribed = False

    # --- consuming ------------------------------------------------------------------------

    def poll(self, timeout: float = -1) -> Any:
        """One message or event (or None on timeout); raises UnsupportedAssignorError."""
        self._check_polling()
        msg = _raw_poll(self, timeout)
        if msg is not None and msg.error() is not None:
            self._check_error(msg.error())
        return msg

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]:
        """Up to ``num_messages`` messages, waiting at most ``timeout`` seconds (-1: forever)."""
        self._check_polling()
        msgs: list[Any] = _raw_consume(self, num_messages, timeout)
        for msg in msgs:
            if msg.error() is not None:
                self._check_error(msg.error())
        return msgs

    def _check_polling(self) -> None:
        if self._closed:
            raise RuntimeError("Consumer closed")
        if self._in_callback:
            raise state_error("poll()/consume() cannot be called from a rebalance callback")
        if self._fatal is not None:
            raise self._fatal

    def _check_error(self, error: Any) -> None:
        """Turn librdkafka's UNSUPPORTED_ASSIGNOR into an error that says what to do."""
        if not is_unsupported_assignor(error):
            return
        asked = self._settings.remote_assignor
        on_broker = broker_assignors(self._settings.confluent)
        message = unsupported_assignor_message(asked, on_broker)
        log.error("%s", message)
        self._fatal = UnsupportedAssignorError(
            message, asked, on_broker if isinstance(on_broker, list) else None
        )
        raise self._fatal

    # --- hooks of CallbackRules ----------------------------------------------------------

    def _in_rebalance_callback(self) -> bool:
        return self._in_callback

    def _group_subscribed(self) -> bool:
        return self._subscribed

    def _commit(
        self, message: Any, offsets: Sequence[Any] | None, asynchronous: bool
    ) -> list[Any] | None:
        return librdkafka_commit(self, message, offsets, asynchronous)

    def _close_clients(self) -> None:
        """Leave the group (on_revoke, final auto-commit) and close."""
        _Base.close(self)
