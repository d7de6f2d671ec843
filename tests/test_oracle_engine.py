"""The Kafka oracle's plumbing (rollcheck/oracle/{build,jvm,client,tools}.py) against the self-test adapter
(kafka_oracle/selftest: kafka-clients only, a handler whose ops echo, hash with Kafka's murmur2, throw, sleep and
exit), through a small fake binding: the build and its cache, the JVM's framing, deaths and hangs, the client's
cache and batching, and the one-line refusals.

The cache is hermetic: ROLLCHECK_CACHE points under pytest's tmp_path_factory for the whole module, so the Maven
build really runs once per session (about 15 s; the jars themselves come from the shared ~/.m2) and no test reads
or leaves a build in the user's cache. Later builds (a changed source, a --jars directory) use javac against
the first build's jars, a second or two each.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rollcheck.core.errors import UserError
from rollcheck.oracle import (
    Adapter,
    Built,
    KafkaBug,
    OracleClient,
    OracleDied,
    OracleJVM,
    OracleRelease,
    OracleUnavailable,
    ensure_built,
    find_release,
    java_problem,
    repo_root,
)
from rollcheck.oracle.build import sources_hash

pytestmark = pytest.mark.skipif(java_problem() is not None, reason=f"Kafka oracle: {java_problem()}")

RELEASE = "3.9.2"  # a release whose kafka-clients every helper's build already fetched into ~/.m2
ADAPTER = Adapter("selftest", "rollcheck.selftest.SelfTest",
                  classes=("org.apache.kafka.common.utils.Utils", "org.apache.kafka.common.utils.AppInfoParser"))
ADAPTERS_DIR = repo_root() / "kafka_oracle"


@dataclass(frozen=True)
class FakeBinding:
    """An OracleBinding naming the self-test adapter (the questions are the tests' own)."""

    adapters_dir: str = str(ADAPTERS_DIR)
    adapters: tuple[Adapter, ...] = (ADAPTER,)
    releases: tuple[OracleRelease, ...] = (OracleRelease(RELEASE, "3.9", "selftest", ("ci",)),
                                           OracleRelease("0.0.1", "0.0", "selftest"))
    bugs: tuple[KafkaBug, ...] = ()
    protocol: str = "selftest"

    def config_for(self, config: Any, release: OracleRelease) -> Any:
        return config

    def questions(self, system: Any, state: Any, release: OracleRelease) -> Any:
        return ()

    def compare(self, question: Any, answer: Any) -> str | None:
        return None if answer == question.expected else "differs"


def murmur2(data: bytes) -> int:
    """Kafka's Utils.murmur2 (clients/src/main/java/org/apache/kafka/common/utils/Utils.java at 3.9.2), written
    from its description: the JVM's answer must equal it."""
    m, mask = 0x5BD1E995, 0xFFFFFFFF
    n = len(data)
    h = (0x9747B28C ^ n) & mask
    for i in range(0, n - n % 4, 4):
        k = (int.from_bytes(data[i:i + 4], "little") * m) & mask
        k = ((k ^ (k >> 24)) * m) & mask
        h = ((h * m) & mask) ^ k
    tail = n - n % 4
    if n % 4 >= 3:
        h ^= data[tail + 2] << 16
    if n % 4 >= 2:
        h ^= data[tail + 1] << 8
    if n % 4 >= 1:
        h = ((h ^ data[tail]) * m) & mask
    h = ((h ^ (h >> 13)) * m) & mask
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("rollcheck-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROLLCHECK_CACHE", str(root))
        yield root


@pytest.fixture(scope="module")
def built(cache: Path) -> tuple[Built, list[str]]:
    said: list[str] = []
    return ensure_built(ADAPTERS_DIR, ADAPTER, RELEASE, progress=said.append), said


@pytest.fixture(scope="module")
def libs(built: tuple[Built, list[str]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Kafka-build-like libs/ directory: the Maven build's jars, linked."""
    d = tmp_path_factory.mktemp("libs")
    for jar in built[0].classpath[1:]:
        (d / jar.name).symlink_to(jar)
    return d


def test_the_build_is_cached_and_laid_out(built: tuple[Built, list[str]], cache: Path) -> None:
    b, said = built
    assert said[0] == f"fetching and building the Kafka oracle for {RELEASE} (selftest) ..."
    assert said[-1].startswith("built in ") and said[-1].endswith(" s")
    assert b.directory == cache / "kafka-oracle" / f"selftest-{sources_hash(ADAPTERS_DIR / 'selftest')}" / RELEASE
    assert b.classpath[0] == b.directory / "classes" and (b.classpath[0] / "rollcheck/oracle/Main.class").is_file()
    assert any(p.name == f"kafka-clients-{RELEASE}.jar" for p in b.classpath)
    assert (b.directory / "built.json").is_file() and (b.directory / "classpath.txt").is_file()
    again: list[str] = []
    tick = time.perf_counter()
    assert ensure_built(ADAPTERS_DIR, ADAPTER, RELEASE, progress=again.append) == b
    assert again == [] and time.perf_counter() - tick < 2.0


def test_the_client_asks_once_per_distinct_request(built: tuple[Built, list[str]]) -> None:
    batch = [{"op": "echo", "x": [1, "é", None, True], "b": {"z": -(2 ** 62)}}, {"op": "murmur2", "value": "abc"},
             {"op": "version"}, {"op": "murmur2", "value": "kafka-oracle"}]
    with OracleClient(FakeBinding(), batch_size=2) as client:
        answers = client.ask(RELEASE, batch)
        assert answers == [batch[0], murmur2(b"abc"), RELEASE, murmur2(b"kafka-oracle")]
        st = client.stats()
        assert (st["requests"], st["cache_hits"], st["sent"], st["round_trips"], st["jvm_starts"]) == (4, 0, 4, 2, 1)
        # Key order does not make a new request (canonical JSON); a repeat inside a batch is sent once.
        again = client.ask(RELEASE, [{"value": "abc", "op": "murmur2"}, {"op": "echo", "n": 1}, {"op": "echo", "n": 1}])
        assert again == [murmur2(b"abc"), {"op": "echo", "n": 1}, {"op": "echo", "n": 1}]
        st = client.stats()
        assert (st["requests"], st["cache_hits"], st["sent"], st["round_trips"], st["jvm_starts"]) == (7, 2, 5, 3, 1)
        assert set(st["startup_seconds"]) == {RELEASE} and set(st["build_seconds"]) == {RELEASE}


def test_a_handler_exception_is_an_answer(built: tuple[Built, list[str]]) -> None:
    with OracleJVM(built[0], timeout=60) as jvm:
        jvm.start()
        assert jvm.ready["ready"] is True and jvm.ready["kafka"] == RELEASE
        assert jvm.ask([{"op": "throw", "message": "no such feature"}, {"op": "echo"}]) == [
            {"exception": "java.lang.IllegalStateException", "message": "no such feature"}, {"op": "echo"}]
        assert jvm.round_trips == 1 and jvm.running


def test_a_jvm_that_exits_mid_batch_is_reported_with_its_stderr(built: tuple[Built, list[str]]) -> None:
    with OracleClient(FakeBinding()) as client:
        with pytest.raises(OracleDied) as info:
            client.ask(RELEASE, [{"op": "echo"}, {"op": "exit", "message": "bye now"}])
        msg = str(info.value)
        assert msg.startswith(f"Kafka oracle {RELEASE} died (exit 3) mid-batch") and "\n" not in msg
        assert "selftest: exiting on request: bye now" in msg and "SLF4J" not in msg
        # The dead JVM is dropped: the next question starts a new one.
        assert client.ask(RELEASE, [{"op": "version"}]) == [RELEASE]
        assert client.stats()["jvm_starts"] == 2


def test_a_hang_is_killed_within_the_timeout(built: tuple[Built, list[str]]) -> None:
    jvm = OracleJVM(built[0], timeout=1.5)
    jvm.start()
    tick = time.monotonic()
    with pytest.raises(OracleDied, match=r"did not answer within 1\.5 s .*the JVM was killed"):
        jvm.ask([{"op": "sleep", "ms": 60_000}])
    assert time.monotonic() - tick < 5.0
    proc = jvm._proc
    assert proc is not None and proc.returncode is not None  # killed and reaped: no zombie
    with pytest.raises(OracleDied):
        jvm.ask([{"op": "echo"}])  # a dead JVM says so again, it does not hang
    jvm.close()


def test_a_jvm_that_dies_before_its_ready_line(built: tuple[Built, list[str]]) -> None:
    b = built[0]
    broken = Built(b.release, b.adapter, "rollcheck.selftest.NoSuchHandler", b.classpath, b.directory)
    with OracleJVM(broken, timeout=60) as jvm, pytest.raises(OracleDied) as info:
        jvm.start()
    assert "before its ready line" in str(info.value) and "ClassNotFoundException" in str(info.value)


def test_an_unknown_release_is_refused_before_any_build(cache: Path) -> None:
    before = sorted(cache.rglob("*"))
    with OracleClient(FakeBinding()) as client, pytest.raises(UserError) as info:
        client.ask("9.9", [{"op": "echo"}])
    assert str(info.value) == f"unknown Kafka release '9.9' for selftest; known: {RELEASE}, 0.0.1"
    assert sorted(cache.rglob("*")) == before
    with pytest.raises(UserError, match=r"known: 3\.9\.2, 0\.0\.1$"):
        find_release(FakeBinding(), "3.9")


def test_an_unserved_release_names_the_artifact(cache: Path) -> None:
    with OracleClient(FakeBinding()) as client, pytest.raises(OracleUnavailable) as info:
        client.ask("0.0.1", [{"op": "echo"}])
    assert str(info.value) == ("Kafka release 0.0.1 is not served by the Maven registry: "
                               "org.apache.kafka:kafka-clients:jar:0.0.1")


def test_jars_dir_lacking_a_class_names_it(libs: Path) -> None:
    needs = Adapter("selftest", ADAPTER.handler, classes=(*ADAPTER.classes,
                                                          "org.apache.kafka.controller.FeatureControlManager"))
    with pytest.raises(OracleUnavailable) as info:
        ensure_built(ADAPTERS_DIR, needs, "ignored", jars=libs)
    assert str(info.value) == (f"--jars {libs.resolve()} lacks org.apache.kafka.controller.FeatureControlManager "
                               "(needed by adapter selftest)")


def test_a_jars_build_answers_and_a_changed_source_rebuilds(libs: Path, tmp_path: Path) -> None:
    adapters = tmp_path / "adapters"
    shutil.copytree(ADAPTERS_DIR / "selftest", adapters / "selftest", ignore=shutil.ignore_patterns("target"))
    binding = FakeBinding(adapters_dir=str(adapters))
    said: list[str] = []
    with OracleClient(binding, jars=libs, progress=said.append) as client:
        assert client.ask(RELEASE, [{"op": "version"}, {"op": "echo"}]) == [RELEASE, {"op": "echo"}]
        assert client.ask(f"jars:{libs}", [{"op": "echo"}]) == [{"op": "echo"}]
        assert client.stats()["jvm_starts"] == 1  # the row release and "jars:<dir>" are the one jars build
        first = client.built(RELEASE)
    assert first is not None and first.release == f"jars:{libs.resolve()}"
    assert first.directory.name.startswith("jars-") and said[0].startswith("building the Kafka oracle against")
    # A half-done build (built.json is written last) is redone, not trusted.
    (first.directory / "built.json").unlink()
    redo: list[str] = []
    assert ensure_built(adapters, ADAPTER, "ignored", jars=libs, progress=redo.append) == first
    assert redo[0].startswith("building the Kafka oracle against")
    java = adapters / "selftest/src/main/java/rollcheck/selftest/SelfTest.java"
    java.write_text(java.read_text().replace("return request;", 'return "changed";', 1))
    with OracleClient(binding, jars=libs) as client:
        assert client.ask(RELEASE, [{"op": "echo"}]) == ["changed"]
        second = client.built(RELEASE)
    assert second is not None and second.directory.parent != first.directory.parent


def test_concurrent_builders_share_one_build(libs: Path, tmp_path: Path, cache: Path) -> None:
    adapters = tmp_path / "adapters"
    shutil.copytree(ADAPTERS_DIR / "selftest", adapters / "selftest", ignore=shutil.ignore_patterns("target"))
    code = ("import sys; from pathlib import Path; from rollcheck.oracle import Adapter, ensure_built; "
            f"b = ensure_built(Path({str(adapters)!r}), Adapter('selftest', {ADAPTER.handler!r}), 'x', "
            f"jars=Path({str(libs)!r}), progress=lambda t: print(t, flush=True)); print('DIR', b.directory)")
    env = {**os.environ, "ROLLCHECK_CACHE": str(tmp_path / "own-cache")}  # its own: no earlier build to reuse
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    dirs = {line for out in outs for line in out.splitlines() if line.startswith("DIR ")}
    assert len(dirs) == 1
    assert sum(out.count("building the Kafka oracle against") for out in outs) == 1, outs


def test_java_problem_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert java_problem() is None
    java = shutil.which("java")
    assert java is not None
    monkeypatch.setenv("PATH", str(tmp_path))
    assert java_problem() == "Java is not installed: no `java` on PATH (the Kafka oracle needs Java 17+)"
    (tmp_path / "java").symlink_to(os.path.realpath(java))
    problem = java_problem()
    assert problem is not None and problem.startswith("Maven is not installed: no `mvn` on PATH")


def test_figures_start_up_and_round_trips(built: tuple[Built, list[str]]) -> None:
    """The figures kafka_oracle/README.md quotes (printed with -s): start-up once built, and round trips per
    second of 1000-request echo batches. The bounds are loose (a shared 2-core machine); the README has the
    measured ones."""
    with OracleJVM(built[0], timeout=60) as jvm:
        startup = jvm.start()
        batch = [{"op": "echo", "i": i, "s": "x" * 50} for i in range(1000)]
        assert jvm.ask(batch) == batch
        n, tick = 0, time.perf_counter()
        while time.perf_counter() - tick < 2.0:
            jvm.ask(batch)
            n += 1
        rate = n / (time.perf_counter() - tick)
    print(f"\noracle figures: JVM start-up {startup:.2f} s; {rate:.1f} round trips/s of 1000 echo requests "
          f"({rate * 1000:.0f} requests/s)")
    assert startup > 0 and n >= 1  # figures, not bounds: a test never asserts a time
