"""``bench stages``: stage-wise latency of a use case's pipeline (seed 003's method)."""
