"""Every kafka-python name the consumer runtime relies on, and a check of them.

The names come from the modules that use them (each keeps its own ``NEEDS`` tuples), so a
module that stops using a name drops it from here too. :func:`missing` checks them on a
consumer (``kafka_assignors.kafka_python.KafkaConsumer`` does, before changing anything);
:func:`missing_in_installed` on a throwaway consumer of the installed kafka-python (CI runs it
against every kafka-python 3.x release the dependency range allows:
``scripts/test-kafka-python-versions.sh``).
"""

from __future__ import annotations

from typing import Any

from . import cooperative, join, metrics

#: (where the name lives, the names) - ``where`` is how a missing name is reported.
REQUIREMENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ConsumerCoordinator", tuple(dict.fromkeys(join.NEEDS + cooperative.NEEDS
                                                + metrics.NEEDS))),
    ("Generation", join.GENERATION_NEEDS),
    ("Future", join.TASK_NEEDS),
    ("SubscriptionState", tuple(dict.fromkeys(join.SUBSCRIPTION_NEEDS
                                              + cooperative.SUBSCRIPTION_NEEDS))),
    ("KafkaNet", cooperative.NET_NEEDS),
)
#: kafka-python's public names the runtime uses ("module:attribute"), checked the same way.
PUBLIC: tuple[str, ...] = tuple(dict.fromkeys(join.PUBLIC_NEEDS + cooperative.PUBLIC_NEEDS))


def names() -> tuple[str, ...]:
    """Every internal name, qualified by where it lives (``Generation.is_lost``), sorted."""
    return tuple(sorted({f"{where}.{name}" for where, group in REQUIREMENTS for name in group}))


def count() -> int:
    """How many kafka-python internal names the runtime relies on (not counting :data:`PUBLIC`)."""
    return len(names())


def _objects(coordinator: Any) -> dict[str, Any]:
    """The kafka-python object each requirement is checked on (None where it cannot be found)."""
    try:
        from kafka.future import Future

        future: Any = Future()
    except ImportError:
        future = None
    return {
        "ConsumerCoordinator": coordinator,
        "Generation": getattr(coordinator, "_generation", None),
        "Future": future,
        "SubscriptionState": getattr(coordinator, "_subscription", None),
        "KafkaNet": getattr(coordinator, "_net", None),
    }


def missing(coordinator: Any) -> tuple[str, ...]:
    """The manifest's names that ``coordinator`` (a kafka-python ``ConsumerCoordinator``) and
    the objects it holds lack; empty when the runtime can be applied."""
    objects = _objects(coordinator)
    out: list[str] = []
    for where, group in REQUIREMENTS:
        obj = objects[where]
        out.extend(f"{where}.{name}" for name in group if obj is None or not hasattr(obj, name))
    return tuple(out) + join.public_missing(PUBLIC)


def missing_in_installed() -> tuple[str, ...]:
    """:func:`missing` on a consumer of the installed kafka-python (no broker needed)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 9),
                             group_id="kafka-assignors-manifest-check")
    try:
        return missing(consumer._coordinator)
    finally:
        consumer.close(autocommit=False)


def main() -> int:
    """Print the count and what the installed kafka-python lacks; non-zero if anything."""
    from kafka.version import __version__

    lacking = missing_in_installed()
    print(f"kafka-python {__version__}: the runtime relies on {count()} kafka-python names; "
          + (f"missing: {', '.join(lacking)}" if lacking else "all present"))
    return 1 if lacking else 0


if __name__ == "__main__":
    raise SystemExit(main())
