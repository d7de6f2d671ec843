"""What a protocol tells the Kafka oracle (``ProtocolEntry.oracle``, "module:attribute"): the contract between the
engine's oracle room (``rollcheck/oracle/``, which names no protocol) and each protocol's content.

The engine explores a config with the one explorer, and at every reachable state asks the binding for the
:class:`Question`\\ s the reference decides there (each with the reference's own answer, already in the normal form
the Java adapter answers in); it batches the requests to one long-lived JVM per Kafka release, compares each answer
with :meth:`OracleBinding.compare`, and reports a disagreement with the state, the action, both answers and an ITF
trace to the state.

JSON here means what ``json.dumps`` takes: dict (str keys), list, str, int, bool, None; no float.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

Json = Any  # a JSON value (see the module docstring)


@dataclass(frozen=True)
class Adapter:
    """One Java adapter build: a Maven project under the binding's ``adapters_dir`` (its own folder and README),
    built against the published jars of a release by ``-Dkafka.version=<release>``; ``main`` is its main class
    (the one shared request loop, ``rollcheck.oracle.Main``, with the adapter's handler named by
    ``-Drollcheck.handler``, see kafka_oracle/README.md). ``classes`` are classes the adapter needs from Kafka:
    a ``--jars`` directory that lacks one is refused naming the first missing one."""

    name: str  # the folder, e.g. "kraft-3.7"
    handler: str  # the handler class, e.g. "org.apache.kafka.controller.RollcheckHandler"
    classes: tuple[str, ...] = ()


@dataclass(frozen=True)
class OracleRelease:
    """A Kafka release the oracle can run: ``name`` is the Maven version ("3.9.2"), ``line`` the release line
    ("3.9"), ``adapter`` the build it uses. ``tiers`` are the gate tiers that check it ("ci": the newest of each
    line the reference models; "nightly": every listed release)."""

    name: str
    line: str
    adapter: str
    tiers: tuple[str, ...] = ("nightly",)


@dataclass(frozen=True)
class Question:
    """One decision of the reference at one state, put to Kafka's classes.

    ``kind`` is a stable id (reports count disagreements by it): "updateFeatures", "subscription.encode"...
    ``request`` is what the adapter's handler receives (a JSON object with at least ``"op"``), canonical so that
    equal requests are cached once per release. ``expected`` is the reference's answer in the adapter's normal
    form. ``action`` is the label of the reference action this decision drives ("" for a decision about the state
    itself). ``release`` names the release whose JVM answers, when it is not the row's (a mixed-release group:
    a member's subscription encoded by its own release's classes, decoded by the leader's)."""

    kind: str
    request: Mapping[str, Json]
    expected: Json
    action: str = ""
    release: str | None = None


@dataclass(frozen=True)
class KafkaBug:
    """A real Kafka bug the oracle re-finds on the released code: at ``buggy`` the check must disagree with the
    reference's fixed behaviour (a disagreement of one of the ``kinds``) or the config's properties must fail; at
    ``fixed`` it must agree. ``story`` is the bug report's story in one or two sentences; ``config`` the config
    name (of the protocol's entry) the check runs, ``profile`` its profile.

    ``signature`` (kind, request, the reference's answer, Kafka's answer) -> bool tells this bug's disagreements
    from any other: a check at a buggy release counts a disagreement of one of the ``kinds`` that the signature
    accepts as this known bug, not as a new finding (verdict ``known-bug``, exit 0 unless ``--strict``). A bug
    without a signature is never used to excuse a disagreement."""

    id: str  # "KAFKA-6054"
    protocol: str
    summary: str
    buggy: tuple[str, ...]  # releases (OracleRelease.name) that have the bug
    fixed: tuple[str, ...]  # releases that have the fix
    config: str
    kinds: tuple[str, ...] = ()
    profile: str | None = None
    story: str = ""
    source: str = ""  # the JIRA and the fix commit / PR
    extra: Mapping[str, Json] = field(default_factory=dict)
    signature: Callable[[str, Mapping[str, Json], Json, Json], bool] | None = field(default=None, compare=False)


def known_bug(bugs: Iterable[KafkaBug], release: str, kind: str, request: Mapping[str, Json], expected: Json,
              answer: Json) -> str | None:
    """The id of the known bug of ``release`` that explains this disagreement (its kind and signature), or None."""
    for bug in bugs:
        if (bug.signature is not None and release in bug.buggy and kind in bug.kinds
                and bug.signature(kind, request, expected, answer)):
            return bug.id
    return None


@runtime_checkable
class OracleBinding(Protocol):
    """A protocol's oracle content. ``adapters_dir`` is relative to the repository root
    ("kafka_oracle/metadata_version"); ``releases`` is every release it knows, oldest first; ``bugs`` the real bugs
    it re-finds."""

    protocol: str
    adapters_dir: str
    adapters: tuple[Adapter, ...]
    releases: tuple[OracleRelease, ...]
    bugs: tuple[KafkaBug, ...]

    def config_for(self, config: Any, release: OracleRelease) -> Any:
        """The reference config a row of the matrix checks at ``release``: ``config`` with the profile
        ("kafka") and the release rules (``kafka_release``, catalog, the release a model name stands for) that
        make it compare like with like. Raises ValueError (one line) where the config cannot stand for it."""
        ...

    def questions(self, system: Any, state: Any, release: OracleRelease) -> Iterable[Question]:
        """Every decision the reference makes at ``state`` (``system`` built from ``config_for``'s config), each
        with the reference's answer."""
        ...

    def compare(self, question: Question, answer: Json) -> str | None:
        """None when Kafka's ``answer`` agrees with ``question.expected``; else a one-line difference."""
        ...


@dataclass(frozen=True)
class ReplayPlan:
    """How a release replays a config's traces: the adapter (one of the content's ``adapters``) whose JVM runs
    them, and the depth of the ``simulate`` walks."""

    adapter: str
    depth: int = 40


@dataclass(frozen=True)
class ReplayQuestion:
    """One trace put to Kafka's classes as a whole (``rollcheck.oracle.replay``): ``request`` is what the adapter
    receives (canonical JSON, one request per trace), ``expected`` the reference's own per-step answer read off the
    trace, ``skipped`` the steps Kafka's classes do not see (said so in the report)."""

    request: Mapping[str, Json]
    expected: Json
    skipped: tuple[str, ...] = ()


@runtime_checkable
class ReplayContent(Protocol):
    """A binding's trace replay (its ``replay`` attribute): for code that runs on its own thread and is checked on
    traces, not states. ``kinds`` are the disagreement kinds its comparison reports ("replay.driverStates"...);
    ``adapters`` the Java builds that answer its requests."""

    @property
    def kinds(self) -> tuple[str, ...]: ...

    @property
    def adapters(self) -> tuple[Adapter, ...]: ...

    def plan(self, config: Any, release: OracleRelease) -> ReplayPlan | None:
        """The traces to replay for ``config`` at ``release`` (their adapter, the walks' depth); None: not replayed
        at this release."""
        ...

    def question(self, system: Any, steps: Sequence[tuple[Any, Any]], release: OracleRelease) -> ReplayQuestion:
        """The request for one trace (``steps``: (action or None, state) from an initial state), with the
        reference's expected answer."""
        ...

    def compare(self, question: ReplayQuestion, answer: Json) -> Mapping[str, tuple[int, str] | None]:
        """Per kind, None when Kafka's ``answer`` agrees at every step; else (the first differing step, one line).
        An answer whose replay timed out (``{"timed_out": step}``) is the engine's to handle."""
        ...

    def story(self, name: str) -> tuple[Any, Sequence[tuple[str, Mapping[str, Json]]]] | None:
        """A named trace (a KafkaBug's ``extra["replay_story"]``): the config it runs in (before ``config_for``)
        and its actions, each (name, parameters) of one successor, from the initial state; None: no such story."""
        ...
