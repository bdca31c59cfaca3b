"""Load: the open-workload generator and the child process that runs one instance of it."""
