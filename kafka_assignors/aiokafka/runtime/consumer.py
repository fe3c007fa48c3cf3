"""``AIOKafkaConsumer`` that rebalances cooperatively with our ``Cooperative...`` assignors.

aiokafka's ``start()`` builds its ``GroupCoordinator`` inline (there is no factory method to
override) and the coordinator's ``__init__`` only *schedules* its coordination task
(``create_task``): nothing of it runs before ``start()`` first gives control back to the
event loop. :meth:`AIOKafkaConsumer.start` awaits aiokafka's ``start()`` one step at a time
and, at the first step where the coordinator exists, gives it
:class:`~.coordinator.CooperativeGroupCoordinator` as its class - before its task has run a
single line. The rebalance protocol is Java's rule: cooperative when every assignor of the
consumer supports it, eager otherwise (a rolling upgrade lists both, then drops the eager
one).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator, Iterable
from typing import Any

from aiokafka import AIOKafkaConsumer as _AIOKafkaConsumer

from ...protocol.leader import MODE_COOPERATIVE, MODE_EAGER
from . import manifest


def cooperative_protocol(assignors: Iterable[Any]) -> bool:
    """Java's rule: the cooperative protocol iff every assignor supports it."""
    listed = list(assignors)
    return bool(listed) and all(getattr(a, "cooperative", False) is True
                                and not isinstance(a, type) for a in listed)


class AIOKafkaConsumer(_AIOKafkaConsumer):  # type: ignore[misc]
    """aiokafka's consumer (same constructor) that runs the cooperative protocol when all of
    its ``partition_assignment_strategy`` are our ``Cooperative...`` assignors.

    Partitions a member keeps are never revoked and ``getone()``/``getmany()``/``async for``
    keep returning their records while the group rebalances; the partitions that move are
    revoked first (``on_partitions_revoked`` with only those) and assigned in a follow-up
    round. Raises :class:`~.manifest.MissingInternals` on an aiokafka release that lacks an
    internal this relies on.
    """

    def __init__(self, *topics: str, **configs: Any) -> None:
        super().__init__(*topics, **configs)
        lacking = manifest.missing_for_consumer(self)
        if lacking:
            raise manifest.MissingInternals(lacking)
        assignors = tuple(self._partition_assignment_strategy)
        self._ka_cooperative = cooperative_protocol(assignors)
        for assignor in assignors:
            if hasattr(assignor, "protocol_mode") and not isinstance(assignor, type):
                assignor.protocol_mode = MODE_COOPERATIVE if self._ka_cooperative else MODE_EAGER

    @property
    def cooperative(self) -> bool:
        """Whether this consumer runs the cooperative rebalance protocol."""
        return bool(self._ka_cooperative)

    async def start(self) -> None:
        await _AfterEachStep(super().start(), self._adopt_coordinator)

    def _adopt_coordinator(self) -> None:
        from aiokafka.consumer.group_coordinator import GroupCoordinator

        from .coordinator import CooperativeGroupCoordinator

        found = self._coordinator
        # (no group_id: aiokafka's NoGroupCoordinator, nothing to rebalance)
        if isinstance(found, GroupCoordinator) and not isinstance(
                found, CooperativeGroupCoordinator):
            CooperativeGroupCoordinator.adopt(found, cooperative=self._ka_cooperative)


class _AfterEachStep:
    """Awaits ``coro`` and calls ``hook`` each time it gives control back (suspends,
    returns or raises), before the event loop runs anything else."""

    def __init__(self, coro: Coroutine[Any, Any, Any], hook: Callable[[], None]) -> None:
        self._coro = coro
        self._hook = hook

    def __await__(self) -> Generator[Any, Any, Any]:
        to_send: Any = None
        to_throw: BaseException | None = None
        while True:
            try:
                if to_throw is None:
                    yielded = self._coro.send(to_send)
                else:
                    yielded = self._coro.throw(to_throw)
            except StopIteration as done:
                self._hook()
                return done.value
            except BaseException:
                self._hook()
                raise
            try:
                self._hook()
            except BaseException:
                self._coro.close()
                raise
            try:
                to_send, to_throw = (yield yielded), None
            except BaseException as exc:  # (cancellation included: passed on to coro)
                to_send, to_throw = None, exc
