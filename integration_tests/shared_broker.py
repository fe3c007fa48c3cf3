"""One broker for a whole parallel run: started by the pytest-xdist controller, used by every
worker.

A session fixture runs once per xdist worker, so ``kafka_broker`` alone would start one broker
per worker. Instead the controller (the ``pytest -n N`` process, which lives from the first
worker's start to the last one's end) owns a run directory; the first worker whose test asks
for ``kafka_broker`` writes ``want`` there, a thread of the controller starts the broker
(:func:`~kafka_assignors.embedded.start_single_broker`, so the containers are labelled with
the controller's pid and removed when it exits, even on a crash) and writes ``broker.json``
(its address and container ids) or ``error`` (why it did not start). Every worker waits for
one of the two and gets a :class:`~kafka_assignors.embedded.KafkaCluster` over the same
containers (logs, status), which it never closes: the controller removes the broker at the
end of the run.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from kafka_assignors.embedded import KafkaCluster, start_single_broker
from kafka_assignors.embedded.cluster import START_TIMEOUT_S, BrokerNode, NodeConfig

log = logging.getLogger(__name__)

#: ``workerinput`` key: the run directory the controller shares with its workers
RUN_DIR_KEY = "kafka_assignors_run_dir"
WANT, READY, ERROR = "want", "broker.json", "error"
#: how long a worker waits for the controller's broker (a start may be retried once)
WAIT_S = 2 * START_TIMEOUT_S + 60


class BrokerServer:
    """The controller's side: starts the broker when a worker first asks, removes it at the
    end (:meth:`close`)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.cluster: KafkaCluster | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="shared-broker", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.wait(0.2):
            if (self.run_dir / WANT).exists():
                break
        else:
            return
        started = time.monotonic()
        try:
            cluster = start_single_broker()
        except Exception as exc:  # every worker's kafka_broker fails with this reason
            _write(self.run_dir / ERROR, f"{type(exc).__name__}: {exc}")
            return
        self.cluster = cluster
        state = {
            "bootstrap": cluster.bootstrap,
            "image": cluster.image,
            "cluster_id": cluster.cluster_id,
            "seconds": round(time.monotonic() - started, 1),
            "nodes": [{"node_id": n.node_id, "broker_port": n.config.broker_port,
                       "controller_port": n.config.controller_port, "rack": n.rack,
                       "container_id": n.container_id} for n in cluster.nodes],
        }
        _write(self.run_dir / READY, json.dumps(state))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(WAIT_S)
        if self.cluster is not None:
            self.cluster.close()


def _write(path: Path, text: str) -> None:
    """Write atomically: a reader sees the whole file or none."""
    partial = path.with_suffix(".partial")
    partial.write_text(text)
    os.replace(partial, path)


class _ContainerById:
    """What :class:`BrokerNode` needs of a Testcontainers container, for a container that
    another process started: the Docker SDK's container, looked up by id."""

    def __init__(self, container_id: str) -> None:
        self.container_id = container_id
        self._wrapped: Any = None

    def get_wrapped_container(self) -> Any:
        if self._wrapped is None:
            from docker.client import DockerClient

            self._wrapped = DockerClient.from_env(timeout=30).containers.get(self.container_id)
        return self._wrapped

    def stop(self, **_: object) -> None:
        """Never removes it: the controller does, at the end of the run."""


def attach(run_dir: Path, timeout: float = WAIT_S) -> KafkaCluster:
    """The worker's side: ask for the run's broker and wait until it is ready (or failed)."""
    with contextlib.suppress(FileExistsError):
        (run_dir / WANT).touch(exist_ok=False)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (run_dir / ERROR).exists():
            raise RuntimeError((run_dir / ERROR).read_text())
        if (run_dir / READY).exists():
            state = json.loads((run_dir / READY).read_text())
            nodes = [BrokerNode(_ContainerById(n["container_id"]),
                                NodeConfig(n["node_id"], n["broker_port"], n["controller_port"],
                                           n["rack"]))
                     for n in state["nodes"]]
            log.info("using the run's shared broker %s (started by the xdist controller in "
                     "%.1f s)", state["bootstrap"], state["seconds"])
            return KafkaCluster(nodes, state["image"], state["cluster_id"])
        time.sleep(0.2)
    raise TimeoutError(f"the run's shared broker was not ready after {timeout:.0f} s")
