"""Which broker-side assignor (``group.remote.assignor``) stands for a client-side strategy.

In a ``group.protocol=consumer`` group (KIP-848) the broker assigns, with one of the
assignors listed in its ``group.consumer.assignors``; the member only names one.  Our
``balanced-sticky`` exists on the broker too (``broker-assignor/``); Kafka ships ``uniform``
and ``range``.  A strategy with no broker-side counterpart is refused rather than silently
replaced by another algorithm.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._errors import UnsupportedConfigError

#: Our broker assignor's name (``BalancedStickyAssignor.name()`` in ``broker-assignor/``).
BALANCED_STICKY = "balanced-sticky"
#: Client-side strategy (wire name) -> the broker-side assignor that does the same job.
REMOTE_ASSIGNOR = {
    "balanced-sticky": BALANCED_STICKY,
    "cooperative-balanced-sticky": BALANCED_STICKY,
    "range": "range",
    # Kafka's uniform is balanced and sticky: the closest to these three
    "roundrobin": "uniform",
    "sticky": "uniform",
    "cooperative-sticky": "uniform",
}
#: Why a strategy of ours has no broker-side counterpart (keyed without "cooperative-").
NO_REMOTE_COUNTERPART = {
    "load-aware": "it weighs partitions by lag or a load profile, which a broker assignor "
                  "is never given",
    "pinned": "its pin table lives in the client",
    "broadcast": "it gives one partition to several members; the broker assigns each "
                 "partition once",
    "co-partitioned": "it has not been ported to the broker",
    "rack-aware": "it has not been ported to the broker (the broker's balanced-sticky "
                  "prefers replicas' racks where counts allow)",
}
#: Class names in ``group.consumer.assignors`` -> the name members give in
#: ``group.remote.assignor`` (the broker accepts a class name or a built-in short name).
KNOWN_CLASSES = {
    "io.github.kafkaassignors.broker.BalancedStickyAssignor": BALANCED_STICKY,
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}
INSTALL_HINT = (
    "to install ours, put broker-assignor's jar on every broker's classpath (libs/) and list "
    "io.github.kafkaassignors.broker.BalancedStickyAssignor in group.consumer.assignors "
    "(docs/broker-assignor.md)"
)
OFFERED = (
    f"{BALANCED_STICKY} (ours, once installed on the broker), uniform and range (Kafka's)"
)


def strategy_names(value: Any) -> list[str]:
    """The wire names in a ``partition.assignment.strategy`` value, most preferred first.

    Accepts what the bridge accepts: a comma-separated string, or a list of wire names,
    import paths, assignor classes and instances (classes and instances by ``name``).
    """
    items: Sequence[Any]
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",") if part.strip()]
    elif isinstance(value, Sequence):
        items = list(value)
    else:
        items = [value]
    names = []
    for item in items:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        if not isinstance(name, str) or not name:
            raise UnsupportedConfigError(
                f"partition.assignment.strategy item {item!r} has no wire name"
            )
        names.append(name)
    if not names:
        raise UnsupportedConfigError("partition.assignment.strategy is empty")
    return names


def remote_assignor_for(strategy: Any) -> str:
    """``group.remote.assignor`` for the most preferred strategy of ``strategy``.

    Only the first strategy counts: a consumer-protocol member names one assignor, and
    falling back to a later one would run another algorithm than the one asked for.
    """
    first = strategy_names(strategy)[0]
    if first in REMOTE_ASSIGNOR:
        return REMOTE_ASSIGNOR[first]
    why = NO_REMOTE_COUNTERPART.get(first.removeprefix("cooperative-"))
    reason = why or "it is not one the broker knows"
    raise UnsupportedConfigError(
        f"partition.assignment.strategy={first!r} cannot run in a group.protocol=consumer "
        f"group: there the broker assigns, and {reason}. The broker offers {OFFERED}: "
        "use partition.assignment.strategy=balanced-sticky (or set group.remote.assignor "
        "yourself), or keep group.protocol=classic for this strategy"
    )


def assignor_names(configured: str) -> list[str]:
    """The names members may use, from a broker's ``group.consumer.assignors`` value."""
    names = []
    for item in configured.split(","):
        item = item.strip()
        if item:
            names.append(KNOWN_CLASSES.get(item, item))
    return names


def unsupported_assignor_message(asked: str, on_broker: list[str] | str) -> str:
    """The error text for a broker that does not have ``asked``: what it has, how to add ours.

    ``on_broker`` is the broker's assignor names, or why they could not be read.
    """
    if isinstance(on_broker, str):
        has = f"could not read the broker's group.consumer.assignors ({on_broker})"
    elif on_broker:
        has = f"the broker offers {', '.join(on_broker)} (group.consumer.assignors)"
    else:
        has = "the broker lists no assignor in group.consumer.assignors"
    hint = f"; {INSTALL_HINT}" if asked == BALANCED_STICKY else ""
    return (
        f"the broker does not have the assignor group.remote.assignor={asked!r} "
        f"(UNSUPPORTED_ASSIGNOR): {has}{hint}"
    )
