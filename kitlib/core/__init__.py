"""The foundation every other part stands on: errors, paths, records and their columns, statistics,
host ids and facts, processes and signals, the rules that judge a point (interference, steady state,
sequential looks). Imports nothing of the kit above it."""

#: the kit's version (pyproject.toml says the same), recorded in every run's provenance
VERSION = "0.1.0"
