"""Platforms run the SUT, the generators and the samplers of one experiment."""
