"""The studies' testable findings as named predicates over records.

Each claim evaluates to `reproduced`, `not reproduced` or `not testable here` (with the reason:
no such records, no KVM on this host, …), carrying the ratio, its interval and the p-value it
rests on. Absolute numbers are never compared with the papers; ratios and differences are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kitlib import stats

REPRODUCED, NOT_REPRODUCED, NOT_TESTABLE = "reproduced", "not reproduced", "not testable here"
HARDWARE_VM = ("kvm", "kvm-tuned")


@dataclass(frozen=True)
class Verdict:
    status: str
    reason: str
    ratio: float = float("nan")
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    p_value: float = float("nan")


@dataclass(frozen=True)
class Claim:
    name: str
    source: str
    statement: str
    predicate: Callable[[pd.DataFrame], Verdict] = field(repr=False)

    def evaluate(self, df: pd.DataFrame) -> Verdict:
        try:
            return self.predicate(df)
        except KeyError as exc:  # a column the records of this run lack
            return Verdict(NOT_TESTABLE, f"the records lack {exc}")


def _select(df: pd.DataFrame, experiment: str, metric: str, **equal) -> pd.DataFrame:
    rows = df[(df["experiment"] == experiment) & (df["metric"] == metric)]
    for column, value in equal.items():
        rows = rows[rows[column] == value] if column in rows.columns else rows.iloc[0:0]
    return rows


def _ratio(rows: pd.DataFrame, env: str, baseline: str, keys: list[str]) -> stats.Comparison | None:
    """env against baseline: over a sweep (`keys`), the geometric mean of per-point ratios of means with
    a one-sample t-test on their logarithms; without a sweep, Welch's test on the runs."""
    a, b = rows[rows["env"] == env], rows[rows["env"] == baseline]
    if a.empty or b.empty:
        return None
    if not keys:
        return stats.compare_samples(a["value"], b["value"])
    means = pd.concat(
        [a.groupby(keys)["value"].mean().rename("env"), b.groupby(keys)["value"].mean().rename("base")],
        axis=1,
        join="inner",
    )
    if means.empty:
        return None
    return stats.compare_ratios(means["env"] / means["base"])


def _missing(what: str) -> Verdict:
    return Verdict(NOT_TESTABLE, f"no {what} in these records")


def _vm_reason(df: pd.DataFrame) -> str:
    if (df["env"].astype(str).str.startswith("qemu-tcg")).any():
        return "only software emulation (qemu-tcg) on this host; KVM claims need hardware virtualization"
    return "no KVM runs in these records (kvm / kvm-tuned)"


def within(experiment: str, metric: str, env_prefix: str, tolerance: float, keys: list[str], **equal):
    """Every environment whose label starts with `env_prefix` is within `tolerance` of native."""

    def predicate(df: pd.DataFrame) -> Verdict:
        rows = _select(df, experiment, metric, **equal)
        with_options = "+" in env_prefix
        envs = sorted(
            e for e in rows["env"].unique() if str(e).startswith(env_prefix) and (with_options or "+" not in str(e))
        )
        if rows.empty or "native" not in set(rows["env"]) or not envs:
            return _missing(f"{experiment} {metric} for native and {env_prefix}*")
        results = [r for r in (_ratio(rows, env, "native", keys) for env in envs) if r is not None]
        results = [r for r in results if not np.isnan(r.ratio)]
        if not results:
            return _missing("comparable points")
        worst = max(results, key=lambda r: abs(r.ratio - 1))
        status = REPRODUCED if abs(worst.ratio - 1) <= tolerance else NOT_REPRODUCED
        return Verdict(
            status,
            f"largest deviation from native: ratio {worst.ratio:.3f} "
            f"(95% CI {worst.ci_low:.3f}..{worst.ci_high:.3f}; tolerance ±{tolerance:.0%})",
            worst.ratio,
            worst.ci_low,
            worst.ci_high,
            worst.p_value,
        )

    return predicate


def worse(
    experiment: str,
    metric: str,
    env: str,
    baseline: str,
    keys: list[str],
    higher_is_worse: bool,
    min_effect: float = 0.0,
    **equal,
):
    """`env` is significantly worse than `baseline` by at least `min_effect` (relative)."""

    def predicate(df: pd.DataFrame) -> Verdict:
        rows = _select(df, experiment, metric, **equal)
        if env in HARDWARE_VM and not rows["env"].isin([env]).any():
            return Verdict(NOT_TESTABLE, _vm_reason(df))
        result = _ratio(rows, env, baseline, keys)
        if result is None:
            return _missing(f"{experiment} {metric} for both {env} and {baseline}")
        if result.verdict.startswith("not comparable"):
            return Verdict(NOT_TESTABLE, result.verdict, result.ratio)
        effect = result.ratio - 1 if higher_is_worse else 1 - result.ratio
        ok = result.significant and effect > min_effect
        direction = "higher" if higher_is_worse else "lower"
        reason = (
            f"{env} / {baseline} = {result.ratio:.3f} (95% CI {result.ci_low:.3f}..{result.ci_high:.3f}), "
            f"p = {result.p_value:.3g}; claim needs it {direction} by more than {min_effect:.0%}"
        )
        return Verdict(
            REPRODUCED if ok else NOT_REPRODUCED, reason, result.ratio, result.ci_low, result.ci_high, result.p_value
        )

    return predicate


def _latency_quota_cliff(df: pd.DataFrame) -> Verdict:
    from kitlib import latency_analysis

    table = latency_analysis.quota_table(df[df["experiment"] == "latency"])
    if table.empty or len(table) < 2:
        return _missing("latency quota sweep")
    needed = latency_analysis.unthrottled_utilization(table)
    collapsed = latency_analysis.tail_collapse_quota(table)
    if collapsed is None:
        return Verdict(NOT_REPRODUCED, f"no quota made p99 exceed 3× the unthrottled p99 (server used {needed:.0f}%)")
    share = 100 * collapsed / float(table["period"].iloc[0])
    ok = share <= needed * 1.25  # the tail collapses only where the quota is below what the server needs
    return Verdict(
        REPRODUCED if ok else NOT_REPRODUCED,
        f"p99 collapses up to quota {collapsed:.0f} µs ({share:.0f}% of the period); the server needs "
        f"{needed:.0f}% of a core unthrottled",
        ratio=share / needed if needed else float("nan"),
    )


def _bridge_fixed_offset(df: pd.DataFrame) -> Verdict:
    from kitlib import latency_analysis

    table = latency_analysis.bridge_table(df[df["experiment"] == "latency"])
    fit = latency_analysis.bridge_fit(table) if not table.empty else None
    if fit is None or fit.n < 3:
        return _missing("bridge vs host runs at 3 or more sizes")
    ok = fit.verdict == "fixed offset" and fit.offset_ci[0] > 0
    return Verdict(
        REPRODUCED if ok else NOT_REPRODUCED,
        f"bridge − host ≈ {fit.offset_us:.1f} µs + {fit.slope_us_per_kb:.3f} µs/KB "
        f"(slope 95% CI {fit.slope_ci[0]:.3f}..{fit.slope_ci[1]:.3f}): {fit.verdict}",
        ratio=fit.offset_us,
    )


def _overlay_open_not_write(df: pd.DataFrame) -> Verdict:
    rows = df[(df["experiment"] == "latency") & (df["workload"] == "storage") & (df["metric"] == "latency_mean")]
    if rows.empty:
        return _missing("latency storage runs")
    opened = _ratio(rows[rows["operation"] == "open"], "docker-host-overlay", "docker-host-volume", [])
    written = _ratio(rows[rows["operation"] == "write"], "docker-host-overlay", "docker-host-volume", ["size_kb"])
    if written is not None and written.verdict.startswith("not comparable"):
        written = None
    if opened is None or written is None:
        return _missing("overlay and volume runs of both open and write")
    ok = opened.significant and opened.ratio > 1.1 and abs(written.ratio - 1) < 0.25
    return Verdict(
        REPRODUCED if ok else NOT_REPRODUCED,
        f"open overlay/volume = {opened.ratio:.2f} (p = {opened.p_value:.3g}); write overlay/volume "
        f"= {written.ratio:.2f} (geometric mean over sizes)",
        opened.ratio,
        opened.ci_low,
        opened.ci_high,
        opened.p_value,
    )


DOCKER_WITH_OVERLAY = ("docker-nat-overlay", "docker-host-overlay")
DOCKER_IN_KVM = "docker-in-kvm"


def _first_present(rows: pd.DataFrame, candidates: tuple[str, ...]) -> str | None:
    present = set(rows["env"])
    return next((env for env in candidates if env in present), None)


def _fio_keys(rows: pd.DataFrame) -> list[str]:
    """Per-point keys of fio comparisons: the workload and what makes runs different configurations,
    so a ratio compares runs of the same queue depth and job count only."""
    from kitlib.figures_placement import FIO_CONFIGURATION

    return ["workload"] + [c for c in FIO_CONFIGURATION if c in rows.columns and rows[c].notna().any()]


def _lxc_matches_docker(df: pd.DataFrame) -> Verdict:
    """LXC's random-I/O IOPS are not below Docker-on-overlay's (seed 003: +6.1% read, +16.6% write)."""
    rows = df[(df["experiment"] == "block") & (df["metric"] == "iops")]
    rows = rows[rows["workload"].isin(["rand_read", "rand_write"])] if "workload" in rows else rows.iloc[0:0]
    docker = _first_present(rows, DOCKER_WITH_OVERLAY)
    if docker is None or "lxc" not in set(rows["env"]):
        return _missing("random-I/O fio runs of lxc and Docker on overlay")
    result = _ratio(rows, "lxc", docker, _fio_keys(rows))
    if result is None or np.isnan(result.ratio):
        return _missing("comparable random-I/O points")
    ok = result.ratio >= 0.95
    return Verdict(
        REPRODUCED if ok else NOT_REPRODUCED,
        f"lxc / {docker} IOPS = {result.ratio:.3f} (95% CI {result.ci_low:.3f}..{result.ci_high:.3f}, geometric "
        "mean over random read and write); the claim needs it at least 0.95",
        result.ratio,
        result.ci_low,
        result.ci_high,
        result.p_value,
    )


def _overlay_explains_lxc_gap(df: pd.DataFrame) -> Verdict:
    """Docker with a volume closes the gap to LXC that Docker on overlay shows (seed 003: AUFS)."""
    rows = df[(df["experiment"] == "block") & (df["metric"] == "iops")]
    rows = rows[rows["workload"].isin(["rand_read", "rand_write"])] if "workload" in rows else rows.iloc[0:0]
    overlay = _first_present(rows, DOCKER_WITH_OVERLAY)
    volume = _first_present(rows, ("docker-host-volume", "docker-nat-volume"))
    if overlay is None or volume is None or "lxc" not in set(rows["env"]):
        return _missing("random-I/O runs of lxc, Docker on overlay and Docker on a volume")
    with_overlay = _ratio(rows, overlay, "lxc", _fio_keys(rows))
    with_volume = _ratio(rows, volume, "lxc", _fio_keys(rows))
    if with_overlay is None or with_volume is None:
        return _missing("comparable random-I/O points")
    gap_closed = abs(with_volume.ratio - 1) <= 0.10 and with_volume.ratio > with_overlay.ratio
    return Verdict(
        REPRODUCED if gap_closed else NOT_REPRODUCED,
        f"{overlay} / lxc = {with_overlay.ratio:.3f}; {volume} / lxc = {with_volume.ratio:.3f} "
        "(the claim needs the volume within 10% of lxc and closer than overlay)",
        with_volume.ratio,
        with_volume.ci_low,
        with_volume.ci_high,
        with_volume.p_value,
    )


def _docker_in_vm_costs(experiment: str, metric: str, higher_is_worse: bool, min_effect: float, **equal):
    """Docker inside a KVM guest is worse than Docker on the host (seed 003: −40% IOPS, 120 µs RTT)."""
    compare = worse(experiment, metric, DOCKER_IN_KVM, "docker-nat-overlay", [], higher_is_worse, min_effect, **equal)

    def predicate(df: pd.DataFrame) -> Verdict:
        envs = set(df["env"].astype(str))
        if DOCKER_IN_KVM not in envs:
            if any(e.startswith("docker-in-qemu-tcg") for e in envs):
                return Verdict(NOT_TESTABLE, "only Docker in a software-emulated guest (TCG) here: not a hypervisor")
            return _missing("docker-in-kvm runs")
        return compare(df)

    return predicate


def _numa_pinning_helps(df: pd.DataFrame) -> Verdict:
    """Pinning to one NUMA node raises memory bandwidth against an unpinned run (seed 002)."""
    from kitlib import numa

    if len(numa.nodes()) < 2 and not df["env"].astype(str).str.contains(r"\+numa").any():
        return Verdict(NOT_TESTABLE, "this host has one NUMA node: there is no placement to choose")
    rows = _select(df, "memory", "bandwidth", workload="stream", kernel="Triad")
    pinned = sorted(e for e in rows["env"].unique() if "+numa" in str(e))
    if not pinned:
        return _missing("STREAM runs of an environment pinned to one NUMA node (+numa<N>)")
    base = pinned[0].split("+")[0]
    return worse("memory", "bandwidth", base, pinned[0], ["kernel"], False, 0.0, workload="stream")(df)


CLAIMS: list[Claim] = [
    Claim(
        "docker_near_native_pxz",
        "Felter et al. 2014, §A, Table I",
        "Docker's PXZ compression throughput is within a few percent of native",
        within("cpu", "throughput", "docker", 0.05, [], workload="pxz"),
    ),
    Claim(
        "docker_near_native_linpack",
        "Felter et al. 2014, §B, Table I",
        "Docker's Linpack performance is almost identical to native",
        within("cpu", "gflops", "docker", 0.05, [], workload="linpack"),
    ),
    Claim(
        "docker_near_native_stream",
        "Felter et al. 2014, §C, Table I",
        "Docker's STREAM bandwidth is within a few percent of native",
        within("memory", "bandwidth", "docker", 0.05, ["kernel"], workload="stream", variant="Star"),
    ),
    Claim(
        "docker_near_native_randomaccess",
        "Felter et al. 2014, §D, Table I",
        "Docker's RandomAccess rate matches native",
        within("memory", "gups", "docker", 0.05, [], workload="randomaccess", variant="Star"),
    ),
    Claim(
        "docker_host_equals_native_redis",
        "Felter et al. 2014, §H, Fig. 8",
        "Redis in Docker with host networking performs virtually like native",
        within("redis", "throughput", "docker-host", 0.10, ["clients"], op="mix"),
    ),
    Claim(
        "nat_adds_redis_latency",
        "Felter et al. 2014, §H, Fig. 9",
        "Docker NAT adds latency to every Redis request compared with host networking",
        worse("redis", "latency_mean", "docker-nat-volume", "docker-host-volume", ["clients"], True, op="mix"),
    ),
    Claim(
        "nat_adds_rr_latency",
        "Felter et al. 2014, §F, Fig. 3",
        "NAT adds round-trip latency to request-response traffic",
        worse("net", "rtt_mean", "docker-nat-volume", "docker-host-volume", [], True, protocol="tcp"),
    ),
    Claim(
        "overlay_slows_mysql",
        "Felter et al. 2014, §I, Fig. 10",
        "Overlay (AUFS) storage lowers MySQL throughput against a volume",
        worse("mysql", "tps", "docker-nat-overlay", "docker-nat-volume", ["threads"], False),
    ),
    Claim(
        "docker_near_native_mysql",
        "Felter et al. 2014, §I, Fig. 10",
        "Docker with host networking and a volume is within a few percent of native on MySQL",
        within("mysql", "tps", "docker-host-volume", 0.05, ["threads"]),
    ),
    Claim(
        "kvm_adds_rr_latency",
        "Felter et al. 2014, §F",
        "KVM adds round-trip latency (about 30 µs, +80%) to request-response traffic",
        worse("net", "rtt_mean", "kvm", "native", [], True, 0.2, protocol="tcp"),
    ),
    Claim(
        "kvm_halves_random_iops",
        "Felter et al. 2014, §G, Fig. 6",
        "KVM delivers about half the random-read IOPS of native",
        worse("block", "iops", "kvm", "native", [], False, 0.3, workload="rand_read"),
    ),
    Claim(
        "kvm_slower_redis",
        "Felter et al. 2014, §H",
        "KVM adds latency to every Redis request",
        worse("redis", "latency_mean", "kvm", "native", ["clients"], True, op="mix"),
    ),
    Claim(
        "quota_cliff",
        "Latency Impact of Docker Containers, §3.2.3, Table 2, Fig. 2",
        "A CPU quota below the server's CPU use collapses the tail latency; above it, no effect",
        _latency_quota_cliff,
    ),
    Claim(
        "bridge_cost_fixed_offset",
        "Latency Impact of Docker Containers, §3.3, Fig. 3",
        "The bridge adds a fixed latency per request, not a share proportional to message size",
        _bridge_fixed_offset,
    ),
    Claim(
        "overlay_costs_open_not_write",
        "Latency Impact of Docker Containers, §3.4, Figs. 4–5",
        "The image's union filesystem slows opening files but not writing to an open file",
        _overlay_open_not_write,
    ),
    Claim(
        "lxc_matches_docker_random_io",
        "A Performance Study of Containers in Cloud Environment (seed 003), §4.2, Fig. 3",
        "A system container (LXC) at least matches Docker on overlay in random-I/O IOPS",
        _lxc_matches_docker,
    ),
    Claim(
        "overlay_explains_lxc_gap",
        "A Performance Study of Containers in Cloud Environment (seed 003), §4.2",
        "The union filesystem (AUFS/overlay) explains Docker's random-I/O gap to LXC: a volume closes it",
        _overlay_explains_lxc_gap,
    ),
    Claim(
        "docker_in_vm_costs_disk_io",
        "A Performance Study of Containers in Cloud Environment (seed 003), §4.2, Fig. 3",
        "Docker inside a VM loses much random-I/O throughput against Docker on the host (about 40%)",
        _docker_in_vm_costs("block", "iops", False, 0.2, workload="rand_read"),
    ),
    Claim(
        "docker_in_vm_costs_latency",
        "A Performance Study of Containers in Cloud Environment (seed 003), §4.2, Fig. 5",
        "Docker inside a VM adds round-trip latency against Docker on the host",
        _docker_in_vm_costs("net", "rtt_mean", True, 0.0, protocol="tcp"),
    ),
    Claim(
        "numa_pinning_helps_memory",
        "VMware VROOM! blog, Docker posts (seed 002)",
        "Pinning a container or VM to one NUMA node raises memory-bound throughput on a multi-node host",
        _numa_pinning_helps,
    ),
    Claim(
        "docker_shares_near_native_latency",
        "Latency Impact of Docker Containers, §3.2.2, Table 1",
        "Docker with CPU shares adds only a small fixed cost (about 6%) to request latency",
        within("latency", "latency_mean", "docker-host-volume+shares", 0.15, [], workload="shares"),
    ),
]


def evaluate_all(df: pd.DataFrame) -> pd.DataFrame:
    """Every claim's verdict on these records, one row each."""
    rows = []
    for claim in CLAIMS:
        verdict = claim.evaluate(df) if not df.empty else _missing("records")
        rows.append({"claim": claim.name, "source": claim.source, "statement": claim.statement, **verdict.__dict__})
    return pd.DataFrame(rows)
