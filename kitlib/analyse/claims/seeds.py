"""Seed 003 ("A Performance Study of Containers in Cloud Environment"); seed 002: NUMA, scale-out, OLTP."""

from __future__ import annotations

import pandas as pd

from kitlib.analyse.claims.core import (
    DERIVED,
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
    about_equal,
    all_of,
    at_least_higher,
    at_least_lower,
    combine,
    compare,
    exact,
    kind,
    level,
    missing,
    small_higher,
    stated_ratio,
)
from kitlib.analyse.claims.unencoded import VSPHERE
from kitlib.core import hostfacts

SEED3 = "A Performance Study of Containers in Cloud Environment"
RANDOM_IO = ["rand_read", "rand_write"]
DOCKER_ON_OVERLAY = exact("docker-nat-overlay", "docker-host-overlay")
DOCKER_ON_VOLUME = exact("docker-host-volume", "docker-nat-volume")
#: seed 003's Docker: the bridge with NAT port mapping, AUFS storage
SEED3_DOCKER = "docker-nat-overlay"


def _docker_in_vm(experiment: str, metric: str, band, baseline=SEED3_DOCKER, **equal):
    """Docker inside a KVM guest against Docker on the host; a TCG guest never stands for it."""
    compared = compare(experiment, metric, exact("docker-in-kvm"), baseline, band, **equal)

    def predicate(df: pd.DataFrame) -> Verdict:
        envs = set(df["env"].astype(str)) if "env" in df.columns else set()
        if "docker-in-kvm" not in envs:
            if any(e.split("+")[0] == "docker-in-qemu-tcg" for e in envs):
                return Verdict(
                    NOT_TESTABLE,
                    "no docker-in-kvm runs; only Docker in a software-emulated guest (TCG) here: not a hypervisor",
                )
            return missing("docker-in-kvm runs")
        return compared(df)

    return predicate


def _numa_pinning_helps(df: pd.DataFrame) -> Verdict:
    """Pinned (+numa<N>) against the same environment unpinned; the node count is the records' host's."""
    nodes = hostfacts.numa_nodes(df) or 1
    rows = df[(df["experiment"] == "memory") & (df["metric"] == "bandwidth")] if "experiment" in df else df
    pinned = sorted(e for e in rows["env"].astype(str).unique() if "+numa" in e) if "env" in rows else []
    if not pinned:
        if nodes < 2:
            return Verdict(
                NOT_TESTABLE,
                "the host that made these records has one NUMA node (per their provenance; "
                "none recorded counts as one): there is no placement to choose",
            )
        return missing("STREAM runs of an environment pinned to one NUMA node (+numa<N>)")
    parts = [
        compare("memory", "bandwidth", exact(env), env.split("+")[0], at_least_higher(0.0), workload="stream")
        for env in pinned
    ]
    return all_of("every pinned environment", *parts)(df)


SEED2_SCALEOUT = "VMware VROOM! blog, post 4 'Scaling Out Redis Performance with Docker on vSphere 6.0'"
SCALEOUT_ENVS = exact("native", "docker-host-volume", "docker-nat-volume")


def _rows_of(df: pd.DataFrame, experiment: str) -> pd.DataFrame:
    return df[df["experiment"] == experiment] if "experiment" in df.columns else df.iloc[0:0]


def _scaleout_rows(df: pd.DataFrame) -> pd.DataFrame:
    return _rows_of(df, "scaleout")


def _speedup_below_n(df: pd.DataFrame) -> Verdict:
    """Speedup / N (the share of the ideal) out of the box, per environment."""
    rows = _scaleout_rows(df)
    rows = rows[(rows["metric"] == "speedup")] if "metric" in rows.columns else rows
    if rows.empty or "instances" not in rows.columns:
        return missing("scale-out speedup records")
    # the post's shortfall comes from placement, not from time-sharing
    why = _time_sharing(_scaleout_rows(df), 2, "the speedup")
    if why:
        return Verdict(NOT_TESTABLE, why)
    share = rows.assign(metric="speedup_share", value=rows["value"] / rows["instances"])
    return level(
        "scaleout",
        "speedup_share",
        SCALEOUT_ENVS,
        Band(0.0, 0.85, "well below N (at most 0.85 N)"),
        placement="default",
    )(pd.concat([df, share]))


def _time_sharing(rows: pd.DataFrame, beside: int, what: str) -> str | None:
    """Why a scale-out is not judged on the records' host, or None: fewer CPUs for the system under test
    (all of the host's where the records do not count them) than its instances and `beside` other
    processes need, so it measured time-sharing, not scaling."""
    if rows.empty or "instances" not in rows.columns:
        return None
    instances = int(rows["instances"].max())
    counted = rows["sut_cpu_count"].dropna() if "sut_cpu_count" in rows.columns else pd.Series(dtype=float)
    cpus = int(counted.min()) if not counted.empty else hostfacts.logical_cpus(rows)
    if cpus is None or cpus >= instances + beside:
        return None
    others = f" plus {beside} more (proxy and load)" if beside else ""
    return (
        f"the host that made these records has {cpus} CPUs for {instances} instances{others}: the scale-out "
        f"there measures time-sharing, not scaling, so {what} is not decided"
    )


def _pinning_raises_native(df: pd.DataFrame) -> Verdict:
    """Native scale-out pinned against the same unpinned (irq pinning is recorded as not done)."""
    rows = _scaleout_rows(df)
    if rows.empty or "placement" not in rows.columns or set(rows["placement"].dropna()) != {"default", "pinned"}:
        return missing("scale-out records of both placements (default and pinned)")
    why = _time_sharing(_scaleout_rows(df), 2, "placement")
    if why:
        return Verdict(NOT_TESTABLE, why)
    relabelled = rows.assign(
        env=[f"{e}+pinned" if p == "pinned" else e for e, p in zip(rows["env"], rows["placement"], strict=True)]
    )
    relabelled = relabelled.drop(columns=["placement"])
    return compare(
        "scaleout", "throughput", exact("native+pinned"), "native", at_least_higher(0.0), config="scale-out"
    )(relabelled)


def _vm_scaleout(df: pd.DataFrame) -> Verdict:
    """The post's VMs are vSphere's, whose NUMA-aware scheduler is the finding: KVM never stands for it."""
    return Verdict(
        NOT_TESTABLE,
        "the post's VMs ran on vSphere 6.0, whose scheduler keeps each VM on one NUMA node; the kit runs no "
        "vSphere guest, and a KVM guest never stands for one",
    )


SEED2_WEB = "VMware VROOM! blog, post 3 'Scaling Web 2.0 Applications using Docker containers on vSphere 6.0'"


def _vsphere_web(df: pd.DataFrame) -> Verdict:
    """The post's VMs are vSphere 6.0's: the web tier's KVM, TCG or Docker-in-KVM runs never stand for them."""
    envs = sorted({str(e) for e in df["env"]}) if "env" in df.columns and "experiment" in df.columns else []
    guests = [
        e for e in envs if e.split("+")[0] in ("kvm", "kvm-tuned", "qemu-tcg", "docker-in-kvm", "docker-in-qemu-tcg")
    ]
    here = f" ({', '.join(guests)} here)" if guests else ""
    return Verdict(
        NOT_TESTABLE,
        "the post's VMs ran on vSphere 6.0 (ESXi); the kit's web tier runs no vSphere guest, and a KVM or "
        f"emulated guest never stands for one{here}",
    )


SEED2_OLTP = "VMware VROOM! blog, post 2 'Running Transactional Workloads Using Docker Containers on vSphere 6.0'"
#: the post's "adds little overhead (2-4%)": a ratio from 0.96 to 0.98, by RULE_STATED
OLTP_LITTLE = stated_ratio(0.96, 0.98)
#: the post's Docker: "bridged networking and host volumes for storing the database"
OLTP_DOCKER = exact("docker-nat-volume")


def _oltp_rows(df: pd.DataFrame) -> pd.DataFrame:
    return _rows_of(df, "scaleout-oltp")


def _oltp_docker_adds_little(df: pd.DataFrame) -> Verdict:
    """Docker's aggregate tps over native's, out of the box (placement default), one verdict per thread count."""
    rows = _oltp_rows(df)
    if rows.empty or "instance" not in rows.columns:
        return missing("OLTP scale-out records")
    why = _time_sharing(_oltp_rows(df), 0, "it")
    if why:
        return Verdict(NOT_TESTABLE, why)
    aggregate = rows[(rows["metric"] == "tps") & (rows["instance"].astype(str) == "all")]
    threads = sorted(aggregate["threads"].dropna().unique()) if "threads" in aggregate.columns else []
    if not threads:
        return missing("aggregate tps records of the OLTP scale-out")
    parts = [
        compare(
            "scaleout-oltp",
            "tps",
            OLTP_DOCKER,
            "native",
            OLTP_LITTLE,
            instance="all",
            placement="default",
            threads=t,
        )(df.assign(instance=df["instance"].astype(str)))
        for t in threads
    ]
    return combine(parts, f"{len(parts)} thread counts")


SEED3_READ, SEED3_WRITE = stated_ratio(1.061), stated_ratio(1.166)
VM_READ, VM_WRITE = stated_ratio(0.599), stated_ratio(0.573)
SEED3_RTT = stated_ratio(1.25)
#: 'greatly' (at least 10%) up to the abstract's 'network latency up to 233%', read as at most +233%
VM_RTT = Band(1.10, 3.33, "at least 10% higher, at most 3.33×")
EVERY = f"; {RULE_EVERY}"


def _claim(name, source, statement, predicate, quote, band, rule, seed, kind=None, outside="") -> Claim:
    return Claim(
        name,
        source,
        statement,
        predicate,
        seed=seed,
        quote=quote,
        band=str(band),
        rule=rule,
        kind=kind or "paper",
        outside_the_kit=outside,
    )


CLAIMS: list[Claim] = [
    _claim(
        "lxc_beats_docker_random_io",
        f"{SEED3}, §4.2, Fig. 3",
        "LXC's random IOPS are 6.1% (read) and 16.6% (write) above Docker's on overlay with NAT",
        all_of(
            "random read and random write",
            compare("block", "iops", exact("lxc"), SEED3_DOCKER, SEED3_READ, workload="rand_read"),
            compare("block", "iops", exact("lxc"), SEED3_DOCKER, SEED3_WRITE, workload="rand_write"),
        ),
        "LXC advances Docker by 6.1 % in random read, and 16.6 % in random write.",
        f"random read {SEED3_READ}; random write {SEED3_WRITE}",
        f"'advances Docker by 6.1 %' is a ratio of 1.061, '16.6 %' one of 1.166; {RULE_STATED}; each workload by "
        "itself, never averaged; Docker as seed 003 ran it (NAT, AUFS): docker-nat-overlay",
        "003",
    ),
    _claim(
        "overlay_explains_lxc_gap",
        f"{SEED3}, §4.2",
        "The union filesystem (AUFS there, overlay here) explains Docker's random-I/O gap to LXC: Docker on "
        "overlay is below LXC, Docker on a volume equals it (within ±5%)",
        all_of(
            "gap on overlay, none on a volume",
            compare("block", "iops", DOCKER_ON_OVERLAY, "lxc", at_least_lower(0.0), workload=RANDOM_IO),
            compare("block", "iops", DOCKER_ON_VOLUME, "lxc", EQUAL, workload=RANDOM_IO),
        ),
        "The disk I/O performance gap between LXC and Docker is caused by AUFS",
        f"overlay {at_least_lower(0.0)}; volume {EQUAL}",
        f"derived: a cause is tested by removing it: on overlay the gap remains ({RULE_DIRECTION}), on a volume "
        f"it goes ({RULE_EQUAL}){EVERY}",
        "003",
        DERIVED,
    ),
    _claim(
        "docker_rtt_vs_lxc",
        f"{SEED3}, §4.2, Fig. 5",
        "Docker's (NAT) TCP round trip is 1.25× LXC's (1.19–1.31)",
        compare("net", "rtt_mean", exact("docker-nat-volume"), "lxc", SEED3_RTT, protocol="tcp"),
        "Docker's network latency is 1.25 times of LXC",
        SEED3_RTT,
        f"'1.25 times of LXC'; {RULE_STATED}; Docker with the network seed 003 ran (the bridge with NAT port "
        "mapping) and a volume, so that no storage layer differs from LXC's bind mount; netperf's "
        "request-response default, TCP",
        "003",
    ),
    _claim(
        "docker_in_vm_costs_disk_io",
        f"{SEED3}, §4.2, Fig. 3",
        "Docker in a VM loses 40.1% (read) and 42.7% (write) of random IOPS against Docker on the host",
        all_of(
            "random read and random write",
            _docker_in_vm("block", "iops", VM_READ, workload="rand_read"),
            _docker_in_vm("block", "iops", VM_WRITE, workload="rand_write"),
        ),
        "Docker-Machine falls behind Docker for 40.1 % in random read and 42.7 % in random write.",
        f"random read {VM_READ}; random write {VM_WRITE}",
        f"'falls behind Docker for 40.1 %' is a ratio of 0.599, '42.7 %' one of 0.573; {RULE_STATED}; each "
        "workload by itself",
        "003",
    ),
    _claim(
        "lxc_docker_similar_stream",
        f"{SEED3}, §4.2, Table 2",
        "LXC's STREAM bandwidth equals Docker's in every kernel (within ±5%)",
        compare("memory", "bandwidth", exact("lxc"), kind("docker"), EQUAL, workload="stream", variant="System"),
        "No matter LXC, Docker, or Docker-Machine, they have similar memory bandwidth.",
        EQUAL,
        f"'similar memory bandwidth'; {RULE_EQUAL}{EVERY} (each kernel); any Docker on the host, since "
        "neither network nor storage enters STREAM",
        "003",
    ),
    _claim(
        "docker_in_vm_similar_stream",
        f"{SEED3}, §4.2, Table 2",
        "Docker in a VM has the STREAM bandwidth of Docker on the host in every kernel (within ±5%)",
        _docker_in_vm("memory", "bandwidth", EQUAL, kind("docker"), workload="stream", variant="System"),
        "Even adding an extra virtualization layer only causes negligible overhead.",
        EQUAL,
        f"'negligible overhead'; {RULE_EQUAL}{EVERY} (each kernel)",
        "003",
    ),
    _claim(
        "docker_in_vm_costs_latency",
        f"{SEED3}, §4.2, Fig. 5",
        "Docker inside a VM greatly raises the round trip against Docker on the host (1.1–3.33×)",
        _docker_in_vm("net", "rtt_mean", VM_RTT, protocol="tcp"),
        "Docker-Machine greatly increases the network latency to 120 μ s for each round trip.",
        VM_RTT,
        f"derived: 120 μs is the paper's hardware, and no Docker round trip is stated beside it; 'greatly': "
        f"{RULE_LARGE}; the abstract's 'network latency up to 233%' read as at most +233%: {RULE_BOUND}",
        "003",
        DERIVED,
    ),
    _claim(
        "numa_pinning_helps_memory",
        "VMware VROOM! blog, post 2 'Running Transactional Workloads Using Docker Containers on vSphere 6.0'",
        "Pinning a container or VM to one NUMA node raises memory bandwidth on a multi-node host",
        _numa_pinning_helps,
        "we pinned half of the Docker containers to one NUMA node and half to the other. The DVD Store "
        "aggregate OPM improved",
        at_least_higher(0.0),
        f"derived: the post pinned DVD Store's containers, not a memory benchmark; the kit tests the mechanism "
        f"on STREAM; {RULE_DIRECTION}",
        "002",
        DERIVED,
    ),
    _claim(
        "scaleout_speedup_below_n",
        f"{SEED2_SCALEOUT}, Fig. 4",
        "Out of the box, the scale-out's speedup over one server stays well below the ideal N (at most 0.85 N)",
        _speedup_below_n,
        "the scale-out system delivers a performance boost of at least 4x",
        Band(0.0, 0.85, "well below N (at most 0.85 N)"),
        "derived: at least 4× of an ideal 8 out of the box, and up to 5.6× more once tuned, so the untuned "
        "speedup stays well below N; 'well below' as at most 0.85 N",
        "002",
        DERIVED,
    ),
    _claim(
        "scaleout_pinning_helps_native",
        f"{SEED2_SCALEOUT}, tuning test",
        "Pinning the Redis instances raises native scale-out throughput",
        _pinning_raises_native,
        "As expected, with this ad-hoc configuration, the Native scenario was the fastest",
        at_least_higher(0.0),
        f"derived: the post pinned the instances and the interrupts, the kit the instances only; {RULE_DIRECTION}",
        "002",
        DERIVED,
    ),
    _claim(
        "scaleout_docker_adds_little",
        f"{SEED2_SCALEOUT}, Fig. 3",
        "Docker's scale-out throughput equals native's (within ±5%)",
        compare(
            "scaleout",
            "throughput",
            DOCKER_ON_VOLUME,
            "native",
            EQUAL,
            config="scale-out",
            placement="default",
        ),
        "the Native and Docker scenarios come in as a somewhat distant third and fourth",
        EQUAL,
        f"derived: the post ranks Docker next to native and states no gap; read as equality, {RULE_EQUAL}",
        "002",
        DERIVED,
    ),
    _claim(
        "scaleout_vm_fastest_out_of_box",
        f"{SEED2_SCALEOUT}, Fig. 3",
        "Out of the box, vSphere VMs scale out faster than native processes (NUMA-aware scheduling)",
        _vm_scaleout,
        "The VM scenario is now the fastest, followed by Docker-VM",
        at_least_higher(0.0),
        f"{RULE_DIRECTION}; testable only on vSphere guests, never on KVM",
        "002",
        outside=VSPHERE,
    ),
    _claim(
        "webtier_vm_slightly_above_native",
        f"{SEED2_WEB}, Figs. 2–3",
        "The web tier in one VM has slightly higher operation latencies than native (mean and p90 of each operation)",
        _vsphere_web,
        "The latencies are slightly higher than native, which is expected due to some virtualization overhead",
        small_higher(),
        f"'slightly higher' is a small effect; {RULE_SMALL}; testable only on vSphere guests, never on KVM",
        "002",
        outside=VSPHERE,
    ),
    _claim(
        "webtier_docker_in_vm_no_overhead",
        f"{SEED2_WEB}, Figs. 2–3",
        "Docker containers in the VM add no latency to the web tier in the same VM without Docker",
        _vsphere_web,
        "running Docker containers on a VM showed no additional overhead",
        about_equal(0.05),
        f"'no additional overhead' is a statement of equality; {RULE_EQUAL}; testable only on vSphere guests",
        "002",
        outside=VSPHERE,
    ),
    _claim(
        "webtier_two_vms_slightly_higher",
        f"{SEED2_WEB}, Figs. 2–3",
        "The web server and the database in two VMs have slightly higher latencies than both in one VM",
        _vsphere_web,
        "This configuration ended up giving slightly higher latencies because the network packets have to "
        "traverse the virtualization layer from one VM to the other",
        small_higher(),
        f"'slightly higher' is a small effect; {RULE_SMALL}; testable only on vSphere guests",
        "002",
        outside=VSPHERE,
    ),
    _claim(
        "scaleout_oltp_docker_adds_little",
        f"{SEED2_OLTP}, Fig. 2",
        "Docker (bridged, host volumes) adds 2–4% overhead to a scaled-out OLTP load: aggregate tps 0.95–0.985 "
        "of native's, out of the box, at every thread count",
        _oltp_docker_adds_little,
        "running Docker containers either natively or in VMs adds little overhead (2-4%).",
        OLTP_LITTLE,
        f"'adds little overhead (2-4%)' is a ratio from 0.96 to 0.98; {RULE_STATED}; Docker as the post ran it "
        f"('bridged networking and host volumes'): docker-nat-volume{EVERY}",
        "002",
    ),
]
