"""The front end: click commands, turning options into a validated run, and the
checks that refuse a run before anything starts."""
