"""The TLA+ side of the engine: model files from a protocol's spec binding, TLC and Apalache runners, TLA+
value printing and parsing, and the spec/code drift check. No protocol is named here."""
