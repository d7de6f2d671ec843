"""The Kafka oracle's Spark engine (``rollcheck kafka P --release R --engine spark``): the questions, not the search,
are distributed.

The explorer runs once, in the driver (:func:`rollcheck.oracle.check.run_check`): the configs the oracle checks are
explored in seconds, while the questions cost JVM round trips, so those are what go to the executors. The states
(with their level-store positions) are cut into partitions; each task builds its states' questions, asks them of
its Python worker's long-lived clients (one per (protocol, release, jars), kept for the worker's life: a JVM starts
once per worker, not once per task), compares the answers there and returns a :class:`~rollcheck.oracle.compare.Tally`;
the driver merges the tallies in partition order, which gives the local engine's counts and kept disagreements
(:meth:`Tally.merge` keeps the first per kind in (level, pos, question) order whatever the partitioning).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcheck.oracle.binding import OracleBinding, OracleRelease
from rollcheck.oracle.compare import Client, Tally, ask_states

# The one process-level pool allowed (docs: common rules): a Python worker of Spark lives for many tasks
# (spark.python.worker.reuse), and starting a Kafka JVM costs a second or more, so each worker keeps its clients,
# keyed by (binding protocol, release, jars, client factory), until it exits; the clients' JVMs die with it
# (the client's own finalizer and the JVM's stdin closing).
_POOL: dict[tuple[str, str, str, str], Client] = {}

# Makes a worker's client: called as ``factory(binding, jars=jars)`` (OracleClient's own signature).
ClientFactory = Callable[..., Client]


@dataclass(frozen=True)
class SparkOracleOptions:
    master: str = "local[*]"
    partitions: int | None = None  # default: two per executor core


def oracle_client(binding: OracleBinding, jars: Path | None = None) -> Client:
    from rollcheck.oracle.client import OracleClient

    client: Client = OracleClient(binding, jars=jars)
    return client


def pooled(binding: OracleBinding, release: str, jars: Path | None, factory: ClientFactory) -> Client:
    """This worker's client for ``release``, made on first use and kept."""
    key = (binding.protocol, release, str(jars or ""), f"{factory.__module__}.{factory.__qualname__}")
    client = _POOL.get(key)
    if client is None:
        client = _POOL[key] = factory(binding, jars=jars)
    return client


def _stats_delta(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in ("requests", "cache_hits", "sent", "round_trips", "jvm_starts"):
        out[k] = int(after.get(k, 0)) - int(before.get(k, 0))
    for k in ("startup_seconds", "build_seconds"):
        was = before.get(k) or {}
        out[k] = {r: s for r, s in (after.get(k) or {}).items() if r not in was}
    return out


def _add_stats(total: dict[str, Any], part: Mapping[str, Any]) -> None:
    for k, v in part.items():
        if isinstance(v, dict):
            bucket = total.setdefault(k, {})
            for r, s in v.items():
                bucket[f"{r}@{len(bucket)}"] = s  # one start per worker and release: all counted
        else:
            total[k] = total.get(k, 0) + v


def _task(binding: OracleBinding, system: Any, release: OracleRelease, jars: Path | None, factory: ClientFactory,
          keep: int) -> Callable[[Iterator[tuple[int, int, Any]]], Iterator[tuple[Tally, dict[str, Any]]]]:
    def run(items: Iterator[tuple[int, int, Any]]) -> Iterator[tuple[Tally, dict[str, Any]]]:
        tally = Tally(keep=keep)
        used: dict[str, Client] = {}
        before: dict[str, dict[str, Any]] = {}

        def ask(target: str, requests: list[Mapping[str, Any]]) -> list[Any]:
            if target not in used:
                used[target] = pooled(binding, target, jars, factory)
                before[target] = dict(used[target].stats())
            return used[target].ask(target, requests)

        ask_states(binding, system, release, items, ask, tally)
        stats: dict[str, Any] = {"worker_pid": [os.getpid()]}
        for target, client in used.items():
            _add_stats(stats, _stats_delta(before[target], client.stats()))
        yield tally, stats

    return run


def ask_spark(binding: OracleBinding, system: Any, release: OracleRelease, items: Sequence[tuple[int, int, Any]],
              tally: Tally, *, jars: Path | None = None, spark: Any = None, client: Client | None = None,
              factory: ClientFactory | None = None) -> dict[str, Any]:
    """Ask every state's questions on Spark and merge the tasks' tallies into ``tally``; returns the summed client
    stats. ``spark``: a SparkSession, or :class:`SparkOracleOptions` (default: local[*]). ``factory`` makes a
    worker's client (default: an OracleClient); a driver-side ``client`` cannot be shipped to the workers, so its
    class is the factory (a test's fake client)."""
    from rollcheck.spark.session import get_session

    if client is not None and factory is None:
        factory = type(client)
    session = spark if spark is not None and not isinstance(spark, SparkOracleOptions) else \
        get_session((spark or SparkOracleOptions()).master, app_name="rollcheck-kafka")
    sc = session.sparkContext
    options = spark if isinstance(spark, SparkOracleOptions) else SparkOracleOptions()
    slices = options.partitions or max(2 * int(sc.defaultParallelism), 1)
    slices = max(1, min(slices, len(items) or 1))
    rdd = sc.parallelize(list(items), slices)
    parts = rdd.mapPartitions(_task(binding, system, release, jars, factory or oracle_client, tally.keep)).collect()
    stats: dict[str, Any] = {"partitions": slices}
    workers: set[int] = set()
    for part, part_stats in parts:
        tally.merge(part)
        workers.update(part_stats.pop("worker_pid", []))
        _add_stats(stats, part_stats)
    stats["workers"] = len(workers)
    return stats
