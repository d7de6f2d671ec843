"""KIP-268: Kafka Streams rebalance metadata upgrade with version probing."""
