"""TLA+ specifications, config generation, TLC and Apalache runners, trace parsing."""
