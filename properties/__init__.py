"""Properties of every protocol (stable ids, KIP citations) and the Hypothesis state machines."""
