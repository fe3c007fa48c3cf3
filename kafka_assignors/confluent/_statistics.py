"""librdkafka's statistics (``stats_cb``) with the group as the bridge's member sees it.

Under the bridge librdkafka is not the group member: its ``cgrp`` section would say the group
never rebalanced and nothing is assigned.  The bridge passes the user's ``stats_cb`` a copy
whose ``cgrp`` carries the member's figures (STATISTICS.md's names): ``rebalance_cnt``
(assign, revoke and lost steps run), ``assignment_size`` (partitions held) and, while it
holds a membership, ``state`` ``up`` and ``join_state`` ``steady``.  Everything else is
librdkafka's, unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

StatsCb = Callable[[str], Any]


def with_member(stats_json: str, *, rebalances: int, assigned: int, in_group: bool) -> str:
    """``stats_json`` with its ``cgrp`` section set from the member's figures."""
    try:
        stats = json.loads(stats_json)
    except ValueError:
        return stats_json
    cgrp = stats.get("cgrp")
    if not isinstance(cgrp, dict):
        return stats_json
    cgrp["rebalance_cnt"] = rebalances
    cgrp["assignment_size"] = assigned
    if in_group:
        cgrp["state"] = "up"
        cgrp["join_state"] = "steady"
    return json.dumps(stats)


def member_statistics(figures: Callable[[], tuple[int, int, bool] | None],
                      stats_cb: StatsCb) -> StatsCb:
    """The user's ``stats_cb``, given the statistics with the member's figures
    (``figures()``: rebalances, partitions held, in the group; None: leave them as they are).
    """
    def patched(stats_json: str) -> Any:
        now = figures()
        if now is not None:
            rebalances, assigned, in_group = now
            stats_json = with_member(stats_json, rebalances=rebalances, assigned=assigned,
                                     in_group=in_group)
        return stats_cb(stats_json)

    return patched
