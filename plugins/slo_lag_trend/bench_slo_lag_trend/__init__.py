"""The lag-trend SLO plugin (placeholder until implemented)."""
