"""Local Kafka clusters from the released jars (the engine's, protocol-free): nodes as JVM processes on 127.0.0.1
(:mod:`~rollcheck.cluster.node`), a run that stops every one of them (:mod:`~rollcheck.cluster.cluster`), a
release's binaries from Maven Central (:mod:`~rollcheck.cluster.dist`) and Kafka's own processes and tools on them
(:mod:`~rollcheck.cluster.kafka`)."""
