"""The Spark engine: distributed breadth-first exploration and random-walk simulation."""
