"""What a run leaves behind: result files, the demand/capacity table, SLI info
files, the environment record and plots, written atomically and read back."""
