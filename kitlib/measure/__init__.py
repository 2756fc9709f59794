"""Measuring, in steps that import only downwards: the host and its commands (`host`), the benchmark
image, VMs, environments and peers; then the tools' parsers, plans (`planning`), the store that writes
results folders, provenance, estimates, capacity probes and clean-up; above them `experiments`, each
experiment's workloads on its spec; at the top `run`, the runner, plan files and the checks before a
run. Stands on `kitlib.core`, `kitlib.specs` and `kitlib.results`; never on `kitlib.analyse`."""
