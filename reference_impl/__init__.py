"""Reference implementations of the protocols: the single source of truth every checker consumes."""
