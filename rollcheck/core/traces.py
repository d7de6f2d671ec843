"""Traces and their interchange form, ITF JSON (the Apalache / Quint trace format).

A trace is a list of :class:`Step` (the action that led to the state, ``None`` for the initial state,
and the state). On disk each state of the ITF file holds the protocol's ``view`` (the TLA+ variables of
the matching spec) and, in its ``#meta``, the action and the canonical encoding of the full reference
state, so a trace written by rollcheck replays exactly and a trace from Apalache / TLC (no encoding)
replays by matching views.

Views are compared in a canonical JSON form (:func:`canonical_view`): sets and maps sorted, ITF tuples
and sequences both as lists, every integer as ``#bigint``, so that views from the reference
implementation, TLC's state dumps and Apalache's ITF files compare equal exactly when they denote the
same TLA+ value.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import itf_py

from rollcheck.core.transition import Action, TransitionSystem
from rollcheck.runtime.safefs import make_dirs


@dataclass(frozen=True)
class Step:
    action: Action | None  # None for the initial state
    state: Any


@dataclass
class Trace:
    """A finite execution: ``steps[0]`` is an initial state, each later step one labelled transition."""

    steps: list[Step]
    protocol: str = ""
    config: str = ""
    property_id: str | None = None
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def actions(self) -> list[Action]:
        return [s.action for s in self.steps[1:] if s.action is not None]

    @property
    def states(self) -> list[Any]:
        return [s.state for s in self.steps]


# --------------------------------------------------------------------------- ITF values


def to_itf(value: Any) -> Any:
    """A view value (Python) as an ITF JSON value."""
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if value is None:
        return {"tag": "None", "value": {"#tup": []}}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_itf(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Record):
        return {k: to_itf(v) for k, v in value.items()}
    if isinstance(value, Mapping):
        pairs = [[to_itf(k), to_itf(v)] for k, v in value.items()]
        pairs.sort(key=lambda kv: canonical_json(kv[0]))
        return {"#map": pairs}
    if isinstance(value, (set, frozenset)):
        return {"#set": sorted((to_itf(v) for v in value), key=canonical_json)}
    if isinstance(value, (tuple, list)):
        return [to_itf(v) for v in value]
    raise TypeError(f"no ITF form for {type(value).__name__}: {value!r}")


class Record(dict):  # type: ignore[type-arg]
    """A TLA+ record in a view (string keys, written as a JSON object rather than a ``#map``)."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))


def canonical_json(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def canonical_itf(value: Any) -> Any:
    """Normalise an ITF JSON value (ours, Apalache's, or converted TLC output) to one canonical form."""
    if isinstance(value, bool) or isinstance(value, str) or value is None:
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if isinstance(value, list):
        return [canonical_itf(v) for v in value]
    if isinstance(value, dict):
        if "#bigint" in value:
            return {"#bigint": str(int(value["#bigint"]))}
        if "#tup" in value:
            return [canonical_itf(v) for v in value["#tup"]]
        if "#set" in value:
            return {"#set": sorted((canonical_itf(v) for v in value["#set"]), key=canonical_json)}
        if "#map" in value:
            pairs = [[canonical_itf(k), canonical_itf(v)] for k, v in value["#map"]]
            pairs.sort(key=lambda kv: canonical_json(kv[0]))
            return {"#map": pairs}
        return {k: canonical_itf(v) for k, v in value.items() if k != "#meta"}
    raise TypeError(f"not an ITF value: {value!r}")


def canonical_view(view: Mapping[str, object]) -> str:
    """The canonical JSON text of a view: equal exactly when the TLA+ values are equal."""
    return canonical_json(canonical_itf({k: to_itf(v) for k, v in view.items()}))


def canonical_itf_state(values: Mapping[str, Any]) -> str:
    """The canonical JSON text of one ITF state's variables (``#meta`` and Quint's ``mbt::`` keys ignored)."""
    return canonical_json(canonical_itf({k: v for k, v in values.items()
                                         if k != "#meta" and not k.startswith("mbt::")}))


# --------------------------------------------------------------------------- ITF traces


MBT_ACTION, MBT_PICKS = "mbt::actionTaken", "mbt::nondetPicks"


def _plain_param(v: Any) -> Any:
    if isinstance(v, enum.Enum):
        return v.name
    if isinstance(v, (frozenset, set)):
        return sorted((_plain_param(x) for x in v), key=repr)
    if isinstance(v, tuple):
        return [_plain_param(x) for x in v]
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _plain_param(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, (bool, int, str, float)) or v is None:
        return v
    return repr(v)


def trace_to_itf(trace: Trace, ts: TransitionSystem[Any]) -> dict[str, Any]:
    """The ITF JSON document of a trace, with actions and exact state encodings in ``#meta``."""
    states = []
    variables: list[str] = []
    for i, step in enumerate(trace.steps):
        view = ts.view(step.state)
        if not variables:
            variables = list(view.keys())
        meta: dict[str, Any] = {"index": i, "encoded": ts.encode(step.state).hex()}
        if step.action is None:
            meta["action"] = "Init"
        else:
            meta["action"] = step.action.name
            meta["action_params"] = {k: _plain_param(v) for k, v in step.action.params}
            meta["action_repr"] = repr(step.action)
        values = {k: to_itf(v) for k, v in view.items()}
        # Quint's model-based-testing keys (`quint run --mbt`), so Quint-based tooling reads our traces: the
        # action taken into this state ("init" for the first) and its nondeterministic picks, each an
        # Option variant (only the taken action's parameters are known here: each is Some).
        values[MBT_ACTION] = "init" if step.action is None else step.action.name
        values[MBT_PICKS] = {} if step.action is None else {
            k: {"tag": "Some", "value": to_itf(_plain_param(v))} for k, v in step.action.params}
        states.append(itf_py.State(meta=meta, values={}))
        states[-1].values = values  # already ITF JSON; kept out of itf_py's own conversion
    doc_meta: dict[str, Any] = {
        "format": "ITF",
        "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
        "source": "rollcheck",
        "protocol": trace.protocol or ts.name,
        "config": trace.config,
        # What `rollcheck replay` needs to rebuild this exact system (see rollcheck.explore.replay).
        "profile": getattr(getattr(ts, "config", None), "profile", None),
        "variant": getattr(ts, "variant_id", None),
        "config_repr": repr(getattr(ts, "config", None)),
        "description": trace.description,
    }
    if trace.property_id:
        doc_meta["property"] = trace.property_id
    doc_meta.update(trace.meta)
    variables += [MBT_ACTION, MBT_PICKS]
    itf_trace = itf_py.Trace(meta=doc_meta, params=[], vars=variables, states=[], loop=None)
    doc: dict[str, Any] = itf_py.trace_to_json(itf_trace)
    doc["states"] = [{"#meta": s.meta, **s.values} for s in states]
    return doc


def write_text_atomic(path: Path, text: str, root: Path | None = None) -> Path:
    """Write a file so that readers never see half of it (a temp file in the same folder, then rename).

    The rename replaces a link at ``path`` rather than writing through it; with ``root`` (the user's
    ``--out``), every directory between it and ``path`` is a real one, never a planted link
    (:func:`rollcheck.runtime.safefs.make_dirs`)."""
    path = Path(path)
    if root is not None:
        make_dirs(path.parent, root)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; reports are for everyone to read
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        if exc.filename is None:  # a full disk on write(): the error names no file, the user needs it
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def json_text(doc: Any, **kwargs: Any) -> str:
    """``json.dumps`` that writes JSON only: a NaN or infinite float (a rate over no time, say) is ``null``,
    never ``NaN`` / ``Infinity``, which JSON does not have and strict readers refuse."""
    try:
        return json.dumps(doc, allow_nan=False, **kwargs)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        return json.dumps(_finite(doc), allow_nan=False, **kwargs)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def write_json_atomic(path: Path, doc: Any, root: Path | None = None) -> Path:
    return write_text_atomic(path, json_text(doc, indent=1, sort_keys=False) + "\n", root)


def write_itf(path: Path, trace: Trace, ts: TransitionSystem[Any], root: Path | None = None) -> Path:
    return write_json_atomic(path, trace_to_itf(trace, ts), root)


# A trace file is read whole: one larger than this is refused rather than read (a counterexample of
# rollcheck's is kilobytes to a few megabytes).
ITF_MAX_BYTES = 256 << 20
# How deep values may nest in a trace (a state's variables, a map of records of sets, ...: under 20 in every
# spec): the readers walk values recursively, so a deeper one is refused when the file is read.
ITF_MAX_DEPTH = 200


def load_json_bounded(path: Path, what: str, max_bytes: int = ITF_MAX_BYTES) -> Any:
    """The JSON document in ``path``, read up to ``max_bytes`` (never endlessly: ``/dev/zero``) and nested at
    most :data:`ITF_MAX_DEPTH` deep; anything else is a ``ValueError`` naming the file."""
    try:
        with open(path, "rb") as fh:
            # A regular file says its size: one too large is not read at all; a device or a pipe is read
            # only so far.
            size = os.fstat(fh.fileno()).st_size
            data = b"" if size > max_bytes else fh.read(max_bytes + 1)
    except OSError as exc:
        raise ValueError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    if size > max_bytes or len(data) > max_bytes:
        raise ValueError(f"{path} is larger than {max_bytes >> 20} MiB, more than any {what} rollcheck reads")
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not an {what}: not UTF-8 text (byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from exc
    except RecursionError:  # the decoder's own limit on nesting
        raise ValueError(f"{path}: values nested more than {ITF_MAX_DEPTH} deep are not an {what}") from None
    if _depth_exceeds(doc, ITF_MAX_DEPTH):
        raise ValueError(f"{path}: values nested more than {ITF_MAX_DEPTH} deep are not an {what}")
    return doc


def _depth_exceeds(doc: Any, limit: int) -> bool:
    """Whether lists and objects nest deeper than ``limit`` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            if depth >= limit:
                return True
            stack.extend((v, depth + 1) for v in value if isinstance(v, (dict, list)))
    return False


def read_itf(path: Path) -> dict[str, Any]:
    """Read and minimally validate an ITF document (raises ``ValueError`` with a clear message)."""
    doc = load_json_bounded(path, "ITF trace")
    if not isinstance(doc, dict) or not isinstance(doc.get("states"), list):
        raise ValueError(f"{path} is not an ITF trace (no 'states' list)")
    if not doc["states"]:
        raise ValueError(f"{path}: 'states' is empty (a trace has at least its initial state)")
    for i, state in enumerate(doc["states"]):
        if not isinstance(state, dict):
            raise ValueError(f"{path}: states[{i}] is not a record (an object of variables), "
                             f"but {type(state).__name__}")
        if "#meta" in state and not isinstance(state["#meta"], dict):
            raise ValueError(f"{path}: states[{i}]['#meta'] is not a record")
    if "vars" in doc and not isinstance(doc["vars"], list):
        raise ValueError(f"{path}: 'vars' must be a list")
    return doc


def trace_from_itf(doc: Mapping[str, Any], ts: TransitionSystem[Any]) -> Trace:
    """Rebuild a rollcheck trace from an ITF document that carries state encodings (ours)."""
    steps: list[Step] = []
    for i, raw in enumerate(doc["states"]):
        meta = raw.get("#meta", {})
        if "encoded" not in meta:
            raise ValueError(f"state {i} has no rollcheck encoding; replay it by views instead")
        state = ts.decode(bytes.fromhex(meta["encoded"]))
        action = None
        if i > 0:
            try:
                action = _find_action(ts, steps[-1].state, state, meta.get("action_repr"))
            except ValueError as exc:
                raise ValueError(f"step {i}: {exc}") from None
        steps.append(Step(action, state))
    m = doc.get("#meta", {})
    return Trace(steps, protocol=m.get("protocol", ts.name), config=m.get("config", ""),
                 property_id=m.get("property"), description=m.get("description", ""))


def _find_action(ts: TransitionSystem[Any], before: Any, after: Any, label: str | None) -> Action:
    fallback = None
    for a, s2 in ts.successors(before):
        if s2 == after:
            if label is None or repr(a) == label:
                return a
            fallback = a
    if fallback is not None:
        return fallback
    raise ValueError(f"no enabled action leads to the recorded state (label {label})")


def tla_text(value: Any) -> str:
    """A view value in TLA+ notation (records ``[a |-> 1]``, sets ``{1, 2}``, sequences ``<<1, 2>>``,
    functions ``(k :> v @@ ...)``), which is how the people reading counterexamples think of them."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, enum.Enum):
        return f'"{value.name}"'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if value is None:
        return "None"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        inner = ", ".join(f"{f.name} |-> {tla_text(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"[{inner}]"
    if isinstance(value, Record):
        return "[" + ", ".join(f"{k} |-> {tla_text(v)}" for k, v in value.items()) + "]"
    if isinstance(value, Mapping):
        if not value:
            return "<<>>"
        return "(" + " @@ ".join(f"{tla_text(k)} :> {tla_text(v)}" for k, v in value.items()) + ")"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(tla_text(v) for v in value)) + "}"
    if isinstance(value, (tuple, list)):
        return "<<" + ", ".join(tla_text(v) for v in value) + ">>"
    return repr(value)


def format_trace(trace: Trace, ts: TransitionSystem[Any], width: int = 240) -> str:
    """A human-readable rendering: one block per step, only the view variables that changed."""
    lines: list[str] = []
    prev: Mapping[str, object] | None = None
    for i, step in enumerate(trace.steps):
        view = ts.view(step.state)
        head = "Init" if step.action is None else repr(step.action)
        lines.append(f"{i:>3}  {head}")
        for k, v in view.items():
            if prev is None or prev.get(k) != v:
                text = tla_text(v)
                if len(text) > width:
                    text = text[: width - 3] + "..."
                lines.append(f"       {k} = {text}")
        prev = view
    return "\n".join(lines)


def plain_view(view: Mapping[str, object]) -> dict[str, Any]:
    """A view as plain JSON (for reports)."""
    return {k: canonical_itf(to_itf(v)) for k, v in view.items()}


def path_to(ts_states: Sequence[Any], parents: Sequence[int], actions: Sequence[Action | None],
            target: int) -> list[Step]:
    """Rebuild the path from an initial state to ``target`` from BFS parent pointers."""
    chain: list[Step] = []
    i = target
    while i >= 0:
        chain.append(Step(actions[i], ts_states[i]))
        i = parents[i]
    chain.reverse()
    return chain


def iter_views(ts: TransitionSystem[Any], states: Iterable[Any]) -> Iterable[str]:
    for s in states:
        yield canonical_view(ts.view(s))
