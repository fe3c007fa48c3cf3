"""One confluent-kafka config dict split in three: librdkafka, the membership client, the bridge.

* Group-membership keys go to the membership client (a kafka-python consumer)
  only: librdkafka never joins the group.
* Connection and security keys go to both clients.
* Commit keys are handled by the bridge: offsets are committed through the
  membership client, with the member's generation, so librdkafka's own
  committing is switched off.
* Every other key goes to librdkafka unchanged (fetching, deserialising,
  logging, statistics, ...).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from ._errors import UnsupportedConfigError
from ._security import SECURITY_KEYS, as_bool, translate_security

log = logging.getLogger("kafka_assignors.confluent")

#: Group-membership keys: given to the membership client, not to librdkafka.
MEMBERSHIP_KEYS = {
    "group.instance.id": "group_instance_id",
    "session.timeout.ms": "session_timeout_ms",
    "heartbeat.interval.ms": "heartbeat_interval_ms",
    "max.poll.interval.ms": "max_poll_interval_ms",
}
#: Connection keys given to both clients (security keys too: see ``_security``).
SHARED_KEYS = {
    "bootstrap.servers": "bootstrap_servers",
    "group.id": "group_id",
    "client.id": "client_id",
    "metadata.max.age.ms": "metadata_max_age_ms",
    "retry.backoff.ms": "retry_backoff_ms",
    "reconnect.backoff.ms": "reconnect_backoff_ms",
    "reconnect.backoff.max.ms": "reconnect_backoff_max_ms",
    "allow.auto.create.topics": "allow_auto_create_topics",
}
_INT_KEYS = {
    "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms",
    "metadata.max.age.ms", "retry.backoff.ms", "reconnect.backoff.ms",
    "reconnect.backoff.max.ms",
}
#: Keys the bridge itself acts on.
BRIDGE_KEYS = frozenset({
    "partition.assignment.strategy",
    "client.rack",
    "enable.auto.commit",
    "auto.commit.interval.ms",
    "enable.auto.offset.store",
    "on_commit",
    "group.protocol",
})
#: Keys that have no meaning with the bridge.
REJECTED_KEYS = {
    "group.remote.assignor": "the bridge runs the classic protocol; the assignor runs in "
                             "the group leader (partition.assignment.strategy)",
}
#: Every key translated for the membership client (for docs and error messages).
TRANSLATED_KEYS = frozenset(MEMBERSHIP_KEYS) | frozenset(SHARED_KEYS) | SECURITY_KEYS | BRIDGE_KEYS
_ALIASES = {"metadata.broker.list": "bootstrap.servers"}
DEFAULT_STRATEGY = "cooperative-balanced-sticky"
#: The membership client's client.id when none is given.
DEFAULT_CLIENT_ID = "kafka-assignors-confluent-bridge"
#: kafka-python's (and librdkafka's) heartbeat.interval.ms default.
DEFAULT_HEARTBEAT_MS = 3000
#: kafka-python's session.timeout.ms default.
KAFKA_PYTHON_SESSION_MS = 10000
#: librdkafka's upper bound of auto.commit.interval.ms (CONFIGURATION.md: 0 .. 86400000)
MAX_AUTO_COMMIT_INTERVAL_MS = 86_400_000


@dataclass(frozen=True)
class BridgeConfig:
    """The three parts of a translated configuration."""

    #: for ``confluent_kafka.Consumer`` (librdkafka): fetching only
    confluent: dict[str, Any]
    #: keyword arguments of the kafka-python membership ``KafkaConsumer`` (no assignors)
    membership: dict[str, Any]
    #: ``partition.assignment.strategy`` as given (resolved by ``_strategies``)
    strategy: Any = DEFAULT_STRATEGY
    client_rack: str | None = None
    auto_commit: bool = True
    auto_commit_interval_s: float = 5.0
    auto_offset_store: bool = True
    on_commit: Callable[[Any, list[Any]], None] | None = field(default=None, repr=False)


def translate_config(config: Mapping[str, Any]) -> BridgeConfig:
    """Split a confluent-kafka consumer config; raises UnsupportedConfigError on bad keys."""
    conf = {_ALIASES.get(k, k): v for k, v in config.items()}
    if len(conf) < len(config):
        raise UnsupportedConfigError("bootstrap.servers given twice (also as metadata.broker.list)")
    for key, why in REJECTED_KEYS.items():
        if key in conf:
            raise UnsupportedConfigError(f"{key} is not supported: {why}")
    protocol = group_protocol(conf)
    if protocol != "classic":
        raise UnsupportedConfigError(
            f"group.protocol={protocol!r}: the bridge runs the classic group protocol; "
            "kafka_assignors.confluent.Consumer (BrokerAssignedConsumer) runs the "
            "consumer protocol, where the broker assigns"
        )
    if not conf.get("group.id"):
        raise UnsupportedConfigError("group.id is required: the bridge is a group consumer")
    if "bootstrap.servers" not in conf:
        raise UnsupportedConfigError("bootstrap.servers is required")

    membership: dict[str, Any] = {}
    for key, kwarg in {**MEMBERSHIP_KEYS, **SHARED_KEYS}.items():
        if key in conf:
            membership[kwarg] = _value(key, conf[key])
    membership["bootstrap_servers"] = [
        s.strip() for s in str(conf["bootstrap.servers"]).split(",") if s.strip()
    ]
    membership.setdefault("allow_auto_create_topics", False)  # librdkafka's default
    membership.update(translate_security(conf))

    rack = conf.get("client.rack")
    librdkafka = {
        k: v for k, v in conf.items()
        if k not in MEMBERSHIP_KEYS and k not in BRIDGE_KEYS
    }
    if rack is not None:
        librdkafka["client.rack"] = rack  # fetch from the nearest replica too
    for key in ("enable.auto.offset.store", "on_commit"):  # librdkafka's own, without a group
        if key in conf:                                      # (manual assignment)
            librdkafka[key] = conf[key]
    librdkafka["enable.auto.commit"] = False  # librdkafka would commit as a non-member
    # (manual assignment commits through librdkafka: the bridge runs its automatic commit)

    interval_ms = int(_value("auto.commit.interval.ms", conf.get("auto.commit.interval.ms", 5000)))
    if not 0 <= interval_ms <= MAX_AUTO_COMMIT_INTERVAL_MS:  # librdkafka's range, its error
        raise KafkaException(KafkaError(
            KafkaError._INVALID_ARG,
            f'Configuration property "auto.commit.interval.ms" value {interval_ms} is outside '
            f"allowed range 0..{MAX_AUTO_COMMIT_INTERVAL_MS}"))
    on_commit = conf.get("on_commit")
    if on_commit is not None and not callable(on_commit):
        raise UnsupportedConfigError("on_commit must be callable(err, partitions)")
    return BridgeConfig(
        confluent=librdkafka,
        membership=membership,
        strategy=conf.get("partition.assignment.strategy", DEFAULT_STRATEGY),
        client_rack=None if rack is None else str(rack),
        auto_commit=as_bool("enable.auto.commit", conf.get("enable.auto.commit", True)),
        # 0: librdkafka's "disable periodic commits" (revoke and close still commit)
        auto_commit_interval_s=interval_ms / 1000 if interval_ms else math.inf,
        auto_offset_store=as_bool(
            "enable.auto.offset.store", conf.get("enable.auto.offset.store", True)
        ),
        on_commit=on_commit,
    )


def membership_options(membership: Mapping[str, Any]) -> dict[str, Any]:
    """The membership client's keyword arguments, with what kafka-python needs to construct.

    kafka-python refuses a heartbeat interval not below the session timeout at construction;
    librdkafka constructs and the broker judges the session timeout (one below its
    ``group.min.session.timeout.ms`` is refused at the join, and reported by ``poll()``).
    So the membership client then heartbeats at a third of the session timeout instead.
    """
    options = dict(membership)
    options.setdefault("client_id", DEFAULT_CLIENT_ID)
    session = int(options.get("session_timeout_ms", KAFKA_PYTHON_SESSION_MS))
    heartbeat = int(options.get("heartbeat_interval_ms", DEFAULT_HEARTBEAT_MS))
    if heartbeat >= session:
        options["heartbeat_interval_ms"] = max(session // 3, 1)
        log.warning("heartbeat.interval.ms %d is not below session.timeout.ms %d: the "
                    "membership client heartbeats every %d ms", heartbeat, session,
                    options["heartbeat_interval_ms"])
    return options


def group_protocol(config: Mapping[str, Any]) -> str:
    """``classic`` or ``consumer`` (KIP-848); anything else is refused."""
    protocol = str(config.get("group.protocol", "classic")).strip().lower()
    if protocol not in ("classic", "consumer"):
        raise UnsupportedConfigError(
            f"group.protocol={protocol!r}: expected 'classic' or 'consumer'"
        )
    return protocol


def _value(key: str, value: Any) -> Any:
    if key in _INT_KEYS or key == "auto.commit.interval.ms":
        try:
            return int(value)
        except (TypeError, ValueError):
            raise UnsupportedConfigError(f"{key}: expected an integer, got {value!r}") from None
    if key == "allow.auto.create.topics":
        return as_bool(key, value)
    return str(value)
