"""The compatibility table's Markdown, from a results document (no broker, no run)."""

from __future__ import annotations

from integration_tests.test_compat.table import render


def _cell(component: str, version: str, column: str, test: str, outcome: str) -> dict[str, object]:
    return {"component": component, "version": version, "column": column, "test": test,
            "outcome": outcome, "seconds": 1.0}


def test_rows_are_ordered_and_cells_count_their_tests() -> None:
    """Rows follow the component order then ascending versions; a cell counts its passes,
    shows a failure loudly, and a cell no test filled shows the matrix's reason."""
    results = {"generated": "2026-11-25", "python": "3.11.2",
               "defaults": {"Kafka broker": "4.4.0"},
               "cells": [_cell("Kafka broker", "4.10.0", "jar", "t1", "passed"),
                         _cell("Kafka broker", "4.4.0", "eager", "t2", "passed"),
                         _cell("Kafka broker", "4.4.0", "eager", "t3", "passed"),
                         _cell("Kafka broker", "3.9.2", "eager", "t4", "failed"),
                         _cell("aiokafka", "0.12.0", "eager", "t5", "passed")]}
    lines = render(results).splitlines()
    assert lines[0] == "| | eager | cooperative | KIP-848 | jar |"
    assert [line.split("|")[1].strip() for line in lines[2:6]] == [
        "aiokafka 0.12.0", "Kafka broker 3.9.2", "Kafka broker 4.4.0 (default)",
        "Kafka broker 4.10.0"]
    assert "**FAIL** 1 of 1" in lines[3] and "n/a: no plugin api before 4.0" in lines[3]
    assert "pass (2 tests)" in lines[4]
    assert "n/a: aiokafka has no cooperative protocol" in lines[2]
