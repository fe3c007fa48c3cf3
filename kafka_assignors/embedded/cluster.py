"""Real Apache Kafka brokers in Docker, through Testcontainers: one broker or a KRaft cluster.

Networking: every container uses the host's network namespace (``network_mode=host``)
and its listeners bind to 127.0.0.1 on ports picked at run time, so clients reach
the brokers on 127.0.0.1 only, nothing listens on other interfaces, ports survive a
container stop/start (the advertised address stays right), and parallel runs do not
collide (no fixed ports or container names).

Each node is a combined broker+controller (``process.roles=broker,controller``) with
its own ``broker.rack``. The container environment follows the official
``apache/kafka`` image's convention, so ``KAFKA_ASSIGNORS_IMAGE=apache/kafka:4.1.0``
works the same as our own image.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import socket
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._lifetime import Closing, OpenAtExit
from ._ports import LOOPBACK, free_ports
from .admin import AdminTimeoutError, BrokerInfo, wait_for_brokers
from .image import ensure_image

log = logging.getLogger(__name__)

LABEL_PREFIX = "io.kafka-assignors"
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 30.0
HEAP_OPTS = "-Xmx512m -Xms128m"
#: The JVM of a short-lived broker on a small machine: the client (C1) compiler only and the
#: serial collector. Measured on 2 cores: about half the CPU of Kafka's default (G1, C2)
#: in a broker's first minutes (start-up 8 vs 12 CPU-s; groups, topics and a producer 21 vs
#: 38 CPU-s), the same once C2 has warmed up (benchmarks/results/broker_jvm.md).
JVM_OPTS = ("-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError "
            "-Djava.awt.headless=true")


class BrokerStartError(RuntimeError):
    """A broker did not become ready; the message ends with its own log."""


@dataclass(frozen=True)
class NodeConfig:
    """Where one node listens and what it is called."""

    node_id: int
    broker_port: int
    controller_port: int
    rack: str | None

    @property
    def bootstrap(self) -> str:
        return f"{LOOPBACK}:{self.broker_port}"


def _testcontainers() -> Any:
    """Import Testcontainers lazily, with Ryuk disabled (its image cannot be pulled here)."""
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
    from testcontainers.core import container
    from testcontainers.core.config import testcontainers_config

    if os.environ["TESTCONTAINERS_RYUK_DISABLED"].lower() in ("1", "true", "yes"):
        testcontainers_config.ryuk_disabled = True
    return container


def node_env(
    node: NodeConfig,
    voters: Sequence[NodeConfig],
    cluster_id: str,
    extra_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Container environment for one combined KRaft node (official-image convention)."""
    size = len(voters)
    replication = str(min(3, size))
    min_isr = str(min(2, size))
    env = {
        "CLUSTER_ID": cluster_id,
        "KAFKA_NODE_ID": str(node.node_id),
        "KAFKA_PROCESS_ROLES": "broker,controller",
        "KAFKA_LISTENERS": (
            f"PLAINTEXT://{LOOPBACK}:{node.broker_port},CONTROLLER://{LOOPBACK}:{node.controller_port}"
        ),
        "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://{LOOPBACK}:{node.broker_port}",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        "KAFKA_INTER_BROKER_LISTENER_NAME": "PLAINTEXT",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": ",".join(
            f"{v.node_id}@{LOOPBACK}:{v.controller_port}" for v in voters
        ),
        "KAFKA_LOG_DIRS": "/var/lib/kafka/data",
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": replication,
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": replication,
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": min_isr,
        "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR": replication,
        "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR": min_isr,
        "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
        # Tests kill members on purpose: allow short session timeouts (default min 6 s).
        "KAFKA_GROUP_MIN_SESSION_TIMEOUT_MS": "1000",
        # ... in KIP-848 groups too, through the group config consumer.session.timeout.ms
        # (broker default and minimum: 45 s)
        "KAFKA_GROUP_CONSUMER_MIN_SESSION_TIMEOUT_MS": "3000",
        # ... with heartbeats often enough for such sessions (default min 5 s: 1 s of slack
        # in a 6 s session, which a loaded machine misses)
        "KAFKA_GROUP_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS": "1000",
        "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "false",
        "KAFKA_HEAP_OPTS": HEAP_OPTS,
        "KAFKA_JVM_PERFORMANCE_OPTS": JVM_OPTS,
    }
    if node.rack is not None:
        env["KAFKA_BROKER_RACK"] = node.rack
    env.update(extra_env or {})
    return env


class BrokerNode:
    """One broker container: stop/start (restart), pause/unpause, kill, logs."""

    def __init__(self, container: Any, config: NodeConfig) -> None:
        self._container = container
        self.config = config

    @property
    def node_id(self) -> int:
        return self.config.node_id

    @property
    def rack(self) -> str | None:
        return self.config.rack

    @property
    def bootstrap(self) -> str:
        return self.config.bootstrap

    @property
    def container_id(self) -> str:
        return str(self._container.get_wrapped_container().id)

    def cpu_seconds(self) -> float:
        """CPU time the broker's container has used so far (Docker's stats)."""
        stats = self._container.get_wrapped_container().stats(stream=False)
        return float(stats["cpu_stats"]["cpu_usage"]["total_usage"]) / 1e9

    def status(self) -> str:
        """Docker's state of the container: running, paused, exited, ..."""
        wrapped = self._container.get_wrapped_container()
        wrapped.reload()
        return str(wrapped.status)

    def logs(self) -> str:
        """The container's own output (entrypoint + broker log), across restarts."""
        try:
            raw = self._container.get_wrapped_container().logs(stdout=True, stderr=True)
        except Exception as exc:  # the container may already be gone
            return f"<logs of node {self.node_id} unavailable: {exc}>"
        return bytes(raw).decode("utf-8", errors="replace")

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Clean shutdown (SIGTERM, then SIGKILL after ``timeout``)."""
        self._container.get_wrapped_container().stop(timeout=int(timeout))

    def start(self) -> None:
        """Start the stopped container again (same ports, same data)."""
        self._container.get_wrapped_container().start()

    def kill(self) -> None:
        """SIGKILL the broker (no controlled shutdown)."""
        self._container.get_wrapped_container().kill()

    def pause(self) -> None:
        """Freeze every process of the broker (docker pause)."""
        self._container.get_wrapped_container().pause()

    def unpause(self) -> None:
        self._container.get_wrapped_container().unpause()

    def exec(self, command: Sequence[str]) -> tuple[int, str]:
        """Run a command inside the container; (exit code, combined output)."""
        result = self._container.get_wrapped_container().exec_run(list(command), demux=False)
        output = bytes(result.output or b"").decode("utf-8", errors="replace")
        return int(result.exit_code), output

    def remove(self) -> None:
        with contextlib.suppress(Exception):
            self._container.stop(force=True, delete_volume=True)


class KafkaCluster(Closing):
    """A running single broker or KRaft cluster; use as a context manager or call close()."""

    def __init__(self, nodes: list[BrokerNode], image: str, cluster_id: str) -> None:
        self.nodes = nodes
        self.image = image
        self.cluster_id = cluster_id
        self._closed = False

    # -- addressing ----------------------------------------------------------------------
    @property
    def bootstrap(self) -> str:
        """Bootstrap string for clients: every broker, on 127.0.0.1."""
        return ",".join(n.bootstrap for n in self.nodes)

    @property
    def node_ids(self) -> list[int]:
        return [n.node_id for n in self.nodes]

    @property
    def racks(self) -> dict[int, str | None]:
        """Rack of each broker, by node id."""
        return {n.node_id: n.rack for n in self.nodes}

    def node(self, node_id: int) -> BrokerNode:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise KeyError(f"no broker with node id {node_id} (have {self.node_ids})")

    def rack_of(self, node_id: int) -> str | None:
        return self.node(node_id).rack

    def logs(self, node_id: int | None = None) -> str:
        """One broker's container log, or all of them with a header each."""
        if node_id is not None:
            return self.node(node_id).logs()
        return "\n".join(f"===== broker {n.node_id} =====\n{n.logs()}" for n in self.nodes)

    # -- readiness -------------------------------------------------------------------------
    def _check_running(self, node_ids: set[int]) -> None:
        for node_id in node_ids:
            status = self.node(node_id).status()
            if status not in ("running", "created", "restarting"):
                raise BrokerStartError(
                    f"broker {node_id} container is '{status}'" + _log_tail(self.node(node_id))
                )

    def wait_ready(
        self, timeout: float = START_TIMEOUT_S, node_ids: set[int] | None = None
    ) -> None:
        """Wait until the metadata lists the given brokers (default: all) and answers."""
        want = set(self.node_ids if node_ids is None else node_ids)
        live = [n for n in self.nodes if n.node_id in want]
        try:
            wait_for_brokers(
                ",".join(n.bootstrap for n in live),
                want,
                timeout,
                check=lambda: self._check_running(want),
            )
        except AdminTimeoutError as exc:
            raise BrokerStartError(
                f"{exc}" + "".join(_log_tail(self.node(i)) for i in sorted(want))
            ) from exc

    def live_brokers(self, timeout: float = 30.0) -> list[BrokerInfo]:
        """Brokers in the current metadata (asks the running nodes)."""
        running = [n for n in self.nodes if n.status() == "running"]
        return wait_for_brokers(",".join(n.bootstrap for n in running), None, timeout)

    # -- broker operations -------------------------------------------------------------------
    def stop_broker(
        self, node_id: int, timeout: float = STOP_TIMEOUT_S, wait: float = 60.0
    ) -> None:
        """Cleanly stop one broker and wait (bounded) until the metadata drops it."""
        self.node(node_id).stop(timeout)
        if wait > 0:
            others = [n for n in self.nodes if n.node_id != node_id and n.status() == "running"]
            if others:
                wait_for_brokers(
                    ",".join(n.bootstrap for n in others), None, wait, absent={node_id}
                )

    def start_broker(self, node_id: int, timeout: float = START_TIMEOUT_S) -> None:
        """Start a stopped broker again and wait until it is back in the metadata."""
        self.node(node_id).start()
        self.wait_ready(timeout, node_ids={node_id})

    def restart_broker(self, node_id: int, timeout: float = START_TIMEOUT_S) -> None:
        self.stop_broker(node_id)
        self.start_broker(node_id, timeout)

    def kill_broker(self, node_id: int) -> None:
        self.node(node_id).kill()

    def pause_broker(self, node_id: int) -> None:
        self.node(node_id).pause()

    def unpause_broker(self, node_id: int) -> None:
        self.node(node_id).unpause()

    # -- lifecycle -------------------------------------------------------------------------------
    def detach(self) -> list[str]:
        """Leave the containers running after this process exits; returns their ids."""
        _OPEN.forget(self)
        self._closed = True
        return [n.container_id for n in self.nodes]

    def close(self) -> None:
        """Remove every container (bounded; safe to call twice)."""
        if self._closed:
            return
        self._closed = True
        for n in self.nodes:
            with contextlib.suppress(Exception):
                if n.status() == "paused":
                    n.unpause()
            n.remove()
        _OPEN.forget(self)


def _log_tail(node: BrokerNode, lines: int = 60) -> str:
    text = node.logs().rstrip().splitlines()
    return f"\n----- last {min(lines, len(text))} lines of broker {node.node_id}'s log -----\n" + (
        "\n".join(text[-lines:])
    )


# ---- bookkeeping: containers never outlive the process ---------------------------------------
_OPEN: OpenAtExit[KafkaCluster] = OpenAtExit(lambda cluster: cluster.close())


def close_all() -> None:
    """Remove the containers of every cluster this process started and did not close."""
    _OPEN.close_all()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_orphans() -> int:
    """Remove broker containers left by earlier processes on this host that died uncleanly."""
    from docker.client import DockerClient

    client = DockerClient.from_env(timeout=30)
    removed = 0
    try:
        for c in client.containers.list(all=True, filters={"label": f"{LABEL_PREFIX}.owner-pid"}):
            labels = c.labels or {}
            if labels.get(f"{LABEL_PREFIX}.owner-host") != socket.gethostname():
                continue
            if labels.get(f"{LABEL_PREFIX}.keep") == "1":
                continue  # started to outlive its process (demo --keep)
            pid = int(labels.get(f"{LABEL_PREFIX}.owner-pid", "0") or 0)
            if pid > 0 and not _pid_alive(pid):
                log.warning(
                    "removing orphaned broker container %s (owner pid %d gone)", c.short_id, pid
                )
                with contextlib.suppress(Exception):
                    c.remove(force=True, v=True)
                    removed += 1
    finally:
        client.close()
    return removed


# ---- starting ----------------------------------------------------------------------------------
def new_cluster_id() -> str:
    """A random KRaft cluster id (22-character URL-safe base64 of a UUID).

    One that starts with '-' is drawn again: ``kafka-storage format --cluster-id -...``
    reads it as an option and the broker never starts (1 start in 64; Kafka's own
    ``Uuid.randomUuid`` redraws such ids too).
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def _start_containers(
    image: str,
    configs: list[NodeConfig],
    cluster_id: str,
    extra_env: Mapping[str, str] | None,
    keep: bool,
) -> list[BrokerNode]:
    tc = _testcontainers()
    nodes: list[BrokerNode] = []
    try:
        for cfg in configs:
            labels = {
                f"{LABEL_PREFIX}.role": "broker",
                f"{LABEL_PREFIX}.cluster-id": cluster_id,
                f"{LABEL_PREFIX}.node-id": str(cfg.node_id),
                f"{LABEL_PREFIX}.owner-pid": str(os.getpid()),
                f"{LABEL_PREFIX}.owner-host": socket.gethostname(),
                f"{LABEL_PREFIX}.keep": "1" if keep else "0",
            }
            container = tc.DockerContainer(
                image,
                env=node_env(cfg, configs, cluster_id, extra_env),
                network_mode="host",
                labels=labels,
            )
            nodes.append(BrokerNode(container, cfg))
            container.start()
    except Exception:
        for n in nodes:
            n.remove()
        raise
    return nodes


def start_cluster(
    size: int = 3,
    *,
    racks: Sequence[str | None] | None = None,
    image: str | None = None,
    version: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = START_TIMEOUT_S,
    attempts: int = 2,
    keep: bool = False,
) -> KafkaCluster:
    """Start ``size`` combined KRaft nodes (node ids 1..size, racks r1..rN) and wait until ready.

    ``image`` defaults to :func:`ensure_image` (ours, built if needed, or
    ``KAFKA_ASSIGNORS_IMAGE``); ``version`` (e.g. "3.9.2") picks our image of that Apache
    Kafka version instead. ``extra_env`` adds/overrides container variables
    (official-image convention, e.g. SASL listener settings). On failure each broker's
    log is printed to stderr and BrokerStartError is raised; a port collision with
    another process is retried with fresh ports. ``keep=True`` marks the containers as
    meant to outlive this process (see :meth:`KafkaCluster.detach`): orphan clean-up
    leaves them alone.
    """
    if size < 1:
        raise ValueError("size must be >= 1")
    rack_list = list(racks) if racks is not None else [f"r{i}" for i in range(1, size + 1)]
    if len(rack_list) != size:
        raise ValueError(f"{size} brokers but {len(rack_list)} racks")
    image = image or ensure_image(version)
    with contextlib.suppress(Exception):
        reap_orphans()
    last_error: BrokerStartError | None = None
    for attempt in range(1, attempts + 1):
        ports = free_ports(2 * size)
        configs = [
            NodeConfig(i + 1, ports[2 * i], ports[2 * i + 1], rack_list[i]) for i in range(size)
        ]
        cluster_id = new_cluster_id()
        started = time.monotonic()
        cluster = KafkaCluster(
            _start_containers(image, configs, cluster_id, extra_env, keep), image, cluster_id
        )
        _OPEN.remember(cluster)
        try:
            cluster.wait_ready(timeout)
        except BrokerStartError as exc:
            logs = cluster.logs()
            cluster.close()
            print(
                f"\n===== Kafka broker failed to start (attempt {attempt}/{attempts}, "
                f"image {image}) =====\n{logs}\n===== end of broker logs =====",
                file=sys.stderr,
                flush=True,
            )
            last_error = exc
            if "Address already in use" in logs and attempt < attempts:
                log.warning("port collision starting brokers; retrying with fresh ports")
                continue
            raise
        log.info(
            "Kafka %s ready in %.1f s: %s (racks %s)",
            "broker" if size == 1 else f"cluster of {size}",
            time.monotonic() - started,
            cluster.bootstrap,
            ",".join(str(r) for r in rack_list),
        )
        return cluster
    assert last_error is not None
    raise last_error


def start_single_broker(
    *,
    rack: str | None = "r1",
    image: str | None = None,
    version: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = START_TIMEOUT_S,
    keep: bool = False,
) -> KafkaCluster:
    """Start one combined broker+controller (a cluster of size 1)."""
    return start_cluster(
        1,
        racks=[rack],
        image=image,
        version=version,
        extra_env=extra_env,
        timeout=timeout,
        keep=keep,
    )
