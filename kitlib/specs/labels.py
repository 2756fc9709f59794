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
    kind: str  # native | docker | vm | lxc | docker-in-vm
    network: str | None = None  # host | nat (docker); user | tap (vm)
    storage: str | None = None  # volume | overlay (docker); raw | qcow2 (vm)
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
    "replica": (r"", lambda _v: True, "a second series of the same environment (A/A control)"),
}
#: the longest label (every option with its largest value fits in a third of it)
MAX_LABEL = 200
#: options any kind takes (they change how a series is scheduled, not the environment itself)
UNIVERSAL_OPTIONS = {"replica"}


#: the options each kind honours (any other is refused, never silently ignored)
_OPTIONS_BY_KIND = {
    "docker": {"shares", "quota", "period", "cpus", "mem", "numa"},
    "vm": {"mem", "qcow2", "numa"},
    "lxc": {"cpus", "mem"},
    "docker-in-vm": {"mem", "hostnet", "volume"},
}


def known_labels() -> list[str]:
    return list(BASE_LABELS)


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
    if kind == "docker-in-vm":
        network = "host" if options.get("hostnet") else network
        storage = "volume" if options.get("volume") else storage
    unsupported = sorted(set(options) - _OPTIONS_BY_KIND.get(kind, set(_SUFFIXES)) - UNIVERSAL_OPTIONS)
    if unsupported and kind != "native":
        allowed = ", ".join(sorted(_OPTIONS_BY_KIND[kind]))
        raise PlanError(f"{label!r}: option(s) {', '.join(unsupported)} do not apply to {kind}; it takes: {allowed}")
    return EnvSpec(label=label, kind=kind, network=network, storage=storage, options=options)


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
IMAGE_KINDS = ("docker", "vm", "lxc", "docker-in-vm")


def is_emulated(label: str) -> bool:
    """Whether an environment label (with any options) runs on an emulated CPU."""
    return label.split("+")[0] in EMULATED


def replicated(label: str) -> str | None:
    """The label a `+replica` series repeats (`native+replica` -> `native`), or None."""
    parts = label.split("+")
    if "replica" not in parts:
        return None
    return "+".join(p for p in parts if p != "replica")


def describe_label(label: str) -> str:
    spec = parse_label(label)
    text = BASE_LABELS[label.split("+")[0]][3]
    if spec.options:
        text += "; " + ", ".join(f"{_SUFFIXES[k][2]} = {v}" for k, v in spec.options.items())
    return text
