"""Kafka's own Admin client in one long-lived JVM for a cluster run (kafka_oracle/cluster/admin-3.7): what a KRaft
quorum shows (its leader, each voter's and observer's log end offset, the finalized features) and the feature
commands an operator sends, through ``bootstrap.controllers`` (KIP-919, Kafka 3.7 and later). Protocol-free: the
bindings say what to ask and what it means."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

from rollcheck.oracle.binding import Adapter
from rollcheck.oracle.build import ensure_built, repo_root
from rollcheck.oracle.jvm import OracleJVM

ADMIN = Adapter("admin-3.7", "rollcheck.cluster.RollcheckAdmin",
                ("org.apache.kafka.clients.admin.Admin", "org.apache.kafka.clients.admin.QuorumInfo"))
FIRST_RELEASE = (3, 7)  # bootstrap.controllers
FEATURE_METADATA = "featureMetadata"  # describe's describeFeatures part


class ClusterAdmin:
    """The JVM (built against ``release``'s kafka-clients on first use, started before any node so that a build
    that fails stops nothing) and the quorum's controllers (``host:port,...``), set once they run."""

    def __init__(self, release: str, say: Callable[[str], None]) -> None:
        built = ensure_built(repo_root() / "kafka_oracle" / "cluster", ADMIN, release, progress=say)
        self.controllers = ""
        self.jvm = OracleJVM(built)
        self.jvm.start()

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        (answer,) = self.jvm.ask([{**request, "controllers": self.controllers}])
        return dict(answer)

    def describe(self) -> dict[str, Any]:
        return self.ask({"op": "describe", "timeoutMs": 3000})

    def unfenced(self, servers: str) -> set[int] | None:
        """The ids ``describeCluster`` lists through the brokers at ``servers`` (``host:port,...``): in KRaft, the
        registered brokers the controller has unfenced; None when no broker answers."""
        answer = self.ask({"op": "describeCluster", "servers": servers, "timeoutMs": 3000})
        if "exception" in answer:
            return None
        return {int(i) for i in answer["brokers"]}

    def update_feature(self, feature: str, level: int, upgrade_type: str, validate_only: bool) -> dict[str, Any] | None:
        """``Admin.updateFeatures`` of one feature: None when accepted, else {"exception", "message"}."""
        answer = self.ask({"op": "updateFeatures", "feature": feature, "level": level, "upgradeType": upgrade_type,
                           "validateOnly": validate_only})
        error = answer.get("error")
        return None if error is None else dict(error)

    def settle(self, voters: Collection[int], running: Collection[int], timeout: float,
               levels: bool = True) -> tuple[dict[str, Any] | None, str]:
        """A describe once a running voter leads and every running node (``running``, node ids) has reached the
        high watermark the leader reported first (and, with ``levels``, describeFeatures answered); else None and
        what was last seen, when not settled within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        mark: int | None = None
        seen = "no answer"
        while time.monotonic() < deadline:
            d = self.describe()
            q = d.get("quorum", {})
            leader = q.get("leaderId", -1) if "exception" not in q else -1
            if "exception" in q:
                seen = f"describeMetadataQuorum: {q.get('message')}"
            elif leader not in running or leader not in voters:
                seen = f"leader {leader}, not a running controller"
            else:
                mark = q["highWatermark"] if mark is None else mark
                ends: dict[int, int] = {}
                for r in (*q["voters"], *q["observers"]):
                    # A restarted observer can be listed twice (Kafka 3.9 keys replicas by id and directory id):
                    # its newest entry is the furthest.
                    ends[r["id"]] = max(ends.get(r["id"], -1), r["logEndOffset"])
                behind = {n: ends.get(n) for n in sorted(running) if ends.get(n, -1) < mark}
                answer = d.get(FEATURE_METADATA, {})
                if behind:
                    seen = f"leader {leader}, high watermark {mark}; behind it (node: log end offset): {behind}"
                elif levels and "exception" in answer:
                    seen = f"describeFeatures: {answer.get('message')}"
                else:
                    return d, ""
            time.sleep(0.25)
        return None, seen

    def close(self) -> None:
        self.jvm.close()
