"""The oracle's client: the questions of a check, asked of one JVM per release, each distinct request once.

:class:`OracleClient` builds a release's adapter (:func:`rollcheck.oracle.build.ensure_built`) and starts its
JVM (:class:`rollcheck.oracle.jvm.OracleJVM`) on the first question for it, keeps every answer keyed by
(release, canonical JSON of the request), and sends the misses in batches of at most ``batch_size``. Its JVMs are
its own (a pool per client, ended by :meth:`OracleClient.close`), never shared through module state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from rollcheck.core.errors import UserError
from rollcheck.oracle.binding import Adapter, OracleBinding, OracleRelease
from rollcheck.oracle.build import Built, OracleUnavailable, ensure_built, repo_root
from rollcheck.oracle.compare import canonical
from rollcheck.oracle.jvm import OracleDied, OracleJVM

JARS_PREFIX = "jars:"


def find_release(binding: OracleBinding, name: str) -> OracleRelease:
    """The binding's release ``name``; else a UserError listing the known ones."""
    for r in binding.releases:
        if r.name == name:
            return r
    known = ", ".join(r.name for r in binding.releases) or "(none)"
    raise UserError(f"unknown Kafka release '{name}' for {binding.protocol}; known: {known}")


class OracleClient:
    """One JVM per release, started lazily on first ask (built first if needed), result cache keyed by
    (release, canonical JSON of the request); misses sent in batches of at most ``batch_size``.

    ``jars``: a Kafka build's ``libs/`` directory answers instead of Maven's jars: ``ask`` with "jars:<dir>" or,
    by default, with any release of the binding (each with its release's adapter, compiled against ``jars``);
    ``jars_for``: only that release is answered by ``jars``, every other (the other members of a mixed-release
    group) by its own release's jars from Maven."""

    def __init__(self, binding: OracleBinding, *, jars: Path | None = None,
                 progress: Callable[[str], None] | None = None, batch_size: int = 4096, timeout: float = 300.0,
                 jars_for: str | None = None) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.binding = binding
        self.jars = jars.expanduser().resolve() if jars is not None else None
        self.progress = progress
        self.batch_size = batch_size
        self.timeout = timeout
        if jars_for is not None:
            if self.jars is None:
                raise UserError("jars_for needs jars (a Kafka build's libs/ directory)")
            find_release(binding, jars_for)
        self.jars_for = jars_for
        self._adapters = {a.name: a for a in binding.adapters}
        self._answers: dict[tuple[str, str], Any] = {}
        self._jvms: dict[str, OracleJVM] = {}
        self._built: dict[str, Built] = {}
        self._requests = 0
        self._hits = 0
        self._sent = 0
        self._closed_round_trips = 0
        self._starts = 0
        self._startup: dict[str, float] = {}
        self._build_seconds: dict[str, float] = {}

    # -- which build answers a release ------------------------------------------------------------------------

    def _jars_name(self) -> str:
        return f"{JARS_PREFIX}{self.jars}"

    def _is_jars_name(self, release: str) -> bool:
        if not release.startswith(JARS_PREFIX) or self.jars is None:
            return False
        return Path(release[len(JARS_PREFIX):]).expanduser().resolve() == self.jars

    def _release_of(self, release: str) -> OracleRelease:
        """The binding's release behind ``release`` (for "jars:<dir>": the release ``jars`` stands for, else the
        newest of the binding, whose adapter is the one a Kafka build of the trunk is closest to)."""
        if release.startswith(JARS_PREFIX):
            if not self._is_jars_name(release):
                if self.jars is None:
                    raise UserError(f"Kafka release '{release}': this check has no --jars directory")
                raise UserError(f"Kafka release '{release}': this check's --jars directory is {self.jars}")
            if self.jars_for is not None:
                return find_release(self.binding, self.jars_for)
            if not self.binding.releases:
                raise UserError(f"{self.binding.protocol}: its Kafka oracle binding lists no release")
            return self.binding.releases[-1]
        return find_release(self.binding, release)

    def adapter_for(self, release: str) -> Adapter:
        """The adapter that answers ``release`` (a release name of the binding, or "jars:<dir>")."""
        r = self._release_of(release)
        try:
            return self._adapters[r.adapter]
        except KeyError:
            raise UserError(f"{self.binding.protocol}: release {r.name} names adapter {r.adapter!r}, which the "
                            f"binding does not list") from None

    def _target(self, release: str) -> tuple[str, bool]:
        """(the key of the JVM that answers ``release``, whether it is the jars build)."""
        adapter = self.adapter_for(release)  # refuses an unknown release before anything is built
        if self.jars is not None and (self._is_jars_name(release) or self.jars_for in (None, release)):
            return f"{self._jars_name()}#{adapter.name}", True
        return release, False

    def _jvm(self, target: str, release: str, use_jars: bool) -> OracleJVM:
        jvm = self._jvms.get(target)
        if jvm is not None:
            return jvm
        adapter = self.adapter_for(release)
        adapters_dir = repo_root() / self.binding.adapters_dir
        label = self._label(target, use_jars, adapter)
        tick = time.perf_counter()
        built = ensure_built(adapters_dir, adapter, release if not use_jars else self._jars_name(),
                             jars=self.jars if use_jars else None, progress=self.progress)
        self._build_seconds[label] = round(time.perf_counter() - tick, 3)
        self._built[target] = built
        jvm = OracleJVM(built, timeout=self.timeout)
        self._startup[label] = round(jvm.start(), 3)
        self._starts += 1
        self._jvms[target] = jvm
        return jvm

    def _label(self, target: str, use_jars: bool, adapter: Adapter) -> str:
        """The name a build goes by in :meth:`stats`: the release, or "jars:<dir>" (with the adapter when the
        binding's releases use more than one)."""
        if not use_jars:
            return target
        return self._jars_name() if len(self._adapters) <= 1 else f"{self._jars_name()} ({adapter.name})"

    # -- asking -----------------------------------------------------------------------------------------------

    def ask(self, release: str, requests: Sequence[Mapping[str, Any]]) -> list[Any]:
        """The answers of ``release``'s Kafka classes to ``requests``, in order (cached ones not sent again)."""
        target, use_jars = self._target(release)
        keys = [canonical(r) for r in requests]
        self._requests += len(keys)
        misses: dict[str, Mapping[str, Any]] = {}
        for key, request in zip(keys, requests, strict=True):
            if (target, key) not in self._answers and key not in misses:
                misses[key] = request
        self._hits += len(keys) - len(misses)
        if misses:
            jvm = self._jvm(target, release, use_jars)
            items = list(misses.items())
            for start in range(0, len(items), self.batch_size):
                chunk = items[start:start + self.batch_size]
                try:
                    answers = jvm.ask([request for _key, request in chunk])
                except OracleDied:
                    self._drop(target)
                    raise
                self._sent += len(chunk)
                for (key, _request), answer in zip(chunk, answers, strict=True):
                    self._answers[(target, key)] = answer
        return [self._answers[(target, key)] for key in keys]

    def _drop(self, target: str) -> None:
        jvm = self._jvms.pop(target, None)
        if jvm is not None:
            self._closed_round_trips += jvm.round_trips
            jvm.close()

    def built(self, release: str) -> Built | None:
        """The build that answers ``release``, once its JVM started (None before)."""
        return self._built.get(self._target(release)[0])

    def stats(self) -> dict[str, Any]:
        return {"requests": self._requests, "cache_hits": self._hits, "sent": self._sent,
                "round_trips": self._closed_round_trips + sum(j.round_trips for j in self._jvms.values()),
                "jvm_starts": self._starts, "startup_seconds": dict(self._startup),
                "build_seconds": dict(self._build_seconds)}

    def close(self) -> None:
        for target in list(self._jvms):
            self._drop(target)

    def __enter__(self) -> OracleClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


__all__ = ["JARS_PREFIX", "OracleClient", "OracleDied", "OracleUnavailable", "canonical", "find_release"]
