"""KIP-584 feature versioning (ZooKeeper era) with its all-or-nothing revision."""
