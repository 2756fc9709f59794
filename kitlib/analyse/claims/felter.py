"""Felter et al. 2014 (IBM RC25482, seed 001) and the VMware VROOM! posts (seed 002): Docker, KVM and
NAT against native. Each claim quotes its sentence; its band follows from it by the `RULE_*` named."""

from __future__ import annotations

import pandas as pd

from kitlib.analyse.claims.core import (
    BOOKKEEPING,
    EMULATED,
    EQUAL,
    NOT_TESTABLE,
    RULE_BOUND,
    RULE_DIRECTION,
    RULE_EQUAL,
    RULE_EVERY,
    RULE_LARGE,
    RULE_SMALL,
    RULE_STATED,
    Band,
    Claim,
    Verdict,
    all_of,
    at_least_higher,
    at_least_lower,
    below_highest,
    combine,
    compare,
    compare_where,
    decide_each,
    exact,
    highest,
    is_replica,
    kind,
    large_higher,
    large_lower,
    level,
    missing,
    offset,
    select,
    small_lower,
    stated_offset,
    stated_ratio,
)

FELTER = "Felter et al. 2014"
VMWARE = "VMware VROOM! blog, post 5 'Docker Containers Performance in VMware vSphere'"
DOCKER = kind("docker")  # Docker on this host, any network/storage, no options
DOCKER_NAT = exact("docker-nat-volume", "docker-nat-overlay")
#: the paper's Docker storage runs mapped the file system in with -v (a volume), "avoiding AUFS overhead"
DOCKER_VOLUME = exact("docker-host-volume", "docker-nat-volume")
KVM = exact("kvm")
RANDOM_IO = ["rand_read", "rand_write", "rand_mixed"]
SEQUENTIAL_IO = ["seq_read", "seq_write"]

# the sentences, verbatim from seed 001 (the final report) and seed 002
PXZ = "As expected, native and Docker performance are very similar while KVM is 22% slower."
PXZ_TUNING = (
    "We note that tuning KVM by vCPU pinning and exposing cache topology makes little difference to the performance."
)
LINPACK = "Performance is almost identical on both Linux and Docker"
LINPACK_KVM = "However, untuned KVM performance is markedly worse"
LINPACK_TUNED = (
    "Tuning KVM to pin vCPUs to their corresponding CPUs and expose the underlying cache topology increases "
    "performance nearly to par with native."
)
STREAM = (
    "performance on Linux, Docker, and KVM is almost identical, with the median data exhibiting a difference "
    "of only 1.4% across the three execution environments."
)
RANDOMACCESS = "this has the same overheads for both virtualized and non-virtualized environments."
NUTTCP_NAT = "Docker’s use of bridging and NAT noticeably increases the transmit path length"
NUTTCP_KVM = "vhost-net is fairly efficient at transmitting but has high overhead on the receive side."
NUTTCP_HOST = "Containers that do not use NAT have identical performance to native Linux."
NETPERF_NAT = "NAT, as used in Docker, doubles latency in this test."
NETPERF_KVM = (
    "KVM adds 30µs of overhead to each transaction compared to the non-virtualized network stack, an increase of 80%."
)
NETPERF_TCP_UDP = "TCP and UDP have very similar latency"
FIO_SEQ = "Docker and KVM introduce negligible overhead in this case"
FIO_RANDOM = "Docker introduces no overhead compared to Linux, but KVM delivers only half as many IOPS"
FIO_LATENCY = "KVM increases read latency by 2-3x"
REDIS_HOST = (
    "When using Docker with the host networking stack, we can see that both throughput and latency are "
    "virtually the same as the native case."
)
REDIS_NAT = (
    "Whereas it is comparable to native with 4 concurrent connections (51µs or 1.05x that of native), it quickly "
    "grows once the number of connections increases (to over 1.11x with 100 connections)."
)
REDIS_NAT_PEAK = (
    "NAT consumes CPU cycles, thus preventing the Redis deployment from reaching the peak performance seen by "
    "deployments with native networking stacks."
)
REDIS_KVM = "KVM adds approximately 83µs of latency to every transaction."
REDIS_KVM_PARITY = "Beyond 100 connections, the throughput of both deployments are practically identical."
MYSQL_DOCKER = (
    "Docker has similar performance to native, with the difference asymptotically approaching 2% at higher concurrency."
)
MYSQL_KVM = "KVM has much higher overhead, higher than 40% in all measured cases."
MYSQL_AUFS = "AUFS introduces significant overhead"
MYSQL_NAT = "NAT also introduces a little overhead but this workload is not network-intensive."
MYSQL_LATENCY = "Docker increases the latency faster for moderate levels of load"
MYSQL_CPU = (
    "native Linux is able to achieve higher peak CPU utilization and Docker is not able to achieve that same "
    "level, a difference of around 1.5%."
)
STARTUP = "containers can start much faster than VMs (less than 1 second compared to 11 seconds on our hardware)"
VM_NAT = (
    "The Native-Docker and VM-Docker configuration adds about 9-10 microseconds of overhead due to the Docker "
    "bridge NAT function."
)
VM_OFFSET = "latency in a VM with VMXNET3 device is only 15 microseconds more than in the native case"
VM_HOSTNET = (
    "A Docker container (running natively or in a VM) when configured to use host networking achieves similar "
    "latencies compared to the latencies observed when not running the workload in a container (native or a VM)."
)
VM_REDIS_NAT = (
    "When Redis is run in a Docker container on native, the throughput is significantly lower than native because "
    "of the overhead introduced by the Docker bridge NAT function."
)

EVERY = f"; {RULE_EVERY}"


def _cpu_per_gbps(df: pd.DataFrame) -> pd.DataFrame:
    """nuttcp's system-wide CPU utilisation per Gbps moved, run by run: the paper's links all ran at line
    rate, so its CPU utilisation is the path length; here the rates differ, so CPU is divided by them."""
    rows = df[(df["experiment"] == "net") & (df["workload"] == "bandwidth")] if "experiment" in df else df.iloc[0:0]
    keys = [c for c in ("host", "run_id", "env", "direction", "repetition", "position") if c in rows.columns]
    cpu = rows[rows["metric"] == "cpu_utilization"]
    rate = rows[rows["metric"] == "throughput"][[*keys, "value"]].rename(columns={"value": "gbps"})
    if cpu.empty or rate.empty:
        return rows.iloc[0:0]
    merged = cpu.merge(rate, on=keys, how="inner")
    merged = merged[merged["gbps"] > 0]
    return merged.assign(metric="cpu_per_gbps", value=merged["value"] / merged["gbps"], unit="%/Gbps").drop(
        columns=["gbps"]
    )


def _path_length(subject, baseline: str, band: Band, direction: str | list[str]):
    compared = compare("net", "cpu_per_gbps", subject, baseline, band, direction=direction)

    def predicate(df: pd.DataFrame) -> Verdict:
        derived = _cpu_per_gbps(df)
        if derived.empty:
            return missing("nuttcp CPU utilisation beside its throughput")
        return compared(derived)

    return predicate


def _tcp_equals_udp(df: pd.DataFrame) -> Verdict:
    """Each environment's UDP round trip against its own TCP one, configuration by configuration."""
    rows = select(df, "net", "rtt_mean") if "experiment" in df.columns else df.iloc[0:0]
    if rows.empty or "protocol" not in rows.columns or set(rows["protocol"].dropna()) < {"tcp", "udp"}:
        return missing("request-response round trips of both TCP and UDP")
    envs = sorted({str(e) for e in rows["env"] if not is_replica(e) and str(e).split("+")[0] not in EMULATED})
    relabelled = rows.assign(env=rows["env"].astype(str) + "/" + rows["protocol"].astype(str)).drop(
        columns=["protocol"]
    )
    verdicts = []
    for env in envs:
        verdicts += decide_each(relabelled, f"{env}/udp", f"{env}/tcp", EQUAL)
    return combine(verdicts, f"{len(verdicts)} environments and configurations")


def _peak(df: pd.DataFrame) -> Verdict:
    """Each environment at its own peak: the client count where its mean throughput is highest."""
    rows = select(df, "redis", "throughput") if "experiment" in df.columns else df.iloc[0:0]
    if rows.empty or "clients" not in rows.columns:
        return missing("Redis throughput records")
    # the client count (and what follows from it) differs between peaks: only the environment tells the two
    # series apart, so the configuration is dropped; what describes a run (its level `ci_alpha`, versions,
    # steadiness) is kept, so the peaks are judged as every other comparison of the run is
    keep = BOOKKEEPING | {"experiment", "workload", "metric", "op", "unit", "host"}
    peaks = []
    for _env, part in rows.groupby("env"):
        best = part.groupby("clients")["value"].mean().idxmax()
        peaks.append(part.loc[part["clients"] == best, [c for c in part.columns if c in keep]])
    return compare("redis", "throughput", DOCKER_NAT, "native", at_least_lower(0.0))(pd.concat(peaks))


def _not_vsphere(df: pd.DataFrame) -> Verdict:
    """The post's VM is vSphere (ESXi, VMXNET3, latency sensitivity): KVM never stands for it."""
    envs = sorted({str(e) for e in df["env"]}) if "env" in df.columns else []
    kvm = [e for e in envs if e.split("+")[0] in ("kvm", "kvm-tuned")]
    why = f" ({', '.join(kvm)} here is KVM)" if kvm else ""
    return Verdict(
        NOT_TESTABLE,
        "the post's VM ran on vSphere (ESXi with a VMXNET3 device and latency sensitivity); the kit runs no "
        f"vSphere guest, and a KVM guest never stands for one{why}",
    )


def _claim(name, source, statement, predicate, quote, band, rule, seed="001") -> Claim:
    return Claim(name, source, statement, predicate, seed=seed, quote=quote, band=str(band), rule=rule)


HIGHER_11 = Band(11.0, float("inf"), "at least 11×")
REDIS_AT_4, REDIS_AT_100 = stated_ratio(1.05), Band(1.11, float("inf"), "over 1.11×")
KVM_REDIS_OFFSET = stated_offset(83.0, "µs")
MYSQL_CPU_GAP = stated_offset(1.5, "percentage points")
STREAM_BAND = Band(1 - 0.014, 1 + 0.014, "within the 1.4% the medians differ by")

CLAIMS: list[Claim] = [
    _claim(
        "docker_near_native_pxz",
        f"{FELTER}, §3.A, Table I",
        "Docker's PXZ compression throughput equals native's (within ±5%)",
        compare("cpu", "throughput", DOCKER, "native", EQUAL, workload="pxz"),
        PXZ,
        EQUAL,
        RULE_EQUAL + EVERY,
    ),
    _claim(
        "kvm_pxz_loss",
        f"{FELTER}, §3.A, Table I",
        "KVM's PXZ throughput is 22% below native (ratio 0.725–0.835)",
        compare("cpu", "throughput", KVM, "native", stated_ratio(0.78), workload="pxz"),
        PXZ,
        stated_ratio(0.78),
        f"'22% slower' is a ratio of 0.78; {RULE_STATED}",
    ),
    _claim(
        "kvm_tuning_no_pxz_gain",
        f"{FELTER}, §3.A, Table I",
        "Tuned KVM (vCPUs pinned, cache topology exposed) equals untuned KVM on PXZ (within ±5%)",
        compare("cpu", "throughput", exact("kvm-tuned"), "kvm", EQUAL, workload="pxz"),
        PXZ_TUNING,
        EQUAL,
        f"'makes little difference' reads as equality; {RULE_EQUAL}",
    ),
    _claim(
        "docker_near_native_linpack",
        f"{FELTER}, §3.B, Table I",
        "Docker's Linpack performance equals native's (within ±5%)",
        compare("cpu", "gflops", DOCKER, "native", EQUAL, workload="linpack"),
        LINPACK,
        EQUAL,
        RULE_EQUAL + EVERY,
    ),
    _claim(
        "kvm_untuned_linpack_loss",
        f"{FELTER}, §3.B, Table I",
        "Untuned KVM's Linpack performance is markedly below native's (at least 10% lower)",
        compare("cpu", "gflops", KVM, "native", large_lower(), workload="linpack"),
        LINPACK_KVM,
        large_lower(),
        f"worse than Linux and Docker, i.e. than native; {RULE_LARGE}",
    ),
    _claim(
        "kvm_tuned_linpack_near_native",
        f"{FELTER}, §3.B, Table I",
        "Tuned KVM's Linpack performance is nearly at par with native (within ±5%)",
        compare("cpu", "gflops", exact("kvm-tuned"), "native", EQUAL, workload="linpack"),
        LINPACK_TUNED,
        EQUAL,
        f"'nearly to par' reads as equality; {RULE_EQUAL}",
    ),
    _claim(
        "docker_near_native_stream",
        f"{FELTER}, §3.C, Table I",
        "Docker's STREAM bandwidth is within 1.4% of native in every kernel",
        compare("memory", "bandwidth", DOCKER, "native", STREAM_BAND, workload="stream", variant="System"),
        STREAM,
        STREAM_BAND,
        f"'a difference of only 1.4%' bounds the ratio to 1 ± 0.014; {RULE_BOUND}{EVERY} (each kernel)",
    ),
    _claim(
        "kvm_near_native_stream",
        f"{FELTER}, §3.C, Table I",
        "KVM's STREAM bandwidth is within 1.4% of native in every kernel",
        compare("memory", "bandwidth", KVM, "native", STREAM_BAND, workload="stream", variant="System"),
        STREAM,
        STREAM_BAND,
        f"'a difference of only 1.4%' bounds the ratio to 1 ± 0.014; {RULE_BOUND}{EVERY} (each kernel)",
    ),
    _claim(
        "docker_near_native_randomaccess",
        f"{FELTER}, §3.D, Table I",
        "Docker's RandomAccess rate equals native's (within ±5%)",
        compare("memory", "gups", DOCKER, "native", EQUAL, workload="randomaccess", variant="System"),
        RANDOMACCESS,
        EQUAL,
        RULE_EQUAL + EVERY,
    ),
    _claim(
        "kvm_near_native_randomaccess",
        f"{FELTER}, §3.D, Table I",
        "KVM's RandomAccess rate equals native's on a two-socket host (within ±5%)",
        compare("memory", "gups", KVM, "native", EQUAL, workload="randomaccess", variant="System"),
        RANDOMACCESS,
        EQUAL,
        RULE_EQUAL + EVERY,
    ),
    _claim(
        "nat_lengthens_transmit_path",
        f"{FELTER}, §3.E, Fig. 2",
        "Docker NAT noticeably raises the CPU cost of transmitting (nuttcp, CPU per Gbps, at least 10% above native)",
        _path_length(DOCKER_NAT, "native", large_higher(), "sut_tx"),
        NUTTCP_NAT,
        large_higher(),
        f"path length is CPU per byte moved: system-wide CPU utilisation ÷ Gbps; {RULE_LARGE}",
    ),
    _claim(
        "kvm_costs_receive_path",
        f"{FELTER}, §3.E, Fig. 2",
        "KVM (vhost-net) costs much more CPU per Gbps received than native (at least 10% more)",
        _path_length(KVM, "native", large_higher(), "sut_rx"),
        NUTTCP_KVM,
        large_higher(),
        f"'high overhead on the receive side' as CPU utilisation ÷ Gbps received; {RULE_LARGE}",
    ),
    _claim(
        "host_network_path_equals_native",
        f"{FELTER}, §3.E, Fig. 2",
        "Docker with host networking costs the same CPU per Gbps as native, both ways (within ±5%)",
        _path_length(exact("docker-host-volume", "docker-host-overlay"), "native", EQUAL, ["sut_tx", "sut_rx"]),
        NUTTCP_HOST,
        EQUAL,
        f"'identical performance' as CPU utilisation ÷ Gbps; {RULE_EQUAL}{EVERY} (each direction)",
    ),
    _claim(
        "nat_doubles_rr_latency",
        f"{FELTER}, §3.F, Fig. 3",
        "Docker NAT doubles the request-response round trip against native (ratio 1.75–2.25), TCP and UDP",
        compare("net", "rtt_mean", DOCKER_NAT, "native", stated_ratio(2.0)),
        NETPERF_NAT,
        stated_ratio(2.0),
        f"'doubles' is a factor of 2; {RULE_STATED}{EVERY} (TCP and UDP)",
    ),
    _claim(
        "kvm_adds_rr_latency",
        f"{FELTER}, §3.F, Fig. 3",
        "KVM raises the request-response round trip by 80% against native (ratio 1.6–2.0), TCP and UDP",
        compare("net", "rtt_mean", KVM, "native", stated_ratio(1.8)),
        NETPERF_KVM,
        stated_ratio(1.8),
        f"'an increase of 80%' is a ratio of 1.8 (the 30µs is the paper's hardware); {RULE_STATED}{EVERY}",
    ),
    _claim(
        "tcp_udp_similar_latency",
        f"{FELTER}, §3.F, Fig. 3",
        "In every environment, UDP's request-response round trip equals TCP's (within ±5%)",
        _tcp_equals_udp,
        NETPERF_TCP_UDP,
        EQUAL,
        f"UDP ÷ TCP in the same environment; {RULE_EQUAL}{EVERY}",
    ),
    _claim(
        "docker_negligible_sequential_io",
        f"{FELTER}, §3.G, Fig. 5",
        "Docker on a volume equals native in sequential read and write bandwidth (within ±5%)",
        compare("block", "bandwidth", DOCKER_VOLUME, "native", EQUAL, workload=SEQUENTIAL_IO),
        FIO_SEQ,
        EQUAL,
        f"'negligible overhead'; {RULE_EQUAL}{EVERY} (read and write)",
    ),
    _claim(
        "kvm_negligible_sequential_io",
        f"{FELTER}, §3.G, Fig. 5",
        "KVM equals native in sequential read and write bandwidth (within ±5%)",
        compare("block", "bandwidth", KVM, "native", EQUAL, workload=SEQUENTIAL_IO),
        FIO_SEQ,
        EQUAL,
        f"'negligible overhead'; {RULE_EQUAL}{EVERY} (read and write)",
    ),
    _claim(
        "docker_no_random_io_overhead",
        f"{FELTER}, §3.G, Fig. 6",
        "Docker on a volume equals native in random read, write and mixed IOPS (within ±5%)",
        compare("block", "iops", DOCKER_VOLUME, "native", EQUAL, workload=RANDOM_IO),
        FIO_RANDOM,
        EQUAL,
        f"'no overhead'; {RULE_EQUAL}{EVERY} (read, write, mixed)",
    ),
    _claim(
        "kvm_halves_random_iops",
        f"{FELTER}, §3.G, Fig. 6",
        "KVM delivers half native's random read, write and mixed IOPS (ratio 0.375–0.625)",
        compare("block", "iops", KVM, "native", stated_ratio(0.5), workload=RANDOM_IO),
        FIO_RANDOM,
        stated_ratio(0.5),
        f"'only half as many' is a factor of 0.5; {RULE_STATED}{EVERY} (read, write, mixed)",
    ),
    _claim(
        "kvm_raises_read_latency",
        f"{FELTER}, §3.G, Fig. 7",
        "KVM raises random-read completion latency 2–3× against native (ratio 1.75–3.5)",
        compare("block", "clat_mean", KVM, "native", stated_ratio(2.0, 3.0), workload="rand_read_latency"),
        FIO_LATENCY,
        stated_ratio(2.0, 3.0),
        f"'2-3x' is a ratio from 2 to 3; {RULE_STATED}",
    ),
    _claim(
        "docker_host_equals_native_redis",
        f"{FELTER}, §3.H, Figs. 8–9",
        "Redis in Docker with host networking equals native in throughput and latency (within ±5%)",
        all_of(
            "throughput and latency",
            compare("redis", "throughput", exact("docker-host-volume", "docker-host-overlay"), "native", EQUAL),
            compare("redis", "latency_mean", exact("docker-host-volume", "docker-host-overlay"), "native", EQUAL),
        ),
        REDIS_HOST,
        EQUAL,
        f"'virtually the same'; {RULE_EQUAL}{EVERY} (each client count, throughput and latency)",
    ),
    _claim(
        "nat_adds_redis_latency",
        f"{FELTER}, §3.H, Fig. 9",
        "Docker NAT's Redis latency is 1.05× native's at 4 connections and over 1.11× at 100",
        all_of(
            "4 and 100 connections",
            compare("redis", "latency_mean", DOCKER_NAT, "native", REDIS_AT_4, clients=4),
            compare("redis", "latency_mean", DOCKER_NAT, "native", REDIS_AT_100, clients=100),
        ),
        REDIS_NAT,
        f"at 4 connections {REDIS_AT_4}; at 100 connections {REDIS_AT_100}",
        f"'1.05x that of native' at 4 connections: {RULE_STATED}; 'over 1.11x with 100 connections': {RULE_BOUND}; "
        "the sentence names its client counts, so only those decide",
    ),
    _claim(
        "nat_keeps_redis_from_peak",
        f"{FELTER}, §3.H, Fig. 8",
        "Docker NAT's peak Redis throughput stays below native's peak",
        _peak,
        REDIS_NAT_PEAK,
        at_least_lower(0.0),
        f"each environment's peak is its client count of highest mean throughput; {RULE_DIRECTION}",
    ),
    _claim(
        "kvm_slower_redis",
        f"{FELTER}, §3.H, Fig. 9",
        "KVM adds about 83 µs to every Redis request against native (62–104 µs), at every client count",
        compare("redis", "latency_mean", KVM, "native", KVM_REDIS_OFFSET, scale="difference"),
        REDIS_KVM,
        KVM_REDIS_OFFSET,
        f"'approximately 83µs' is an offset; {RULE_STATED}; 'every transaction': {RULE_EVERY}",
    ),
    _claim(
        "kvm_redis_parity_beyond_100",
        f"{FELTER}, §3.H, Fig. 8",
        "Beyond 100 connections, KVM's Redis throughput equals native's (within ±5%)",
        compare_where(
            "redis",
            "throughput",
            KVM,
            "native",
            EQUAL,
            "clients",
            lambda values: [v for v in values if v > 100],
            "more than 100 connections",
        ),
        REDIS_KVM_PARITY,
        EQUAL,
        f"'practically identical'; {RULE_EQUAL}{EVERY} (each client count above 100)",
    ),
    _claim(
        "overlay_slows_mysql",
        f"{FELTER}, §3.I, Fig. 10",
        "Overlay storage (AUFS in the paper) lowers MySQL throughput by at least 10% against a volume, "
        "at every thread count",
        compare("mysql", "tps", exact("docker-nat-overlay"), "docker-nat-volume", large_lower()),
        MYSQL_AUFS,
        large_lower(),
        f"Docker NAT AUFS against Docker NAT volume; {RULE_LARGE}{EVERY}",
    ),
    _claim(
        "docker_near_native_mysql",
        f"{FELTER}, §3.I, Fig. 10",
        "At the highest concurrency measured, Docker (host network, volume) is 2% below native on MySQL",
        compare_where(
            "mysql",
            "tps",
            exact("docker-host-volume"),
            "native",
            stated_ratio(0.98),
            "threads",
            highest,
            "a thread count",
        ),
        MYSQL_DOCKER,
        stated_ratio(0.98),
        f"'approaching 2% at higher concurrency' is a ratio of 0.98 at the highest thread count; {RULE_STATED}; "
        "the text says the gap is larger at low concurrency, so no other thread count decides",
    ),
    _claim(
        "kvm_mysql_loss",
        f"{FELTER}, §3.I, Fig. 10",
        "KVM loses more than 40% of MySQL throughput against native at every thread count",
        compare("mysql", "tps", KVM, "native", at_least_lower(0.40)),
        MYSQL_KVM,
        at_least_lower(0.40),
        f"'higher than 40%' bounds the ratio at 0.60; {RULE_BOUND}; 'in all measured cases': {RULE_EVERY}",
    ),
    _claim(
        "nat_mysql_little_overhead",
        f"{FELTER}, §3.I, Fig. 10",
        "Docker NAT costs MySQL a little throughput against host networking (0–10% lower), at every thread count",
        compare("mysql", "tps", exact("docker-nat-volume"), "docker-host-volume", small_lower()),
        MYSQL_NAT,
        small_lower(),
        f"Docker NAT volume against Docker net=host volume; {RULE_SMALL}{EVERY}",
    ),
    _claim(
        "docker_mysql_latency_rises_faster",
        f"{FELTER}, §3.I, Fig. 12",
        "Below saturation, Docker's MySQL latency is above native's at every thread count but the highest",
        compare_where(
            "mysql",
            "latency_mean",
            exact("docker-host-volume"),
            "native",
            at_least_higher(0.0),
            "threads",
            below_highest,
            "thread counts below the highest",
        ),
        MYSQL_LATENCY,
        at_least_higher(0.0),
        f"'moderate levels of load' as every thread count below the highest measured; {RULE_DIRECTION}{EVERY}",
    ),
    _claim(
        "native_mysql_peak_cpu_higher",
        f"{FELTER}, §3.I, Figs. 11–12",
        "At the highest concurrency, native's CPU utilisation is about 1.5 points above Docker's",
        compare_where(
            "mysql",
            "cpu_utilization",
            exact("native"),
            "docker-host-volume",
            MYSQL_CPU_GAP,
            "threads",
            highest,
            "a thread count",
            scale="difference",
        ),
        MYSQL_CPU,
        MYSQL_CPU_GAP,
        f"'a difference of around 1.5%' of CPU utilisation, native minus Docker at peak load; {RULE_STATED}",
    ),
    _claim(
        "docker_starts_under_a_second",
        f"{FELTER}, §2",
        "A Docker container starts in less than 1 second",
        level("startup", "start_to_ready", DOCKER, offset(0.0, 1.0, "s", "under 1 s")),
        STARTUP,
        offset(0.0, 1.0, "s", "under 1 s"),
        f"'less than 1 second'; {RULE_BOUND}",
    ),
    _claim(
        "kvm_starts_slower_than_docker",
        f"{FELTER}, §2",
        "A KVM guest takes at least 11× as long as a container to start (11 s against under 1 s)",
        compare("startup", "start_to_ready", KVM, "docker-host-volume", HIGHER_11),
        STARTUP,
        HIGHER_11,
        f"11 s against less than 1 s is a ratio above 11; {RULE_BOUND}",
    ),
    _claim(
        "nat_offset_vmware",
        f"{VMWARE} (Fig. 7)",
        "Docker NAT adds 9–10 µs to a netperf TCP round trip against native (6.75–12.5 µs)",
        compare(
            "net",
            "rtt_mean",
            DOCKER_NAT,
            "native",
            stated_offset(9.0, "µs", 10.0),
            scale="difference",
            protocol="tcp",
        ),
        VM_NAT,
        stated_offset(9.0, "µs", 10.0),
        f"'about 9-10 microseconds' against native (the post's TCP_RR); {RULE_STATED}",
        seed="002",
    ),
    _claim(
        "vm_offset_vmware",
        f"{VMWARE} (Fig. 7)",
        "A vSphere VM adds about 15 µs to a netperf round trip against native",
        _not_vsphere,
        VM_OFFSET,
        stated_offset(15.0, "µs"),
        f"'only 15 microseconds more'; {RULE_STATED}; testable only on vSphere guests, never on KVM",
        seed="002",
    ),
    _claim(
        "host_network_rtt_equals_native_vmware",
        f"{VMWARE} (Fig. 7)",
        "Docker with host networking has the same netperf TCP round trip as native (within ±5%)",
        compare("net", "rtt_mean", exact("docker-host-volume", "docker-host-overlay"), "native", EQUAL, protocol="tcp"),
        VM_HOSTNET,
        EQUAL,
        f"'similar latencies'; {RULE_EQUAL}",
        seed="002",
    ),
    _claim(
        "nat_lowers_redis_vmware",
        f"{VMWARE} (Fig. 9)",
        "Redis in Docker with NAT has significantly lower throughput than native (at least 10% lower)",
        compare("redis", "throughput", DOCKER_NAT, "native", large_lower()),
        VM_REDIS_NAT,
        large_lower(),
        f"'significantly lower'; {RULE_LARGE}{EVERY} (the post ran 1000 clients; each client count here)",
        seed="002",
    ),
]

__all__ = ["CLAIMS"]
