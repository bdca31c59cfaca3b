"""Runtime adapters: broker, Spark, generators, lag sampling, child processes."""
