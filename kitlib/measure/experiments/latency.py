"""Latency study of Docker configurations (seed 004): CPU shares, CPU quota, bridge vs host network.

The kit's request-response service (kitlib/services/rr.py) runs pinned to one core in the
environment under test, its client on the peer, one request in flight, every latency kept.
Each request can cost real CPU work on the server (`work` rounds of SHA-256), because the quota
effect appears only when the server uses CPU.

- shares: native vs Docker with --cpu-shares=1024, host network (the study's Fig. 1, Table 1)
- quota:  --cpu-period=10000 with --cpu-quota swept; the tail collapses once the quota falls
          below the server's CPU utilization × period (Table 2, Fig. 2)
- bridge: host network vs bridge with a published port, message sizes 1–100 KB, the server
          receiving and sending (Fig. 3)
- storage: the container's overlay filesystem vs a volume: writes of 1–100 KB each followed by
          flush() (Fig. 4), open+close of one file (Fig. 5), the first write to an existing
          lower-layer file (copy-up) against its size, and a recursive listing as the number of
          image layers grows, each layer replacing a tree (Fig. 6); the images are built by the kit
"""

from __future__ import annotations

from typing import Any

from kitlib.core import services
from kitlib.measure.environments.base import Environment
from kitlib.measure.experiments.base import PROGRAM_START_S, Experiment, RawResult, Workload
from kitlib.measure.peer import Peer
from kitlib.specs.labels import parse_label, replicated
from kitlib.specs.latency import BRIDGE_ENVS, PARTS, SPEC, STORAGE_ENVS, LatencyParams


class RequestResponse(Workload):
    """Common part: the service in the environment, the client on the peer."""

    tool = "kit-rr"
    ports_needed = 1

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        """One request in flight: about 50 µs a round trip on a 2-core machine, bounded by `max_seconds`."""
        return min(self.params.max_seconds, self.params.requests * 5e-5) + 0.3

    def __init__(self, params: LatencyParams):
        super().__init__(params)
        self.target: tuple[str, int] | None = None

    def prepare(self, env: Environment, peer: Peer) -> None:
        port = env.layout.ports[0]
        env.start_service("rr", services.command("rr", "server", port), ready_port=port)
        self.target = env.address_for_peer(port, peer.host_address)

    def exchange(self, peer: Peer, request_bytes: int, response_bytes: int) -> RawResult:
        assert self.target is not None, "prepare() first"
        p = self.params
        argv = services.command(
            "rr", "client", *self.target, p.requests, request_bytes, response_bytes, p.work, p.max_seconds
        )
        output = peer.run(argv, timeout=p.max_seconds + 60).output
        return RawResult(outputs={"rr": output})

    def record_params(self, point: dict[str, Any]) -> dict[str, Any]:
        return {**point, "work": self.params.work}


class SharesWorkload(RequestResponse):
    name = "shares"

    def applies_to(self, env_label: str) -> bool:
        label = replicated(env_label) or env_label  # `native+replica`: the A/A control of native
        spec = parse_label(label)
        return label == "native" or (spec.network == "host" and set(spec.options) == {"shares"})

    def points(self) -> list[dict[str, Any]]:
        return [{"request_bytes": 1, "response_bytes": 1}]

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        return self.exchange(peer, point["request_bytes"], point["response_bytes"])


class QuotaWorkload(SharesWorkload):
    name = "quota"

    def applies_to(self, env_label: str) -> bool:
        spec = parse_label(env_label)
        return spec.network == "host" and "quota" in spec.options


class BridgeWorkload(RequestResponse):
    name = "bridge"

    def applies_to(self, env_label: str) -> bool:
        return env_label in BRIDGE_ENVS

    def points(self) -> list[dict[str, Any]]:
        return [
            {"size_kb": size, "direction": direction}
            for size in self.params.sizes_kb
            for direction in ("server_receives", "server_sends")
        ]

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        size = point["size_kb"] * 1024
        if point["direction"] == "server_receives":
            return self.exchange(peer, size, 1)
        return self.exchange(peer, 1, size)


class FileWorkload(Workload):
    """Writes and opens on the storage under test (overlay or volume), timed inside the environment."""

    name = "storage"
    tool = "kit-fileops"

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        return 0.3 + self.params.file_operations * 5e-5

    def applies_to(self, env_label: str) -> bool:
        return env_label in STORAGE_ENVS

    def points(self) -> list[dict[str, Any]]:
        writes = [{"operation": "write", "size_kb": size} for size in self.params.write_sizes_kb]
        return writes + [{"operation": "open", "size_kb": 0}]

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        count = self.params.file_operations
        if point["operation"] == "write":
            args = ("write", env.data_dir, point["size_kb"] * 1024, count)
        else:
            args = ("open", env.data_dir, count)
        output = env.run(services.command("fileops", *args), timeout=600).output
        return RawResult(outputs={"fileops": output})


class ImageLayerWorkload(Workload):
    """What only image layers show, each point in a fresh short-lived container of an image the kit
    builds on the benchmark image (cached by content), so every copy-up is a first write."""

    tool = "kit-fileops"

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        """A scratch container and one program: 0.2 to 0.5 s a point on a 2-core guest, the 64 MB copy-up
        and the volume's copy included."""
        return PROGRAM_START_S


class CopyUpWorkload(ImageLayerWorkload):
    """The first write to an existing file of the image (overlay copies it up) vs the same file on a volume."""

    name = "copy_up"

    def __init__(self, params: LatencyParams):
        super().__init__(params)
        self.image: str | None = None

    def applies_to(self, env_label: str) -> bool:
        return env_label in STORAGE_ENVS

    def points(self) -> list[dict[str, Any]]:
        return [{"operation": "copy_up", "size_mb": size} for size in self.params.copyup_sizes_mb]

    def prepare(self, env: Environment, peer: Peer) -> None:
        sizes = self.params.copyup_sizes_mb
        make = "mkdir -p /opt/copyup && cd /opt/copyup && " + " && ".join(
            f"head -c {size}M /dev/urandom > f{size}" for size in sizes
        )
        self.image = env.derived_image([make], "kitlib/copyup")

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        target = f"/opt/copyup/f{point['size_mb']}"
        if env.spec.storage == "overlay":
            command = services.command("fileops", "copyup", target)
        else:  # the same file copied onto the volume first: a first write with no copy-up
            command = copied_first(target, "/data", services.command("fileops", "copyup", f"/data/f{point['size_mb']}"))
        return RawResult(outputs={"fileops": env.run_in_scratch_container(self.image, command)})


def copied_first(source: str, folder: str, argv: list[str]) -> list[str]:
    """argv run once `source` is copied into `folder` and synced; both arrive as arguments, never as script text."""
    return ["sh", "-c", 'cp -- "$1" "$2/" && sync && shift 2 && exec "$@"', "sh", source, folder, *argv]


class LayerWalkWorkload(ImageLayerWorkload):
    """A recursive listing of a tree that each of k image layers replaced (the study's `ls -R`)."""

    name = "layers"

    def __init__(self, params: LatencyParams):
        super().__init__(params)
        self.images: dict[int, str] = {}

    def applies_to(self, env_label: str) -> bool:
        return env_label == "docker-host-overlay"

    def points(self) -> list[dict[str, Any]]:
        return [{"operation": "walk", "layers": k} for k in self.params.layers]

    def prepare(self, env: Environment, peer: Peer) -> None:
        p = self.params
        tree = (
            "rm -rf /home/tree && mkdir -p /home/tree && cd /home/tree && for d in $(seq 20); do mkdir d$d; done"
            f" && for i in $(seq {p.tree_files}); do head -c {p.tree_file_kb}K /dev/zero > d$((i % 20 + 1))/f$i;"
            " done"
        )
        for k in p.layers:
            self.images[k] = env.derived_image([tree] * k, "kitlib/layers")

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        command = services.command("fileops", "walk", "/home/tree", self.params.walks)
        return RawResult(outputs={"fileops": env.run_in_scratch_container(self.images[point["layers"]], command)})

    def record_params(self, point: dict[str, Any]) -> dict[str, Any]:
        return {**point, "tree_files": self.params.tree_files, "tree_file_kb": self.params.tree_file_kb}


def workloads(params: LatencyParams) -> list[Workload]:
    chosen = {
        "shares": [SharesWorkload],
        "quota": [QuotaWorkload],
        "bridge": [BridgeWorkload],
        "storage": [FileWorkload, CopyUpWorkload, LayerWalkWorkload],
    }
    return [cls(params) for part in PARTS if part in params.parts for cls in chosen[part]]


EXPERIMENT = Experiment(
    spec=SPEC,
    make_workloads=workloads,
)
