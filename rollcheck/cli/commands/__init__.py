"""One module per sub-command (``<name>_cmd.py``), each with ``register(subparsers)``."""
