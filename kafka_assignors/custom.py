"""Make an assignor from one function on the model."""

from __future__ import annotations

from collections.abc import Callable

from .core.model import GroupSpec
from .kafka_python.assignor import KafkaPythonAssignor
from .protocol.leader import AssignmentResult


def make_assignor(
    name: str,
    strategy: Callable[[GroupSpec], AssignmentResult],
    *,
    cooperative: bool = False,
    broadcast: bool = False,
) -> type[KafkaPythonAssignor]:
    """A kafka-python assignor class whose wire name is ``name`` and whose logic is ``strategy``.

    The leader validates whatever ``strategy`` returns and, when ``cooperative``
    is true, hands moving partitions over in two rounds.
    """

    def assign_group(self: KafkaPythonAssignor, group: GroupSpec) -> AssignmentResult:
        return strategy(group)

    class_name = "".join(part.capitalize() for part in name.replace("_", "-").split("-"))
    return type(
        f"{class_name}Assignor",
        (KafkaPythonAssignor,),
        {
            "name": name,
            "cooperative": cooperative,
            "broadcast": broadcast,
            "assign_group": assign_group,
            "__doc__": strategy.__doc__,
            "__module__": getattr(strategy, "__module__", __name__),
        },
    )
