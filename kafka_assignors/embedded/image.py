"""Which broker image to run, and making sure it (and the Docker engine) exists.

* ``KAFKA_ASSIGNORS_IMAGE`` (e.g. ``apache/kafka:4.1.0``) selects a ready-made image;
  nothing is built and Docker pulls it if needed (machines with a registry).
* Otherwise the image is ours, ``kafka-assignors/kafka:<version>``, built without a
  registry by the recipe that ships in this package (``recipe/build-image.sh``, which a
  checkout's ``docker/build-image.sh`` runs too; cached, ~0.1 s when up to date): Kafka's
  jars come from Maven Central, the broker plugin jar from the package (or a checkout's
  sources). The version is ``KAFKA_VERSION`` (the same variable the script
  reads; default 4.4.0), or the one a caller asks for: ``ensure_image("3.9.2")`` builds
  and returns ``kafka-assignors/kafka:3.9.2`` (any Apache Kafka >= 3.9 on Maven Central).
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_KAFKA_VERSION = "4.4.0"
IMAGE_REPOSITORY = "kafka-assignors/kafka"
DEFAULT_IMAGE = f"{IMAGE_REPOSITORY}:{DEFAULT_KAFKA_VERSION}"
VERSION_ENV = "KAFKA_VERSION"  # read by docker/build-image.sh too
IMAGE_ENV = "KAFKA_ASSIGNORS_IMAGE"
BUILD_TAG_ENV = "KAFKA_ASSIGNORS_BUILD_IMAGE"  # the tag build-image.sh builds
#: The broker image's recipe (Dockerfile, scripts, poms): package data, so a pip install has it.
RECIPE = Path(__file__).resolve().parent / "recipe"
BUILD_TIMEOUT_S = 1800.0
ENGINE_TIMEOUT_S = 1200.0


class ImageError(RuntimeError):
    """The Docker engine or the broker image could not be made available."""


def configured_image() -> str | None:
    """The image named by ``KAFKA_ASSIGNORS_IMAGE``, or None to use (and build) ours."""
    value = os.environ.get(IMAGE_ENV, "").strip()
    return value or None


def kafka_version() -> str:
    """The broker version of the default image: ``KAFKA_VERSION``, else 4.4.0."""
    return os.environ.get(VERSION_ENV, "").strip() or DEFAULT_KAFKA_VERSION


def image_for_version(version: str) -> str:
    """Our image's tag for one Apache Kafka version (``kafka-assignors/kafka:3.9.2``)."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise ValueError(f"Kafka version {version!r}: expected MAJOR.MINOR.PATCH (e.g. 3.9.2)")
    return f"{IMAGE_REPOSITORY}:{version}"


def version_of_image(image: str) -> str | None:
    """The Apache Kafka version an image tag names (``...kafka:3.9.2`` -> "3.9.2"), if any."""
    found = re.search(r":(\d+\.\d+\.\d+)$", image)
    return found.group(1) if found else None


def built_image_tag() -> str:
    """The tag docker/build-image.sh builds (KAFKA_ASSIGNORS_BUILD_IMAGE, else per version)."""
    return os.environ.get(BUILD_TAG_ENV, "").strip() or image_for_version(kafka_version())


def broker_image() -> str:
    """The image the embedded brokers run."""
    return configured_image() or built_image_tag()


def recipe_script(name: str) -> Path:
    """A script of the image recipe shipped in the package (``build-image.sh``, ...)."""
    script = RECIPE / name
    if not script.is_file():
        raise ImageError(
            f"{script} is missing: this installation of kafka-assignors is incomplete "
            f"(reinstall it), or set {IMAGE_ENV} to a ready image such as apache/kafka:4.1.0."
        )
    return script


def _run_script(
    script: Path, timeout: float, what: str, env: Mapping[str, str] | None = None
) -> None:
    log.info("running %s", script)
    try:
        proc = subprocess.run(
            ["bash", str(script)],
            env=None if env is None else {**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ImageError(f"{what}: {script} did not finish within {timeout:.0f} s") from exc
    output = proc.stdout.strip()
    if output:
        log.info("%s output:\n%s", script.name, output)
    if proc.returncode != 0:
        tail = "\n".join(output.splitlines()[-40:])
        raise ImageError(f"{what}: {script} failed (exit {proc.returncode}):\n{tail}")


def ensure_engine() -> None:
    """Make sure a Docker engine answers, starting it through the recipe's ensure-docker.sh."""
    _run_script(recipe_script("ensure-docker.sh"), ENGINE_TIMEOUT_S, "Docker engine not available")


def ensure_image(version: str | None = None) -> str:
    """Return the broker image to run, building ours first if needed (bounded).

    With ``version``, always our image of that Apache Kafka version (built if needed);
    ``KAFKA_ASSIGNORS_IMAGE`` applies to the default image only.
    """
    if version is not None:
        tag = image_for_version(version)
        _run_script(
            recipe_script("build-image.sh"),
            BUILD_TIMEOUT_S,
            f"broker image build (Kafka {version})",
            env={VERSION_ENV: version, BUILD_TAG_ENV: tag},
        )
        return tag
    image = configured_image()
    if image is not None:
        ensure_engine()
        log.info("using %s=%s (not building)", IMAGE_ENV, image)
        return image
    # build-image.sh itself ensures the engine first.
    tag = built_image_tag()
    _run_script(
        recipe_script("build-image.sh"),
        BUILD_TIMEOUT_S,
        "broker image build",
        env={VERSION_ENV: kafka_version(), BUILD_TAG_ENV: tag},
    )
    return tag
