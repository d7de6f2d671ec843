"""rollcheck: verification of Kafka's rolling-upgrade protocols (KIP-584, KIP-778, KIP-866, KIP-268)."""

__version__ = "0.1.0"
