"""How a weight source reaches the brokers: the consumer's own connection, bounded in time.

Weight sources that read from Kafka at assignment time (live lag, a profile
topic) open a short-lived client built from the consumer's own connection
settings - the same bootstrap servers, security protocol, SASL and SSL
settings, never a weaker connection: if a security setting cannot be carried
over, the source fails and the leader falls back to counting partitions.

kafka-python does not hand an assignor the consumer's configuration; the
``ConsumerCoordinator`` holds it, so it is read from the coordinator an assignor
is bound to (``kafka_assignors.kafka_python.KafkaConsumer`` binds its assignors),
or given explicitly (``LiveLag(consumer=...)``).  Reads run in a worker thread bounded
by a timeout: the consumer's own network loop is waiting on the assignment.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .sources import WeightContext

T = TypeVar("T")

log = logging.getLogger("kafka_assignors")

#: Connection settings copied besides every ``ssl_*`` and ``sasl_*`` key.
CONNECTION_KEYS = (
    "bootstrap_servers", "security_protocol", "api_version", "client_dns_lookup",
    "socket_options", "proxy_url", "connections_max_idle_ms", "reconnect_backoff_ms",
    "reconnect_backoff_max_ms", "receive_buffer_bytes", "send_buffer_bytes",
)


class WeightSourceError(RuntimeError):
    """Weights could not be read (the leader logs this and falls back)."""


def consumer_settings(coordinator: Any) -> dict[str, Any]:
    """A kafka-python ``ConsumerCoordinator``'s connection settings, group id and isolation
    level (empty for None)."""
    if coordinator is None:
        return {}
    # kafka-python private names, listed in the runtime's manifest (feature "connection")
    manager = getattr(coordinator, "_manager", None) or getattr(
        getattr(coordinator, "_client", None), "_manager", None)
    config = getattr(manager, "config", None)
    if not isinstance(config, dict):
        raise AttributeError(_unreadable(coordinator))
    return {
        "connection": dict(config),
        "group_id": coordinator.group_id,
        "isolation_level": coordinator.config.get("isolation_level", "read_uncommitted"),
    }


_warned = False


def _unreadable(coordinator: Any) -> str:
    """Why a coordinator's connection settings cannot be read (logged once for kafka-python:
    the caller falls back to no settings, and a weight source then says they are unknown)."""
    global _warned
    if not any(c.__module__.startswith("kafka.") for c in type(coordinator).__mro__):
        return f"{type(coordinator).__name__} is no kafka-python ConsumerCoordinator"
    # the names are the runtime's manifest's feature "connection"; named here, not imported
    # from it (this layer sits below the client bindings)
    lacking = [name for name, found in (
        ("ConsumerCoordinator._manager", getattr(coordinator, "_manager", None)),
        ("ConsumerCoordinator._client", getattr(coordinator, "_client", None)),
    ) if found is None]
    why = (f"kafka-python {_kafka_python_version()} lacks "
           f"{', '.join(lacking) or 'a connection manager config dict'}, where kafka-assignors "
           "reads the consumer's connection settings for its weight sources; pass them "
           "explicitly (consumer={'connection': {...}, 'group_id': ...})")
    if not _warned:
        _warned = True
        log.warning(why)
    return why


def _kafka_python_version() -> str:
    try:
        from kafka.version import __version__
    except ImportError:
        return "unknown"
    return str(__version__)


def resolve_settings(explicit: Mapping[str, Any] | None,
                     context: WeightContext) -> dict[str, Any]:
    """The consumer's settings: given explicitly, or by the client binding (a bound assignor)."""
    settings = dict(explicit or context.consumer or {})
    if not settings:
        raise WeightSourceError(
            "the consumer's connection settings are unknown: use "
            "kafka_assignors.kafka_python.KafkaConsumer (it gives them to its assignors) or "
            "pass them explicitly (consumer={'connection': {...}, 'group_id': ...})")
    return settings


def client_config(connection: Mapping[str, Any], accepted: Mapping[str, Any],
                  timeout_ms: int, role: str) -> dict[str, Any]:
    """Settings for a helper client: the consumer's connection settings, and only those.

    ``accepted`` is the helper client's own defaults (``DEFAULT_CONFIG``);
    ``role`` names it in its client id.  Raises :class:`WeightSourceError` if
    a security setting would be lost.
    """
    for key in ("bootstrap_servers", "security_protocol"):
        if not connection.get(key):
            raise WeightSourceError(f"the consumer's {key} is unknown")
    config: dict[str, Any] = {}
    for key, value in connection.items():
        security = key.startswith(("ssl_", "sasl_"))
        if key not in CONNECTION_KEYS and not security:
            continue
        if key in accepted:
            config[key] = value
        elif security and value is not None and value != accepted.get(key):
            raise WeightSourceError(
                f"the {role} client cannot take the consumer's {key}; "
                "refusing a weaker connection"
            )
    config["client_id"] = f"{connection.get('client_id', 'kafka-python')}-{role}"
    config["request_timeout_ms"] = timeout_ms
    config["bootstrap_timeout_ms"] = timeout_ms
    return config


def helper_client(
    factory: Callable[..., Any] | None, default: Callable[[], Any]
) -> tuple[Callable[..., Any], Mapping[str, Any]]:
    """The helper client's class (``factory`` or ``default()``, imported lazily) and the
    settings it accepts (its ``DEFAULT_CONFIG``; a fake without one accepts the default's)."""
    cls = factory if factory is not None else default()
    accepted = getattr(cls, "DEFAULT_CONFIG", None)
    if accepted is None:
        accepted = default().DEFAULT_CONFIG
    return cls, accepted


def bounded(timeout_s: float, call: Callable[[], T], thread_name: str) -> T:
    """``call()`` in a worker thread; :class:`WeightSourceError` if it takes over ``timeout_s``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the caller's thread below
            box["error"] = exc

    worker = threading.Thread(target=run, name=thread_name, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise WeightSourceError(f"no answer from the brokers within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value
