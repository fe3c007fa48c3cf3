"""Wire schemas of the Kafka APIs kafka-python has no class for (read by its schema loader)."""
