"""A confluent-kafka config for ``group.protocol=consumer`` (KIP-848): the broker assigns.

librdkafka is then the group member itself, so the config goes to it almost unchanged:
the strategy becomes ``group.remote.assignor`` (see ``_remote_assignors``), and the
classic protocol's client-side settings, which librdkafka refuses in this mode (they are
set on the broker), are left out with a warning, so that one config can switch protocols
by ``group.protocol`` alone.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._config import DEFAULT_STRATEGY
from ._errors import UnsupportedConfigError
from ._remote_assignors import remote_assignor_for, strategy_names

log = logging.getLogger("kafka_assignors.confluent")

#: Classic-protocol keys librdkafka refuses with group.protocol=consumer, and why.
CLASSIC_ONLY_KEYS = {
    "session.timeout.ms": "set on the broker (group.consumer.session.timeout.ms)",
    "heartbeat.interval.ms": "set on the broker (group.consumer.heartbeat.interval.ms)",
    "group.protocol.type": "the consumer protocol has no protocol type",
}
_ALIASES = {"metadata.broker.list": "bootstrap.servers"}


@dataclass(frozen=True)
class ConsumerProtocolConfig:
    """What a consumer-protocol member runs with."""

    #: for ``confluent_kafka.Consumer``: the whole config, with group.remote.assignor
    confluent: dict[str, Any]
    #: the broker-side assignor named in ``group.remote.assignor``
    remote_assignor: str
    #: keys left out (librdkafka refuses them in this mode) -> why
    left_out: dict[str, str] = field(default_factory=dict)
    #: True when the user named the assignor (group.remote.assignor), False when mapped
    assignor_given: bool = False


def translate_consumer_protocol(config: Mapping[str, Any]) -> ConsumerProtocolConfig:
    """The librdkafka config of a consumer-protocol member; raises UnsupportedConfigError."""
    conf = {_ALIASES.get(k, k): v for k, v in config.items()}
    if len(conf) < len(config):
        raise UnsupportedConfigError("bootstrap.servers given twice (also as metadata.broker.list)")
    if not conf.get("group.id"):
        raise UnsupportedConfigError("group.id is required: this is a group consumer")
    if "bootstrap.servers" not in conf:
        raise UnsupportedConfigError("bootstrap.servers is required")
    strategy = conf.pop("partition.assignment.strategy", None)
    given = conf.get("group.remote.assignor")
    if given is not None and str(given).strip():
        assignor = str(given).strip()
        if strategy is not None:
            log.warning("partition.assignment.strategy=%r is ignored: group.remote.assignor=%r "
                        "names the broker's assignor", strategy, assignor)
            strategy_names(strategy)  # still refuse a malformed value
    else:
        assignor = remote_assignor_for(DEFAULT_STRATEGY if strategy is None else strategy)
    left_out = {k: why for k, why in CLASSIC_ONLY_KEYS.items() if k in conf}
    for key, why in left_out.items():
        log.warning("%s=%r is not used with group.protocol=consumer: %s", key, conf.pop(key), why)
    conf["group.protocol"] = "consumer"
    conf["group.remote.assignor"] = assignor
    return ConsumerProtocolConfig(
        confluent=conf,
        remote_assignor=assignor,
        left_out=left_out,
        assignor_given=given is not None and bool(str(given).strip()),
    )
