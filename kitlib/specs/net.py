"""Network (paper §F, Figs. 2–4): nuttcp transfer and request-response; parameters and schema."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib.core.schema import ClosedLoop, FigureSpec, Schema, WorkloadSchema
from kitlib.specs.base import Spec, known_names


class NetParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # NaN and inf are no duration nor count

    seconds: float = Field(description="duration of each transfer or request-response run", gt=0, le=3600)
    msg_bytes: int = Field(100, description="sockperf message size (request = response)", ge=14, le=65000)
    rr_tool: str = Field(
        "sockperf",
        description="sockperf (Debian main) or netperf (installed by you, also in "
        "every environment: the same tool must measure all of them)",
        pattern="^(netperf|sockperf)$",
    )
    workloads: list[str] = Field(default_factory=lambda: ["bandwidth", "rr"])

    @field_validator("workloads")
    @classmethod
    def _known_workloads(cls, value: list[str]) -> list[str]:
        return known_names(value, ("bandwidth", "rr"))


SPEC = Spec(
    name="net",
    notebook="experiments/net.ipynb",
    params_model=NetParams,
    profiles={"quick": {"seconds": 3}, "standard": {"seconds": 10}, "paper": {"seconds": 60}},
    default_envs=("native", "docker-host-volume", "docker-nat-volume"),
    presets={
        # seed 003 (§4.2, Fig. 5): request-response with 100-byte messages, one in flight
        "seed003-rr": {"workloads": ["rr"], "msg_bytes": 100},
    },
    schema=Schema(
        workloads={
            "bandwidth": WorkloadSchema(series=("direction",)),
            "rr": WorkloadSchema(series=("protocol",), closed_loop=ClosedLoop("transaction_rate", "rtt_mean")),
        },
        figures=(FigureSpec("net-fig2-3-throughput-cpu-rtt", "net_block.network"),),
        tools=("nuttcp", "sockperf", "netperf"),
        client_tools=("nuttcp", "sockperf", "netperf"),
        claims=(
            "nat_lengthens_transmit_path",
            "kvm_costs_receive_path",
            "host_network_path_equals_native",
            "nat_doubles_rr_latency",
            "tcp_udp_similar_latency",
            "nat_offset_vmware",
            "vm_offset_vmware",
            "host_network_rtt_equals_native_vmware",
            "kvm_adds_rr_latency",
            "docker_rtt_vs_lxc",
            "docker_in_vm_costs_latency",
        ),
    ),
)
