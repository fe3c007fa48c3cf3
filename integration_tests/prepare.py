"""The integration suite's one-time set-up, made ahead and timed: ``make test`` runs it as its
``setup`` stage, so that no test pays for a build on first use and the log says apart what
set-up cost (about nothing once cached).

    python -m integration_tests.prepare

What it makes (each is cached and reused by the fixtures that need it; each is skipped in
about no time when already there):

* the broker images of the other Kafka versions the compatibility cells of ``make test`` run
  (``ensure_image(version)``, built one after the other: the build holds a lock);
* the kafka-python venvs (``client_venvs``: the 2.x releases and the oldest 3.x the consumer
  runtime is tested on, which the usage matrix runs);
* the compatibility cells' client venvs (``test_compat/client_envs``: the oldest
  confluent-kafka and aiokafka the dependency ranges allow);
* Spark's Kafka source (``kafka_conf()``: resolved into Ivy's cache).

Images, venvs and Spark's package are made in three threads at once (disk and network bound).
A failure is printed with its reason and makes the command exit 1; the tests that need the
missing piece would fail the same way.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections.abc import Callable

_print_lock = threading.Lock()


def _say(line: str) -> None:
    with _print_lock:
        print(f"prepare: {line}", flush=True)


def _step(what: str, action: Callable[[], object], failures: list[str]) -> None:
    started = time.monotonic()
    try:
        action()
    except Exception as exc:
        failures.append(what)
        _say(f"{what}: FAILED after {time.monotonic() - started:.1f} s: "
             f"{type(exc).__name__}: {exc}")
        traceback.print_exc()
        return
    _say(f"{what}: {time.monotonic() - started:.1f} s")


def _images(failures: list[str]) -> None:
    from kafka_assignors.embedded.image import configured_image, ensure_image

    from .test_compat.matrix import DEFAULT_KAFKA, KAFKA_CLASSIC, KAFKA_ONLINE_UPGRADE, KAFKA_PLUGIN

    if os.environ.get("BOOTSTRAP_SERVERS", "").strip():
        _say("BOOTSTRAP_SERVERS is set: no broker image needed")
        return
    if configured_image() is None:
        _step(f"broker image (Kafka {DEFAULT_KAFKA})", ensure_image, failures)
    others = sorted(set(KAFKA_CLASSIC) | set(KAFKA_PLUGIN) | set(KAFKA_ONLINE_UPGRADE))
    for version in others:
        if version != DEFAULT_KAFKA:
            _step(f"broker image (Kafka {version})",
                  lambda v=version: ensure_image(v), failures)  # type: ignore[misc]


def _venvs(failures: list[str]) -> None:
    from .client_venvs import KAFKA_PYTHON_2X, kafka_python_venv
    from .test_compat.client_envs import client_python
    from .test_compat.matrix import client_floor, installed
    from .usage_matrix.kafka_python import OLDEST_KAFKA_PYTHON_3

    for version in (*KAFKA_PYTHON_2X, OLDEST_KAFKA_PYTHON_3):
        _step(f"kafka-python {version} venv",
              lambda v=version: kafka_python_venv(v), failures)  # type: ignore[misc]
    for package in ("confluent-kafka", "aiokafka"):
        floor = client_floor(package)
        if floor != installed(package):
            _step(f"{package} {floor} venv",
                  lambda p=package, v=floor: client_python(p, v), failures)  # type: ignore[misc]


def _spark(failures: list[str]) -> None:
    from kafka_assignors.pipeline.kafka_package import kafka_conf

    _step("Spark's Kafka source (Ivy)", kafka_conf, failures)


def main() -> int:
    started = time.monotonic()
    failures: list[str] = []
    threads = [threading.Thread(target=part, args=(failures,), name=part.__name__)
               for part in (_images, _venvs, _spark)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    _say(f"done in {time.monotonic() - started:.1f} s"
         + (f"; FAILED: {', '.join(failures)}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
