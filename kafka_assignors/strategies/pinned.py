"""``pinned`` and ``cooperative-pinned``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from ..core.model import Assignment, GroupSpec
from ..core.pinned import PINS_FIELD, pinned
from .base import Strategy


def parse_pins(pins: Iterable[Any]) -> list[tuple[str, int | None]]:
    """``"topic"``, ``"topic:3"``, ``("topic", 3)``, ``("topic", None)`` or a TopicPartition.

    (Kafka topic names cannot contain ``:``, so ``"topic:3"`` is unambiguous.)
    """
    out: list[tuple[str, int | None]] = []
    for pin in pins:
        topic: Any
        partition: Any
        if isinstance(pin, str):
            topic, _, number = pin.partition(":")
            partition = int(number) if number.isdigit() else (None if not number else -1)
        elif isinstance(pin, tuple | list) and len(pin) == 2:
            topic, partition = pin
        else:
            raise ValueError(f"cannot read pin {pin!r}: use 'topic', 'topic:3' or (topic, 3)")
        if not isinstance(topic, str) or not topic or not (
            partition is None
            or (isinstance(partition, int) and not isinstance(partition, bool) and partition >= 0)
        ):
            raise ValueError(f"cannot read pin {pin!r}: use 'topic', 'topic:3' or (topic, 3)")
        if (topic, partition) not in out:
            out.append((topic, partition))
    return out


class Pinned(Strategy):
    """Each member gets the partitions or whole topics it pins; the rest are balanced.

    ``PinnedAssignor(pinned=["orders:0", "orders:1", "audit"])``: this member
    wants partitions 0 and 1 of ``orders`` and all of ``audit`` (shared with
    other members pinning ``audit``).  Pins travel in the member's own
    subscription, so no shared configuration exists.  A partition pinned by
    several members goes to the one that sorts first (static instance id, then
    member id), with a warning in the leader's log.  Everything else is
    balanced over all members, counting pins as load, and is sticky.  When a
    pinning member leaves its partitions fail over to the others; when it
    returns they come back (with static membership, a quick restart is not even
    a rebalance).  Use it for consumers that must own particular partitions
    (a local cache per partition, a dedicated machine for a hot partition).

    Wire name ``pinned``; eager.
    """

    name: ClassVar[str] = "pinned"

    def __init__(self, pinned: Iterable[Any] = (), *, client_rack: str | None = None) -> None:
        super().__init__(client_rack=client_rack)
        self.pins = parse_pins(pinned)

    def subscription_fields(self) -> dict[str, object]:
        return {PINS_FIELD: [[t, p] for t, p in self.pins]} if self.pins else {}

    def assign_group(self, group: GroupSpec) -> Assignment:
        return pinned(group)


class CooperativePinned(Pinned):
    """The pinned assignment handed over in two cooperative rounds (KIP-429).

    Wire name ``cooperative-pinned``; cooperative and eager.
    """

    name: ClassVar[str] = "cooperative-pinned"
    cooperative: ClassVar[bool] = True
