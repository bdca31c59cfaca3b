"""Configuration: the Benchmark and Execution models, their validation, the files
they are read from and the bounds of every value, so that a run is refused before it starts."""
