"""Wire schemas of ConsumerGroupHeartbeat (API key 68, KIP-848), read by kafka-python's loader."""
