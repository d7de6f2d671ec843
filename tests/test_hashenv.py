"""Fingerprints across processes: on Python 3.11 ``hash(None)`` follows None's address, so two processes
started with address randomization hash equal states differently. The commands re-execute themselves
without it (rollcheck.core.hashenv); a process that hashes otherwise is refused (the hash probe), never merged."""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rollcheck.core.fingerprint import hash_probe
from rollcheck.core.hashenv import stable_hashes

ROOT = Path(__file__).resolve().parent.parent

needs_311_linux = pytest.mark.skipif(
    sys.version_info >= (3, 12) or not sys.platform.startswith("linux") or shutil.which("setarch") is None,
    reason="hash(None) is constant from Python 3.12; address randomization is switched off with Linux setarch")


def _randomized(code: str, *, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a Python with address randomization back on (``setarch ARCH`` clears the flag this
    test run was started with) and the seed fixed: it hashes None unlike this process."""
    return subprocess.run(["setarch", platform.machine(), sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, check=False, env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"})


def test_this_run_hashes_stably() -> None:
    assert stable_hashes()
    code = "from rollcheck.core.fingerprint import hash_probe; print(hash_probe())"
    probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert int(probe.stdout) == hash_probe()  # a child of this run (same seed, same layout) agrees


@needs_311_linux
def test_the_probe_tells_randomized_processes_apart() -> None:
    code = "from rollcheck.core.fingerprint import hash_probe; print(hash_probe(), hash(None))"
    a, b = (_randomized(code).stdout.split() for _ in range(2))
    assert a[1] != b[1], "None hashed alike in two randomized processes: this test shows nothing here"
    assert a[0] != b[0] and int(a[0]) != hash_probe()


@needs_311_linux
def test_a_resume_by_a_process_that_hashes_otherwise_is_refused(tmp_path: Path) -> None:
    args = ["explore", "streams_probing", "--config", "default", "--max-depth", "6", "--quiet", "--out", str(tmp_path)]
    first = subprocess.run([sys.executable, "-m", "rollcheck", *args], capture_output=True, text=True, cwd=ROOT,
                           timeout=120, check=False)
    assert first.returncode == 0, first.stderr
    # main(argv) does not re-execute itself: this process keeps its randomized layout.
    resumed = _randomized(f"import sys; from rollcheck.cli import main; sys.exit(main({[*args, '--resume']!r}))")
    assert resumed.returncode == 2
    assert resumed.stderr.strip().startswith("rollcheck: error: the checkpoint in")
    assert "hashes states differently" in resumed.stderr and "Traceback" not in resumed.stderr


@pytest.mark.spark
@needs_311_linux
def test_spark_executors_that_hash_otherwise_are_refused(tmp_path: Path) -> None:
    """A driver with a randomized layout: its executors (new interpreters) hash None otherwise; the run
    stops with the explanation instead of counting some states twice."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from rollcheck.core.errors import UserError\n"
        "from rollcheck.core.registry import get_protocol\n"
        "from rollcheck.explore.explorer import ExploreOptions\n"
        "from rollcheck.spark.explorer import SparkOptions, explore_system_spark\n"
        "from rollcheck.spark.session import get_session\n"
        "e = get_protocol('streams_probing')\n"
        "try:\n"
        "    explore_system_spark(e.build(e.configs['small']), get_session('local[2]'),"
        f" ExploreOptions(checkpoint_dir=Path({str(tmp_path)!r})), SparkOptions(spark_min=0))\n"
        "except UserError as exc:\n"
        "    print(exc)\n"
        "    sys.exit(2)\n"
    )
    env_java = shutil.which("java")
    assert env_java is not None
    proc = subprocess.run(["setarch", platform.machine(), sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False,
                          env={"PATH": f"{Path(env_java).parent}:/usr/bin:/bin", "PYTHONHASHSEED": "0"})
    assert proc.returncode == 2, proc.stdout + proc.stderr[-2000:]
    assert "executors' Python hashes differ from the driver's" in proc.stdout
