"""The Z3 side of the engine: the symbolic-system interface, BMC and k-induction, and the gate adapter.
Each protocol's encoding is content (``model/<protocol>.py``), named by its ProtocolEntry."""
