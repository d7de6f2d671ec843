"""Apache Kafka's released classes as an oracle (kafka_oracle/README.md): the engine's room, naming no protocol.

``binding`` is the contract with each protocol's content; ``build`` builds an adapter against a release (cached);
``jvm`` runs one adapter's request loop; ``client`` asks a release's JVM, each distinct request once; ``tools``
tells whether Java and Maven are there.
"""

from __future__ import annotations

from rollcheck.oracle.binding import Adapter, KafkaBug, OracleBinding, OracleRelease, Question
from rollcheck.oracle.build import Built, OracleUnavailable, cache_root, ensure_built, repo_root
from rollcheck.oracle.client import OracleClient, canonical, find_release
from rollcheck.oracle.jvm import OracleDied, OracleJVM
from rollcheck.oracle.tools import java_problem

__all__ = ["Adapter", "Built", "KafkaBug", "OracleBinding", "OracleClient", "OracleDied", "OracleJVM",
           "OracleRelease", "OracleUnavailable", "Question", "cache_root", "canonical", "ensure_built",
           "find_release", "java_problem", "repo_root"]
