"""Built-in generators plugin (placeholder until implemented)."""
