"""Run any assignor on a simulated group, exactly as a kafka-python group leader would.

Pure Python (no Spark): the pipeline's ``evaluate`` runs it inside Spark
executors, and it works on its own::

    from kafka_assignors.simulator import Scenario, SimMember, expand_events, simulate

    members = tuple(SimMember(f"c{i}", ("orders",)) for i in range(3))
    scenario = Scenario(
        "demo", {"orders": 12}, members,
        events=expand_events(["scale-out 2", "crash", "add-partitions +4"], members,
                             {"orders": 12}, lambda i: SimMember(f"c{i}", ("orders",))),
    )
    for step in simulate(scenario, "cooperative-sticky"):
        print(step.row())

Each :class:`StepResult` holds count imbalance (max - min partitions), load
imbalance (heaviest member / mean), partitions and weight moved, rack
locality, co-partition violations, the assignor's time, and the error when
the assignor failed (recorded, never raised).  :func:`expand_grid` builds many
scenarios from a grid description (see :mod:`kafka_assignors.simulator.grid`).
"""

from __future__ import annotations

from .churn import ChurnError, expand_events
from .engine import StepResult, run_scenario, simulate
from .grid import GridError, expand_grid, load_grid
from .registry import UnknownAssignorError, assignor_names, resolve_assignor, wire_name
from .scenario import EVENT_KINDS, Event, Scenario, SimMember

__all__ = [
    "EVENT_KINDS",
    "ChurnError",
    "Event",
    "GridError",
    "Scenario",
    "SimMember",
    "StepResult",
    "UnknownAssignorError",
    "assignor_names",
    "expand_events",
    "expand_grid",
    "load_grid",
    "resolve_assignor",
    "run_scenario",
    "simulate",
    "wire_name",
]
