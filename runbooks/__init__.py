"""Operator runbooks (docs/runbooks.md): one folder per protocol, holding its runbook files (TOML) and, in
its ``__init__``, the named conditions those files may wait for or name as their goal."""
