"""Which broker image a Kafka version maps to (no Docker: only names)."""

from __future__ import annotations

import pytest

from kafka_assignors.embedded import image


def test_each_kafka_version_has_its_own_tag(monkeypatch: pytest.MonkeyPatch) -> None:
    """KAFKA_VERSION picks the default image's tag; without it the default is 4.4.0."""
    monkeypatch.delenv(image.VERSION_ENV, raising=False)
    monkeypatch.delenv(image.BUILD_TAG_ENV, raising=False)
    assert image.built_image_tag() == "kafka-assignors/kafka:4.4.0" == image.DEFAULT_IMAGE
    monkeypatch.setenv(image.VERSION_ENV, "3.9.2")
    assert image.built_image_tag() == "kafka-assignors/kafka:3.9.2"
    assert image.image_for_version("4.0.2") == "kafka-assignors/kafka:4.0.2"


@pytest.mark.parametrize("bad", ["4.0", "latest", "4.0.2; rm -rf /", ""])
def test_a_malformed_version_is_refused(bad: str) -> None:
    """Only MAJOR.MINOR.PATCH names a version (it becomes a tag and a Maven version)."""
    with pytest.raises(ValueError, match=r"MAJOR\.MINOR\.PATCH"):
        image.image_for_version(bad)
