"""The ``metadata_version`` protocol: KRaft ``metadata.version`` upgrades and downgrades (KIP-778)."""
