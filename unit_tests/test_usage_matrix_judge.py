"""The usage matrix's bookkeeping on made-up events (no broker, no process): when a group
counts as settled, what counts as worse, and which broker log lines count as expulsions."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest

from integration_tests.usage_matrix.judge import (
    SideResult,
    broker_expelled,
    kept_pause,
    phase_allowance,
    side_result,
    worse,
)
from integration_tests.usage_matrix.kafka_python import CELLS
from integration_tests.usage_matrix.noise import Lateness
from integration_tests.usage_matrix.runner import PairResult, broker_fault
from integration_tests.usage_matrix.workload import settled_at

T = "t"
PLANS_CELL = CELLS[0]
ALL = {(T, 0), (T, 1), (T, 2)}


def ev(kind: str, mono: float, **fields: Any) -> dict[str, Any]:
    return {"event": kind, "mono": mono, **fields}


def held(mono: float, *partitions: int) -> dict[str, Any]:
    return ev("assignment", mono, held=[[T, p] for p in partitions])


def test_settled_when_every_live_member_holds_and_all_partitions_are_held_once() -> None:
    """A joiner unsettles the group until it holds a partition and nothing is held twice."""
    events = {
        "m1": [ev("started", 0), held(1, 0, 1, 2), held(6, 0, 1)],
        "m2": [ev("started", 4), held(5, 2)],
    }
    assert settled_at(events, 0, ALL) == 1
    assert settled_at(events, 4, ALL) == 6  # at 5 partition 2 is held twice


def test_a_leave_is_judged_after_every_event_of_its_instant() -> None:
    """The leaver's own events at the instant it starts closing do not count as settled."""
    events = {
        "m1": [ev("started", 0), held(1, 0), ev("done", 5), ev("closing", 5)],
        "m2": [ev("started", 0), held(1, 1, 2), held(7, 0, 1, 2)],
    }
    assert settled_at(events, 5, ALL) == 7


def test_never_settled_while_a_live_member_holds_nothing() -> None:
    """Three partitions and a live member without one is not settled, whatever the others hold."""
    events = {"m1": [ev("started", 0), held(1, 0, 1, 2)], "m2": [ev("started", 0)]}
    assert settled_at(events, 0, ALL) is None


def side(**fields: Any) -> SideResult:
    result = SideResult("s", "g")
    for key, value in fields.items():
        setattr(result, key, value)
    return result


def test_counts_are_exact_and_times_have_the_stated_tolerance() -> None:
    """One more exception type, one more lost record, a change that never settles or a total
    beyond 1.5 x alone + 1 s + slack per change are worse; equal counts and times within the
    tolerance are not."""
    alone = side(settle={"join": 2.0, "leave": 2.0}, exceptions={"CommitFailedError": 1})
    assert worse(side(settle={"join": 2.0, "leave": 2.0},
                      exceptions={"CommitFailedError": 1}), alone, True, 3.0) == []
    assert worse(side(settle={"join": 12.0, "leave": 1.0}), alone, True, 3.0) == []  # <= 13
    assert worse(side(settle={"join": 13.0, "leave": 1.0}), alone, True, 3.0)
    assert worse(side(settle={"join": 1.0, "leave": None}, bounds={"leave": 45}), alone, True,
                 3.0)
    assert worse(side(settle=alone.settle, exceptions={"OverflowError": 1}), alone, True, 3.0)
    assert worse(side(settle=alone.settle, lost=1), alone, True, 3.0)


def test_a_cooperative_change_has_a_phase_allowance_per_round() -> None:
    """A cooperative change takes two rounds, each of which can wait a heartbeat: twice the
    slack; eager, one. A cooperative formation 5.9 s later than alone's (alone's members
    joined in one round) is within it; 1.5 x alone + 1 s beyond that is not."""
    assert phase_allowance(3.0, "eager") == 3.0
    assert phase_allowance(3.0, "cooperative") == 6.0
    alone = side(settle={"formation": 0.3, "join + close": 0.4})
    late_formation = side(settle={"formation": 5.9, "join + close": 2.9})
    assert worse(late_formation, alone, True, phase_allowance(3.0, "eager"))
    assert worse(late_formation, alone, True, phase_allowance(3.0, "cooperative")) == []
    assert worse(side(settle={"formation": 6.0, "join + close": 8.1}), alone, True,
                 phase_allowance(3.0, "cooperative"))


def test_reads_twice_exact_where_alone_reads_none_twice() -> None:
    """Where alone re-reads nothing, one re-read is worse; where alone's usage re-reads too,
    up to twice its count is not; unclean cells do not judge re-reads."""
    assert worse(side(duplicates=1), side(), True, 3.0)
    assert worse(side(duplicates=100), side(duplicates=50), True, 3.0) == []
    assert worse(side(duplicates=101), side(duplicates=50), True, 3.0)
    assert worse(side(duplicates=500), side(), False, 3.0) == []


def test_kept_pause_is_the_longest_gap_in_kept_partitions() -> None:
    """The pause counts only partitions held before and after the rebalance."""
    records = [[T, 0, i, t] for i, t in enumerate([7.0, 8.0, 9.0, 10.0, 13.5, 14.0])]
    records += [[T, 1, 99, 11.0]]  # partition 1 is given away: not kept
    events = {"m1": [held(1, 0, 1), held(12, 0), ev("records", 14, r=records)]}
    pause, floor = kept_pause(events, 10.5, 13.0)
    assert (pause, floor) == (3.5, 1.0)  # 10.0 -> 13.5; 1 s apart in the 3 s before


def test_broker_expulsions_are_read_per_group_until_the_side_ended() -> None:
    """Coordinator lines "Member X in group G has failed" count for G's member X (its client
    id), only before the side's end."""
    log = "\n".join([
        "[2026-11-25 10:47:13,968] INFO [GroupCoordinator id=1] Member "
        "m1-42986a55-1c4c-43a0-860e-d0851f1343cb in group g1 has failed, removing it from the "
        "group. (org.apache.kafka.coordinator.group.GroupMetadataManager)",
        "[2026-11-25 10:49:00,000] INFO [GroupCoordinator id=1] Member "
        "m2-42986a55-1c4c-43a0-860e-d0851f1343cb in group g1 has failed, removing it.",
        "[2026-11-25 10:47:14,000] INFO [GroupCoordinator id=1] Member "
        "m3-42986a55-1c4c-43a0-860e-d0851f1343cb in group g2 has failed, removing it.",
    ])
    end = 1795603700.0  # 2026-11-25 10:48:20 UTC
    assert broker_expelled(log, "g1", end) == ["m1"]
    assert broker_expelled(log, "g1", None) == ["m1", "m2"]


def test_reads_twice_are_not_judged_where_a_member_was_ended_or_expelled() -> None:
    """A crash or an expulsion is judged as such; the re-reads it causes depend on when it
    happened, so they are not compared."""
    crashed = side(duplicates=1500, fatal=2, exceptions={"KafkaError": 2})
    assert worse(crashed, side(duplicates=600, fatal=2, exceptions={"KafkaError": 2}),
                 True, 3.0) == []
    assert worse(side(duplicates=10), side(expelled=["m1"]), True, 3.0) == []


def test_lost_is_committed_past_and_never_read_whatever_the_timing() -> None:
    """A record nobody read counts as lost only when the group committed past it; one still
    above the final commit (acknowledged late, or the bounded drain ended first) is unread,
    not lost; without the committed offsets every unread record counts."""
    events = {"m1": [ev("records", 1, r=[[T, 0, 0, 1.0], [T, 0, 2, 1.1], [T, 1, 0, 1.2]])]}
    acked = {(T, 0, 0), (T, 0, 1), (T, 0, 2), (T, 0, 3), (T, 1, 0), (T, 1, 1)}
    exact = side_result("s", "g", events, acked, [], False, {(T, 0): 3, (T, 1): 1})
    assert (exact.lost, exact.unread) == (1, 2)  # (t, 0, 1) skipped; (t, 0, 3), (t, 1, 1) not
    unknown = side_result("s", "g", events, acked, [], False, None)
    assert (unknown.lost, unknown.unread) == (3, 0)
    assert worse(exact, side_result("s", "g", events, acked - {(T, 0, 1)}, [], False,
                                    {(T, 0): 3, (T, 1): 1}), True, 3.0)


def test_failed_async_commits_are_counted_by_error() -> None:
    """A cell whose members' commit_async failed says how often and with which error."""
    events = {"m1": [ev("async-commit-failed", 1, type="RebalanceInProgressError"),
                     ev("async-commit-failed", 2, type="RebalanceInProgressError")],
              "m2": [ev("async-commit-failed", 3, type="NodeNotReadyError")]}
    result = side_result("s", "g", events, set(), [], False, {})
    assert result.async_commit_failures == 3
    assert result.async_commit_errors == {"RebalanceInProgressError": 2, "NodeNotReadyError": 1}


def test_not_coordinator_counts_as_a_broker_fault_only_after_the_member_joined(
        capsys: pytest.CaptureFixture[str]) -> None:
    """kafka-python's log lines, as the member's handler sees them: NOT_COORDINATOR while the
    group forms is the broker loading it; after a join it is the broker not serving it."""
    from integration_tests.usage_matrix.kafka_python_member import LostMembership

    handler = LostMembership()
    lines = ["Marking the coordinator dead (node coordinator-1) for group g: "
             "[Error 16] NotCoordinatorError.",
             "Successfully joined group g <Generation 3 (member_id: m1-x)>",
             "LeaveGroup request for group g failed with error: [Error 16] NotCoordinatorError"]
    for line in lines:
        handler.emit(logging.LogRecord("kafka.coordinator", logging.INFO, "", 0, line, None, None))
    events = [json.loads(out) for out in capsys.readouterr().out.splitlines()]
    assert [e["event"] for e in events] == ["broker-fault"]
    assert "LeaveGroup" in events[0]["how"]
    result = side_result("s", "g", {"m1": events}, set(), [], False, {})
    assert result.broker_faults == 1


def test_a_pair_is_run_again_only_for_a_broker_fault() -> None:
    """Either side's NOT_COORDINATOR after joining marks the run; nothing else does."""
    pair = PairResult(PLANS_CELL, "eager", side(), side(expelled=["m1"]))
    assert not broker_fault(pair)
    pair.alone.broker_faults = 2
    assert broker_fault(pair)


def test_time_allowance_grows_only_by_the_stall_measured_in_ours_windows() -> None:
    """A planted regression (ours 12 s slower over a cell) fails on a quiet machine; the same
    extra time is allowed only where the machine kept ready processes waiting that long in
    ours' change windows, and a regression beyond the measured stall fails still."""
    alone = side(settle={"join": 2.0, "leave": 2.0})  # allowed: 1.5 x 4 + 1 + 2 x 3 = 13
    regressed = side(settle={"join": 12.0, "leave": 4.0})
    assert worse(regressed, alone, True, 3.0)  # 16 > 13, no stall measured
    stalled = side(settle={"join": 12.0, "leave": 4.0}, stall={"join": 2.5, "leave": 0.5})
    assert worse(stalled, alone, True, 3.0) == []  # 16 <= 13 + 3
    beyond = side(settle={"join": 22.0, "leave": 4.0}, stall={"join": 2.5, "leave": 0.5})
    assert "machine stall 3.0 s" in worse(beyond, alone, True, 3.0)[0]
    # a change only ours settled brings no allowance of its own
    lone = side(settle={"join": 12.0, "leave": 4.0, "extra": 1.0}, stall={"extra": 50.0})
    assert worse(lone, alone, True, 3.0)


def test_stall_sums_the_late_wake_ups_inside_a_window() -> None:
    """The probe's late wake-ups count where they happened, edges included."""
    lateness = Lateness()
    for woke, late in [(1.0, 0.5), (2.0, 1.0), (3.0, 0.25), (7.0, 2.0)]:
        lateness.add(woke, late)
    assert lateness.stall(2.0, 3.0) == 1.25
    assert lateness.stall(0.0, 10.0) == 3.75
    assert lateness.stall(4.0, 6.0) == 0.0


def test_the_clients_own_join_defect_on_the_plain_side_is_noted_not_judged() -> None:
    """Where kafka-python's join defect left a plain-side member REBALANCING, its expulsions
    and settle times are noted; lost records and exceptions stay judged; without the witness's
    event everything is judged."""
    from integration_tests.usage_matrix.judge import split_client_defect

    alone = side(settle={"join": 2.0, "leave": 2.0})
    plain = side(settle={"join": 30.0, "leave": None}, bounds={"leave": 45}, expelled=["m2"],
                 lost=3)
    found = worse(plain, alone, True, 3.0)
    assert len(found) == 4, found  # expelled, lost, never settled, too slow
    assert split_client_defect(plain, found) == (found, [])
    plain.client_defect = ["m2"]
    judged, noted = split_client_defect(plain, found)
    assert judged == ["records lost: 3 (alone 0)"]
    assert len(noted) == 3 and not set(noted) & set(judged)


def _said(handler: logging.Handler, messages: list[str]) -> None:
    for message in messages:
        handler.handle(logging.LogRecord("kafka.coordinator", logging.INFO, __file__, 0,
                                         message, None, None))


def test_the_member_script_sees_a_dropped_join_result(capsys: pytest.CaptureFixture[str]) -> None:
    """A JoinGroup answered and a new one sent with nothing taken up in between is kafka-python's
    dropped join result; a taken-up result or a failed SyncGroup before the rejoin is not."""
    from integration_tests.usage_matrix.kafka_python_member import LostMembership

    def defects(messages: list[str]) -> int:
        _said(LostMembership(), messages)
        return sum(json.loads(line)["event"] == "client-defect"
                   for line in capsys.readouterr().out.splitlines())

    joined, rejoining = "Successfully joined group g <Generation 3>", "(Re-)joining group g"
    assert defects([joined, rejoining, joined, rejoining]) == 1  # said once per member
    assert defects([joined, "Updated partition assignment: []", rejoining]) == 0
    assert defects([joined, "SyncGroup for group g failed due to coordinator rebalance",
                    rejoining]) == 0
    assert defects([rejoining, rejoining]) == 0


def test_a_commit_kafka_python_refused_on_a_dead_coordinator_is_noted_not_judged(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka-python 3.0.0 to 3.0.2 mark the coordinator dead on a heartbeat answered
    REBALANCE_IN_PROGRESS, and refuse a commit made then (upstream.md §5): the member script
    says so once, and the plain side's re-reads are then noted; its other results stay
    judged. A refusal without that mark is not the defect."""
    from integration_tests.usage_matrix import kafka_python_member as member
    from integration_tests.usage_matrix.judge import side_result, split_client_defect

    dead = ("Marking the coordinator dead (node coordinator-1) for group g: [Error 27] "
            "RebalanceInProgressError.")
    refused = "Failing OffsetCommit request since the consumer is not part of an active group"
    monkeypatch.setattr(member, "COMMIT_DEFECT", member.CommitDefectWitness())
    _said(member.LostMembership(), [refused])
    assert capsys.readouterr().out == ""
    _said(member.LostMembership(), [dead, refused, refused])
    said = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(e["event"], e["defect"]) for e in said] == [("client-defect", "commit")]
    # the other form: the async commit fails at once (CoordinatorNotAvailable)
    monkeypatch.setattr(member, "COMMIT_DEFECT", member.CommitDefectWitness())
    member.COMMIT_DEFECT.commit_failed("CoordinatorNotAvailableError")
    assert capsys.readouterr().out == ""  # no mark: not the defect
    _said(member.LostMembership(), [dead])
    member.COMMIT_DEFECT.commit_failed("CoordinatorNotAvailableError")
    assert [json.loads(line)["defect"] for line in capsys.readouterr().out.splitlines()
            if '"async-commit-failed"' not in line] == ["commit"]

    plain = side_result("s", "g", {"m1": [{**said[0], "mono": 1.0}]}, set(), [], False, {})
    assert plain.commit_defect == ["m1"] and plain.client_defect == []
    alone = side(settle={"join": 2.0})
    plain.settle, plain.duplicates, plain.lost = {"join": 2.0}, 1, 1
    found = worse(plain, alone, True, 3.0)
    judged, noted = split_client_defect(plain, found)
    assert judged == ["records lost: 1 (alone 0)"]
    assert noted == ["records read twice: 1 (alone 0)"]


def test_a_close_without_leave_group_after_the_mark_is_noted_not_judged(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same mark's other effect (upstream.md §5): a close() that sends no LeaveGroup
    within a second of it leaves the member to its session timeout. The member script says
    so; the plain side's expulsion and settle time are then noted, its losses stay judged.
    A close without the mark, one that did send a LeaveGroup, or a static member's (which
    never sends one) is not the defect."""
    from integration_tests.usage_matrix import kafka_python_member as member
    from integration_tests.usage_matrix.judge import side_result, split_client_defect

    dead = ("Marking the coordinator dead (node coordinator-1) for group g: [Error 27] "
            "RebalanceInProgressError.")
    leaving = "Leaving consumer group g (member m1-1)."

    def closes(messages: list[str], *, dynamic: bool = True, before_s: float = 0.0) -> list[str]:
        monkeypatch.setattr(member, "COMMIT_DEFECT", member.CommitDefectWitness())
        _said(member.LostMembership(), messages)
        started = time.monotonic() + before_s  # close() began before_s after the mark
        member.COMMIT_DEFECT.closed(dynamic=dynamic, started=started)
        return [json.loads(line)["defect"] for line in capsys.readouterr().out.splitlines()]

    assert closes([dead]) == ["leave"]
    assert closes([]) == []
    assert closes([dead, leaving]) == []
    assert closes([dead], dynamic=False) == []
    assert closes([dead], before_s=5.0) == []

    said = {"event": "client-defect", "defect": "leave", "mono": 1.0}
    plain = side_result("s", "g", {"m1": [said]}, set(), [], False, {})
    assert plain.leave_defect == ["m1"] and plain.client_defect == []
    alone = side(settle={"join + close": 1.0})
    plain.settle, plain.expelled, plain.lost = {"join + close": None}, ["m1"], 1
    plain.bounds = {"join + close": 45.0}
    judged, noted = split_client_defect(plain, worse(plain, alone, True, 3.0))
    assert judged == ["records lost: 1 (alone 0)"]
    assert sorted(noted) == ["join + close: never settled within 45 s (alone 1.0 s)",
                             "members expelled: 1 (alone 0)"]


def test_a_failed_async_commit_then_its_partition_given_up_is_the_clients_defect(
        capsys: pytest.CaptureFixture[str]) -> None:
    """kafka-python's ``commit_async`` fails (2.3.3: NodeNotReadyError) and the member gives
    the partition up before a later commit of it succeeds: the member script says so once.
    A failure whose partition was committed again, or stays held, or moved only later than
    a heartbeat after it, is not the defect."""
    from kafka.structs import TopicPartition

    from integration_tests.usage_matrix import kafka_python_member as member

    def said() -> list[str]:
        return [json.loads(line)["defect"] for line in capsys.readouterr().out.splitlines()]

    tp0, tp1 = TopicPartition(T, 0), TopicPartition(T, 1)
    witness = member.AsyncCommitWitness()
    witness.commit_done([tp0], RuntimeError("NodeNotReadyError"))
    witness.commit_done([tp0], None)  # committed again: nothing left uncommitted
    witness.gave_up([[T, 0]])
    witness.commit_done([tp1], RuntimeError("NodeNotReadyError"))
    witness.gave_up([[T, 0]])  # another partition moved
    assert said() == []
    witness.failed[(T, 1)] -= member.AsyncCommitWitness.WITHIN_S + 1  # long before the move
    witness.gave_up([[T, 1]])
    assert said() == []
    witness.commit_done([tp1], RuntimeError("NodeNotReadyError"))
    witness.gave_up([[T, 1]])
    witness.gave_up([[T, 1]])
    assert said() == ["commit"]


def test_on_a_client_ours_only_assigns_its_own_defects_are_noted_not_judged() -> None:
    """Where ours is the client with our assignor only (``Client.ours_plain``: kafka-python
    2.x), a witnessed commit defect's re-reads on ours are noted; elsewhere they are judged."""
    from integration_tests.usage_matrix.judge import side_result
    from integration_tests.usage_matrix.runner import judge

    def pair() -> PairResult:
        defect = {"event": "client-defect", "defect": "commit", "mono": 1.0}
        ours = side_result("s", "g", {"m1": [defect]}, set(), [], False, {})
        ours.settle, ours.duplicates = {"join": 2.0}, 1
        return PairResult(PLANS_CELL, "eager", ours, side(settle={"join": 2.0}))

    judged = pair()
    judge(judged, None)
    assert judged.worse == ["records read twice: 1 (alone 0)"]
    noted = pair()
    judge(noted, None, ours_plain=True)
    assert noted.worse == []
    assert "records read twice: 1" in noted.ours.extra["the client's own defects (not judged)"]
