"""The explorer: the breadth-first level loop (Exploration over ExploreOptions), its expansion in worker
processes, the level store and checkpoints, the graph check, shortest traces and trace replay; the Spark engine
(rollcheck.spark) reuses the same loop."""
