"""Figures of the network and block experiments (paper Figs. 2–7): DataFrames in, Figures out."""

from __future__ import annotations

import pandas as pd

from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.placement import one_fio_configuration
from kitlib.analyse.figures.style import env_order, grouped_bars, legend, readable_log_ticks, shared_legend, step_cdf


@hosts.one_host(hosts.SD)
def network(df: pd.DataFrame):
    """TCP throughput and host CPU per direction (Fig. 2 and the draft's Fig. 7), RR round trip (Fig. 3)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4), constrained_layout=True)
    bw = df[(df["workload"] == "bandwidth")]
    grouped_bars(axes[0], bw[bw["metric"] == "throughput"], "direction", ["sut_tx", "sut_rx"], "TCP throughput (Gbps)")
    axes[0].set_title("nuttcp, one stream")
    grouped_bars(
        axes[1], bw[bw["metric"] == "cpu_utilization"], "direction", ["sut_tx", "sut_rx"], "host CPU utilization (%)"
    )
    axes[1].set_title("CPU during the transfer (Fig. 2)")
    rr = df[(df["workload"] == "rr") & (df["metric"] == "rtt_mean")]
    grouped_bars(axes[2], rr, "protocol", ["tcp", "udp"], "round-trip time (µs)")
    axes[2].set_title("Request-response, one in flight (Fig. 3)")
    shared_legend(fig, axes)
    return fig


@hosts.one_host(hosts.SD + "; the CDF: mean over runs of each percentile")
def block(df: pd.DataFrame):
    """Sequential MB/s (Fig. 5), random IOPS (Fig. 6), random-read latency CDF (Fig. 7)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4), constrained_layout=True)
    seq = one_fio_configuration(
        df[df["workload"].isin(["seq_read", "seq_write"]) & (df["metric"] == "bandwidth")], "native"
    )
    grouped_bars(axes[0], seq, "workload", ["seq_read", "seq_write"], "MB/s")
    axes[0].set_title("Sequential, 1 MB (Fig. 5)")
    rand = df[df["workload"].isin(["rand_read", "rand_write", "rand_mixed"]) & (df["metric"] == "iops")]
    rand = one_fio_configuration(rand, "native")
    # mixed: read + write of one run; runs of other plans are never added together
    keys = ["env", "workload", "repetition"] + (["run_id"] if "run_id" in rand.columns else [])
    rand = rand.groupby(keys, as_index=False)["value"].sum()
    grouped_bars(axes[1], rand, "workload", ["rand_read", "rand_write", "rand_mixed"], "IOPS")
    axes[1].set_title("Random, 4 kB (Fig. 6)")
    cdf = df[(df["workload"] == "rand_read_latency") & (df["metric"] == "clat_percentile")]
    for env in env_order(cdf):
        curve = cdf[cdf["env"] == env].groupby("percentile")["value"].mean().sort_index()
        step_cdf(axes[2], curve, env)
    axes[2].set_xscale("log")
    readable_log_ticks(axes[2].xaxis)
    if not cdf.empty:
        axes[2].text(
            0.99,
            0.02,
            f"steps through fio's {cdf['percentile'].nunique()} completion-latency percentiles",
            transform=axes[2].transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
            color="grey",
        )
    axes[2].set_xlabel("completion latency (µs, log scale)")
    axes[2].set_ylabel("CDF")
    axes[2].set_title("Random read latency, concurrency 16 (Fig. 7)")
    axes[2].grid(True, alpha=0.3)
    legend(axes[2], fontsize=7)
    shared_legend(fig, axes)
    return fig
