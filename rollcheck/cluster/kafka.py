"""Kafka's own processes on a local :class:`~rollcheck.cluster.cluster.Cluster`: KRaft controllers and brokers
(``kafka.Kafka`` on a generated ``server.properties``, storage formatted by Kafka's storage tool at a given
``metadata.version``), ZooKeeper (``ZooKeeperServerMain`` of the zookeeper jar the release depends on),
ZooKeeper-mode brokers (``kafka.Kafka`` with ``zookeeper.connect``, at an ``inter.broker.protocol.version``), and
the tools run against them (Kafka's ``FeatureCommand``, ZooKeeper's own shell for a znode's data). Every node
listens on 127.0.0.1 only, on ports picked free; its heap is small (384m by default: five nodes and more fit in a
few GiB).

Nothing here knows a protocol: the runbooks say which nodes, releases and versions to use.
"""

from __future__ import annotations

import base64
import json
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.cluster.cluster import LOOPBACK, Cluster, free_ports
from rollcheck.cluster.dist import Distribution
from rollcheck.cluster.node import Node, NodeFailed

KAFKA_MAIN = "kafka.Kafka"
STORAGE_TOOL = "kafka.tools.StorageTool"
ZOOKEEPER_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
READY = r"Kafka Server started"  # KafkaRaftServer's last start-up line (KafkaBroker.STARTED_MESSAGE), 2.8 to 4.x
ZK_READY = r"\[KafkaServer id=\d+\] started"  # KafkaServer.startup's last line (info("started")), 2.x and 3.x
ZOOKEEPER_SHELL = "org.apache.zookeeper.ZooKeeperMain"
DEFAULT_HEAP = "384m"
_TOOL_TIMEOUT = 120.0
# One broker is a cluster: the internal topics must not wait for three (KRaft and ZooKeeper-mode brokers alike).
ONE_BROKER_IS_A_CLUSTER = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
}


def new_cluster_id() -> str:
    """A cluster id as ``kafka-storage random-uuid`` prints one: a base64url UUID without padding, never starting
    with "-" (Kafka's ``Uuid.randomUuid`` draws again then: the tools would read it as an option)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


@dataclass
class KafkaNode:
    """A KRaft node: its id, roles, the ports of its listeners and its properties file."""

    node: Node
    node_id: int
    roles: tuple[str, ...]
    broker_port: int | None
    controller_port: int | None
    properties: Path


@dataclass
class KRaftCluster:
    cluster_id: str
    dist: Distribution
    nodes: list[KafkaNode] = field(default_factory=list)

    @property
    def bootstrap(self) -> str:
        ports = [n.broker_port for n in self.nodes if n.broker_port is not None]
        if not ports:
            raise NodeFailed("the cluster has no broker: nothing to bootstrap from")
        return ",".join(f"{LOOPBACK}:{p}" for p in ports)

    @property
    def voters(self) -> str:
        return ",".join(f"{n.node_id}@{LOOPBACK}:{n.controller_port}" for n in self.nodes
                        if n.controller_port is not None)


def _properties(node_id: int, roles: Sequence[str], broker_port: int | None, controller_port: int | None,
                voters: str, data: Path, extra: Mapping[str, str]) -> str:
    listeners = []
    if broker_port is not None:
        listeners.append(f"PLAINTEXT://{LOOPBACK}:{broker_port}")
    if controller_port is not None:
        listeners.append(f"CONTROLLER://{LOOPBACK}:{controller_port}")
    props = {
        "process.roles": ",".join(roles),
        "node.id": str(node_id),
        "controller.quorum.voters": voters,
        "listeners": ",".join(listeners),
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data),
        **ONE_BROKER_IS_A_CLUSTER,
    }
    if broker_port is not None:
        props["advertised.listeners"] = f"PLAINTEXT://{LOOPBACK}:{broker_port}"
        props["inter.broker.listener.name"] = "PLAINTEXT"
    props.update(extra)
    return "".join(f"{k}={v}\n" for k, v in props.items())


def _fresh_node_dir(c: Cluster, name: str) -> Path:
    """The folder of a new node ``name`` under the run's directory, refused if an earlier cluster left data there."""
    folder = c.node_dir(name)
    if (folder / "data").exists():
        raise NodeFailed(f"{folder} holds an earlier cluster's data: give the run a new directory")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def format_storage(dist: Distribution, properties: Path, cluster_id: str, release_version: str | None,
                   log: Path) -> None:
    """Kafka's storage tool: ``format -t <cluster id> -c <properties> [--release-version V]``; a refusal is one
    line with the tool's last words."""
    args = ["format", "-t", cluster_id, "-c", str(properties)]
    if release_version is not None:
        args += ["--release-version", release_version]
    run_tool(dist, STORAGE_TOOL, args, log=log, what=f"formatting the storage of {properties.parent.name}")


def run_tool(dist: Distribution, main: str, args: Sequence[str], *, log: Path, what: str,
             timeout: float = _TOOL_TIMEOUT) -> str:
    """Run one of Kafka's tools to its end: its output (stdout and stderr, also appended to ``log``). A tool that
    fails or hangs past ``timeout`` is a :class:`NodeFailed` naming ``what`` and the log."""
    argv = dist.java(main, args, heap="192m", tool=True)
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                             check=False)
    except subprocess.TimeoutExpired:
        raise NodeFailed(f"{what}: {main} did not end within {timeout:g} s") from None
    output = run.stdout + run.stderr
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"# rollcheck: {main} {' '.join(args)}\n{output}\n")
    if run.returncode != 0:
        lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not ln.startswith("\t")]
        said = [ln for ln in lines if "Exception" in ln or "Error" in ln or "error:" in ln] or lines[-2:]
        failed = NodeFailed(f"{what}: {main} exited with code {run.returncode}: {said[-1][:400] if said else ''} "
                            f"(log {log})")
        failed.output = output  # the tool's whole output, for a caller that reads more than its last error
        raise failed
    return run.stdout


def start_kraft(c: Cluster, dist: Distribution, *, controllers: int = 1, brokers: int = 0, combined: bool = True,
                metadata_version: str | None = None, heap: str = DEFAULT_HEAP,
                extra: Mapping[str, str] | None = None, timeout: float = 90.0, cluster_id: str | None = None,
                first_id: int = 1) -> KRaftCluster:
    """A KRaft cluster of ``controllers`` voters (with ``combined``, each also a broker) and ``brokers`` more
    brokers, node ids from ``first_id``, formatted at ``metadata_version`` (a release version such as "3.8", or a
    level's name; None: the release's default) with ``cluster_id`` (None: a new one) and started, controllers
    first. A controller quorum for a ZooKeeper cluster's migration is ``brokers=0`` with the ZooKeeper cluster's id
    and the migration settings in ``extra``."""
    if controllers < 1:
        raise NodeFailed("a KRaft cluster needs at least one controller")
    kc = KRaftCluster(cluster_id or new_cluster_id(), dist)
    specs: list[tuple[int, tuple[str, ...]]] = [
        (first_id + i, ("broker", "controller") if combined else ("controller",)) for i in range(controllers)]
    specs += [(first_id + controllers + i, ("broker",)) for i in range(brokers)]
    ports = iter(free_ports(sum(len(r) for _, r in specs)))
    planned = [(nid, roles, next(ports) if "broker" in roles else None, next(ports) if "controller" in roles
                else None) for nid, roles in specs]
    voters = ",".join(f"{nid}@{LOOPBACK}:{cp}" for nid, _, _, cp in planned if cp is not None)
    for nid, roles, bp, cp in planned:
        kind = "combined" if len(roles) == 2 else roles[0]
        name = f"{kind}-{nid}"
        folder = _fresh_node_dir(c, name)
        props = folder / "server.properties"
        props.write_text(_properties(nid, roles, bp, cp, voters, folder / "data", extra or {}), encoding="utf-8")
        format_storage(dist, props, kc.cluster_id, metadata_version, folder / "node.log")
        node = Node(name, dist.java(KAFKA_MAIN, [str(props)], heap=heap), folder,
                    tuple(p for p in (bp, cp) if p is not None), READY, role=kind)
        c.add(node)
        kc.nodes.append(KafkaNode(node, nid, roles, bp, cp, props))
    # Controllers first: a broker waits for the quorum; a quorum of several voters needs a majority up, so the
    # voters are started together and then waited for.
    c.start_together([kn.node for kn in kc.nodes if "controller" in kn.roles], timeout=timeout)
    for kn in kc.nodes:
        if "controller" not in kn.roles:
            c.start(kn.node, timeout=timeout)
    return kc


def restart_kafka(c: Cluster, node: Node, dist: Distribution, properties: Path, *,
                  heap: str = DEFAULT_HEAP) -> tuple[float | None, str]:
    """Stop ``node`` if it runs and start it as ``kafka.Kafka`` of ``dist`` on ``properties`` (its data kept): the
    seconds it took to come up, or None and the one-line reason when its process exited on start (a binary that
    refuses what it finds, as KIP-584 and KIP-778 have it). A node that is still running but not up in time is a
    :class:`NodeFailed`."""
    if node.alive:
        c.stop(node.name)
    node.argv = dist.java(KAFKA_MAIN, [str(properties)], heap=heap)
    try:
        return c.start(node), ""
    except NodeFailed as e:
        if node.alive:
            raise
        return None, str(e)


DUMP_LOG = "kafka.tools.DumpLogSegments"  # core's log dump tool (kafka-dump-log), 2.8 to 3.9


def metadata_records(dist: Distribution, node: KafkaNode, *, log: Path) -> list[dict[str, Any]]:
    """The records of a KRaft node's metadata log (``__cluster_metadata-0`` under its ``log.dirs``), as Kafka's log
    dump tool decodes them (``--cluster-metadata-decoder``): each record's payload, ``{"type": ..., "version": ...,
    "data": {...}}``, in log order. The segments are read as they are on disk, the active one included."""
    folder = node.node.directory / "data" / "__cluster_metadata-0"
    segments = sorted(folder.glob("*.log"))
    if not segments:
        return []
    out = run_tool(dist, DUMP_LOG, ["--cluster-metadata-decoder", "--files", ",".join(str(p) for p in segments)],
                   log=log, what=f"dumping the metadata log of {node.node.name}")
    records = []
    for line in out.splitlines():
        at = line.find(" payload: {")
        if at >= 0:
            try:
                records.append(json.loads(line[at + len(" payload: "):]))
            except ValueError:
                continue  # a record the decoder printed otherwise (not JSON)
    return records


def feature_command(dist: Distribution, bootstrap: str, args: Sequence[str], *, log: Path) -> str:
    """Kafka's ``kafka-features`` tool (``FeatureCommand``: ``org.apache.kafka.tools`` from 3.5, ``kafka.admin``
    before) against ``bootstrap``: its output."""
    major, minor = (int(x) for x in dist.release.split(".")[:2])
    main = "org.apache.kafka.tools.FeatureCommand" if (major, minor) >= (3, 5) else "kafka.admin.FeatureCommand"
    return run_tool(dist, main, ["--bootstrap-server", bootstrap, *args], log=log,
                    what=f"kafka-features {' '.join(args)}")


def start_zookeeper(c: Cluster, dist: Distribution, *, heap: str = "192m", timeout: float = 60.0) -> tuple[Node, int]:
    """ZooKeeper (``ZooKeeperServerMain <port> <data dir>``) from the zookeeper jar the release depends on: the
    node and its client port."""
    (port,) = free_ports(1)
    folder = c.node_dir("zookeeper")
    node = Node("zookeeper", dist.java(ZOOKEEPER_MAIN, [str(port), str(folder / "data")], heap=heap), folder,
                (port,), None, role="zookeeper")
    c.start(node, timeout=timeout)
    return node, port


def _zk_properties(broker_id: int, port: int, zookeeper: str, data: Path, ibp: str | None,
                   extra: Mapping[str, str]) -> str:
    props = {
        "broker.id": str(broker_id),
        "zookeeper.connect": zookeeper,
        "listeners": f"PLAINTEXT://{LOOPBACK}:{port}",
        "advertised.listeners": f"PLAINTEXT://{LOOPBACK}:{port}",
        "log.dirs": str(data),
        **ONE_BROKER_IS_A_CLUSTER,
    }
    if ibp is not None:
        props["inter.broker.protocol.version"] = ibp
    props.update(extra)
    return "".join(f"{k}={v}\n" for k, v in props.items())


@dataclass
class ZkBroker:
    """A ZooKeeper-mode broker: its id, its listener's port and its properties file."""

    node: Node
    broker_id: int
    port: int
    properties: Path


def start_zk_brokers(c: Cluster, dist: Distribution, zookeeper_port: int, *, brokers: int = 1,
                     ibp: str | None = None, heap: str = DEFAULT_HEAP, extra: Mapping[str, str] | None = None,
                     timeout: float = 90.0) -> list[ZkBroker]:
    """``brokers`` ZooKeeper-mode brokers (ids 1..n) on the ZooKeeper at ``zookeeper_port``, at
    ``inter.broker.protocol.version`` ``ibp`` (None: the release's default), started one after the other (the first
    to register becomes the controller)."""
    out: list[ZkBroker] = []
    zookeeper = f"{LOOPBACK}:{zookeeper_port}"
    for broker_id, port in enumerate(free_ports(brokers), start=1):
        name = f"broker-{broker_id}"
        folder = _fresh_node_dir(c, name)
        props = folder / "server.properties"
        props.write_text(_zk_properties(broker_id, port, zookeeper, folder / "data", ibp, extra or {}),
                         encoding="utf-8")
        node = Node(name, dist.java(KAFKA_MAIN, [str(props)], heap=heap), folder, (port,), ZK_READY, role="broker")
        c.add(node)
        c.start(node, timeout=timeout)
        out.append(ZkBroker(node, broker_id, port, props))
    return out


_ZK_ATTEMPTS = 3


def _absent(text: str) -> bool:
    # ZooKeeper's shell: "NoNode" (its KeeperException, 3.4 - 3.6) or "Node does not exist: PATH" (3.8, Kafka 3.9).
    return "NoNode" in text or "Node does not exist" in text


def znode_data(dist: Distribution, zookeeper_port: int, path: str, *, log: Path) -> bytes | None:
    """The data of the znode ``path`` as ZooKeeper's own shell (``ZooKeeperMain -server ... get PATH``) prints it,
    None when the node does not exist. The shell prints the data on its own line before its session's end; the
    nodes read here hold one line of JSON (Kafka's ``/feature``, ``/controller``, ``/controller_epoch``)."""
    out = _zk_get(dist, zookeeper_port, path, ["get", path], log)
    if out is None:
        return None
    lines = _data_lines(out)
    if not lines:
        raise NodeFailed(f"reading {path} from ZooKeeper: the shell printed no data (log {log})")
    return lines[-1].encode("utf-8")


def znode_versioned(dist: Distribution, zookeeper_port: int, path: str, *, log: Path) -> tuple[bytes, int] | None:
    """The data of the znode ``path`` and its version (``Stat.dataVersion``, what Kafka's ``/feature`` calls its
    epoch), from the shell's ``get -s PATH`` (ZooKeeper 3.5 and later): the data line, then the stat's
    ``name = value`` lines. None when the node does not exist."""
    out = _zk_get(dist, zookeeper_port, path, ["get", "-s", path], log)
    if out is None:
        return None
    lines = _data_lines(out)
    stat = [i for i, ln in enumerate(lines) if ln.startswith("cZxid")]
    version = next((ln.split("=", 1)[1].strip() for ln in lines if ln.startswith("dataVersion")), None)
    if not stat or stat[0] == 0 or version is None or not version.isdigit():
        raise NodeFailed(f"reading {path} from ZooKeeper: the shell printed no data and stat (log {log})")
    return lines[stat[0] - 1].encode("utf-8"), int(version)


def _data_lines(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.strip() and not ln.startswith(("WATCHER", "WatchedEvent",
                                                                              "Connecting", "log4j", "SLF4J"))]


def _zk_get(dist: Distribution, zookeeper_port: int, path: str, command: list[str], log: Path) -> str | None:
    """The shell's output for ``command`` on ``path``; None when the node does not exist."""
    args = ["-server", f"{LOOPBACK}:{zookeeper_port}", *command]
    for attempt in range(_ZK_ATTEMPTS):
        try:
            out = run_tool(dist, ZOOKEEPER_SHELL, args, log=log, what=f"reading {path} from ZooKeeper")
            break
        except NodeFailed as e:
            said = str(e) + str(getattr(e, "output", ""))
            if _absent(said):
                return None
            # The shell's session not established in time (a loaded machine): transient, asked again.
            if "ConnectionLoss" not in said or attempt == _ZK_ATTEMPTS - 1:
                raise
    return None if _absent(out) else out
