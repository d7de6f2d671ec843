"""The decision rules, one module per protocol: :mod:`model.decisions.features` (KIP-584),
:mod:`model.decisions.metadata_version` (KIP-778), :mod:`model.decisions.zk_migration` (KIP-866) and
:mod:`model.decisions.streams` (Kafka Streams, KIP-268). Each states its rules as Z3 formulas beside the
reference's function of the same inputs and registers them as ``DECISIONS`` (a
:class:`rollcheck.smt.decisions.DecisionRules`) through its protocol's ``ProtocolEntry.decisions``; the shared
machinery (``Formula``, ``differential``, the output codes) is the engine's :mod:`rollcheck.smt.decisions`.
Kafka's error codes, which the features and metadata.version rules share, are :mod:`model.decisions.kafka_errors`.
"""
