"""Apache Kafka's own unit tests, transcribed as facts (inputs and expected outputs) against rollcheck's APIs."""
