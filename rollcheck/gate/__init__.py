"""The CI gate: every configured protocol x config x profile through every configured checker.

Rooms: :mod:`~rollcheck.gate.config` (the ``[gate]`` table and the tiers), :mod:`~rollcheck.gate.plan` (the
cells), :mod:`~rollcheck.gate.run` (running them), :mod:`~rollcheck.gate.verdict` (findings and the exit code),
:mod:`~rollcheck.gate.outputs` (what a run writes), beside the cell runner, the report writers and the broken
variants' matrix.
"""

from rollcheck.gate.config import (
           TIERS,
           GateConfig,
           default_gate_config,
           gate_config_keys,
           load_gate_config,
           tier_context,
)
from rollcheck.gate.outputs import GATE_REPORTS, check_outputs, gate_dirs, kept_names
from rollcheck.gate.plan import estimate_plan, plan_cells, previous_timings, under_every_profile
from rollcheck.gate.run import run_gate
from rollcheck.gate.verdict import Finding, FindingKind, GateResult, findings_of

__all__ = ["GATE_REPORTS", "TIERS", "Finding", "FindingKind", "GateConfig", "GateResult", "check_outputs",
           "default_gate_config", "estimate_plan", "findings_of", "gate_config_keys", "gate_dirs", "kept_names",
           "load_gate_config", "plan_cells", "previous_timings", "run_gate", "tier_context", "under_every_profile"]
