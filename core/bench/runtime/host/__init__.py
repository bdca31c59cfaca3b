"""The host: child processes, host statistics, loopback ports, the JAR cache and the child protocol."""
