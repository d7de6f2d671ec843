"""Hypothesis over the reference: the rule-based state machine and the fuzzing campaign."""
