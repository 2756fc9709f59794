"""The seeds' findings no claim tests, each with its sentence and the reason it is not encoded, so that
`kit claims --list` accounts for every finding: a claim, or a line saying why not."""

from __future__ import annotations

from dataclasses import dataclass

NOT_ENCODED = "not encoded"
FELTER = "Felter et al. 2014"
LATENCY = "Latency Impact of Docker Containers: A Closer Look"
SEED3 = "A Performance Study of Containers in Cloud Environment"
VROOM = "VMware VROOM! blog"
VSPHERE = (
    "the finding is about vSphere VMs (ESXi and its scheduler); the kit runs no vSphere guest, and KVM never "
    "stands for one"
)


@dataclass(frozen=True)
class Unencoded:
    """A finding with its verbatim sentence (`quote`, from seed `seed` at `source`) and why no claim tests it."""

    name: str
    seed: str
    source: str
    quote: str
    reason: str

    @property
    def cited(self) -> str:
        return f"seed {self.seed}: {self.source}"

    @property
    def line(self) -> str:
        return f"{NOT_ENCODED}, because {self.reason}"


FINDINGS: list[Unencoded] = [
    Unencoded(
        "docker_equals_or_exceeds_kvm",
        "001",
        f"{FELTER}, §5 Conclusions",
        "In general, Docker equals or exceeds KVM performance in every case we tested.",
        "it summarises the per-benchmark findings, each of which is a claim of its own (the Docker and KVM "
        "claims above); one verdict over every experiment would pool configurations the verdict rule keeps apart",
    ),
    Unencoded(
        "kvm_sequential_variance",
        "001",
        f"{FELTER}, §3.G, Fig. 5",
        "KVM has roughly four times the performance variance as the other cases.",
        "the verdict rule decides on an interval of a mean effect; a ratio of variances needs an interval of "
        "its own (an F interval) that the kit does not compute yet",
    ),
    Unencoded(
        "kvm_network_bound_mysql",
        "001",
        f"{FELTER}, §3.I, Fig. 11",
        "KVM shows a interesting result where saturation was achieved in the network but not in the CPUs",
        "the kit records the MySQL host's CPU utilisation but no packet rate against the network's limit, "
        "so saturation of the network is not measured",
    ),
    Unencoded(
        "line_rate_everywhere",
        "001",
        f"{FELTER}, §3.E",
        "All three configurations reach 9.3 Gbps in both the transmit and receive direction",
        "the kit's nuttcp runs cross a loopback or namespace path, not a 10 GbE link: line rate is not testable here",
    ),
    Unencoded(
        "quota_requests_product_constant",
        "004",
        f"{LATENCY}, §3.2.3, Table 2",
        "We can observe that for the case 1000, 1500, 2000, 2500, the product are around 100,000,000, which "
        "satisfy our formula.",
        "'around 100,000,000' is a number of the paper's request count and per-request CPU time, and the text "
        "states no tolerance for the product staying the same; the kit records the counts (slow_requests) for "
        "the quota_cliff claim and its figure",
    ),
    Unencoded(
        "bridge_at_most_110_percent",
        "004",
        f"{LATENCY}, §3.3, Fig. 3",
        "most of the latency using '-p portA:portB' is no more than 110% of the latency using '-net=host' "
        "according to each size group",
        "'most of the latency' names no share of the size groups that must hold, so no configuration-by-"
        "configuration verdict follows from it; the bridge's fixed cost is the claim bridge_cost_fixed_offset",
    ),
    Unencoded(
        "spec_cpu_lxc_docker_vm",
        "003",
        f"{SEED3}, §4.2, Fig. 2",
        "LXC and Docker have equivalent performance on CPU, and beat Docker-Machine by 8.4 % to 8.8 % in "
        "450.soplex, 3.9 % to 4.6 % in 473.astar respectively.",
        "SPEC CPU 2006 is licensed software the kit cannot install; its CPU experiment runs PXZ and Linpack",
    ),
    Unencoded(
        "hibench_lxc_docker",
        "003",
        f"{SEED3}, §4.3, Figs. 6–7",
        "LXC has better performance than Docker in these scenarios in a range from 2.5 % to 11.6 %.",
        "the kit runs no Hadoop or Spark cluster (HiBench)",
    ),
    Unencoded(
        "ecs_beats_gke",
        "003",
        f"{SEED3}, §4.3",
        "ECS takes the lead of GKE in a range from 1.4 % to 12.2 %.",
        "it compares public container services (ECS, GKE), which a host of one's own does not offer",
    ),
    Unencoded(
        "weathervane_docker_in_vm",
        "002",
        f"{VROOM}, post 1",
        "outperforms the same application running in Docker containers on bare metal by about 5%",
        VSPHERE,
    ),
    Unencoded(
        "dvdstore_pinned_native_beats_vm",
        "002",
        f"{VROOM}, post 2",
        "we were seeing slightly better than the VM configuration",
        VSPHERE + "; the kit's pinning claim for native memory bandwidth is numa_pinning_helps_memory",
    ),
    Unencoded(
        "cloudstone_vm_near_native",
        "002",
        f"{VROOM}, post 3",
        "clearly achieves very close to, or slightly better than, native performance",
        VSPHERE + "; the kit's web tier (`webtier`) runs the operations, natively and in Docker, not on vSphere",
    ),
    Unencoded(
        "scaleout_baseline_order",
        "002",
        f"{VROOM}, post 4, Fig. 3",
        "followed by the Docker, VM, and the Docker-VM scenarios",
        VSPHERE + " (two of the four ranked configurations)",
    ),
    Unencoded(
        "scaleout_tuned_gain",
        "002",
        f"{VROOM}, post 4, Fig. 4",
        "up to 5.6x more",
        "the gain came from pinning the instances and the network interrupts on a 16-core host; the kit pins "
        "the instances only (scaleout_pinning_helps_native), and records no interrupt placement to compare",
    ),
    Unencoded(
        "scaleout_cpu_busy",
        "002",
        f"{VROOM}, post 4",
        "consistently between 75% and 85%",
        "the kit's scale-out records no CPU utilisation of the server host",
    ),
    Unencoded(
        "vm_linpack_drop",
        "002",
        f"{VROOM}, post 5, Fig. 2",
        "This results in the 5% drop in performance observed in the VM case",
        VSPHERE,
    ),
    Unencoded(
        "vm_stream_overhead",
        "002",
        f"{VROOM}, post 5, Fig. 3",
        "the VM added about 2-3% overhead across all four operations",
        VSPHERE,
    ),
    Unencoded(
        "vm_random_read_iops",
        "002",
        f"{VROOM}, post 5, Fig. 4",
        "about 2% reduction in maximum achievable IOPS",
        VSPHERE,
    ),
    Unencoded(
        "netperf_line_rate_vmware",
        "002",
        f"{VROOM}, post 5, Figs. 5–6",
        "identical and equal to the maximum possible 9.40Gbps on a 10GbE NIC",
        "the kit's netperf and nuttcp runs cross a loopback or namespace path, not a 10 GbE link",
    ),
    Unencoded(
        "redis_host_network_share_of_max",
        "002",
        f"{VROOM}, post 5, Fig. 9",
        "reaching 98% and 96% of the maximum throughput respectively",
        "the shares are of the post's maximum throughput, not of native; the host-networking Docker against "
        "native is the claim docker_host_equals_native_redis, and the VM half is vSphere's",
    ),
]
