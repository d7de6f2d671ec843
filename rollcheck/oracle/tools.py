"""Whether the Kafka oracle can run here: ``java`` 17+ and ``mvn`` (or ``javac`` for a ``--jars`` build).

Each probe runs the tool (``java -version``, ``mvn -v``): a command on PATH that does not start (a broken
alternatives link, a JAVA_HOME pointing nowhere) is as absent as a missing one. Nothing is cached, so a test that
empties PATH sees it at once; the probes cost about half a second, paid once per build, never per question.
"""

from __future__ import annotations

import re
import shutil
import subprocess

MIN_JAVA = 17  # the adapters compile with --release 17 (kafka_oracle/pom-template.xml: maven.compiler.release)
_PROBE_TIMEOUT = 60.0


def _run(argv: list[str]) -> tuple[int, str] | None:
    """(exit code, stdout+stderr) of a probe; None when it cannot be started or does not end in time."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.returncode, proc.stdout + proc.stderr


def java_major(version_text: str) -> int | None:
    """The major version in ``java -version``'s output: 'openjdk version "17.0.15"' -> 17, '"1.8.0_392"' -> 8."""
    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_text)
    if m is None:
        return None
    major = int(m.group(1))
    if major == 1 and m.group(2) is not None:  # the 1.x numbering of Java 8 and before
        major = int(m.group(2))
    return major


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[0] if lines else "no output"


def java_problem(*, maven: bool = True) -> str | None:
    """None when ``java`` (17+) and ``mvn`` run (``maven=False``: ``java`` and ``javac``, what a ``--jars``
    build uses instead of Maven); else the one-line reason."""
    java = shutil.which("java")
    if java is None:
        return "Java is not installed: no `java` on PATH (the Kafka oracle needs Java 17+)"
    probe = _run([java, "-version"])
    if probe is None or probe[0] != 0:
        return f"Java does not run: `{java} -version` " + ("failed to start" if probe is None
                                                           else f"exited {probe[0]}: {_first_line(probe[1])}")
    major = java_major(probe[1])
    if major is None or major < MIN_JAVA:
        return f"Java {MIN_JAVA}+ is needed for the Kafka oracle; `java -version` says: {_first_line(probe[1])}"
    tool, argv = ("mvn", ["-v"]) if maven else ("javac", ["-version"])
    path = shutil.which(tool)
    name = "Maven" if maven else "javac (a JDK)"
    if path is None:
        return f"{name} is not installed: no `{tool}` on PATH (the Kafka oracle builds its adapters with it)"
    probe = _run([path, *argv])
    if probe is None or probe[0] != 0:
        return f"{name} does not run: `{path} {' '.join(argv)}` " + (
            "failed to start" if probe is None else f"exited {probe[0]}: {_first_line(probe[1])}")
    return None
