"""The key a gate cell's result is stored under: a digest of everything the result depends on.

Always: the engine's files (every file of the ``rollcheck`` package), the checker's name and, for a checker
defined outside the engine, its module's file; the protocol's name and what its entry names (its modules, its
build, its profiles, its actions), the config's resolved value, its label, the profile, the broken variant (and
its definition), the cell's settings, its differential-only flag, its folder under the output directory and, for a
checker that reads the size another cell counts, whether the plan has that cell. Then what the checker declares
(:meth:`rollcheck.checkers.CheckerBase.inputs`): the protocol content groups it reads (their files,
:mod:`rollcheck.gate.content`), more files or folders, its option values and the versions of the tools that run
it. A checker that declares no inputs, or a result that is not deterministic, has no key: it always runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rollcheck
import rollcheck.gate.content
from rollcheck.checkers import Cell, CheckContext, get_checker
from rollcheck.checkers.inputs import CellInputs, canonical
from rollcheck.gate.content import ContentError, ContentIndex, describe, files_below, module_file

KEY_FORMAT = 1  # a change of what goes into keys changes every key
_KEYED_ELSEWHERE = frozenset({"configs", "variants"})


@dataclass(frozen=True)
class CellKey:
    digest: str
    parts: dict[str, str]  # each part's own digest (engine, content groups, values, tools): what a miss differs in


class KeyBuilder:
    """Keys for the cells of one gate run: each file is read and each tool probed once."""

    def __init__(self, cells: Sequence[Cell], ctx: CheckContext) -> None:
        self.ctx = ctx
        self.engine_dir = Path(rollcheck.__file__).resolve().parent
        self.index = ContentIndex(self.engine_dir)
        self._digests: dict[Path, str] = {}
        self._tools: dict[str, str] = {}
        self._engine: str | None = None
        self._sized = {c.size_key for c in cells if get_checker(c.checker).capabilities.sizes_cells}

    def key(self, cell: Cell, cores: int) -> CellKey | str:
        """The cell's key when it runs with ``cores`` cores, or why it has none."""
        checker = get_checker(cell.checker)
        declare = getattr(checker, "inputs", None)
        if declare is None:
            return f"{cell.checker} declares no inputs"
        out_dir = self.ctx.out_dir / cell.subdir if cell.subdir else self.ctx.out_dir
        cell_ctx = dataclasses.replace(self.ctx, variant=cell.variant, out_dir=out_dir, cores=cores,
                                       differential_only=cell.differential_only, settings=cell.settings)
        try:
            inputs: CellInputs = declare(cell, cell_ctx)
        except Exception as exc:  # a checker that cannot say what it reads is run, not reused
            return f"its inputs could not be named ({type(exc).__name__}: {exc})"
        if not inputs.deterministic:
            return inputs.why_not or "not deterministic"
        try:
            parts = {"engine": self._engine_digest(), "checker": self._checker(checker, cell),
                     "cell": _digest(self._cell(cell)),
                     **{f"content:{group}": self._group(cell, group) for group in sorted(inputs.reads)},
                     "paths": self._paths(inputs.paths), "values": _digest(canonical(inputs.values)),
                     **{f"tool:{name}": _digest(self._tool(name, probe))
                        for name, probe in sorted(inputs.tools.items())}}
        except ContentError as exc:
            return f"its content cannot be found ({exc})"
        return CellKey(_digest({"format": KEY_FORMAT, **parts}), parts)

    # ------------------------------------------------------------------ parts

    def _engine_digest(self) -> str:
        if self._engine is None:
            root = self.engine_dir.parent
            self._engine = _digest([[f.relative_to(root).as_posix(), self._file(f)]
                                    for f in files_below(self.engine_dir)])
        return self._engine

    def _checker(self, checker: Any, cell: Cell) -> str:
        own = module_file(checker)
        code = None if own is None or own.is_relative_to(self.engine_dir) else self._file(own)
        return _digest({"name": cell.checker, "type": f"{type(checker).__module__}.{type(checker).__qualname__}",
                        "module": code})

    def _cell(self, cell: Cell) -> dict[str, Any]:
        e = cell.entry
        variant = e.variant(cell.variant) if cell.variant else None
        needs_size = get_checker(cell.checker).capabilities.needs_size
        return {
            "protocol": e.name, "label": cell.label, "config": canonical(cell.config),
            "profile": cell.config.profile, "variant": cell.variant,
            "variant_definition": canonical(variant) if variant is not None else None,
            "differential_only": cell.differential_only, "settings": canonical(cell.settings),
            "subdir": cell.subdir, "size_known": cell.size_key in self._sized if needs_size else None,
            # What its registration names (its modules, its build, its profiles, its actions); its configs and
            # variants are keyed as this cell's config and variant (and as a checker declares it reads them all).
            "entry": {f.name: canonical(getattr(e, f.name)) for f in dataclasses.fields(e)
                      if f.name not in _KEYED_ELSEWHERE},
        }

    def _group(self, cell: Cell, group: str) -> str:
        files = self.index.files(cell.entry, group)
        return _digest([[name, self._file(f)] for name, (f, _root) in zip(describe(files), files, strict=True)])

    def _paths(self, paths: Sequence[Path]) -> str:
        rows = []
        for p in paths:
            base = Path(p).resolve()
            rows.append([base.name, [[f.relative_to(base).as_posix() if f != base else "", self._file(f)]
                                     for f in files_below(base)] if base.exists() else "absent"])
        return _digest(rows)

    def _tool(self, name: str, probe: Any) -> str:
        if name not in self._tools:
            try:
                self._tools[name] = str(probe())
            except Exception as exc:  # a probe that fails says so in the key: the cell is keyed as such
                self._tools[name] = f"probe failed: {type(exc).__name__}: {exc}"
        return self._tools[name]

    def _file(self, path: Path) -> str:
        if path not in self._digests:
            try:
                self._digests[path] = hashlib.sha256(rollcheck.gate.content.read_bytes(path)).hexdigest()
            except OSError as exc:
                self._digests[path] = f"unreadable: {exc.strerror or exc}"
        return self._digests[path]


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr).encode()).hexdigest()
