"""What both consumers allow, and when: the rules shared by the bridge and the KIP-848 member.

``assign()`` and friends work as confluent-kafka's: inside a rebalance callback or outside
one ("may also be used outside the context of a rebalance callback"), refused with
``_STATE`` where librdkafka refuses them (``assign()``/``unassign()`` in a cooperative
group, the incremental ones in an eager group: each consumer says which); without a
subscription they are manual assignment.  Group calls (``subscribe()``, ``close()``, ...)
work only outside a callback, and nothing after ``close()``.  Each consumer says how it
knows it is in a callback, whether it is subscribed, and how it closes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import confluent_kafka

from ._errors import state_error
from ._rebalance import Callback

_Base: Any = confluent_kafka.Consumer


def checked_callbacks(
    on_assign: Callback | None, on_revoke: Callback | None, on_lost: Callback | None
) -> dict[str, Callback]:
    """The callbacks given, by keyword name; a value that is not callable is a TypeError."""
    callbacks: dict[str, Callback] = {}
    for name, cb in (("on_assign", on_assign), ("on_revoke", on_revoke), ("on_lost", on_lost)):
        if cb is not None and not callable(cb):
            raise TypeError(f"{name} must be callable(consumer, partitions)")
        if cb is not None:
            callbacks[name] = cb
    return callbacks


class CallbackRules:
    """Mixin placed before ``confluent_kafka.Consumer``: the guarded calls, the signatures
    of ``subscribe()`` and ``commit()``, ``close()`` and ``with`` support."""

    _closed: bool

    # --- hooks ----------------------------------------------------------------------------

    def _in_rebalance_callback(self) -> bool:
        """True on the thread running one of the user's rebalance callbacks."""
        raise NotImplementedError

    def _subscribe(self, topics: Sequence[str], callbacks: dict[str, Callback]) -> None:
        """Join the group; ``callbacks`` holds the ones given, by keyword name."""
        raise NotImplementedError

    def _user_moved(self) -> None:
        """A callback moved partitions itself (the bridge must not move them again)."""

    def _group_subscribed(self) -> bool:
        """True while subscribed (the group assigns); False: manual assignment is allowed."""
        raise NotImplementedError

    def _manually_assigned(self) -> None:
        """The application assigned partitions itself, without a subscription."""

    def _refused(self, name: str) -> Any:
        """The ``KafkaException`` librdkafka raises for ``name()`` in this group's rebalance
        protocol, or None where it is allowed (librdkafka checks it itself: None)."""
        return None

    def _commit(
        self, message: Any, offsets: Sequence[Any] | None, asynchronous: bool
    ) -> list[Any] | None:
        raise NotImplementedError

    def _close_clients(self) -> None:
        """Called once, by the first close(), after the consumer is marked closed."""
        raise NotImplementedError

    # --- group ----------------------------------------------------------------------------

    def subscribe(
        self,
        topics: Sequence[str],
        on_assign: Callback | None = None,
        on_revoke: Callback | None = None,
        on_lost: Callback | None = None,
    ) -> None:
        """Join the group for ``topics`` (names, or regexes starting with ``^``)."""
        self._check_usable("subscribe")
        if not isinstance(topics, list):  # as confluent-kafka: a str is not a list of topics
            raise TypeError("expected list of topic unicode strings")
        self._subscribe(topics, checked_callbacks(on_assign, on_revoke, on_lost))

    # --- offsets --------------------------------------------------------------------------

    def commit(
        self,
        message: Any = None,
        offsets: Sequence[Any] | None = None,
        asynchronous: bool = True,
        **legacy: Any,
    ) -> list[Any] | None:
        """Commit ``message``'s offset, ``offsets``, or everything consumed.

        Asynchronous by default, as confluent-kafka's (results go to ``on_commit``); with
        ``asynchronous=False`` the returned partitions are committed when this returns.
        """
        self._check_usable(None)
        if legacy:  # confluent-kafka still takes its old keyword ``async``
            unknown = set(legacy) - {"async"}
            if unknown:
                raise TypeError(f"commit() got an unexpected keyword argument {min(unknown)!r}")
            asynchronous = bool(legacy["async"])
        return self._commit(message, offsets, asynchronous)

    # --- assignment: as confluent-kafka's, in or outside a rebalance callback -----------------

    def assign(self, partitions: list[Any]) -> None:
        self._may_move("assign")
        _Base.assign(self, partitions)

    def unassign(self) -> None:
        self._may_move("unassign")
        _Base.unassign(self)

    def incremental_assign(self, partitions: list[Any]) -> None:
        self._may_move("incremental_assign")
        _Base.incremental_assign(self, partitions)

    def incremental_unassign(self, partitions: list[Any]) -> None:
        self._may_move("incremental_unassign")
        _Base.incremental_unassign(self, partitions)

    def _may_move(self, name: str) -> None:
        if self._closed and not self._in_rebalance_callback():
            raise RuntimeError("Consumer closed")
        refused = self._refused(name)
        if refused is not None:
            raise refused
        if self._in_rebalance_callback():
            self._user_moved()
        elif not self._group_subscribed():
            self._manually_assigned()

    # --- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        """Hand partitions back (on_revoke, commit), leave the group and close; a second
        call does nothing."""
        if self._closed:
            return
        self._check_usable("close")
        self._closed = True
        self._close_clients()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_usable(self, name: str | None) -> None:
        # close() runs on_revoke after marking the consumer closed: it may still commit there
        if self._closed and not self._in_rebalance_callback():
            raise RuntimeError("Consumer closed")
        if name is not None and self._in_rebalance_callback():
            raise state_error(f"{name}() cannot be called from a rebalance callback")
