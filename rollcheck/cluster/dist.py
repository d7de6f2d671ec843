"""A Kafka release's binaries as a class path: the published jars of the broker (``kafka_2.13``, or ``kafka_2.12``
where a release has no 2.13 build), its tools and, when asked, Kafka Streams, resolved by Maven once into the
user's cache (``cache_root()/kafka-dist/<release>[-streams]/``), with a logger that writes to the console (the
node's log file): the release's own log4j (1.x through reload4j or log4j 2, whichever its jars bind) given a
console configuration written into the cache folder, else ``slf4j-simple`` at the release's ``slf4j-api`` version.

Nothing of Kafka is copied into the checkout: the jars come from Maven Central into ``~/.m2``; the cache folder holds
the class path (``classpath.txt``) and ``dist.json``, written last (a folder without it is redone).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rollcheck.oracle.build import (
    OracleUnavailable,
    cache_root,
    locked,
    maven_failure,
    run_logged,
    write_atomic,
)
from rollcheck.oracle.tools import java_problem

DIST_FORMAT = 1
_RELEASE_RE = re.compile(r"^\d+\.\d+\.\d+(\.\d+)?$")
_SLF4J_API = re.compile(r"slf4j-api-(\d[\w.-]*)\.jar$")


@dataclass(frozen=True)
class Distribution:
    """A release's class path (``classpath``: jars) and its cache folder."""

    release: str
    classpath: tuple[Path, ...]
    directory: Path
    logger: str = "simple"  # what the jars bind slf4j to: "log4j", "log4j2" or "simple"

    def java(self, main: str, args: Sequence[str] = (), *, heap: str = "256m", tool: bool = False,
             jvm_args: Sequence[str] = ()) -> list[str]:
        """The command line that runs ``main`` of this release: a small heap, IPv4 on loopback, the logger on the
        console (a node: INFO on stdout, its log file; a ``tool``: warnings on stderr, its stdout its answer)."""
        java = shutil.which("java") or "java"
        return [java, f"-Xmx{heap}", f"-Xms{min_heap(heap)}", "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true",
                "-Djava.awt.headless=true", *_logging(self.directory, self.logger, tool), *jvm_args, "-cp",
                ":".join(str(p) for p in self.classpath), main, *args]


def min_heap(heap: str) -> str:
    """The initial heap: a quarter of the maximum, at least 32m (``256m`` -> ``64m``)."""
    m = re.fullmatch(r"(\d+)([mg])", heap)
    if m is None:
        raise ValueError(f"a heap size is a number of m or g (e.g. 256m), not {heap!r}")
    mb = int(m.group(1)) * (1024 if m.group(2) == "g" else 1)
    return f"{max(32, mb // 4)}m"


def _scala(release: str) -> str:
    """The broker jar's artifact: Scala 2.13 builds exist from 2.4.0 (kafka_oracle/served.json), 2.12 before."""
    major, minor = (int(x) for x in release.split(".")[:2])
    return "kafka_2.13" if (major, minor) >= (2, 4) else "kafka_2.12"


def _has_tools(release: str) -> bool:
    """``kafka-tools`` (FeatureCommand, the log dump tool's new home) is published from 3.5."""
    major, minor = (int(x) for x in release.split(".")[:2])
    return (major, minor) >= (3, 5)


def _pom(release: str, artifacts: Sequence[str], slf4j: str | None) -> str:
    deps = "".join(f"<dependency><groupId>org.apache.kafka</groupId><artifactId>{a}</artifactId>"
                   f"<version>{release}</version></dependency>" for a in artifacts)
    if slf4j is not None:
        deps += (f"<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId>"
                 f"<version>{slf4j}</version></dependency>")
    return ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\"><modelVersion>4.0.0</modelVersion>"
            "<groupId>rollcheck</groupId><artifactId>kafka-dist</artifactId><version>1</version>"
            f"<dependencies>{deps}</dependencies></project>")


def _classpath(folder: Path, release: str, artifacts: Sequence[str], slf4j: str | None, what: str
               ) -> list[Path]:
    tmp = Path(tempfile.mkdtemp(dir=folder, prefix="resolve-"))
    try:
        (tmp / "pom.xml").write_text(_pom(release, artifacts, slf4j), encoding="utf-8")
        out = tmp / "cp.txt"
        argv = [shutil.which("mvn") or "mvn", "-B", "-q", "-Dstyle.color=never", "dependency:build-classpath",
                f"-Dmdep.outputFile={out}", "-Dmdep.includeScope=runtime"]
        code, text = run_logged(argv, folder / "resolve.log", tmp)
        if code != 0 or not out.is_file():
            raise OracleUnavailable(maven_failure(release, what, text, folder / "resolve.log"))
        return [Path(p) for p in out.read_text(encoding="utf-8").strip().split(":") if p]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ensure_distribution(release: str, *, streams: bool = False,
                        progress: Callable[[str], None] | None = None) -> Distribution:
    """The binaries of Kafka ``release`` (the broker, its tools, and Kafka Streams with ``streams``), resolved on
    first use (progress says so), shared by concurrent callers (a lock), refused in one line when Java or Maven is
    missing or the registry does not serve the release."""
    say = progress or (lambda _text: None)
    if not _RELEASE_RE.match(release):
        raise OracleUnavailable(f"'{release}' is not a Kafka release name (e.g. 3.9.2)")
    problem = java_problem()
    if problem is not None:
        raise OracleUnavailable(problem)
    artifacts = [_scala(release), *(["kafka-tools"] if _has_tools(release) else []),
                 *(["kafka-streams"] if streams else [])]
    folder = cache_root() / "kafka-dist" / (release + ("-streams" if streams else ""))
    done = _read(folder, release)
    if done is not None:
        return done
    folder.mkdir(parents=True, exist_ok=True)
    what = f"the Kafka {release} binaries"
    with locked(folder, say, what):
        done = _read(folder, release)
        if done is not None:
            return done
        say(f"fetching {what} ({', '.join(artifacts)}) ...")
        tick = time.perf_counter()
        jars = _classpath(folder, release, artifacts, None, "kafka-dist")
        logger = _logger(jars)
        if logger == "none":
            api = next((m.group(1) for p in jars if (m := _SLF4J_API.search(p.name))), "1.7.36")
            jars = _classpath(folder, release, artifacts, api, "kafka-dist")
            logger = "simple"
        doc = {"format": DIST_FORMAT, "release": release, "artifacts": artifacts, "logger": logger,
               "classpath": [str(p) for p in jars], "seconds": round(time.perf_counter() - tick, 2)}
        write_atomic(folder / "classpath.txt", ":".join(str(p) for p in jars) + "\n")
        _write_logging(folder)
        write_atomic(folder / "dist.json", json.dumps(doc, indent=1) + "\n")  # last: marks it finished
        say(f"fetched {what} in {time.perf_counter() - tick:.0f} s")
        return Distribution(release, tuple(jars), folder, logger)


def _read(folder: Path, release: str) -> Distribution | None:
    try:
        doc = json.loads((folder / "dist.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if doc.get("format") != DIST_FORMAT or doc.get("release") != release:
        return None
    jars = tuple(Path(p) for p in doc.get("classpath", []))
    if not jars or not all(p.exists() for p in jars):  # ~/.m2 was cleaned: resolve again
        return None
    return Distribution(release, jars, folder, str(doc.get("logger", "simple")))


def _logger(jars: Sequence[Path]) -> str:
    """Which logger the jars bind slf4j to: "log4j" (reload4j or log4j 1.2), "log4j2", or "none"."""
    names = [p.name for p in jars]
    if any(n.startswith(("slf4j-reload4j-", "slf4j-log4j12-")) for n in names):
        return "log4j"
    if any(n.startswith(("log4j-slf4j-impl-", "log4j-slf4j2-impl-")) for n in names):
        return "log4j2"
    if any(n.startswith("slf4j-simple-") for n in names):
        return "simple"
    return "none"


def _log4j(level: str, target: str) -> str:
    return (f"log4j.rootLogger={level}, console\n"
            "log4j.appender.console=org.apache.log4j.ConsoleAppender\n"
            f"log4j.appender.console.Target={target}\n"
            "log4j.appender.console.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.console.layout.ConversionPattern=[%d] %p %m (%c)%n\n")


def _log4j2(level: str, target: str) -> str:
    return ("status = warn\n"
            "appender.console.type = Console\n"
            "appender.console.name = CONSOLE\n"
            f"appender.console.target = {target.replace('.', '_').upper()}\n"
            "appender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = [%d] %p %m (%c)%n\n"
            f"rootLogger.level = {level.lower()}\n"
            "rootLogger.appenderRef.console.ref = CONSOLE\n")


def _write_logging(folder: Path) -> None:
    write_atomic(folder / "log4j.properties", _log4j("INFO", "System.out"))
    write_atomic(folder / "log4j-tool.properties", _log4j("WARN", "System.err"))
    write_atomic(folder / "log4j2.properties", _log4j2("INFO", "System.out"))
    write_atomic(folder / "log4j2-tool.properties", _log4j2("WARN", "System.err"))


def _logging(folder: Path, logger: str, tool: bool) -> tuple[str, ...]:
    suffix = "-tool" if tool else ""
    if logger == "log4j":
        return (f"-Dlog4j.configuration=file:{folder / f'log4j{suffix}.properties'}",)
    if logger == "log4j2":
        return (f"-Dlog4j2.configurationFile={folder / f'log4j2{suffix}.properties'}",)
    return (f"-Dorg.slf4j.simpleLogger.defaultLogLevel={'warn' if tool else 'info'}",
            "-Dorg.slf4j.simpleLogger.showDateTime=true")
