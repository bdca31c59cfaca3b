"""Built-in search plugin (placeholder until implemented)."""
