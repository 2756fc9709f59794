"""The comparison across placements of "A Performance Study of Containers in Cloud Environment":
LXC, Docker and Docker inside a VM (its Table 2 and Figs. 3 and 5), from the block, net and memory
records of those environments, one host at a time."""

from __future__ import annotations

import pandas as pd

from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import STUDIES, grouped_bars

STUDY = STUDIES["cloud-containers"]
#: the figure's file name, with the study's short name
FIGURE = "placement-cloud-containers-fig3-5-iops-rtt"

#: environments of the placement study; Docker on the host is the study's "Docker" (AUFS + NAT)
PLACEMENT_ENVS = ("lxc", "docker-nat-overlay", "docker-host-volume", "docker-in-kvm", "docker-in-qemu-tcg")


def has_placement_runs(df: pd.DataFrame) -> bool:
    envs = set(df["env"].astype(str))
    return "lxc" in envs or any(e.startswith("docker-in-") for e in envs)


def _placement(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["env"].astype(str).str.split("+").str[0].isin(PLACEMENT_ENVS)]


def stream_table(df: pd.DataFrame) -> pd.DataFrame:
    """The study's Table 2: STREAM Copy/Scale/Add/Triad (GB/s, mean) per placement, rows per host and kernel
    (two machines' runs are never averaged into one cell)."""
    rows = _placement(df)
    rows = rows[(rows["experiment"] == "memory") & (rows["metric"] == "bandwidth")]
    if "variant" in rows.columns:
        rows = rows[rows["variant"] == "System"]
    if rows.empty:
        return pd.DataFrame()
    rows = hosts.with_hosts(rows)
    table = rows.pivot_table(index=["host", "kernel"], columns="env", values="value", aggfunc="mean")
    order = {k: i for i, k in enumerate(("Copy", "Scale", "Add", "Triad"))}
    return table.sort_index(key=lambda level: level.map(order) if level.name == "kernel" else level).round(3)


#: columns that make two fio runs different configurations (never pooled into one bar)
FIO_CONFIGURATION = ("iodepth", "numjobs", "block_size")


def one_fio_configuration(rows: pd.DataFrame, prefer: str) -> pd.DataFrame:
    """The rows of one fio configuration, the one environment `prefer` ran most (where it ran), so
    that runs with other queue depths or job counts are never pooled into one bar."""
    columns = [c for c in FIO_CONFIGURATION if c in rows.columns and rows[c].notna().any()]
    if not columns or rows.empty:
        return rows
    # a column a run did not record (older runs have no numjobs) is a value of its own, not a wildcard
    keys = rows[columns].astype(object).where(rows[columns].notna(), "unrecorded")
    reference = keys[rows["env"] == prefer] if (rows["env"] == prefer).any() else keys
    chosen = reference.value_counts().idxmax()
    chosen = chosen if isinstance(chosen, tuple) else (chosen,)
    mask = (keys == pd.Series(chosen, index=columns)).all(axis=1)
    return rows[mask]


@hosts.one_host(hosts.SD)
def placement_figure(df: pd.DataFrame):
    """Random-I/O IOPS (Fig. 3) and TCP round trip (Fig. 5) per placement, error bars = sd."""
    import matplotlib.pyplot as plt

    rows = _placement(df)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4), constrained_layout=True)
    iops = one_fio_configuration(rows[(rows["experiment"] == "block") & (rows["metric"] == "iops")], "lxc")
    if not iops.empty:
        grouped_bars(left, iops, "workload", ["rand_read", "rand_write"], "IOPS")
    left.set_title("fio random I/O, 4 kB (Fig. 3)")
    rtt = rows[(rows["experiment"] == "net") & (rows["metric"] == "rtt_mean")]
    if not rtt.empty:
        grouped_bars(right, rtt, "protocol", ["tcp", "udp"], "round-trip time (µs)")
    right.set_title("Request-response, one in flight (Fig. 5)")
    fig.suptitle(f"Containers by placement ({STUDY})")
    return fig
