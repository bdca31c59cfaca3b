"""The reference patcher set, as pure functions.

Every patcher takes ``(objects, value, properties)`` and returns patched deep copies;
the input is never mutated, so the engine can patch one template for every experiment.
"""
