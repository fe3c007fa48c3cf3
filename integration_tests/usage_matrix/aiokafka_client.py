"""aiokafka's cells: every way its docs and users consume, ours beside aiokafka alone.

Ours: ``kafka_assignors.aiokafka.AIOKafkaConsumer`` with ``BalancedStickyAssignor`` (eager) and
``CooperativeBalancedStickyAssignor`` (cooperative); alone: aiokafka's own ``AIOKafkaConsumer``
with its ``RoundRobinPartitionAssignor`` (aiokafka has no cooperative protocol: its eager
rebalance is what a cooperative one is judged against, and its kept-partition pause is
recorded beside ours). Both get the same options. The member script is
``aiokafka_usage_member.py`` beside this file. (Not ``aiokafka.py``: the member script's
directory is first on its ``sys.path``, where that name would hide the aiokafka package.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .plans import Cell, Client

#: what every member sets (both sides): read from the start, so that "lost" counts only
#: records the group skipped; 1 s heartbeats (aiokafka's default is 3 s) on both
BASE_OPTIONS = {"auto_offset_reset": "earliest", "heartbeat_interval_ms": 1000}
HEARTBEAT_S = 1.0
#: processing (awaited, as aiokafka applications do) longer than the session timeout, shorter
#: than max poll: aiokafka heartbeats from a task of its own, so neither side should suffer
SLOW_SESSION = {"session_timeout_ms": 6000, "max_poll_interval_ms": 30000}
SLOW_BATCH_S = 8
#: one batch longer than max_poll_interval_ms: aiokafka leaves the group when the consumer
#: has been idle that long
MAX_POLL = {"session_timeout_ms": 6000, "max_poll_interval_ms": 10000}
SLOW_OVER_MAX_POLL_S = 14
NO_AUTO_COMMIT = {"enable_auto_commit": False}

CELLS = (
    Cell("async-for", "`async for msg in consumer:`, auto-commit (default 5 s)", "async-for",
         slack_s=HEARTBEAT_S),
    Cell("getone", "`await getone()` loop", "getone", slack_s=HEARTBEAT_S),
    Cell("getmany", "`await getmany(timeout_ms=1000)` loop", "getmany", slack_s=HEARTBEAT_S),
    Cell("max-records", "`await getmany(timeout_ms=1000, max_records=10)` loop", "max-records",
         slack_s=HEARTBEAT_S),
    Cell("auto-commit", "`getmany()`, auto-commit every 1 s (`auto_commit_interval_ms=1000`)",
         "getmany", options={"auto_commit_interval_ms": 1000}, slack_s=HEARTBEAT_S),
    Cell("commit", "`enable_auto_commit=False`, `await commit()` after every batch", "commit",
         options=NO_AUTO_COMMIT, slack_s=HEARTBEAT_S),
    Cell("listener-commit", "`enable_auto_commit=False`, `await commit(offsets)` in "
         "`on_partitions_revoked`", "listener-commit", options=NO_AUTO_COMMIT,
         slack_s=HEARTBEAT_S),
    Cell("pattern", "`subscribe(pattern=...)`", "getmany", slack_s=HEARTBEAT_S),
    Cell("subscription-change", "`subscribe([a])`, then `subscribe([a, b])`", "getmany",
         plan="subscription-change", topics=2, partitions=3, slack_s=HEARTBEAT_S),
    Cell("static", "static membership (`group_instance_id`, `session_timeout_ms` 30 s), a "
         "member restarts", "getmany", plan="static", options={"session_timeout_ms": 30000},
         slack_s=HEARTBEAT_S),
    Cell("slow-session", f"processing {SLOW_BATCH_S} s per batch > `session_timeout_ms` 6 s, "
         "< `max_poll_interval_ms` 30 s", "slow-session", options=SLOW_SESSION,
         extra={"batch_s": SLOW_BATCH_S}, slack_s=HEARTBEAT_S + SLOW_BATCH_S, bound_s=90.0,
         slow=True),
    Cell("slow-max-poll", f"one batch of {SLOW_OVER_MAX_POLL_S} s > `max_poll_interval_ms` "
         "10 s", "slow-max-poll", plan="slow-batch", options=MAX_POLL,
         extra={"slow_s": SLOW_OVER_MAX_POLL_S}, clean=False, slack_s=HEARTBEAT_S,
         bound_s=60.0, slow=True),
    Cell("pause-resume", "`pause()` everything 1.5 s of every 4 s, then `resume()`",
         "pause-resume", slack_s=HEARTBEAT_S + 1.5),
    Cell("seek", "`seek()` back to a failed record to retry it (every 25th, once)", "seek",
         slack_s=HEARTBEAT_S),
    Cell("stop-during-rebalance", "`stop()` while the group rebalances", "getmany",
         plan="close-during-rebalance", slack_s=HEARTBEAT_S),
)


def describe() -> dict[str, Any]:
    import aiokafka

    return {"aiokafka": aiokafka.__version__,
            "ours": "kafka_assignors.aiokafka.AIOKafkaConsumer (cooperative with the "
                    "cooperative assignor)"}


def client() -> Client:
    import aiokafka

    return Client(
        name="aiokafka",
        version=aiokafka.__version__,
        script=Path(__file__).with_name("aiokafka_usage_member.py"),
        strategies={
            "eager": (("ours balanced-sticky", "ours:balanced-sticky"),
                      ("aiokafka roundrobin", "plain:roundrobin")),
            "cooperative": (("ours cooperative-balanced-sticky",
                             "ours:cooperative-balanced-sticky"),
                            ("aiokafka roundrobin", "plain:roundrobin")),
        },
        cells=CELLS,
        base_options=BASE_OPTIONS,
        describe=describe,
    )
