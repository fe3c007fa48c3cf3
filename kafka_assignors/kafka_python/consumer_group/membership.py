"""The member's state machine in a KIP-848 group, as plain data (no kafka-python, no I/O).

States and transitions are those of the Java consumer's ``MemberState`` /
``AbstractMembershipManager``: a member joins (epoch 0), gets a target assignment in a
heartbeat response, reconciles it (revoke what moves, then assign what is new), acknowledges
it in its next heartbeat, and is stable until the next target.  A fenced member
(FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID) gives up its partitions as lost and joins again
at epoch 0; a member that leaves sends epoch -1 (-2 when static: the broker keeps its
partitions for the session timeout).  The coordinator (:mod:`.coordinator`) drives this
from kafka-python's IO thread (heartbeats) and the caller's ``poll()`` (reconciliation).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

#: a member's partitions by topic id (a string of the id) - the broker names topics by id
Assignment = frozenset[tuple[str, int]]

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
LEAVE_EPOCH_STATIC = -2


class MemberState(enum.Enum):
    """A member's state, named as KIP-848 and the Java consumer name them."""

    UNSUBSCRIBED = "UNSUBSCRIBED"        # not in the group (never joined, or left)
    JOINING = "JOINING"                  # heartbeat with epoch 0 to be sent or in flight
    RECONCILING = "RECONCILING"          # a target differs from what the member owns
    ACKNOWLEDGING = "ACKNOWLEDGING"      # reconciled; the next heartbeat tells the broker
    STABLE = "STABLE"                    # owns its target; heartbeats at the interval
    FENCED = "FENCED"                    # the broker fenced it: partitions lost, rejoin
    PREPARE_LEAVING = "PREPARE_LEAVING"  # releasing its partitions before it leaves
    LEAVING = "LEAVING"                  # the leave heartbeat (epoch -1 / -2) to be sent
    STALE = "STALE"                      # left on max_poll_interval_ms: lose, then rejoin
    FATAL = "FATAL"                      # an error the member cannot recover from


S = MemberState
#: each state and the states it may be entered from (Java's ``MemberState`` rules)
ENTERED_FROM: dict[MemberState, frozenset[MemberState]] = {
    S.JOINING: frozenset({S.UNSUBSCRIBED, S.FENCED, S.STALE}),
    S.RECONCILING: frozenset({S.JOINING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE}),
    S.ACKNOWLEDGING: frozenset({S.RECONCILING}),
    S.STABLE: frozenset({S.JOINING, S.RECONCILING, S.ACKNOWLEDGING}),
    S.FENCED: frozenset({S.JOINING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE}),
    S.PREPARE_LEAVING: frozenset({S.JOINING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE,
                                  S.FENCED, S.STALE}),
    S.LEAVING: frozenset({S.PREPARE_LEAVING}),
    S.UNSUBSCRIBED: frozenset({S.PREPARE_LEAVING, S.LEAVING, S.FENCED, S.STALE}),
    S.STALE: frozenset({S.JOINING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE, S.LEAVING}),
    S.FATAL: frozenset(MemberState),
}
#: states in which the member is in the group and heartbeats on its own
IN_GROUP = frozenset({S.JOINING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE})


class IllegalTransition(RuntimeError):
    """A transition the protocol does not allow (a bug in the member, never the user's)."""


@dataclass(frozen=True)
class Heartbeat:
    """The fields of one ConsumerGroupHeartbeat request."""

    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    topics: frozenset[str] | None
    regex: str | None
    server_assignor: str | None
    owned: Assignment | None
    acknowledges: bool  # sent in ACKNOWLEDGING: a success makes the member STABLE


class Membership:
    """One member's state, epochs and assignments (guarded by the caller's lock)."""

    def __init__(self, member_id: str, *, instance_id: str | None = None,
                 rack_id: str | None = None, rebalance_timeout_ms: int = 300_000,
                 server_assignor: str | None = None) -> None:
        self.member_id = member_id
        self.instance_id = instance_id
        self.rack_id = rack_id
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.server_assignor = server_assignor
        self._state = MemberState.UNSUBSCRIBED
        self.member_epoch = JOIN_EPOCH
        self.topics: frozenset[str] | None = None
        self.regex: str | None = None
        self.target: Assignment = frozenset()
        self.target_epoch = -1
        self.current: Assignment = frozenset()
        self.current_epoch = -1
        self.fatal_error: BaseException | None = None
        self.subscription_changed = False
        self.ack_sent = False
        #: called with (old, new) on every change of state (the rebalance metrics)
        self.on_transition: Callable[[MemberState, MemberState], None] | None = None

    @property
    def state(self) -> MemberState:
        return self._state

    # -- transitions ---------------------------------------------------------------------

    def transition(self, new: MemberState) -> None:
        """Move to ``new`` (raises :class:`IllegalTransition` where the protocol forbids it)."""
        if self.state is not new and self.state not in ENTERED_FROM[new]:
            raise IllegalTransition(f"member {self.member_id}: {self.state.value} -> "
                                    f"{new.value} is not a KIP-848 transition")
        old, self._state = self._state, new
        if new is MemberState.ACKNOWLEDGING:
            self.ack_sent = False
        if old is not new and self.on_transition is not None:
            self.on_transition(old, new)

    def subscribe(self, topics: frozenset[str] | None, regex: str | None) -> bool:
        """Record the subscription; True if it changed.  An unsubscribed member joins."""
        changed = (topics, regex) != (self.topics, self.regex)
        self.topics, self.regex = topics, regex
        if changed and self.state in IN_GROUP:
            self.subscription_changed = True
        if self.state is MemberState.UNSUBSCRIBED and (topics or regex):
            self.join()
        return changed

    def join(self) -> None:
        """Join (or rejoin after a fence or a poll timeout) at epoch 0, owning nothing."""
        self.transition(MemberState.JOINING)
        self.member_epoch = JOIN_EPOCH
        self.current, self.current_epoch = frozenset(), -1
        self.target, self.target_epoch = frozenset(), -1

    def fenced(self) -> None:
        """The broker fenced the member: its partitions are lost (the caller calls
        :meth:`lost` once ``on_partitions_lost`` ran)."""
        if self.state in IN_GROUP:
            self.transition(MemberState.FENCED)
            self.member_epoch = JOIN_EPOCH
        elif self.state in (MemberState.PREPARE_LEAVING, MemberState.LEAVING):
            self.left()

    def stale(self) -> None:
        """It left on ``max_poll_interval_ms``; its partitions go as lost at the next poll."""
        self.transition(MemberState.STALE)
        self.member_epoch = JOIN_EPOCH

    def lost(self) -> None:
        """After a fence or a poll timeout: the partitions are released; rejoin if subscribed."""
        self.current, self.current_epoch = frozenset(), -1
        if self.topics or self.regex:
            self.join()
        else:
            self.transition(MemberState.UNSUBSCRIBED)

    def fail(self, error: BaseException) -> None:
        """An error the member cannot recover from; ``poll()`` raises it."""
        self.fatal_error = error
        self.transition(MemberState.FATAL)

    def prepare_leaving(self) -> None:
        self.transition(MemberState.PREPARE_LEAVING)

    def leaving(self) -> None:
        self.transition(MemberState.LEAVING)

    def left(self) -> None:
        """The leave heartbeat went (or could not): the member is out of the group."""
        self.transition(MemberState.UNSUBSCRIBED)
        self.member_epoch = JOIN_EPOCH
        self.current, self.current_epoch = frozenset(), -1
        self.target, self.target_epoch = frozenset(), -1

    # -- heartbeats ----------------------------------------------------------------------

    @property
    def heartbeats(self) -> bool:
        """True while the member heartbeats (joining, in the group, or about to leave)."""
        return self.state in IN_GROUP or self.state is MemberState.LEAVING

    @property
    def heartbeat_now(self) -> bool:
        """True if the next heartbeat should not wait for the interval: a join, an
        acknowledgement, a leave or a new subscription."""
        return (self.state in (MemberState.JOINING, MemberState.LEAVING)
                or (self.state is MemberState.ACKNOWLEDGING and not self.ack_sent)
                or self.subscription_changed)

    def heartbeat(self) -> Heartbeat:
        """The next request's fields (and notes what it acknowledges)."""
        if self.state is MemberState.LEAVING:
            epoch = LEAVE_EPOCH if self.instance_id is None else LEAVE_EPOCH_STATIC
        else:
            epoch = self.member_epoch
        acknowledges = self.state is MemberState.ACKNOWLEDGING
        if acknowledges:
            self.ack_sent = True
        self.subscription_changed = False
        return Heartbeat(self.member_id, epoch, self.instance_id, self.rack_id,
                         self.rebalance_timeout_ms, None if self.regex else self.topics,
                         self.regex, self.server_assignor, self.current, acknowledges)

    def on_response(self, member_id: str | None, member_epoch: int,
                    assignment: Assignment | None, sent: Heartbeat) -> None:
        """A successful response to ``sent``: new epoch, maybe a new target."""
        if self.state not in IN_GROUP:
            return  # fenced, left or failed meanwhile: the response is stale
        if member_id:
            self.member_id = member_id
        self.member_epoch = member_epoch
        if assignment is not None:
            self.target, self.target_epoch = assignment, member_epoch
        if self.state is MemberState.JOINING:
            self.transition(MemberState.RECONCILING)
        elif self.state is MemberState.ACKNOWLEDGING and sent.acknowledges:
            self.transition(MemberState.STABLE)
        # a member that joined has reconciled nothing yet (Java's NONE assignment): its first
        # target is reconciled even when empty, so on_partitions_assigned runs, as in Java
        first = self.current_epoch < 0 and self.target_epoch >= 0
        if self.state is MemberState.STABLE and (self.target != self.current or first):
            self.transition(MemberState.RECONCILING)
        elif self.state is MemberState.STABLE:
            self.current_epoch = self.target_epoch
        if self.state is MemberState.RECONCILING and self.target == self.current and not first:
            # nothing moves (e.g. an epoch bump): own the target's epoch, nothing to call
            self.current_epoch = self.target_epoch
            self.transition(MemberState.STABLE)

    # -- reconciliation (from the caller's poll) ---------------------------------------

    @property
    def reconciling(self) -> bool:
        return self.state is MemberState.RECONCILING

    @property
    def first_reconciliation(self) -> bool:
        """True until the member reconciled a target since it joined."""
        return self.current_epoch < 0

    def reconciled(self, owned: Assignment, epoch: int) -> None:
        """The caller revoked and assigned: it now owns ``owned`` (the target of ``epoch``,
        or the part of it whose topics it could name).  Ignored if the member was fenced
        or left meanwhile."""
        if self.state is not MemberState.RECONCILING:
            return
        self.current, self.current_epoch = owned, epoch
        self.transition(MemberState.ACKNOWLEDGING)
