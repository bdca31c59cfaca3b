"""Built-in slos plugin (placeholder until implemented)."""
