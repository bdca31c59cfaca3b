"""Spark: the session, the SUT driver program, a user's own job, standalone clusters and per-instance CPU limits."""
