"""Measuring: the host and its commands, the benchmark image, VMs, environments and peers, the
experiments' workloads and the tools' parsers, plans, the runner, the store that writes results
folders, provenance and clean-up. Stands on `kitlib.core`, `kitlib.specs` and `kitlib.results`; never
on `kitlib.analyse`."""
