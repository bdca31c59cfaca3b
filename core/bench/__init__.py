"""bench: scalability benchmarking of Spark Structured Streaming jobs (Theodolite method)."""

__version__ = "0.1.0"
