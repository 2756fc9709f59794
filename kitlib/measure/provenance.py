"""Provenance: many small `collect_*` functions, each one fact about where a result came from."""

from __future__ import annotations

import functools
import getpass
import os
import platform
import shutil
import socket
import warnings
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kitlib import specs
from kitlib.core import VERSION, instance, paths
from kitlib.core.errors import Notice
from kitlib.core.hostid import host_id
from kitlib.core.procs import run_bounded, tuning_left_out
from kitlib.measure.host import commands
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.host.docker_remote import engine_facts

#: Debian packages whose versions are recorded in every environment that runs them.
TOOL_PACKAGES = (
    "redis-server",
    "redis-tools",
    "fio",
    "sysbench",
    "mariadb-server",
    "nginx",
    "php8.2-fpm",
    "libopenblas0-openmp",
    "xz-utils",
    "nuttcp",
    "iperf3",
    "sockperf",
    "netperf",
    "qemu-system-x86",
    "libgomp1",
    "numactl",
)
DPKG_QUERY = ["dpkg-query", "-W", "-f", "${Package} ${Version} ${db:Status-Abbrev}\\n", *TOOL_PACKAGES]


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def collect_cpu() -> dict[str, Any]:
    info: dict[str, Any] = {"logical_cpus": os.cpu_count(), "affinity": sorted(os.sched_getaffinity(0))}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return info
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and "model" not in info:
            info["model"] = value.strip()
        if key == "flags" and "virtualization_flags" not in info:
            flags = value.split()
            info["virtualization_flags"] = [f for f in ("vmx", "svm", "hypervisor") if f in flags]
    info["sockets"] = len({line for line in text.splitlines() if line.startswith("physical id")}) or None
    governor = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    info["governor"] = governor.read_text().strip() if governor.exists() else None
    info["caches"] = collect_caches()
    return info


#: sysfs' cache types as lscpu names them (L1d, L1i, L2, L3)
_CACHE_TYPES = {"Data": "d", "Instruction": "i", "Unified": ""}


def collect_caches(cpu_dir: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> dict[str, str] | None:
    """The first CPU's caches, `{"L1d": "32K", …, "L3": "32768K"}` (part of the host's identity), None
    where sysfs does not describe them."""
    caches = {}
    for index in sorted(cpu_dir.glob("index[0-9]*")):
        try:
            level, kind, size = ((index / name).read_text().strip() for name in ("level", "type", "size"))
        except OSError:
            continue
        caches[f"L{level}{_CACHE_TYPES.get(kind, kind)}"] = size
    return caches or None


def parse_caches(text: str) -> dict[str, str] | None:
    """`level:type:size` words (what _REMOTE_FACTS prints) as `collect_caches` gives them."""
    caches = {}
    for word in text.split():
        level, kind, size = (word.split(":") + ["", ""])[:3]
        if level.isdigit() and size:
            caches[f"L{level}{_CACHE_TYPES.get(kind, kind)}"] = size
    return caches or None


def collect_identity() -> dict[str, Any]:
    """The facts of this host that make its id (`hostid.identity`): cheap, no engine asked."""
    cpu = collect_cpu()
    return {
        "cpu": {k: cpu.get(k) for k in ("model", "logical_cpus", "caches")},
        "memory": collect_memory(),
        "os": {"machine_id": _machine_id(), "hostname": socket.gethostname()},
        "instance": collect_instance(),
    }


def collect_instance() -> dict[str, Any]:
    """This machine's instance identity (`kitlib.core.instance`), what tells it from clones of its image."""
    return instance.collect()


@functools.cache
def this_host_id() -> str:
    """This host's id, as its records will carry it (and as a plan made here names it)."""
    return host_id(collect_identity())


def collect_numa() -> dict[str, Any]:
    nodes = sorted(p.name for p in Path("/sys/devices/system/node").glob("node[0-9]*"))
    return {"nodes": len(nodes) or 1}


def collect_memory() -> dict[str, Any]:
    info = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("MemTotal", "HugePages_Total", "Hugepagesize"):
            info[key] = value.strip()
    return info


def collect_os() -> dict[str, Any]:
    distro = None
    os_release = Path("/etc/os-release")
    if os_release.exists():
        for line in os_release.read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                distro = line.split("=", 1)[1].strip('"')
    return {
        "kernel": platform.release(),
        "distro": distro,
        "hostname": socket.gethostname(),
        "python": platform.python_version(),
        "user": getpass.getuser(),
        "machine_id": _machine_id(),
    }


def _machine_id() -> str | None:
    try:
        return Path("/etc/machine-id").read_text().strip() or None
    except OSError:
        return None


def collect_virtualization() -> str:
    """`systemd-detect-virt`'s answer where it exists, else `vm` when the CPU flags say `hypervisor`,
    else `none`: whether `native` here is bare metal."""
    if shutil.which("systemd-detect-virt"):
        done = commands.run(["systemd-detect-virt"], timeout=30)
        if done.stdout.strip():
            return done.stdout.strip()
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    except OSError:
        flags = ""
    return "vm" if "hypervisor" in flags.split() else "none"


def collect_kitlib() -> dict[str, Any]:
    commit = dirty = None
    if shutil.which("git") and (paths.PROJECT_ROOT / ".git").exists():

        def run(*args: str) -> str:
            return commands.run(["git", "-C", str(paths.PROJECT_ROOT), *args]).stdout.strip()

        commit = run("rev-parse", "HEAD") or None
        dirty = bool(run("status", "--porcelain", "--untracked-files=no"))
    return {"version": VERSION, "git_commit": commit, "git_dirty": dirty}


def collect_docker() -> dict[str, Any] | None:
    try:
        return {**engine_facts(docker_client()), "userland_proxy": _userland_proxy()}
    except Exception as exc:
        return {"unavailable": str(exc)[:200]}


def _userland_proxy() -> bool:
    out = commands.run(["pgrep", "-a", "dockerd"]).stdout
    return "--userland-proxy=false" not in out


def parse_dpkg(output: str) -> dict[str, str]:
    """`dpkg-query -W` lines of installed packages → {package: version}."""
    versions = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2].startswith("ii"):
            versions[parts[0]] = parts[1]
    return versions


def collect_tool_versions() -> dict[str, str]:
    """The versions of the TOOL_PACKAGES installed on this host (where the peer's client runs)."""
    return parse_dpkg(run_bounded(DPKG_QUERY, timeout=60)[1])


def version_mismatches(by_env: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """Packages whose versions differ between environments of one run (results may not be comparable)."""
    packages = sorted({p for versions in by_env.values() for p in versions})
    found = []
    for package in packages:
        versions = {env: v[package] for env, v in by_env.items() if package in v}
        if len(set(versions.values())) > 1:
            found.append({"package": package, "versions": versions})
    return found


def experiment_tools(experiment: object) -> set[str] | None:
    """The packages an experiment runs in its environments (None for a name the kit does not know: all):
    a run is warned of differences in these, not in every tool an image carries beside them (MariaDB's
    revision does not move a Linpack run's figures)."""
    return specs.schema(experiment).environment_tools() if experiment in specs.names() else None


def describe_mismatch(item: dict[str, Any]) -> str:
    """One line: `pkg differs between environments: 1.2 (native) vs 1.3 (docker-…, 2 more)`."""
    by_version: dict[str, list[str]] = {}
    for env, version in item["versions"].items():
        by_version.setdefault(version, []).append(env)
    # in one order whatever the order the environments ran in: the same difference reads the same in every
    # session of a run (a search's steps), so a notebook shows it once
    parts = [
        f"{v} ({sorted(envs)[0]}{f', {len(envs) - 1} more' if len(envs) > 1 else ''})"
        for v, envs in sorted(by_version.items())
    ]
    return f"{item['package']} differs between environments: " + " vs ".join(parts)


def collect_host() -> dict[str, Any]:
    """Everything about this host, in one flat-ish dict, with its stable id (`kitlib.core.hostid`)."""

    host = {
        "cpu": collect_cpu(),
        "numa": collect_numa(),
        "memory": collect_memory(),
        "os": collect_os(),
        "instance": collect_instance(),
        "virtualization": collect_virtualization(),
        "docker": collect_docker(),
        "kitlib": collect_kitlib(),
        # the libraries' tuning variables of the kit's environment, which its benchmarks did not inherit
        "environment_left_out": tuning_left_out(),
    }
    host["host_id"] = host_id(host)
    return host


#: one shell command printing the facts host_id needs, for a machine reached by a `run` function
_REMOTE_FACTS = (
    "echo machine_id=$(cat /etc/machine-id 2>/dev/null); echo hostname=$(hostname); echo kernel=$(uname -r);"
    " echo cpus=$(nproc --all); echo model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-);"
    " echo mem=$(grep MemTotal /proc/meminfo | cut -d: -f2-);"
    " echo caches=$(for d in /sys/devices/system/cpu/cpu0/cache/index*; do"
    " echo $(cat $d/level):$(cat $d/type):$(cat $d/size); done 2>/dev/null);"
    " echo virt=$(systemd-detect-virt 2>/dev/null || (grep -qw hypervisor /proc/cpuinfo && echo vm || echo none))"
)


def collect_host_over(run) -> dict[str, Any]:
    """The facts of another machine (a remote system under test) through its `run(argv, timeout=…)`
    function, shaped like `collect_host`, with its host id."""

    out = run(["sh", "-c", _REMOTE_FACTS], timeout=60, check=False).output
    facts = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    cpus = facts.get("cpus", "").strip()
    host = {
        "cpu": {
            "model": facts.get("model", "").strip() or None,
            "logical_cpus": int(cpus) if cpus.isdigit() else None,
            "caches": parse_caches(facts.get("caches", "")),
        },
        "memory": {"MemTotal": facts.get("mem", "").strip() or None},
        "os": {
            "kernel": facts.get("kernel", "").strip() or None,
            "hostname": facts.get("hostname", "").strip() or None,
            "machine_id": facts.get("machine_id", "").strip() or None,
        },
        "virtualization": facts.get("virt", "").strip() or "unknown",
        "collected": "over the system under test's SSH connection",
    }
    host["host_id"] = host_id(host)
    return host


@dataclass
class Session:
    """One process's run of a plan, collected while it runs. Its fields are the keys of the session's
    entry in provenance.json (`finish`; None ones left out), which analysis, hostfacts, drift, replicas read."""

    started: str = field(default_factory=now, init=False)
    run_label: str
    host: dict[str, Any]
    host_id: str = field(init=False)
    plan: dict[str, Any]
    environments: dict[str, dict[str, Any]] = field(default_factory=dict)
    tool_versions: dict[str, dict[str, str]] = field(default_factory=dict)  # by environment, and "peer"
    commands: list[dict[str, Any]] = field(default_factory=list)
    layout: dict[str, Any] | None = None  # CPUs of the system under test and of the client, ports
    peer: dict[str, Any] | None = None
    order: dict[str, Any] | None = None  # the plan's order and seed, [label, first, last position] per segment
    sut_hosts: dict[str, dict[str, Any]] | None = None  # a remote system under test's host facts, by target
    version_mismatches: list[dict[str, Any]] | None = None
    #: what the session measured when not the plan's own points: a search's step, or the points the run's
    #: end measured again (`kitlib.measure.run.runner.run_plan`)
    purpose: str | None = None
    #: seconds each start of an environment took to start, to prepare its workloads and to stop
    #: (`kitlib.core.timing`: the harness's share of environments)
    environment_seconds: list[dict[str, Any]] | None = None
    finished: str | None = None

    def __post_init__(self) -> None:
        self.host_id = self.host["host_id"]

    @classmethod
    def begin(cls, run_label: str, plan: dict[str, Any]) -> Session:
        """A session starting on this host; the host commands logged before it (plan checks, an
        earlier run) are not its own."""
        commands.drain()
        return cls(run_label, collect_host(), plan)

    def add_peer(self, peer) -> None:
        self.peer = peer.describe()
        self.tool_versions["peer"] = collect_tool_versions()

    def add_environment(self, label: str, env) -> None:
        """An environment as it describes itself, and the versions of the tools inside it."""
        self.environments[label] = env.describe()
        self.tool_versions[label] = parse_dpkg(env.run(DPKG_QUERY, timeout=60, check=False).output)

    def add_sut_host(self, target: str, env) -> dict[str, Any]:
        """The facts of the machine that runs `env` (a remote system under test at `target`), recorded."""
        self.sut_hosts = {**(self.sut_hosts or {}), target: collect_host_over(getattr(env, "host_run", env.run))}
        return self.sut_hosts[target]

    def add_commands(self, logged: list[dict[str, Any]]) -> None:
        self.commands.extend(logged)

    def add_environment_seconds(self, label: str, start: float, prepare: float, stop: float) -> None:
        """How long one start of an environment took to start, to prepare its workloads and to stop."""
        entry = {"env": label, "start_s": round(start, 3), "prepare_s": round(prepare, 3), "stop_s": round(stop, 3)}
        self.environment_seconds = [*(self.environment_seconds or []), entry]

    def add_segment(self, label: str, first: int, last: int) -> None:
        """One start of an environment, running the units at positions first..last of the run's order."""
        self.order = self.order or {"order": self.plan.get("order"), "seed": self.plan.get("seed"), "segments": []}
        self.order["segments"].append([label, first, last])

    def finish(self) -> dict[str, Any]:
        """The session's entry, ending now: with the host commands logged since it began (`where` =
        "host") and the packages whose versions differ between its environments (each one warned of)."""
        self.add_commands(commands.drain())
        tools = experiment_tools(self.plan.get("experiment"))
        self.version_mismatches = version_mismatches(
            {
                label: {p: v for p, v in versions.items() if tools is None or p in tools}
                for label, versions in self.tool_versions.items()
                if label != "peer"
            }
        )
        for item in self.version_mismatches:
            warnings.warn(describe_mismatch(item), Notice, stacklevel=3)
        self.finished = now()
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
