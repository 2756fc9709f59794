"""Felter et al. 2014 (IBM RC25482) and the VMware VROOM! posts: Docker, KVM and NAT against native."""

from __future__ import annotations

from kitlib.claims.core import (
    Claim,
    about_equal,
    about_times,
    at_least_higher,
    at_least_lower,
    compare,
    exact,
    kind,
    level,
    offset,
)

FELTER = "Felter et al. 2014"
VMWARE = "VMware VROOM! blog, Docker posts (seed 002)"
DOCKER = kind("docker")  # Docker on this host, any network/storage, no options
DOCKER_NAT = exact("docker-nat-volume", "docker-nat-overlay")
KVM = exact("kvm")

CLAIMS: list[Claim] = [
    Claim(
        "docker_near_native_pxz",
        f"{FELTER}, §3.A, Table I",
        "Docker's PXZ compression throughput is within 5% of native",
        compare("cpu", "throughput", DOCKER, "native", about_equal(0.05), workload="pxz"),
    ),
    Claim(
        "kvm_pxz_loss",
        f"{FELTER}, §3.A, Table I",
        "KVM's PXZ throughput is about 22% below native (ratio about 0.78)",
        compare("cpu", "throughput", KVM, "native", about_times(0.78, 0.10), workload="pxz"),
    ),
    Claim(
        "docker_near_native_linpack",
        f"{FELTER}, §3.B, Table I",
        "Docker's Linpack performance is within 5% of native",
        compare("cpu", "gflops", DOCKER, "native", about_equal(0.05), workload="linpack"),
    ),
    Claim(
        "kvm_untuned_linpack_loss",
        f"{FELTER}, §3.B, Fig. 1",
        "Untuned KVM loses Linpack performance against tuned KVM (which is near native)",
        compare("cpu", "gflops", KVM, "kvm-tuned", at_least_lower(0.0), workload="linpack"),
    ),
    Claim(
        "docker_near_native_stream",
        f"{FELTER}, §3.C, Table I",
        "Docker's STREAM bandwidth is within 5% of native (geometric mean over kernels)",
        compare("memory", "bandwidth", DOCKER, "native", about_equal(0.05), workload="stream", variant="System"),
    ),
    Claim(
        "docker_near_native_randomaccess",
        f"{FELTER}, §3.D, Table I",
        "Docker's RandomAccess rate is within 5% of native",
        compare("memory", "gups", DOCKER, "native", about_equal(0.05), workload="randomaccess", variant="System"),
    ),
    Claim(
        "docker_host_equals_native_redis",
        f"{FELTER}, §3.H, Fig. 8",
        "Redis in Docker with host networking is within 10% of native throughput",
        compare(
            "redis",
            "throughput",
            exact("docker-host-volume", "docker-host-overlay"),
            "native",
            about_equal(0.10),
        ),
    ),
    Claim(
        "nat_adds_redis_latency",
        f"{FELTER}, §3.H, Fig. 9",
        "Docker NAT adds latency to Redis requests compared with host networking",
        compare("redis", "latency_mean", exact("docker-nat-volume"), "docker-host-volume", at_least_higher(0.0)),
    ),
    Claim(
        "nat_adds_rr_latency",
        f"{FELTER}, §3.F, Fig. 3",
        "NAT adds round-trip latency to request-response traffic",
        compare(
            "net", "rtt_mean", exact("docker-nat-volume"), "docker-host-volume", at_least_higher(0.0), protocol="tcp"
        ),
    ),
    Claim(
        "nat_doubles_rr_latency",
        f"{FELTER}, §3.F, Fig. 3",
        "Docker NAT roughly doubles the request-response round trip against native (ratio 1.5–2.5)",
        compare("net", "rtt_mean", DOCKER_NAT, "native", about_times(2.0, 0.25), protocol="tcp"),
    ),
    Claim(
        "nat_offset_vmware",
        f"{VMWARE}, post 5 (5d, Fig. 7–8)",
        "NAT adds about 9–10 µs to a netperf round trip against host networking (band 4.5–15 µs)",
        compare(
            "net",
            "rtt_mean",
            exact("docker-nat-volume"),
            "docker-host-volume",
            offset(4.5, 15.0, "µs", "about +9–10 µs"),
            scale="difference",
            protocol="tcp",
        ),
    ),
    Claim(
        "vm_offset_vmware",
        f"{VMWARE}, post 5 (5d, Fig. 7–8)",
        "A VM adds about 15 µs to a netperf round trip against native (band 7.5–22.5 µs)",
        compare(
            "net",
            "rtt_mean",
            KVM,
            "native",
            offset(7.5, 22.5, "µs", "about +15 µs"),
            scale="difference",
            protocol="tcp",
        ),
    ),
    Claim(
        "overlay_slows_mysql",
        f"{FELTER}, §3.I, Fig. 10",
        "Overlay storage (AUFS in the paper) lowers MySQL throughput against a volume",
        compare("mysql", "tps", exact("docker-nat-overlay"), "docker-nat-volume", at_least_lower(0.0)),
    ),
    Claim(
        "docker_near_native_mysql",
        f"{FELTER}, §3.I, Fig. 10",
        "Docker with host networking and a volume is within 5% of native on MySQL",
        compare("mysql", "tps", exact("docker-host-volume"), "native", about_equal(0.05)),
    ),
    Claim(
        "kvm_mysql_loss",
        f"{FELTER}, §3.I, Fig. 10",
        "KVM loses more than 40% of MySQL throughput against native",
        compare("mysql", "tps", KVM, "native", at_least_lower(0.40)),
    ),
    Claim(
        "kvm_adds_rr_latency",
        f"{FELTER}, §3.F",
        "KVM adds round-trip latency (+80%) to request-response traffic: at least 20% more",
        compare("net", "rtt_mean", KVM, "native", at_least_higher(0.2), protocol="tcp"),
    ),
    Claim(
        "kvm_halves_random_iops",
        f"{FELTER}, §3.G, Fig. 6",
        "KVM delivers about half the random-read IOPS of native: at least 30% fewer",
        compare("block", "iops", KVM, "native", at_least_lower(0.3), workload="rand_read"),
    ),
    Claim(
        "kvm_slower_redis",
        f"{FELTER}, §3.H",
        "KVM adds latency to every Redis request",
        compare("redis", "latency_mean", KVM, "native", at_least_higher(0.0)),
    ),
    Claim(
        "docker_starts_under_a_second",
        f"{FELTER}, §2",
        "A Docker container starts in less than 1 second",
        level("startup", "start_to_ready", DOCKER, offset(0.0, 1.0, "s", "under 1 s")),
    ),
    Claim(
        "kvm_starts_slower_than_docker",
        f"{FELTER}, §2",
        "A KVM guest takes far longer to start than a container (about 11 s vs < 1 s): at least 5×",
        compare("startup", "start_to_ready", KVM, "docker-host-volume", at_least_higher(4.0)),
    ),
]
