"""Counterexamples as regression tests: ``rollcheck export-test`` and the gate's ``--export-tests``.

:func:`export_test` turns an ITF counterexample that rollcheck wrote into one small pytest file: the trace's
story in its docstring, the trace itself as a compact JSON string, and one call of :func:`check_regression`,
the engine function that does the work, so that every exported test runs the same code.

:func:`check_regression` rebuilds the system the trace's ``#meta`` names (protocol, config, profile), the
reference by default or a broken variant when asked (``ROLLCHECK_EXPORT_VARIANT=<variant id>`` in the
exported file), and replays the recorded *actions*, not the recorded states: at each step it takes, among
the successors of the state reached so far, the transition whose action equals the recorded one (name and
parameters; when several do, the one that reaches the recorded state, else the first). A fix passes in one
of two ways: the recorded action is no longer enabled at some step (the fix disables the bad step), or every
action still runs and the property the trace violated holds on the states the system now reaches (the fix
changed the step's effect). The property is checked by :func:`rollcheck.explore.replay.check_trace`, as
``rollcheck replay`` checks it: an invariant at each state, a step property at each transition, a graph
(liveness) property at the last state reached.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shlex
import textwrap
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.checkers import VIOLATED, CheckerReport
from rollcheck.core.configs import (
    config_from_fields,
    config_from_mapping,
    config_from_repr,
    config_table,
    resolve_config,
)
from rollcheck.core.errors import UserError
from rollcheck.core.registry import build_system, check_profile, get_protocol
from rollcheck.core.traces import Step, Trace, _plain_param, read_itf, write_text_atomic
from rollcheck.core.transition import Action, GraphProperty, ProtocolEntry, TransitionSystem, Witness, replace_config
from rollcheck.explore.replay import check_trace

VARIANT_ENV = "ROLLCHECK_EXPORT_VARIANT"
DEFAULT_DIR = Path("tests") / "regressions"
EXPORT_KEY = "rollcheck-export"  # in the embedded trace's #meta: what the export adds (a config file's fields)
HASH_LENGTH = 8
_WIDTH = 116  # the generated file's lines stay under the repository's 120 columns


# --------------------------------------------------------------------------- reading a counterexample


@dataclass(frozen=True)
class RecordedStep:
    """One state of the trace as recorded: the action that led to it and the state's exact encoding."""

    name: str  # "Init" for the initial state
    params: dict[str, Any]
    label: str  # the action's repr, as the trace prints it
    encoded: str | None


@dataclass
class Counterexample:
    path: str
    doc: dict[str, Any]
    protocol: str
    config: str
    profile: str | None
    variant: str | None
    property_id: str
    steps: list[RecordedStep]

    @property
    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = self.doc["#meta"]
        return meta


def parse_counterexample(doc: Mapping[str, Any], where: str) -> Counterexample:
    """The counterexample an ITF document records, or a one-line :class:`UserError` saying what it lacks."""
    meta = doc.get("#meta")
    if not isinstance(meta, dict):
        raise UserError(f"{where}: the ITF trace has no '#meta' record: not a trace rollcheck wrote")
    protocol = meta.get("protocol")
    if not isinstance(protocol, str) or not protocol:
        raise UserError(f"{where}: #meta names no protocol: not a trace rollcheck wrote, or written before "
                        "traces carried their system")
    config = meta.get("config")
    if not isinstance(config, str) or not config:
        raise UserError(f"{where}: #meta names no config: not a trace rollcheck wrote")
    prop = meta.get("property")
    if not isinstance(prop, str) or not prop:
        raise UserError(f"{where}: #meta names no violated property ('property'): not a counterexample")
    steps: list[RecordedStep] = []
    for i, state in enumerate(doc["states"]):
        smeta = state.get("#meta") or {}
        name, params = smeta.get("action"), smeta.get("action_params", {} if i == 0 else None)
        if not isinstance(name, str) or not isinstance(params, dict):
            raise UserError(f"{where}: state {i} records no action ('action' and 'action_params' in its #meta): "
                            "not a trace rollcheck wrote")
        encoded = smeta.get("encoded")
        steps.append(RecordedStep(name, params, str(smeta.get("action_repr", name)),
                                  encoded if isinstance(encoded, str) else None))
    profile, variant = meta.get("profile"), meta.get("variant")
    return Counterexample(where, dict(doc), protocol, config, profile if isinstance(profile, str) else None,
                          variant if isinstance(variant, str) and variant else None, prop, steps)


def read_counterexample(path: Path) -> Counterexample:
    if not path.exists():
        raise UserError(f"trace not found: {path}")
    if path.is_dir():
        raise UserError(f"{path} is a directory, not an ITF trace")
    try:
        doc = read_itf(path)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return parse_counterexample(doc, str(path))


def trace_hash(cx: Counterexample) -> str:
    """A short hash of what makes the trace this trace: its system, property, actions and states (not its
    prose, nor where it was written), so exporting it again gives the same name."""
    key = {"protocol": cx.protocol, "config": cx.config, "profile": cx.profile, "variant": cx.variant,
           "property": cx.property_id, "steps": [[s.label, s.encoded] for s in cx.steps]}
    text = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_LENGTH]


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_") or "x"


def exported_name(cx: Counterexample) -> str:
    """``test_<protocol>_<variant or reference>_<property>_<hash>``: the file's stem and the function's name."""
    return "_".join(("test", _slug(cx.protocol), _slug(cx.variant or "reference"), _slug(cx.property_id),
                     trace_hash(cx)))


# --------------------------------------------------------------------------- rebuilding the system


def _config(entry: ProtocolEntry, meta: Mapping[str, Any], where: str, variant: str | None = None,
            config_file: Path | None = None) -> tuple[str, Any]:
    """The trace's config: a named one; else the file the caller named (``config_file``: the user's, on the
    command line); else the config the export embedded; else the one the trace records (``config_repr``,
    parsed, never run). A file the trace names is never read: its name is the trace's word, not the user's."""
    label = meta.get("config")
    if not isinstance(label, str) or not label:
        raise UserError(f"{where}: #meta names no config")
    if label in entry.configs:
        config = entry.configs[label]
    elif config_file is not None:
        _, config = resolve_config(entry, str(config_file))
    else:
        embedded = meta.get(EXPORT_KEY)
        embedded = embedded if isinstance(embedded, dict) else {}
        if "config_fields" in embedded:
            config = config_from_fields(entry, embedded["config_fields"], f"{where}: the embedded config {label}")
        elif isinstance(embedded.get("config_toml"), str):  # an export written before config_fields
            try:
                raw = tomllib.loads(embedded["config_toml"])
            except tomllib.TOMLDecodeError as exc:
                raise UserError(f"{where}: the embedded config file {label} is not TOML: {exc}") from None
            config = config_from_mapping(entry, raw, origin=label)
        else:
            try:
                recorded = config_from_repr(entry, meta.get("config_repr"), f"{where}: config file {label}")
            except UserError as exc:
                raise UserError(f"{exc}; name the config file with --config FILE") from None
            config = _without_variant(entry, recorded, variant, label, where)
    profile = meta.get("profile")
    if isinstance(profile, str):
        config = replace_config(config, profile=check_profile(entry, profile, f"{where}: #meta"))
    return label, config


def _without_variant(entry: ProtocolEntry, config: Any, variant: str | None, label: str, where: str) -> Any:
    """The config a broken variant's system was built from, given the config it ran on (``config_repr``
    records the latter): the variant's mutations taken out. A variant that also replaces fields leaves their
    values in the config file unknown, so the file itself is needed."""
    if variant is None or variant not in {v.id for v in entry.variants}:
        return config
    v = entry.variant(variant)
    base = entry.configs[v.config]
    after = v.system(base).config
    changed = [f.name for f in dataclasses.fields(base)
               if f.name not in ("mutations", "profile") and getattr(after, f.name) != getattr(base, f.name)]
    if changed:
        raise UserError(f"{where}: variant {variant} replaces {', '.join(changed)} in its config, so the trace "
                        f"does not tell config file {label}'s own values: name the file with --config FILE")
    added = set(after.mutations) - set(base.mutations)
    return dataclasses.replace(config, mutations=frozenset(set(config.mutations) - added))


def _build(entry: ProtocolEntry, config: Any, variant: str | None, where: str) -> TransitionSystem[Any]:
    try:
        return build_system(entry.name, config, variant)
    except ValueError as exc:  # a config the system refuses
        raise UserError(f"{where}: {entry.name} under profile {config.profile}: {exc}") from None


def _check_config(entry: ProtocolEntry, config: Any, cx: Counterexample) -> str | None:
    """Why the config is no longer the one the trace was made with (None: it is, or it cannot be told: the
    trace's variant no longer exists). Compared on the trace's own system, since a variant may add a
    mutation flag to its config."""
    want = cx.meta.get("config_repr")
    if not isinstance(want, str) or (cx.variant is not None and cx.variant not in {v.id for v in entry.variants}):
        return None
    recorded = _build(entry, config, cx.variant, cx.path)
    if repr(recorded.config) == want:
        return None
    return (f"config {cx.config!r} is no longer the one the trace was made with (its fields differ): the "
            "recorded actions would run on another system; export the trace again from a fresh run")


# --------------------------------------------------------------------------- the check an exported test runs


@dataclass
class RegressionOutcome:
    """What :func:`check_regression` found. ``passed``: the property the trace violated no longer fails along
    the recorded actions (``disabled_step`` says at which step the fix refused the recorded action, None when
    every action ran); ``skipped``: the test does not apply (a variant of another protocol was asked for)."""

    property_id: str
    system: str  # protocol/config/profile and "reference" or "variant V"
    steps: int  # recorded transitions
    replayed: int = 0  # transitions replayed
    disabled_step: int | None = None
    failure: str | None = None  # one line: the property still violated, or why the test cannot tell
    skipped: str | None = None
    changed_steps: list[int] = field(default_factory=list)  # steps that reached another state than recorded
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.failure is None and self.skipped is None


def _same_action(action: Action, recorded: RecordedStep) -> bool:
    if action.name != recorded.name:
        return False
    params = {k: _plain_param(v) for k, v in action.params}
    return json.dumps(params, sort_keys=True) == json.dumps(recorded.params, sort_keys=True)


def _decoded(ts: TransitionSystem[Any], encoded: str | None) -> Any:
    if encoded is None:
        return None
    try:
        return ts.decode(bytes.fromhex(encoded))
    except Exception:  # a state the fixed system no longer encodes this way: match by action only
        return None


def _pick(candidates: Sequence[tuple[Action | None, Any]], recorded: Any) -> tuple[Action | None, Any, bool]:
    """The candidate that reaches the recorded state, else the first; and whether it is the recorded one."""
    if recorded is not None:
        for action, state in candidates:
            if state == recorded:
                return action, state, True
    action, state = candidates[0]
    return action, state, False


def check_regression(trace: str | Mapping[str, Any], variant: str | None = None) -> RegressionOutcome:
    """Replay a counterexample's recorded actions on the reference (or on broken ``variant``) and check the
    property it violated on the states reached. See the module's docstring."""
    doc = json.loads(trace) if isinstance(trace, str) else trace
    cx = parse_counterexample(doc, "the embedded trace")
    entry = get_protocol(cx.protocol)
    variant = variant or None
    label, config = _config(entry, cx.meta, cx.path, cx.variant)
    system = f"{cx.protocol}/{label}/{config.profile} " + (f"variant {variant}" if variant else "reference")
    out = RegressionOutcome(cx.property_id, system, len(cx.steps) - 1)
    if variant is not None and variant not in {v.id for v in entry.variants}:
        known = ", ".join(v.id for v in entry.variants) or "none"
        out.skipped = f"{VARIANT_ENV}={variant} is not a broken variant of {cx.protocol} (its variants: {known})"
        out.message = out.skipped
        return out
    drift = _check_config(entry, config, cx)
    if drift is not None:
        out.failure = f"{cx.property_id}: cannot tell on {system}: {drift}"
        out.message = out.failure
        return out
    ts = _build(entry, config, variant, cx.path)
    prop = next((p for p in ts.properties() if p.id == cx.property_id), None)
    if prop is None or isinstance(prop, Witness):
        what = "a witness, not a property a trace violates" if prop is not None else "not one of its properties"
        out.failure = f"{cx.property_id} is {what} on {system}"
        out.message = out.failure
        return out
    initial = list(ts.initial_states())
    if not initial:
        out.failure = f"{cx.property_id}: {system} has no initial state"
        out.message = out.failure
        return out
    _, start, same = _pick([(None, s) for s in initial], _decoded(ts, cx.steps[0].encoded))
    if not same:
        out.changed_steps.append(0)
    steps = [Step(None, start)]
    for i, rec in enumerate(cx.steps[1:], 1):
        matching = [(a, s2) for a, s2 in ts.successors(steps[-1].state) if _same_action(a, rec)]
        if not matching:
            out.disabled_step = i
            break
        action, state, same = _pick(matching, _decoded(ts, rec.encoded))
        if not same:
            out.changed_steps.append(i)
        steps.append(Step(action, state))
    out.replayed = len(steps) - 1
    notes: list[str] = []
    failures = check_trace(ts, Trace(steps, protocol=cx.protocol, config=label), notes, only={cx.property_id})
    if failures:
        f = failures[0]
        where = "in the initial state" if f.step == 0 else f"at step {f.step} of {out.steps} ({cx.steps[f.step].label})"
        if isinstance(prop, GraphProperty):
            where = f"at the last state reached ({where})"
        out.failure = f"{cx.property_id} ({prop.kind}) still violated {where} on {system}: {prop.description}"
    elif notes:
        out.failure = f"{cx.property_id}: cannot tell on {system}: {'; '.join(notes)}"
    elif out.disabled_step is not None:
        i = out.disabled_step
        out.message = (f"{cx.property_id} holds: the fix disables step {i} of {out.steps}: {cx.steps[i].label} is not "
                       f"enabled on {system} (the property held on the {i} state(s) before it)")
    else:
        changed = [i for i in out.changed_steps if i > 0]
        effect = (f"; step(s) {', '.join(map(str, changed))} now reach another state than recorded" if changed
                  else "")
        out.message = (f"{cx.property_id} holds on every state {system} reaches along the {out.steps} recorded "
                       f"action(s){effect}")
    if out.failure is not None:
        out.message = out.failure
    return out


# --------------------------------------------------------------------------- writing the test file


@dataclass
class Exported:
    path: str  # the test file
    test: str  # its test function (the file's stem)
    trace: str  # the ITF file it came from
    protocol: str
    variant: str | None
    property_id: str
    steps: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "test": self.test, "trace": self.trace, "protocol": self.protocol,
                "variant": self.variant, "property": self.property_id, "steps": self.steps}


def export_test(path: Path, out_dir: Path = DEFAULT_DIR, command: str | None = None,
                config_file: Path | None = None) -> Exported:
    """Write the regression test of the counterexample at ``path`` into ``out_dir`` (same trace, same file).
    ``command``: the command line that exported it, for the docstring (default: ``rollcheck export-test``).
    ``config_file``: the config file the trace was made with, as the user names it (a trace from a config
    file otherwise carries its config in ``config_repr``; the file it names is never read)."""
    cx = read_counterexample(Path(path))
    entry = get_protocol(cx.protocol)
    label, config = _config(entry, cx.meta, cx.path, cx.variant, config_file)
    if cx.variant is not None and cx.variant not in {v.id for v in entry.variants}:
        raise UserError(f"{cx.path}: {cx.protocol} has no broken variant {cx.variant} any more")
    recorded = _build(entry, config, cx.variant, cx.path)
    prop = next((p for p in recorded.properties() if p.id == cx.property_id), None)
    if prop is None:
        raise UserError(f"{cx.path}: {cx.property_id} is not a property of {cx.protocol}/{label}/{config.profile}")
    if isinstance(prop, Witness):
        raise UserError(f"{cx.path}: a witness trace ({cx.property_id}: a story the config tells, reached), not a "
                        "counterexample: it names no violated property, so there is nothing to turn into a test")
    drift = _check_config(entry, config, cx)
    if drift is not None:
        raise UserError(f"{cx.path}: {drift}")
    name = exported_name(cx)
    target = Path(out_dir) / f"{name}.py"
    doc = json.loads(json.dumps(cx.doc))  # a copy, to add what the export embeds
    doc["#meta"].pop(EXPORT_KEY, None)
    if label not in entry.configs:
        # A config file: its fields (never the file's text) embedded, so the test runs wherever the file is not.
        fields = config_table(config)
        if repr(config_from_fields(entry, fields, cx.path)) != repr(config):
            raise UserError(f"{cx.path}: config {label} does not survive being embedded as data")
        doc["#meta"][EXPORT_KEY] = {"config_fields": fields}
    command = command or shlex.join(["rollcheck", "export-test", str(path), "-o", str(out_dir)])
    story = entry.variant(cx.variant).story if cx.variant else None
    text = render(cx, doc, name, target, command, prop.kind, prop.description, prop.source, story)
    try:
        write_text_atomic(target, text, root=Path(out_dir))
    except OSError as exc:
        raise UserError(f"cannot write {target}: {exc.strerror or exc}") from None
    return Exported(str(target), name, str(path), cx.protocol, cx.variant, cx.property_id, len(cx.steps) - 1)


def _wrap(text: str, indent: str = "", first: str = "", hang: str = "    ") -> list[str]:
    return textwrap.wrap(text, width=_WIDTH, initial_indent=indent + first, subsequent_indent=indent + hang,
                         break_long_words=True, break_on_hyphens=False) or [indent + first]


def _docstring_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _string_chunks(text: str, indent: str = "    ") -> list[str]:
    """``text`` as implicitly concatenated string literals, each line within the width."""
    lines, start = [], 0
    while start < len(text):
        end = min(len(text), start + _WIDTH - len(indent) - 4)
        while end > start + 1 and len(repr(text[start:end])) > _WIDTH - len(indent):
            end -= 1
        lines.append(indent + repr(text[start:end]))
        start = end
    return lines


def render(cx: Counterexample, doc: Mapping[str, Any], name: str, target: Path, command: str, kind: str,
           statement: str, source: str, story: str | None) -> str:
    """The text of the exported test file."""
    rerun = f"python -m pytest -q -p no:cacheprovider -n 0 {shlex.quote(str(target))}"
    find = ["rollcheck", "explore", cx.protocol, "--config", cx.config]
    find += ["--profile", cx.profile] if cx.profile else []
    find += ["--variant", cx.variant] if cx.variant else []
    head = [f"Regression test for {cx.property_id}, exported from a rollcheck counterexample."]
    body = [
        f"protocol: {cx.protocol}; config: {cx.config}; profile: {cx.profile or 'the config default'}",
        "variant: " + (f"{cx.variant} ({story})" if cx.variant else "none (the trace came from the reference)"),
        f"property: {cx.property_id} ({kind}): {statement}" + (f" [{source}]" if source else ""),
    ]
    lines = [*head, ""]
    for b in body:
        lines += _wrap(b)
    lines += ["", f"The counterexample, {len(cx.steps) - 1} step(s) from the initial state:", ""]
    for i, step in enumerate(cx.steps[1:], 1):
        lines += _wrap(step.label, "    ", f"{i:>2}. ")
    lines.append("")
    lines += _wrap(
        "The test rebuilds the system from the trace's #meta (by default the REFERENCE, not the variant) and "
        "replays the recorded actions: it passes when the fix disables a recorded step (that action is no longer "
        f"enabled) or when {cx.property_id} holds on every state the system reaches; it fails, naming the property, "
        "the step and the action, when the property is still violated (rollcheck.explore.regression.check_regression "
        "does the work).", hang="")
    lines.append("")
    bug = f"; {VARIANT_ENV}={cx.variant}, the bug this trace came from, makes it fail." if cx.variant else "."
    lines += _wrap(f"{VARIANT_ENV}=<variant id> builds that broken variant of {cx.protocol} instead (a variant of "
                   f"another protocol skips the test){bug}", hang="")
    lines += ["", "exported by:"]
    lines += _wrap(command, "    ")
    lines += ["from the trace:"]
    lines += _wrap(cx.path, "    ")
    lines += ["rerun:"]
    lines += _wrap(rerun, "    ")
    if cx.variant:
        lines += _wrap(f"{VARIANT_ENV}={cx.variant} {rerun}", "    ")
    lines += ["replay the original trace, and find it again:"]
    lines += _wrap(shlex.join(["rollcheck", "replay", cx.path]), "    ")
    lines += _wrap(shlex.join(find), "    ")
    docstring = _docstring_text("\n".join(lines).rstrip())
    trace_json = json.dumps(doc, separators=(",", ":"), ensure_ascii=True)
    steps = len(cx.steps) - 1
    code = [
        f'"""{docstring}\n"""',
        "",
        "from __future__ import annotations",
        "",
        "import os",
        "",
        "import pytest",
        "",
        "from rollcheck.explore.regression import VARIANT_ENV, check_regression",
        "",
        f"STEPS = {steps}",
        "# The counterexample (ITF JSON, as rollcheck wrote it).",
        "TRACE = (",
        *_string_chunks(trace_json),
        ")",
        "",
        "",
        f"def {name}() -> None:",
        "    outcome = check_regression(TRACE, variant=os.environ.get(VARIANT_ENV))",
        "    if outcome.skipped:",
        "        pytest.skip(outcome.skipped)",
        "    assert outcome.passed, outcome.message",
        "    if outcome.disabled_step is None:",
        f"        # Every recorded action ran and {cx.property_id} held on each state reached.",
        "        assert outcome.replayed == STEPS, outcome.message",
        "    else:",
        "        # The fix works by disabling the bad step: the recorded action is no longer enabled at this step,",
        f"        # so the counterexample cannot happen ({cx.property_id} held on every state before it).",
        "        assert 1 <= outcome.disabled_step <= STEPS, outcome.message",
        "",
    ]
    return "\n".join(code)


# --------------------------------------------------------------------------- the gate's hook


def export_reports(reports: Iterable[CheckerReport], out_dir: Path
                   ) -> tuple[list[Exported], list[tuple[CheckerReport, str]]]:
    """A test per counterexample trace in the gate's reports (``--export-tests``): the files written (one per
    distinct trace) and, for a trace that could not be exported, its report and why."""
    written: dict[str, Exported] = {}
    errors: list[tuple[CheckerReport, str]] = []
    for report in reports:
        for verdict in report.properties.values():
            if verdict.status != VIOLATED or not verdict.trace_path:
                continue
            try:
                exported = export_test(Path(verdict.trace_path), out_dir,
                                       command=f"rollcheck gate --export-tests {shlex.quote(str(out_dir))}")
            except UserError as exc:
                errors.append((report, str(exc)))
                continue
            written.setdefault(exported.path, exported)
    return list(written.values()), errors
