"""KIP-866: the ZooKeeper to KRaft migration."""
