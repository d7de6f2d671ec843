"""Local clusters from the released jars (rollcheck/cluster): nodes that fail say which and where their log is,
every process is stopped at the end, on an exception and after a SIGKILL of the run itself (reap), faults reach
the node's whole process group, a real KRaft node of Kafka 3.9.2 upgrades its metadata.version through Kafka's
own tool, and a real ZooKeeper-mode broker of 2.8.2 writes the /feature node the reference predicts."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rollcheck.cluster.cluster import Cluster, free_ports, reap
from rollcheck.cluster.dist import min_heap
from rollcheck.cluster.kafka import feature_command, new_cluster_id, start_kraft
from rollcheck.cluster.node import Node, NodeFailed
from rollcheck.oracle.tools import java_problem

needs_java = pytest.mark.skipif(java_problem() is not None, reason=str(java_problem()))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) is gone for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _reaches_state(pid: int | None, state: str, within: float = 5.0) -> bool:
    """Whether /proc shows ``pid`` in ``state`` within a bounded wait (a signal is delivered asynchronously)."""
    import time

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().split()[2] == state:
            return True
        time.sleep(0.02)
    return False


def _python_node(tmp_path: Path, name: str, code: str, **kw: object) -> Node:
    return Node(name, [sys.executable, "-c", code, str(tmp_path)], tmp_path / name, **kw)  # type: ignore[arg-type]


def test_helpers() -> None:
    ports = free_ports(5)
    assert len(set(ports)) == 5 and all(1024 < p < 65536 for p in ports)
    assert min_heap("384m") == "96m" and min_heap("64m") == "32m" and min_heap("1g") == "256m"
    with pytest.raises(ValueError, match="a heap size"):
        min_heap("lots")
    assert all(not new_cluster_id().startswith("-") for _ in range(500))


def test_a_node_that_exits_is_named_with_its_log(tmp_path: Path) -> None:
    with Cluster(tmp_path) as c:
        node = _python_node(tmp_path, "broker-1", "print('Address already in use'); raise SystemExit(3)",
                            ready="never printed")
        with pytest.raises(NodeFailed) as caught:
            c.start(node, timeout=30)
    text = str(caught.value)
    assert "node broker-1 exited with code 3" in text and str(node.log) in text
    assert "Address already in use" in text and "\n" not in text


def test_a_node_not_up_in_time_says_what_it_waited_for(tmp_path: Path) -> None:
    with Cluster(tmp_path) as c:
        node = _python_node(tmp_path, "slow", "import time; time.sleep(60)", ready=r"Kafka Server started")
        with pytest.raises(NodeFailed, match=r"slow was not up within 0\.5 s \(waited for the log line "):
            c.start(node, timeout=0.5)
        pid = node.pid
    assert pid is not None and not _alive(pid), "the cluster left a node running"


def test_a_taken_port_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with Cluster(tmp_path) as c:
            node = _python_node(tmp_path, "controller-1", "pass", ports=(port,))
            with pytest.raises(NodeFailed, match=rf"controller-1 cannot start: port {port} on 127\.0\.0\.1 is taken"):
                c.start(node)
            assert node.process is None


def test_every_node_is_stopped_on_an_exception_and_faults_reach_the_group(tmp_path: Path) -> None:
    code = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); " \
           "print('up', flush=True); time.sleep(60)"
    with pytest.raises(KeyboardInterrupt), Cluster(tmp_path) as c:
        a = _python_node(tmp_path, "a", code, ready="up")
        b = _python_node(tmp_path, "b", code, ready="up")
        c.start(a)
        c.start(b)
        b.signal(signal.SIGSTOP)
        assert _reaches_state(b.pid, "T"), "SIGSTOP did not stop the node"
        b.signal(signal.SIGCONT)
        a.kill()
        assert not a.alive and c.running() == ["b"]
        b.signal(signal.SIGSTOP)  # a paused node is resumed to be stopped
        raise KeyboardInterrupt
    assert not a.alive and not b.alive and b.pid is not None and not _alive(b.pid)
    out = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True, check=False).stdout
    assert out.strip() == "", f"processes of the run left behind: {out}"


def test_reap_stops_what_a_killed_run_left(tmp_path: Path) -> None:
    left = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(tmp_path)],
                            start_new_session=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        (tmp_path / "pids.json").write_text(f'{{"broker-1": {left.pid}, "stranger": {other.pid}}}')
        assert reap(tmp_path) == [left.pid]
        left.wait(10)
        assert other.poll() is None, "a process that does not name the run directory was killed"
        assert not (tmp_path / "pids.json").exists()
    finally:
        other.kill()
        left.kill()


@needs_java
def test_a_kraft_node_of_3_9_2_upgrades_its_metadata_version(tmp_path: Path) -> None:
    from rollcheck.cluster.dist import ensure_distribution

    dist = ensure_distribution("3.9.2")
    with Cluster(tmp_path / "run") as c:
        kc = start_kraft(c, dist, controllers=1, metadata_version="3.8")
        (node,) = kc.nodes
        assert node.roles == ("broker", "controller") and (tmp_path / "run" / "combined-1" / "node.log").exists()
        log = c.run_dir / "tools.log"
        before = feature_command(dist, kc.bootstrap, ["describe"], log=log)
        assert "FinalizedVersionLevel: 3.8-IV0" in before, before
        said = feature_command(dist, kc.bootstrap, ["upgrade", "--metadata", "3.9"], log=log)
        assert "metadata.version was upgraded to 21" in said, said
        after = feature_command(dist, kc.bootstrap, ["describe"], log=log)
        assert "FinalizedVersionLevel: 3.9-IV0" in after, after
        with pytest.raises(NodeFailed, match=r"kafka-features upgrade --metadata 9\.9: .*exited with code 1"):
            feature_command(dist, kc.bootstrap, ["upgrade", "--metadata", "9.9"], log=log)
        pid = node.node.pid
    assert pid is not None and not _alive(pid)


@needs_java
def test_a_zookeeper_broker_of_2_8_2_writes_the_feature_node_the_reference_predicts(tmp_path: Path) -> None:
    """KIP-584's "Feature ZK node status" on a real 2.8.2 broker (ZooKeeper mode) through an IBP roll: at IBP 2.6
    its controller writes /feature disabled, restarted at IBP 2.8 it enables it, byte for byte as the reference's
    setup_feature_versioning and FeatureZNode.encode say (a 2.8 broker supports no feature: nothing finalized). The
    restart waits for the new start's ready line, not the first one's."""
    import json
    import time

    from reference_impl.features.api import FeatureZNodeStatus, setup_feature_versioning, supported_features
    from rollcheck.cluster.dist import ensure_distribution
    from rollcheck.cluster.kafka import start_zk_brokers, start_zookeeper, znode_data

    dist = ensure_distribution("2.8.2")
    log = tmp_path / "run" / "tools.log"

    def feature_node(port: int, status: FeatureZNodeStatus) -> bytes | None:
        deadline = time.monotonic() + 20  # the controller writes /feature during its failover, after start-up
        data = None
        while time.monotonic() < deadline:
            data = znode_data(dist, port, "/feature", log=log)
            if data is not None and json.loads(data)["status"] == status.value:
                break
            time.sleep(0.2)
        return data

    def observe(port: int, data: bytes | None, **extra: object) -> dict[str, object]:
        # what the model's view of the run is read from the cluster: /feature decoded, /controller's broker
        controller = znode_data(dist, port, "/controller", log=log)
        node: dict[str, object] = {"status": "ABSENT"} if data is None else {
            "status": FeatureZNodeStatus(json.loads(data)["status"]).name, "features": json.loads(data)["features"]}
        return {"node": node, "controller": -1 if controller is None else json.loads(controller)["brokerid"] - 1,
                **extra}

    with Cluster(tmp_path / "run") as c:
        zk, port = start_zookeeper(c, dist)
        observed = [observe(port, znode_data(dist, port, "/feature", log=log))]
        (broker,) = start_zk_brokers(c, dist, port, ibp="2.6")
        disabled = setup_feature_versioning(None, False, supported_features({}))
        assert disabled is not None
        data = feature_node(port, FeatureZNodeStatus.DISABLED)
        assert data == disabled.encode()
        observed.append(observe(port, data))
        c.stop(broker.node.name)
        broker.properties.write_text(broker.properties.read_text().replace(
            "inter.broker.protocol.version=2.6", "inter.broker.protocol.version=2.8"))
        c.start(broker.node)
        enabled = setup_feature_versioning(disabled, True, supported_features({}))
        assert enabled is not None and enabled.status is FeatureZNodeStatus.ENABLED
        data = feature_node(port, FeatureZNodeStatus.ENABLED)
        assert data == enabled.encode()
        observed.append(observe(port, data, ibp_enabled=True))
        pids = [zk.pid, broker.node.pid]
    assert all(p is not None and not _alive(p) for p in pids)
    # The observed run validated against the model (the kafka profile, one 2.8 broker with no feature, IBP rolled
    # once): every observation met by a run of the reference, no property forced to fail.
    from reference_impl.features.config import FeaturesConfig, Release
    from reference_impl.features.protocol import PROTOCOL
    from rollcheck.explore.validate import validate

    model = PROTOCOL.build(FeaturesConfig(profile="kafka", brokers=1, releases=(Release("2.8", ()),),
                                          initial_release="2.8", initial_ibp=(False,), max_ibp_changes=1,
                                          client=False, levels=(), dry_run=False, deprecation=False))
    result = validate(model, observed, internal=4)
    assert result.valid, (observed, result.failed_step, result.closest, result.violations)
    assert [str(a) for a, _ in result.run if a is not None][-1] == "ElectController(broker=0)"
