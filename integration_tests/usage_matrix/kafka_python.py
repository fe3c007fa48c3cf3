"""kafka-python's cells: every way its docs and users consume, ours beside kafka-python alone.

Ours: ``BalancedStickyAssignor`` (eager) and ``CooperativeBalancedStickyAssignor``; alone:
kafka-python's ``RangePartitionAssignor`` and ``CooperativeStickyAssignor``, each passed as the
README's one line does: ``partition_assignment_strategy=[X()]``. Three sides per cell on
kafka-python 3: ours with the runtime (``kafka_assignors.kafka_python.KafkaConsumer``), ours as
the plain one line (``kafka.KafkaConsumer``, no runtime) and kafka-python alone. The member
script is ``kafka_python_member.py`` beside this file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .plans import Cell, Client

#: what every member sets: read from the start, so that "lost" counts only records the group
#: skipped (with kafka-python's default "latest" a new group skips what came before it formed)
BASE_OPTIONS = {"auto_offset_reset": "earliest"}
#: processing longer than the session timeout, shorter than max poll: the issue's 10 s
#: session / 12 s batches / 60 s max poll shrunk to 6 / 8 / 30 s (heartbeats every 2 s, a
#: third of the session as kafka-python's defaults have it). Measured on this machine, the
#: runtime that stopped heartbeats from the join to the next poll got members expelled in
#: this recipe every time (3 of 3 runs) but in none of one run each with 10 s sessions and
#: 12 s or 20 s batches; 20 s batches also outrun what two members can process (500 records
#: a batch), so records stay unread at the end on both sides.
SLOW_SESSION = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 2000,
                "max_poll_interval_ms": 30000}
SLOW_BATCH_S = 8
#: one batch longer than max poll, on kafka-python's session defaults (10 s / 3 s)
MAX_POLL = {"max_poll_interval_ms": 20000}
SLOW_OVER_MAX_POLL_S = 25
#: the oldest kafka-python 3 release the runtime supports (3.0.0 and 3.0.1 it refuses:
#: kafka_python_runtime.REFUSED_RELEASES; the extras' range starts at 3.0.2)
OLDEST_KAFKA_PYTHON_3 = "3.0.2"

CELLS = (
    Cell("iterator", "`for msg in consumer:` (default `consumer_timeout_ms`)", "iterator"),
    Cell("iterator-timeout", "`for msg in consumer:` with `consumer_timeout_ms=1000`",
         "iterator-timeout", options={"consumer_timeout_ms": 1000}),
    Cell("poll", "`poll(timeout_ms=1000)` loop", "poll"),
    Cell("poll0", "`poll(timeout_ms=0)` loop", "poll0"),
    Cell("max-records", "`poll(timeout_ms=1000, max_records=10)` loop", "max-records"),
    Cell("auto-commit", "auto-commit every 1 s (`auto_commit_interval_ms=1000`)", "poll",
         options={"enable_auto_commit": True, "auto_commit_interval_ms": 1000}),
    Cell("commit", "`enable_auto_commit=False`, `commit()` after every batch", "commit",
         options={"enable_auto_commit": False}),
    Cell("commit-async", "`enable_auto_commit=False`, `commit_async()` after every batch, "
         "`commit()` before `close()`", "commit-async", options={"enable_auto_commit": False}),
    Cell("listener-commit", "`enable_auto_commit=False`, `commit(offsets)` in "
         "`on_partitions_revoked`", "listener-commit", options={"enable_auto_commit": False},
         not_judged="kafka-python 3.0.12 alone raises KafkaError from poll() here (its IO "
         "thread runs the listener and cannot block on commit()); commit_async() below is "
         "the judged variant"),
    Cell("listener-commit-async", "`enable_auto_commit=False`, `commit_async(offsets)` in "
         "`on_partitions_revoked`", "listener-commit-async",
         options={"enable_auto_commit": False}),
    Cell("pattern", "`subscribe(pattern=...)`", "pattern"),
    Cell("subscription-change", "`subscribe([a])`, then `subscribe([a, b])`", "poll",
         plan="subscription-change", topics=2, partitions=3),
    Cell("static", "static membership (`group_instance_id`), a member restarts", "poll",
         plan="static"),
    Cell("slow-session", f"processing {SLOW_BATCH_S} s per batch > `session_timeout_ms` 6 s, "
         "< `max_poll_interval_ms` 30 s", "slow-session", options=SLOW_SESSION,
         extra={"batch_s": SLOW_BATCH_S}, slack_s=2.0 + SLOW_BATCH_S, bound_s=60.0, slow=True),
    Cell("slow-max-poll", f"one batch of {SLOW_OVER_MAX_POLL_S} s > `max_poll_interval_ms` "
         "20 s", "slow-max-poll", plan="slow-batch", options=MAX_POLL,
         extra={"slow_s": SLOW_OVER_MAX_POLL_S}, clean=False, bound_s=60.0, slow=True),
    Cell("pause-resume", "`pause()` everything 1.5 s of every 4 s, then `resume()`",
         "pause-resume", slack_s=3.0 + 1.5),
    Cell("seek", "`seek()` back to a failed record to retry it (every 25th, once)", "seek"),
    Cell("close-during-rebalance", "`close()` while the group rebalances", "poll",
         plan="close-during-rebalance"),
    # kafka-python's unsubscribe() sends its auto-commit asynchronously and leaves the group
    # without waiting (the commit then fails with UNKNOWN_MEMBER_ID): the records read twice
    # after it are a draw on both sides (alone 0-157 over seven runs), so not judged
    Cell("unsubscribe", "`unsubscribe()`, 2 s later `subscribe()` again", "poll",
         plan="unsubscribe", clean=False),
    Cell("assign", "manual `assign()`; one member hands its half to a new one", "assign",
         plan="assign"),
)


def describe() -> dict[str, Any]:
    """The kafka-python version and how ours is configured."""
    import kafka

    return {"kafka-python": kafka.__version__,
            "consumer runtime": "ours through kafka_assignors.kafka_python.KafkaConsumer"}


def client() -> Client:
    import kafka

    return Client(
        name="kafka-python",
        version=kafka.__version__,
        script=Path(__file__).with_name("kafka_python_member.py"),
        strategies={
            "eager": (("BalancedStickyAssignor", "kafka_assignors:BalancedStickyAssignor"),
                      ("RangePartitionAssignor",
                       "kafka.coordinator.assignors.range:RangePartitionAssignor")),
            "cooperative": (("CooperativeBalancedStickyAssignor",
                             "kafka_assignors:CooperativeBalancedStickyAssignor"),
                            ("CooperativeStickyAssignor",
                             "kafka.coordinator.assignors.cooperative_sticky:"
                             "CooperativeStickyAssignor")),
        },
        cells=CELLS,
        base_options=BASE_OPTIONS,
        describe=describe,
        plain=True,  # ours also as the plain one line (kafka.KafkaConsumer, no runtime)
    )


def consumer_protocol_client() -> Client:
    """The same cells with ours on the consumer group protocol (KIP-848:
    ``group_protocol="consumer"``, the broker's balanced-sticky assigning), beside kafka-python
    alone on the classic protocol with its cooperative assignor (its incremental rebalance:
    the nearest it has). Judged as the cooperative column (incremental on both sides); ours'
    session and heartbeat are its group's configs, set to alone's before each cell."""
    import kafka

    here = client()

    def describe_848() -> dict[str, Any]:
        return {"kafka-python": kafka.__version__,
                "consumer runtime": "ours: kafka_assignors.kafka_python.KafkaConsumer with "
                                    "group_protocol='consumer', group_remote_assignor="
                                    "'balanced-sticky'; alone: kafka.KafkaConsumer, classic"}

    return Client(
        name="kafka-python-consumer-protocol",
        version=kafka.__version__,
        script=here.script,
        strategies={"cooperative": (("balanced-sticky on the broker (group_protocol="
                                     "'consumer')", "consumer:balanced-sticky"),
                                    here.strategies["cooperative"][1])},
        cells=CELLS,
        base_options=BASE_OPTIONS,
        describe=describe_848,
        prepare_ours=alone_timing_on_the_broker,
    )


def alone_timing_on_the_broker(bootstrap: str, group: str, options: Mapping[str, Any]) -> None:
    """Ours' group gets the session timeout and heartbeat interval alone's members use (the
    cell's options, else kafka-python's defaults): on the consumer protocol the broker sets
    them, and with its defaults (45 s, 5 s) ours would learn of each change up to 5 s after
    a kafka-python member heartbeating every 3 s does: a cadence, not a client, compared."""
    import kafka

    from ..consumer_protocol_group import set_group_timing

    defaults = kafka.KafkaConsumer.DEFAULT_CONFIG
    set_group_timing(
        bootstrap, group,
        session_ms=int(options.get("session_timeout_ms", defaults["session_timeout_ms"])),
        heartbeat_ms=int(options.get("heartbeat_interval_ms",
                                     defaults["heartbeat_interval_ms"])))


def client_on(version: str, *, name: str, protocols: Sequence[str] = ("eager", "cooperative"),
              options: Mapping[str, Any] = BASE_OPTIONS, runtime: str,
              cells: Sequence[Cell] = CELLS) -> Client:
    """The same script, cells and strategies, run by the Python of a venv that holds
    ``kafka-python==version`` (``integration_tests.client_venvs``; this checkout through
    ``PYTHONPATH``), so the members run that release and the code under test."""
    from ..client_venvs import kafka_python_venv

    here = client()

    def describe_venv() -> dict[str, Any]:
        return {"kafka-python": version, "consumer runtime": runtime}

    return Client(
        name=name,
        version=version,
        script=here.script,
        strategies={p: here.strategies[p] for p in protocols},
        cells=tuple(cells),
        base_options=dict(options),
        describe=describe_venv,
        python=str(kafka_python_venv(version)),
        plain=here.plain and not version.startswith("2."),
    )


def oldest_client() -> Client:
    """The matrix on the oldest kafka-python 3 release the runtime supports."""
    oldest = OLDEST_KAFKA_PYTHON_3
    return client_on(oldest, name="kafka-python-oldest",
                     runtime=f"on (kafka-python {oldest}: the oldest release it supports)")
