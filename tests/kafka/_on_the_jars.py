"""What the ``*_on_the_jars.py`` modules share: the transcribed cases of a test function, read from its own
``pytest.mark.parametrize`` (so the case data is written once, in the transcription), and one oracle client per
module. Not collected by pytest."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rollcheck.oracle.client import OracleClient
from rollcheck.oracle.tools import java_problem

# Every module on the jars needs Java and Maven (its adapter is built on first use).
needs_java = pytest.mark.skipif(java_problem() is not None, reason=str(java_problem()))


def cases_of(test: Callable[..., Any]) -> list[Any]:
    """The ``pytest.param`` sets of ``test``'s parametrize mark, ids kept: pass them to a parametrize of the same
    argument names."""
    marks = [m for m in getattr(test, "pytestmark", []) if m.name == "parametrize"]
    assert len(marks) == 1, f"{test.__name__} has {len(marks)} parametrize marks"
    return [p if hasattr(p, "values") else pytest.param(p) for p in marks[0].args[1]]


def names_of(test: Callable[..., Any]) -> Any:
    """The argument names of ``test``'s parametrize mark."""
    [mark] = [m for m in getattr(test, "pytestmark", []) if m.name == "parametrize"]
    return mark.args[0]


def oracle_fixture(binding: Any) -> Any:
    """A module-scoped fixture ``jvm``: one oracle client over ``binding`` for the module (its JVMs closed at the
    end). Assign it to the module's ``jvm``."""
    @pytest.fixture(scope="module")
    def jvm() -> Iterator[OracleClient]:
        with OracleClient(binding) as client:
            yield client

    return jvm
