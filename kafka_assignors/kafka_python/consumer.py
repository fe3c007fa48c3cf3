"""The kafka-python consumer with the kafka-assignors runtime: ``KafkaConsumer``.

Usage (kafka-python 3; the only change from a plain consumer is the import)::

    from kafka_assignors import CooperativeBalancedStickyAssignor
    from kafka_assignors.kafka_python import KafkaConsumer

    consumer = KafkaConsumer("orders", group_id="billing", bootstrap_servers="broker:9092",
                             partition_assignment_strategy=[CooperativeBalancedStickyAssignor])

``KafkaConsumer`` is ``kafka.KafkaConsumer`` with the same constructor; right after
kafka-python's own ``__init__`` it applies the runtime to its own coordinator (joins never
dropped, heartbeats through the rebalance, cooperative keep-reading with revoke-first and
rebalance-safe commits, rebalance metrics) and logs one INFO line saying what it turned on.
What each part changes, and what it relies on: ``docs/runtime.md``.
"""

from __future__ import annotations

from typing import Any

from kafka import KafkaConsumer as _KafkaConsumer

from .compat import KAFKA_PYTHON_2, KAFKA_PYTHON_VERSION

__all__ = ["KafkaConsumer", "RuntimeUnavailableError"]

from .consumer_group import install, split_configs
from .runtime import RuntimeUnavailableError, apply


class KafkaConsumer(_KafkaConsumer):  # type: ignore[misc]
    """``kafka.KafkaConsumer`` with the kafka-assignors runtime applied to its coordinator.

    Raises :class:`RuntimeUnavailableError` (naming what is missing) if the installed
    kafka-python lacks something the runtime relies on, and ``ValueError`` if an assignor
    instance in ``partition_assignment_strategy`` already serves another live consumer
    (pass the class, or one instance per consumer).

    ``group_protocol="consumer"`` (optionally ``group_remote_assignor="balanced-sticky"``)
    makes it a member of a KIP-848 consumer group instead (docs/clients/kafka-python.md).
    """

    def __init__(self, *topics: Any, **configs: Any) -> None:
        if KAFKA_PYTHON_2:
            raise RuntimeUnavailableError(
                "kafka_assignors.kafka_python.KafkaConsumer needs kafka-python 3 (installed: "
                f"{'.'.join(map(str, KAFKA_PYTHON_VERSION))}); use kafka.KafkaConsumer there")
        # group_protocol="consumer" (KIP-848): kafka-python refuses options it does not know
        configs, consumer_protocol = split_configs(configs)
        super().__init__(*topics, **configs)

        try:
            if consumer_protocol is None:
                apply(self)
            else:
                install(self, consumer_protocol)
        except BaseException:
            super().close(autocommit=False)  # nothing of kafka-python's keeps running
            raise

    def unsubscribe(self) -> None:
        """kafka-python's ``unsubscribe()``; a consumer-protocol member first releases its
        partitions as the Java consumer does before it leaves (commit, then
        ``on_partitions_revoked`` with everything it held)."""
        release = getattr(self._coordinator, "release_before_unsubscribe", None)
        error = release() if release is not None else None
        super().unsubscribe()
        if error is not None:
            import kafka.errors as Errors

            raise Errors.KafkaError("User rebalance callback throws an error") from error
