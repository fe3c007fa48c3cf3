"""The kafka-python binding: a strategy as kafka-python's ``AbstractPartitionAssignor``.

On kafka-python 3 each member sends a version-3 ``ConsumerProtocolSubscription``: its
topics, the partitions it owns with the generation it got them in, its rack, and a
small user data object saying whether it runs the eager or the cooperative protocol.
kafka-python 2.x sends version-0 subscriptions (topics and user data) and runs eager
only; :mod:`.compat` holds what differs.
"""

from __future__ import annotations

import logging
import operator
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor

from ..core.model import UNKNOWN_GENERATION, Assignment, TopicPartition, TopicSpec
from ..core.names import some_ids
from ..load.sources import WeightContext
from ..protocol.leader import (
    MODE_COOPERATIVE,
    MODE_EAGER,
    Leader,
    LeaderReport,
    WireMember,
    gc_paused,
)
from ..protocol.user_data import RACK_FIELD, decode_user_data, encode_user_data, ownership_fields
from ..strategies.base import Strategy
from .compat import (
    KAFKA_PYTHON_2,
    KAFKA_PYTHON_VERSION,
    RebalanceProtocol,
    subscription_topics,
    wire_types,
)
from .racks import replica_racks

log = logging.getLogger("kafka_assignors")

SUBSCRIPTION_VERSION = 3
#: The installed kafka-python's subscription and assignment message classes.
_SUBSCRIPTION, _ASSIGNMENT = wire_types()
#: How long after a round that withheld partitions its weights are reused for the next.
SECOND_ROUND_WINDOW_S = 120.0


class _ClassUsable:
    """A method kafka-python 2.x may call on an assignor class as given.

    kafka-python 3 instantiates a class in ``partition_assignment_strategy``; 2.x uses
    it as is (its own assignors are classmethods), so there the class's one default
    instance answers (each consumer's state is kept apart all the same).
    """

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        self.__doc__ = func.__doc__

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            if owner is None or not KAFKA_PYTHON_2:
                return self.func
            obj = _default_instance(owner)
        return self.func.__get__(obj, owner)


_defaults: dict[type, object] = {}
_defaults_lock = threading.Lock()


def _default_instance(cls: type) -> object:
    with _defaults_lock:
        if cls not in _defaults:
            _defaults[cls] = cls()
        return _defaults[cls]


class KafkaPythonAssignor(Strategy, AbstractPartitionAssignor):  # type: ignore[misc]
    """A :class:`~kafka_assignors.strategies.Strategy` as a kafka-python assignor.

    Subclasses set :attr:`name` and implement :meth:`assign_group` (or derive from one
    of the strategies as well, as every assignor ``kafka_assignors`` exports does).
    Usable as a class or an instance in ``partition_assignment_strategy``.
    """

    def __init__(self, *, client_rack: str | None = None) -> None:
        super().__init__(client_rack=client_rack)
        # one consumer's state per instance (kafka-python 3 instantiates a class given in
        # partition_assignment_strategy once per consumer): pass the class, or one instance
        # per consumer
        self._own_state = _ConsumerState(Leader(self.name))
        self._bound: weakref.ReferenceType[Any] | None = None
        self._bind_lock = threading.Lock()
        self._last_report: LeaderReport | None = None

    def _state(self) -> _ConsumerState:
        """This instance's consumer's state."""
        return self._own_state

    def bind(self, coordinator: object) -> None:
        """Serve only ``coordinator``'s consumer (the runtime's ``KafkaConsumer`` calls this).

        Raises ``ValueError`` if this instance already serves another consumer that is
        still alive: one instance keeps one consumer's owned partitions and leader memory.
        """
        with self._bind_lock:
            bound = self._bound() if self._bound is not None else None
            if bound is not None and bound is not coordinator:
                raise ValueError(
                    f"{type(self).__name__} instance ({self.name}) already serves another "
                    "live consumer; an instance keeps one consumer's owned partitions and "
                    "leader memory. Pass the class in partition_assignment_strategy (each "
                    f"consumer gets its own instance), or one {type(self).__name__}(...) per "
                    "consumer")
            try:
                self._bound = weakref.ref(coordinator)
            except TypeError:  # not weakly referenceable: nothing to check against
                self._bound = None

    def consumer_settings(self) -> dict[str, Any]:
        """The bound consumer's connection settings and group id (empty if not bound)."""
        from ..load.connection import consumer_settings

        coordinator = self._bound() if self._bound is not None else None
        if coordinator is None or not hasattr(coordinator, "group_id"):
            return {}
        try:
            return consumer_settings(coordinator)
        except AttributeError:  # not a kafka-python coordinator (aiokafka's)
            return {}

    def __getstate__(self) -> dict[str, Any]:
        # A copy (copy.deepcopy, pickle) is a new assignor for another consumer: it keeps
        # the configuration and its own state, not the consumer this one serves.
        state = self.__dict__.copy()
        del state["_bound"], state["_bind_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bound = None
        self._bind_lock = threading.Lock()

    # --- kafka-python's interface ------------------------------------------------------

    def supported_protocols(self) -> list[Any]:
        if self.cooperative:
            return [RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER]
        return [RebalanceProtocol.EAGER]

    #: The rebalance protocol this consumer runs, as announced to the leader: set by the
    #: runtime's ``KafkaConsumer`` from kafka-python's own decision; None (a plain consumer)
    #: announces the strategy's own (cooperative if it speaks it). See docs/runtime.md.
    protocol_mode: str | None = None

    @_ClassUsable
    def metadata(self, topics: Any) -> Any:
        if KAFKA_PYTHON_2:
            # no cooperative protocol and no consumer runtime there (kafka-python 3 only)
            _note_kafka_python_2(self.name if self.cooperative else None)
            return self.subscription(topics, MODE_EAGER)
        if self._bound is None:
            _note_plain_consumer()
        return self.subscription(topics, self.protocol_mode)

    def subscription(self, topics: Any, mode: str | None) -> Any:
        """This consumer's subscription, announcing rebalance protocol ``mode``.

        ``None`` means the strategy's own: cooperative if it speaks it.  A version-3
        ``ConsumerProtocolSubscription`` on kafka-python 3, version 0 on 2.x.
        """
        state = self._state()
        if mode is None:
            mode = MODE_COOPERATIVE if self.cooperative and not KAFKA_PYTHON_2 else MODE_EAGER
        fields = {"mode": mode, **self.subscription_fields()}
        if not self.broadcast:  # (a broadcast gives everyone everything: nothing to stick to)
            fields.update(ownership_fields(state.owned, state.generation))
        if self.client_rack is not None:  # also for leaders that read version-0 fields only
            fields[RACK_FIELD] = self.client_rack
        user_data = encode_user_data(fields)
        if KAFKA_PYTHON_2:
            return _SUBSCRIPTION(0, sorted(topics), user_data)
        sub_tp = _SUBSCRIPTION.TopicPartition
        return _SUBSCRIPTION(
            version=SUBSCRIPTION_VERSION,
            topics=sorted(topics),
            user_data=user_data,
            owned_partitions=[
                sub_tp(topic=t, partitions=list(ps)) for t, ps in sorted(state.owned.items())
            ],
            generation_id=state.generation,
            rack_id=self.client_rack,
        )

    @_ClassUsable
    def on_assignment(self, assignment: Any, generation: int | None = None) -> None:
        if generation is None:  # kafka-python 2.x does not pass it (and tells only 'sticky')
            generation = UNKNOWN_GENERATION
        owned: dict[str, list[int]] = {}
        for tp in assignment.partitions():
            owned.setdefault(tp.topic, []).append(tp.partition)
        state = self._state()
        new = {t: sorted(ps) for t, ps in owned.items()}
        if (generation != UNKNOWN_GENERATION and generation == state.generation
                and new != state.owned):
            _note_shared_instance(self)
        state.owned = new
        state.generation = generation
        log.debug("%s: generation %d assigned %s", self.name, generation, state.owned)

    def forget_owned(self, coordinator: object | None = None) -> None:
        """This instance's consumer no longer holds its partitions (lost, or it left)."""
        state = self._own_state
        state.owned, state.generation = {}, UNKNOWN_GENERATION

    @_ClassUsable
    def assign(self, cluster: Any, members: Sequence[Any] | Mapping[str, Any]) -> dict[str, Any]:
        state = self._state()
        # (one pause for both steps: a collection between them would scan everything the
        # assignment built while it is all still alive)
        with gc_paused():
            sent = self._assign(state, cluster, members)
            self._last_report = state.leader.last_report
            return _to_wire(sent)

    def _assign(
        self, state: _ConsumerState, cluster: Any, members: Sequence[Any] | Mapping[str, Any]
    ) -> Assignment:
        if isinstance(members, Mapping):  # kafka-python 2.x: {member_id: decoded subscription}
            wire = [_wire_member_v0(m, md) for m, md in members.items()]
        else:
            wire = _wire_members(members)
        racks = self.uses_replica_racks and any(w.rack or _user_data_rack(w) for w in wire)
        topics = _topic_specs(cluster, wire, racks)
        return state.leader.assign(
            self.assign_group,
            wire,
            topics,
            cooperative=self.cooperative,
            broadcast=self.broadcast,
            weights=self._round_weights(state, cluster, topics),
        )

    def _round_weights(
        self, state: _ConsumerState, cluster: Any, topics: Mapping[str, TopicSpec]
    ) -> Mapping[TopicPartition, float] | None:
        """Weights for this round; the second cooperative round reuses the first round's.

        Live weights (lag) change from one round to the next; a second round that
        re-read them could aim at a new target and withhold partitions again, round
        after round.  Finishing the move the first round started needs its weights.
        """
        report = state.leader.last_report
        if (
            self.cooperative
            and report is not None
            and report.pending_second_round
            and time.monotonic() - state.weights_at < SECOND_ROUND_WINDOW_S
        ):
            log.info("%s: second cooperative round reuses the first round's weights", self.name)
            return state.weights
        context = WeightContext(cluster=cluster, consumer=self.consumer_settings())
        state.weights = self.partition_weights(topics, context)
        state.weights_at = time.monotonic()
        return state.weights

    def report_for(self, coordinator: object | None = None) -> LeaderReport | None:
        """The last assignment this instance computed as its consumer's leader."""
        return self._own_state.leader.last_report

    @property
    def last_report(self) -> Any:
        """Figures of the last assignment this instance computed as leader (or None)."""
        return self._last_report


@dataclass(slots=True)
class _ConsumerState:
    """What one consumer's assignor remembers between rebalances."""

    #: leader-side memory (static members, the last report)
    leader: Leader
    #: partitions this consumer was last assigned, and in which generation
    owned: dict[str, list[int]] = field(default_factory=dict)
    generation: int = UNKNOWN_GENERATION
    #: weights of the last round, reused by a second cooperative round
    weights: Mapping[TopicPartition, float] | None = None
    weights_at: float = float("-inf")


def _wire_members(members: Sequence[Any]) -> list[WireMember]:
    """The members as the leader reads them. Members with the same subscription (the usual
    case) share one topics list: later steps find equal subscriptions by identity."""
    out = []
    shared: list[str] = []
    for member in members:
        topics = member.metadata.topics or ()
        if topics != shared:
            shared = list(topics)
        out.append(_wire_member(member, shared))
    return out


def _wire_member(member: Any, topics: list[str] | None = None) -> WireMember:
    md = member.metadata
    items = getattr(md, "owned_partitions", None) or ()
    if not isinstance(items, (list, tuple)):
        items = list(items)
    try:  # decoded entries (kafka-python 3): a comprehension reads their two slots faster
        # than attrgetters do (those look each name up again per entry)
        owned: dict[str, list[int]] = {i.topic: i.partitions for i in items}
        pairs = None
    except AttributeError:  # (topic, partitions) pairs, or a mix
        pairs = [(i.topic, i.partitions) if hasattr(i, "topic") else i for i in items]
        owned = dict(pairs)
    if len(owned) < len(items):  # a topic listed twice: merge
        if pairs is None:
            pairs = [(i.topic, i.partitions) for i in items]
        owned = {}
        for topic, partitions in pairs:
            owned.setdefault(topic, []).extend(partitions)
    return WireMember(  # (positional: one per member, and keywords cost more)
        member.member_id,
        getattr(member, "group_instance_id", None),  # instance_id
        list(md.topics or ()) if topics is None else topics,
        owned,
        getattr(md, "generation_id", UNKNOWN_GENERATION),
        getattr(md, "rack_id", None),  # rack
        md.user_data,
        getattr(md, "version", None),
    )




def _user_data_rack(member: WireMember) -> bool:
    """True if ``member``'s user data names a rack (a version-0 subscription carries it there)."""
    fields = decode_user_data(member.user_data)
    return bool(fields and isinstance(fields.get(RACK_FIELD), str))


def _wire_member_v0(member_id: str, md: Any) -> WireMember:
    """A member as kafka-python 2.x's leader sees it: the version-0 fields only.

    2.x decodes every subscription with the version-0 schema, so a kafka-python 3
    member's owned partitions, generation and rack are not read here (``version`` says
    which fields were read, whatever version the member sent).
    """
    return WireMember(
        member_id=member_id,
        instance_id=getattr(md, "group_instance_id", None),  # 2.3+
        topics=subscription_topics(md),
        owned={},
        user_data=md.user_data,
        version=0,
    )


def _topic_specs(
    cluster: Any, wire: Sequence[WireMember], racks: bool = False
) -> dict[str, TopicSpec]:
    specs = {}
    missing = []
    # members with one subscription share its list (_wire_members): each list is read once
    lists = {id(w.topics): w.topics for w in wire}
    for topic in sorted({t for topics in lists.values() for t in topics}):
        partitions = cluster.partitions_for_topic(topic)
        if not partitions:
            missing.append(topic)
            continue
        count = len(partitions)
        if max(partitions) != count - 1:
            log.warning("topic %s reports partitions %s; using the first %d", topic,
                        sorted(partitions), count)
        rack_data = replica_racks(cluster, topic, count) if racks else {}
        specs[topic] = TopicSpec(topic, count, rack_data)
    if missing:
        gone = set(missing)
        affected = [w.member_id for w in wire if not gone.isdisjoint(w.topics)]
        log.warning(
            "no partition metadata for topic(s) %s (deleted, not created yet, or 0 "
            "partitions); skipped this round for %d member(s): %s",
            some_ids(missing), len(affected), some_ids(affected),
        )
    return specs


def _to_wire(sent: Assignment) -> dict[str, Any]:
    """kafka-python's wire assignments, with no user data.

    The broker converts a live classic group to a KIP-848 consumer group (a member joining
    with ``group.protocol=consumer``) only if no member's assignment carries user data:
    "userData from a custom assignor would be lost" (Kafka's ``ConsumerGroup``), answered
    as GROUP_ID_NOT_FOUND.  Nothing of ours reads it back, so none is sent.
    """
    with gc_paused():  # (a (topic, partitions) pair per member and topic: no cycles)
        if KAFKA_PYTHON_2:
            return {
                member: _ASSIGNMENT(0, sorted(by_topic.items()), b"")
                for member, by_topic in sent.items()
            }
        # by keyword: kafka-python 3 maps positional fields to names on every call; by topic
        # name alone (unique): strings compare faster than pairs
        return {
            member: _ASSIGNMENT(
                version=0,
                assigned_partitions=sorted(by_topic.items(), key=_topic_of),
                user_data=b"",
            )
            for member, by_topic in sent.items()
        }


_topic_of = operator.itemgetter(0)


_noted_eager: set[str | None] = set()
_noted_lock = threading.Lock()


def _note_kafka_python_2(cooperative_name: str | None) -> None:
    """Say once per process that kafka-python 2.x gets no consumer runtime, and once per
    cooperative strategy that it runs eager here."""
    with _noted_lock:
        first = not _noted_eager
        new = cooperative_name not in _noted_eager
        _noted_eager.add(cooperative_name)
    if first:
        log.info("kafka-python %s: our assignors run eager; the consumer runtime (which "
                 "fixes kafka-python 3's rebalance behaviour) is not installed",
                 ".".join(map(str, KAFKA_PYTHON_VERSION)))
    if cooperative_name is not None and new:
        log.warning(
            "%s: kafka-python %s has no cooperative rebalance protocol (kafka-python 3 has); "
            "this consumer runs it eager: every rebalance revokes all its partitions",
            cooperative_name, ".".join(map(str, KAFKA_PYTHON_VERSION)),
        )


_noted_plain = False
_noted_shared: set[int] = set()


def _note_plain_consumer() -> None:
    """Say once per process that plain kafka-python consumers keep kafka-python's behaviour."""
    global _noted_plain
    with _noted_lock:
        if _noted_plain:
            return
        _noted_plain = True
    log.info("kafka-assignors: our assignors assign; the consumer keeps kafka-python's own "
             "rebalance behaviour. For joins that are never dropped, cooperative members that "
             "keep reading and rebalance metrics: from kafka_assignors.kafka_python import "
             "KafkaConsumer (docs/runtime.md)")


def _note_shared_instance(assignor: KafkaPythonAssignor) -> None:
    """One ERROR per instance that two consumers evidently share."""
    with _noted_lock:
        if id(assignor) in _noted_shared:
            return
        _noted_shared.add(id(assignor))
    log.error("%s: one %s instance received two different assignments for the same "
              "generation: it serves several consumers, and each announces the other's "
              "partitions. Pass the class in partition_assignment_strategy (each consumer gets "
              "its own instance), or one instance per consumer", assignor.name,
              type(assignor).__name__)
