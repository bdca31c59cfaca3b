"""Built-in calibrated plugin (placeholder until implemented)."""
