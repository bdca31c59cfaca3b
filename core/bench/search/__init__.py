"""Search strategies over (load, resources): which experiments to run, and the
prediction that can seed them."""
