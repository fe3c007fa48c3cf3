"""The public API is declared: each public module has ``__all__`` naming things that exist, and
the API reference page lists every public module and documents the names it promises."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

API_PAGE = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text()
#: The public modules the API reference's table lists (docs/api.md). A module that does not
#: exist in this checkout yet is listed in the page and checked once it does.
PUBLIC = ["kafka_assignors", "kafka_assignors.kafka_python", "kafka_assignors.aiokafka",
          "kafka_assignors.confluent", "kafka_assignors.metrics",
          "kafka_assignors.metrics.prometheus", "kafka_assignors.metrics.otel",
          "kafka_assignors.negotiation"]


def _import(name: str) -> object:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name == name:
            pytest.skip(f"{name} is not in this checkout")
        raise


@pytest.mark.parametrize("name", PUBLIC)
def test_a_public_module_declares_all_and_every_name_exists(name: str) -> None:
    """``__all__`` is present and every name in it resolves."""
    module = _import(name)
    exported = getattr(module, "__all__", None)
    assert exported, f"{name} has no __all__"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"


@pytest.mark.parametrize("name", PUBLIC)
def test_the_api_reference_lists_every_public_module(name: str) -> None:
    """The page's table names each public module."""
    short = name.replace("kafka_assignors.metrics.", ".metrics.")
    assert f"`{name}`" in API_PAGE or f"`{short}`" in API_PAGE


def test_every_documented_name_is_exported_by_its_module() -> None:
    """Each ``::: module.Name`` and each ``members:`` entry of the page is in that module's
    ``__all__`` (mkdocs build --strict fails on a name that does not exist at all)."""
    documented: list[tuple[str, str]] = []
    for block in re.finditer(r"^::: ([\w.]+)\n(?:(?:    .*\n)*)", API_PAGE, re.MULTILINE):
        target = block.group(1)
        members = re.search(r"members: \[([^\]]*)\]", block.group(0))
        if members:
            documented += [(target, m.strip()) for m in members.group(1).split(",")]
        else:
            module, _, attr = target.rpartition(".")
            documented.append((module, attr))
    assert len(documented) > 30
    wrong = [f"{m}.{n}" for m, n in documented
             if n not in getattr(importlib.import_module(m), "__all__", ())]
    assert not wrong, wrong


def test_the_page_says_what_the_version_number_promises() -> None:
    """The reference states the versioning promise."""
    assert "semantic versioning" in API_PAGE
    assert "Wire names and the wire format never change within a major version" in API_PAGE
