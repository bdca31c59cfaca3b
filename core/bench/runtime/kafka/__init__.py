"""Kafka: brokers bench starts, topic admin, client security, bench's Python source and sink, lag and latency."""
