"""The SLO decision, the heart of the method: verdicts of a repetition and when they
are decided early, for every registered SLO type alike."""
