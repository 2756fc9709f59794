"""The kit's one vocabulary of environment labels, and how a label maps to options.

Labels are used everywhere (records, plots, tables). Extra options add suffixes:
`docker-host-volume+quota5000` is Docker host networking with a volume and a CPU quota of
5000 µs per period; the plots explain the suffix. `+replica`, which every kind takes, is the same
environment measured as a second series of the same run (an A/A control: its difference to the
first series is the machine's noise floor).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kitlib.core.errors import PlanError
from kitlib.specs import option_values


@dataclass(frozen=True)
class EnvSpec:
    """An environment label taken apart into its options: the description of an environment, not one running."""

    label: str
    kind: str  # native | docker | podman | podman-rootless | vm | lxc | nspawn | docker-in-vm
    network: str | None = None  # host | nat (docker, podman); slirp4netns | pasta (rootless podman's NAT); tap (vm)
    storage: str | None = None  # volume | overlay (docker, podman); raw | qcow2 (vm); dir (lxc, nspawn)
    options: dict[str, Any] = field(default_factory=dict)


#: label -> (kind, network, storage, one-line description)
BASE_LABELS: dict[str, tuple[str, str | None, str | None, str]] = {
    "native": ("native", None, None, "this host, no virtualization"),
    "docker-host-volume": ("docker", "host", "volume", "Docker, --net=host, data on a volume"),
    "docker-host-overlay": ("docker", "host", "overlay", "Docker, --net=host, data in the image's overlay fs"),
    "docker-nat-volume": ("docker", "nat", "volume", "Docker bridge + NAT port mapping, data on a volume"),
    "docker-nat-overlay": ("docker", "nat", "overlay", "Docker bridge + NAT, data in overlay (the paper's 'AUFS')"),
    "kvm": ("vm", "tap", "raw", "QEMU with KVM, stock configuration"),
    "kvm-tuned": ("vm", "tap", "raw", "QEMU with KVM, vCPUs pinned, host CPU model and topology, huge pages"),
    "qemu-tcg": ("vm", "tap", "raw", "QEMU with software emulation (TCG): an emulator, not a hypervisor"),
    "lxc": ("lxc", "routed", "dir", "LXC system container: the image's root filesystem booting its own init"),
    "podman-host-volume": ("podman", "host", "volume", "Podman (rootful), --net=host, data on a volume"),
    "podman-host-overlay": ("podman", "host", "overlay", "Podman (rootful), --net=host, data in the overlay fs"),
    "podman-nat-volume": ("podman", "nat", "volume", "Podman (rootful), bridge + NAT port mapping, data on a volume"),
    "podman-nat-overlay": ("podman", "nat", "overlay", "Podman (rootful), bridge + NAT, data in the overlay fs"),
    "podman-rootless-host-volume": (
        "podman-rootless",
        "host",
        "volume",
        "Podman run by an unprivileged user (user namespace), host network, data on a volume",
    ),
    "podman-rootless-nat-volume": (
        "podman-rootless",
        "nat",
        "volume",
        "Podman run by an unprivileged user, user-mode NAT (+slirp4netns or +pasta), data on a volume",
    ),
    "podman-rootless-nat-overlay": (
        "podman-rootless",
        "nat",
        "overlay",
        "Podman run by an unprivileged user, user-mode NAT (+slirp4netns or +pasta), data in the overlay fs",
    ),
    "nspawn": (
        "nspawn",
        "routed",
        "dir",
        "systemd-nspawn system container: the image's root filesystem booting systemd",
    ),
    "docker-in-kvm": (
        "docker-in-vm",
        "nat",
        "overlay",
        "Docker inside a KVM guest (bridge + NAT, overlay; +hostnet, +volume)",
    ),
    "docker-in-qemu-tcg": (
        "docker-in-vm",
        "nat",
        "overlay",
        "Docker inside a software-emulated (TCG) guest: never KVM",
    ),
}

#: suffix option -> (regex of its value, converter, description); a label lists its options in this order
_SUFFIXES = {
    "cpus": (r"\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*", str, "CPU set"),
    "mem": (r"\d+[kmg]", str, "memory limit"),
    "numa": (r"\d+", int, "CPUs and memory pinned to this NUMA node"),
    "period": (r"\d+", int, "CPU period in µs"),
    "quota": (r"\d+", int, "CPU quota in µs per period"),
    "shares": (r"\d+", int, "CPU shares (cgroup cpu.shares)"),
    "hostnet": (r"", lambda _v: True, "host networking for Docker inside the VM"),
    "qcow2": (r"", lambda _v: True, "VM disk as qcow2 instead of raw"),
    "volume": (r"", lambda _v: True, "a volume for the data of Docker inside the VM"),
    "runtime": (r"=[a-z][a-z0-9._-]{0,39}", lambda v: v[1:], "OCI runtime, as registered with the engine"),
    "slirp4netns": (r"", lambda _v: True, "rootless NAT through slirp4netns (a user-mode TCP/IP stack)"),
    "pasta": (r"", lambda _v: True, "rootless NAT through pasta (passt: the host's sockets, no user-mode stack)"),
    "replica": (r"", lambda _v: True, "a second series of the same environment (A/A control)"),
}
#: the longest label (every option with its largest value fits in a third of it)
MAX_LABEL = 200
#: the ways rootless Podman reaches its containers' network (one is chosen on a `podman-rootless-nat-*` label)
ROOTLESS_NETWORKS = ("slirp4netns", "pasta")
#: options any kind takes (they change how a series is scheduled, not the environment itself)
UNIVERSAL_OPTIONS = {"replica"}


#: the options each kind honours (any other is refused, never silently ignored)
_OPTIONS_BY_KIND = {
    "docker": {"shares", "quota", "period", "cpus", "mem", "numa", "runtime"},
    "podman": {"shares", "quota", "period", "cpus", "mem", "numa"},
    "podman-rootless": {"cpus", "slirp4netns", "pasta"},
    "nspawn": {"cpus"},
    "vm": {"mem", "qcow2", "numa"},
    "lxc": {"cpus", "mem"},
    "docker-in-vm": {"mem", "hostnet", "volume"},
}


def known_labels() -> list[str]:
    """Every label without options a user can write: a rootless NAT base once per user-mode network."""
    labels = []
    for base, (kind, network, _, _) in BASE_LABELS.items():
        if kind == "podman-rootless" and network == "nat":
            labels += [f"{base}+{mode}" for mode in ROOTLESS_NETWORKS]
        else:
            labels.append(base)
    return labels


def parse_label(label: str) -> EnvSpec:
    """Split `base+opt+opt…` into an EnvSpec; unknown names fail with the list of known ones, and
    an option given twice, out of its range or not in its one spelling (`kitlib.specs.option_values`)
    fails naming the label, the option and what is allowed."""
    if not isinstance(label, str) or not label:
        raise PlanError(f"environment label must be a non-empty string, got {label!r}")
    if len(label) > MAX_LABEL:
        raise PlanError(
            f"environment label {label[:40]!r}… has {len(label)} characters; a label has at most {MAX_LABEL}"
        )
    base, *suffixes = label.split("+")
    if base not in BASE_LABELS:
        raise PlanError(
            f"unknown environment {base!r}; known environments: {', '.join(BASE_LABELS)}"
            + (" (options are added as +name<value>, e.g. docker-host-volume+quota5000)" if suffixes else "")
        )
    kind, network, storage, _ = BASE_LABELS[base]
    given = _options(label, suffixes)
    _one_spelling(label, base, given)
    options = {name: _SUFFIXES[name][1](text) for name, text in given.items()}
    if kind == "native" and set(options) - UNIVERSAL_OPTIONS:
        raise PlanError(f"{label!r}: native takes no options but +replica")
    if "qcow2" in options:
        if kind != "vm":
            raise PlanError(f"{label!r}: qcow2 applies to VM environments only")
        storage = "qcow2"
    if kind == "podman-rootless":
        network = _rootless_network(label, network, options)
    if kind == "docker-in-vm":
        network = "host" if options.get("hostnet") else network
        storage = "volume" if options.get("volume") else storage
    unsupported = sorted(set(options) - _OPTIONS_BY_KIND.get(kind, set(_SUFFIXES)) - UNIVERSAL_OPTIONS)
    if unsupported and kind != "native":
        allowed = ", ".join(sorted(_OPTIONS_BY_KIND[kind]))
        raise PlanError(f"{label!r}: option(s) {', '.join(unsupported)} do not apply to {kind}; it takes: {allowed}")
    return EnvSpec(label=label, kind=kind, network=network, storage=storage, options=options)


def _rootless_network(label: str, network: str | None, options: dict[str, Any]) -> str | None:
    """Rootless Podman's NAT is user-mode networking: the label names which (one environment has one
    label, so there is no default); a host-network label takes neither."""
    chosen = [name for name in ROOTLESS_NETWORKS if options.get(name)]
    if network == "host":
        if chosen:
            raise PlanError(f"{label!r}: +{chosen[0]} is rootless NAT; a host-network label takes no network mode")
        return network
    if len(chosen) != 1:
        raise PlanError(
            f"{label!r}: rootless NAT goes through one user-mode network: add +slirp4netns or +pasta"
            + (" (not both)" if chosen else "")
        )
    return chosen[0]


def _options(label: str, suffixes: list[str]) -> dict[str, str]:
    """The options' values as written, each checked against its pattern and Docker's limits."""
    given: dict[str, str] = {}
    for suffix in suffixes:
        if suffix in _SUFFIXES:
            name, value = suffix, ""
        else:
            match = re.fullmatch(r"([a-z]+)(.*)", suffix)
            name, value = (match.group(1), match.group(2)) if match else (suffix, "")
        if name not in _SUFFIXES:
            raise PlanError(f"{label!r}: unknown option {suffix!r}; known options: {', '.join(_SUFFIXES)}")
        pattern = _SUFFIXES[name][0]
        if not re.fullmatch(pattern, value):
            raise PlanError(f"{label!r}: option {name!r} needs a value matching {pattern!r}, got {value!r}")
        if name in given:
            raise PlanError(
                f"{label!r}: option {name!r} is given twice ({name}{given[name]}, {suffix}); "
                "an environment takes each option once"
            )
        allowed = option_values.out_of_range(name, value)
        if allowed:
            raise PlanError(f"{label!r}: option {suffix} is out of range: {allowed}")
        given[name] = value
    return given


def _one_spelling(label: str, base: str, given: dict[str, str]) -> None:
    """Refuse a label that is not its environment's one spelling, naming that spelling: values
    written canonically, options in `_SUFFIXES` order (so records are never split between labels)."""
    values = {name: option_values.canonical(name, text) for name, text in given.items()}
    canonical = "+".join([base, *(name + values[name] for name in _SUFFIXES if name in values)])
    if canonical == label:
        return
    respelled = [
        f"{name}{text} is written {name}{values[name]}" for name, text in given.items() if values[name] != text
    ]
    why = "; ".join(respelled) if respelled else f"options go in the order {', '.join(_SUFFIXES)}"
    raise PlanError(f"{label!r}: one environment has one label ({why}): write {canonical!r}")


#: the labels whose CPU is emulated in software (QEMU TCG): they measure an emulator, never a hypervisor
EMULATED = ("qemu-tcg", "docker-in-qemu-tcg")
#: the kinds that run the kit's benchmark image (a container's image, a guest's root, LXC's rootfs)
IMAGE_KINDS = ("docker", "podman", "podman-rootless", "vm", "lxc", "nspawn", "docker-in-vm")
#: the kinds whose environment is an OCI container reached through an engine's Docker-compatible API
CONTAINER_KINDS = ("docker", "podman", "podman-rootless")


def is_emulated(label: str) -> bool:
    """Whether an environment label (with any options) runs on an emulated CPU."""
    return label.split("+")[0] in EMULATED


def replicated(label: str) -> str | None:
    """The label a `+replica` series repeats (`native+replica` -> `native`), or None."""
    parts = label.split("+")
    if "replica" not in parts:
        return None
    return "+".join(p for p in parts if p != "replica")


#: record columns of options whose name a workload's parameter already takes (fio's `runtime`)
OPTION_COLUMNS = {"runtime": "oci_runtime"}


def option_columns(options: dict[str, Any]) -> dict[str, Any]:
    """A label's options as record columns (`+replica` is the series, not a configuration)."""
    return {OPTION_COLUMNS.get(name, name): value for name, value in options.items() if name != "replica"}


def slug(label: str) -> str:
    """A label as a part of a container's, file's or machine's name (letters, digits, `.`, `_`, `-`)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", label)


def describe_label(label: str) -> str:
    spec = parse_label(label)
    text = BASE_LABELS[label.split("+")[0]][3]
    if spec.options:
        text += "; " + ", ".join(f"{_SUFFIXES[k][2]} = {v}" for k, v in spec.options.items())
    return text
