"""Built-in patchers plugin (placeholder until implemented)."""
