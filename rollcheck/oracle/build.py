"""Building a Kafka oracle adapter against one release, once, into the user's cache (kafka_oracle/README.md).

Layout: ``cache_root()/kafka-oracle/<adapter>-<hash12>/<release>/{classes/,classpath.txt,built.json,build.log}``.
``hash12`` hashes the adapter's files and the common loop's sources, so an edited adapter builds anew beside the
old build. ``built.json`` is written last (atomically): a folder without it is a half-done build, redone. Builders
of the same folder (pytest-xdist workers, Spark executors) serialise on ``fcntl.flock`` of ``.lock`` there: the
second waits and reuses the first one's build.

A Maven build: ``mvn -B -q -f <adapter>/pom.xml compile -Dkafka.version=<release> -Doracle.out=<tmp>``, the
release's jars fetched from Maven Central into ~/.m2. A ``--jars DIR`` build (a Kafka build's ``libs/``): every
jar of DIR is the class path and ``javac`` compiles the adapter's and the common sources against it; its folder
is ``jars-<hash12 of the jar names, sizes and mtimes>`` and its release name ``jars:<DIR>``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcheck.core.errors import UserError
from rollcheck.oracle.binding import Adapter
from rollcheck.oracle.tools import java_problem

BUILT_FORMAT = 1  # built.json's "format": a build written by another layout is redone
_SKIP_DIRS = {"target", "__pycache__"}
_RELEASE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_BUILD_TIMEOUT = 1800.0  # a first fetch of a release's jars over a slow link; a hung mvn is not waited on forever


class OracleUnavailable(UserError):
    """The oracle cannot answer: Java or Maven missing, a release Maven Central does not serve, a build that
    failed, a ``--jars`` directory that lacks a class the adapter needs. One line, exit 2."""


@dataclass(frozen=True)
class Built:
    """A finished build: what :class:`rollcheck.oracle.jvm.OracleJVM` starts."""

    release: str  # the Maven version, or "jars:<dir>"
    adapter: str
    handler: str
    classpath: tuple[Path, ...]  # the adapter's classes dir first, then the jars
    directory: Path  # the cache folder of this build


def cache_root() -> Path:
    """``$ROLLCHECK_CACHE``, else ``~/.cache/rollcheck`` (created)."""
    env = os.environ.get("ROLLCHECK_CACHE")
    root = Path(env).expanduser() if env else Path.home() / ".cache" / "rollcheck"
    root.mkdir(parents=True, exist_ok=True)
    return root


def repo_root() -> Path:
    """The checkout: the parent of the ``rollcheck`` package (a binding's ``adapters_dir`` is relative to it)."""
    return Path(__file__).resolve().parent.parent.parent


def common_sources() -> Path:
    """The one request loop every adapter compiles in (kafka_oracle/common)."""
    return repo_root() / "kafka_oracle" / "common" / "src" / "main" / "java"


def _files(root: Path) -> Iterator[Path]:
    """Every file under ``root`` that goes into a build (no build output, no hidden files, no docs)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and not name.endswith(".md"):
                yield Path(dirpath) / name


_POM_SOURCE = re.compile(r"<source>\s*\$\{project\.basedir\}/([^<$]*?)\s*</source>")


def pom_sources(adapter_dir: Path) -> list[Path]:
    """The source folders the adapter's pom adds beside its own src/ and the common loop (build-helper's
    ``<source>${project.basedir}/...</source>``, e.g. a family's shared folder ``../shared/src/main/java``):
    they are hashed and compiled like the adapter's own sources."""
    try:
        text = (adapter_dir / "pom.xml").read_text(encoding="utf-8")
    except OSError:
        return []
    return [(adapter_dir / m.group(1)).resolve() for m in _POM_SOURCE.finditer(text)]


def sources_hash(adapter_dir: Path) -> str:
    """hash12 of what a build reads: the adapter's pom.xml and src/ tree, the source folders its pom adds
    (:func:`pom_sources`), and the common loop's sources."""
    h = hashlib.sha256()
    files = [("adapter", adapter_dir, adapter_dir / "pom.xml"), *(("adapter", adapter_dir, f) for f in
                                                                   _files(adapter_dir / "src"))]
    for i, extra in enumerate(pom_sources(adapter_dir)):
        files += [(f"pom-source-{i}", extra, f) for f in _files(extra)]
    files += [("common", common_sources(), f) for f in _files(common_sources())]
    for label, root, f in files:
        h.update(f"{label}/{f.relative_to(root).as_posix()}\0".encode())
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()[:12]


def _jars_of(jars: Path) -> list[Path]:
    if not jars.is_dir():
        raise OracleUnavailable(f"--jars {jars} is not a directory (a Kafka build's libs/ directory)")
    found = sorted(p for p in jars.iterdir() if p.suffix == ".jar" and p.is_file())
    if not found:
        raise OracleUnavailable(f"--jars {jars} holds no .jar file (a Kafka build's libs/ directory)")
    return found


def jars_hash(jar_files: list[Path]) -> str:
    """hash12 of a jars directory: names, sizes and mtimes (a rebuilt Kafka has new mtimes)."""
    h = hashlib.sha256()
    for p in jar_files:
        st = p.stat()
        h.update(f"{p.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:12]


def missing_class(jar_files: list[Path], classes: tuple[str, ...]) -> str | None:
    """The first of ``classes`` that no jar holds (each jar's listing read, none extracted)."""
    if not classes:
        return None
    entries: set[str] = set()
    for jar in jar_files:
        try:
            with zipfile.ZipFile(jar) as z:
                entries.update(z.namelist())
        except (OSError, zipfile.BadZipFile):
            continue  # an unreadable jar holds nothing; the class it should have is named below
    for cls in classes:
        if cls.replace(".", "/") + ".class" not in entries:
            return cls
    return None


def _read_built(folder: Path) -> Built | None:
    """The finished build in ``folder``, or None (none, half-done, another format, a jar gone from ~/.m2)."""
    try:
        doc = json.loads((folder / "built.json").read_text(encoding="utf-8"))
        if doc.get("format") != BUILT_FORMAT:
            return None
        classpath = tuple(Path(p) for p in doc["classpath"])
        built = Built(release=str(doc["release"]), adapter=str(doc["adapter"]), handler=str(doc["handler"]),
                      classpath=classpath, directory=folder)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not all(p.exists() for p in classpath):
        return None
    return built


def write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def locked(folder: Path, say: Callable[[str], None], what: str) -> Iterator[None]:
    """The build lock of ``folder``: the first builder holds it, every other waits (and then reuses); ``what``
    names the build in the one line a waiter prints."""
    with open(folder / ".lock", "a+b") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another process building {what} ...")
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _clear_leftovers(folder: Path) -> None:
    """Remove what a build killed half-way left (only under the lock: nobody else is building here)."""
    for p in folder.glob("build-*"):
        shutil.rmtree(p, ignore_errors=True)
    shutil.rmtree(folder / "classes", ignore_errors=True)
    with contextlib.suppress(OSError):
        (folder / "built.json").unlink()


def _finish(folder: Path, tmp: Path, adapter: Adapter, release: str, jar_paths: list[Path], key: str,
            seconds: float) -> Built:
    os.replace(tmp / "classes", folder / "classes")
    classpath = (folder / "classes", *jar_paths)
    (folder / "classpath.txt").write_text(os.pathsep.join(str(p) for p in jar_paths) + "\n", encoding="utf-8")
    doc: dict[str, Any] = {"format": BUILT_FORMAT, "release": release, "adapter": adapter.name,
                           "handler": adapter.handler, "key": key, "classpath": [str(p) for p in classpath],
                           "seconds": round(seconds, 2), "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    write_atomic(folder / "built.json", json.dumps(doc, indent=1) + "\n")  # last: marks the build finished
    shutil.rmtree(tmp, ignore_errors=True)
    return Built(release=release, adapter=adapter.name, handler=adapter.handler, classpath=classpath,
                 directory=folder)


# Maven's lines naming what it could not resolve (Maven 3.8/3.9 wordings), most specific first.
_UNRESOLVED = (
    re.compile(r"Could not find artifact (\S+?)(?: in |\s|$)"),
    re.compile(r"following artifacts could not be resolved: ([^\s,]+?)(?: \(|,|:?\s|$)"),
    re.compile(r"Failure to find (\S+?) in "),
    re.compile(r"(?:: |\s)(\S+:jar:\S+?) was not found in "),  # Maven 3.9, a miss cached in ~/.m2 by an earlier try
    re.compile(r"Failed to collect dependencies at (\S+?)(?::?\s|$)"),
)
_TRANSFER = re.compile(r"Could not transfer artifact (\S+)")


def maven_failure(release: str, adapter: str, log_text: str, log_path: Path) -> str:
    """One line for a failed ``mvn compile``: the artifact Maven Central does not serve, the artifact it could
    not download, or the first compile error, with the path of the full log."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", log_text)
    for rx in _UNRESOLVED:
        m = rx.search(text)
        if m is not None:
            return f"Kafka release {release} is not served by the Maven registry: {m.group(1).rstrip(':')}"
    if "Could not resolve dependencies" in text:
        return (f"Kafka release {release} is not served by the Maven registry: Maven could not resolve the "
                f"dependencies of adapter {adapter}; full log: {log_path}")
    m = _TRANSFER.search(text)
    if m is not None:
        return (f"the Kafka oracle for {release} could not be fetched: Maven could not download {m.group(1)} "
                f"(offline?); full log: {log_path}")
    return f"the Kafka oracle adapter {adapter} does not build against {release}: {_first_error(text)}; " \
           f"full log: {log_path}"


def _first_error(text: str) -> str:
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("[ERROR]") and len(s) > len("[ERROR]") + 1:
            s = s[len("[ERROR]"):].strip()
            if not s.startswith(("Failed to execute goal", "-> [Help", "To see the full", "Re-run Maven",
                                 "For more information", "[Help")):
                return s[:300]
    for line in text.splitlines():
        if "error:" in line:
            return line.strip()[:300]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "no output"


def run_logged(argv: list[str], log: Path, cwd: Path) -> tuple[int, str]:
    with open(log, "w", encoding="utf-8") as out:
        out.write("$ " + " ".join(argv) + "\n")
        out.flush()
        try:
            proc = subprocess.run(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  timeout=_BUILD_TIMEOUT, check=False)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            out.write(f"\n[ERROR] rollcheck: the build did not end within {_BUILD_TIMEOUT:g} s\n")
            code = -1
        except OSError as exc:
            out.write(f"\n[ERROR] rollcheck: {argv[0]} did not start: {exc}\n")
            code = -1
    return code, log.read_text(encoding="utf-8", errors="replace")


def _maven_build(adapter_dir: Path, adapter: Adapter, release: str, folder: Path, key: str) -> Built:
    problem = java_problem()
    if problem is not None:
        raise OracleUnavailable(problem)
    tmp = Path(tempfile.mkdtemp(dir=folder, prefix="build-"))
    log = folder / "build.log"
    # rollcheck.common is passed so that an adapter builds wherever its folder is (a copy in a test included).
    argv = [shutil.which("mvn") or "mvn", "-B", "-q", "-Dstyle.color=never", "-f", str(adapter_dir / "pom.xml"),
            "compile", f"-Dkafka.version={release}", f"-Doracle.out={tmp}", f"-Drollcheck.common={common_sources()}"]
    tick = time.perf_counter()
    code, text = run_logged(argv, log, adapter_dir)
    if code != 0 or not (tmp / "classes").is_dir() or not (tmp / "classpath.txt").is_file():
        shutil.rmtree(tmp, ignore_errors=True)
        raise OracleUnavailable(maven_failure(release, adapter.name, text, log))
    cp_text = (tmp / "classpath.txt").read_text(encoding="utf-8").strip()
    jar_paths = [Path(p) for p in cp_text.split(os.pathsep) if p]
    return _finish(folder, tmp, adapter, release, jar_paths, key, time.perf_counter() - tick)


def _javac_build(adapter_dir: Path, adapter: Adapter, release: str, folder: Path, key: str,
                 jar_files: list[Path], jars: Path) -> Built:
    problem = java_problem(maven=False)
    if problem is not None:
        raise OracleUnavailable(problem)
    lacking = missing_class(jar_files, adapter.classes)
    if lacking is not None:
        raise OracleUnavailable(f"--jars {jars} lacks {lacking} (needed by adapter {adapter.name})")
    sources = [str(p) for root in (adapter_dir / "src" / "main" / "java", *pom_sources(adapter_dir), common_sources())
               for p in _files(root) if p.suffix == ".java"]
    tmp = Path(tempfile.mkdtemp(dir=folder, prefix="build-"))
    (tmp / "classes").mkdir()
    argfile = tmp / "sources.txt"
    argfile.write_text("\n".join(f'"{s}"' for s in sources) + "\n", encoding="utf-8")
    log = folder / "build.log"
    argv = [shutil.which("javac") or "javac", "-encoding", "UTF-8", "--release", "17", "-nowarn",
            "-cp", os.pathsep.join(str(p) for p in jar_files), "-d", str(tmp / "classes"), f"@{argfile}"]
    tick = time.perf_counter()
    code, text = run_logged(argv, log, adapter_dir)
    if code != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise OracleUnavailable(f"the Kafka oracle adapter {adapter.name} does not compile against --jars {jars}: "
                                f"{_first_error(text)}; full log: {log}")
    return _finish(folder, tmp, adapter, release, jar_files, key, time.perf_counter() - tick)


def ensure_built(adapters_dir: Path, adapter: Adapter, release: str, *, jars: Path | None = None,
                 progress: Callable[[str], None] | None = None) -> Built:
    """The build of ``adapter`` (a folder of ``adapters_dir``) against ``release``'s jars from Maven Central, or
    against the jars of ``jars`` (then the release is "jars:<dir>"): from the cache when it is there, else built
    now (progress lines: "fetching and building ..." and "built in N s"). OracleUnavailable (one line) when it
    cannot be."""
    say = progress or (lambda _text: None)
    adapter_dir = Path(adapters_dir) / adapter.name
    if not (adapter_dir / "pom.xml").is_file():
        raise OracleUnavailable(f"adapter {adapter.name}: no {adapter_dir / 'pom.xml'}")
    src_key = sources_hash(adapter_dir)
    jar_files: list[Path] = []
    if jars is not None:
        jars = jars.expanduser().resolve()
        jar_files = _jars_of(jars)
        name = f"jars:{jars}"
        leaf = f"jars-{jars_hash(jar_files)}"
        what = f"--jars {jars} ({adapter.name})"
    else:
        if not _RELEASE_RE.match(release):
            raise OracleUnavailable(f"'{release}' is not a Kafka release name (e.g. 3.9.2)")
        name = release
        leaf = release
        what = f"{release} ({adapter.name})"
    folder = cache_root() / "kafka-oracle" / f"{adapter.name}-{src_key}" / leaf
    built = _read_built(folder)
    if built is not None:
        return built
    folder.mkdir(parents=True, exist_ok=True)
    with locked(folder, say, f"the Kafka oracle for {what}"):
        built = _read_built(folder)  # the builder we waited for finished it
        if built is not None:
            return built
        _clear_leftovers(folder)
        say(f"fetching and building the Kafka oracle for {what} ..." if jars is None
            else f"building the Kafka oracle against {what} ...")
        tick = time.perf_counter()
        if jars is None:
            built = _maven_build(adapter_dir, adapter, release, folder, src_key)
        else:
            built = _javac_build(adapter_dir, adapter, name, folder, f"{src_key}/{leaf}", jar_files, jars)
        say(f"built in {time.perf_counter() - tick:.0f} s")
        return built
