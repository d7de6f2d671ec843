"""KIP-268's test matrix ("Test Plan"): rows are the releases a group upgrades from, columns the releases it
upgrades to, and every cell with the target newer than the source. Test scope, not a protocol rule: it lives
beside the tests that run it, so a mutation campaign of ``reference_impl/`` does not count its edits."""

from __future__ import annotations

from reference_impl.streams_probing.releases import release

MATRIX_FROM: tuple[str, ...] = ("0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1", "2.0")
MATRIX_TO: tuple[str, ...] = ("0.10.1", "0.10.2", "0.11.0", "1.0", "1.1", "2.0", "post-2.0")


def matrix_cells() -> list[tuple[str, str]]:
    """Every (from, to) cell of KIP-268's test matrix, in the KIP's row order."""
    return [(f, t) for f in MATRIX_FROM for t in MATRIX_TO if release(t) > release(f)]
