"""A libvirt domain matching a VmConfig, for users who prefer libvirt to the kit's own QEMU start.

The paper advises running KVM through libvirt with the tuning it lists; this writes the same
machine the kit ran (vCPUs and their pinning, CPU model and topology, huge pages, virtio disk and
NIC, direct kernel boot) as a domain XML beside the run's records. The kit never uses it itself.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from kitlib.measure.vm.qemu import VmConfig


def domain_xml(config: VmConfig) -> str:
    domain = ET.Element("domain", type="kvm" if config.accel == "kvm" else "qemu")
    domain.append(
        ET.Comment(
            " the machine of one kit run; its disk, seed and console paths were that run's scratch copies "
            "(removed after it): point them at your own copy of the guest disk, kernel and initrd "
        )
    )
    ET.SubElement(domain, "name").text = config.name
    ET.SubElement(domain, "memory", unit="MiB").text = str(config.memory_mib)
    if config.hugepages:
        backing = ET.SubElement(domain, "memoryBacking")
        ET.SubElement(backing, "hugepages")
    ET.SubElement(domain, "vcpu", placement="static").text = str(config.vcpus)
    if config.tuned and config.host_cpus:
        tune = ET.SubElement(domain, "cputune")
        for index in range(config.vcpus):
            cpu = config.host_cpus[index % len(config.host_cpus)]
            ET.SubElement(tune, "vcpupin", vcpu=str(index), cpuset=str(cpu))
    os_element = ET.SubElement(domain, "os")
    ET.SubElement(os_element, "type", arch="x86_64", machine="q35").text = "hvm"
    ET.SubElement(os_element, "kernel").text = str(config.kernel)
    ET.SubElement(os_element, "initrd").text = str(config.initrd)
    ET.SubElement(os_element, "cmdline").text = " ".join(config.kernel_args)
    features = ET.SubElement(domain, "features")
    ET.SubElement(features, "acpi")
    if config.cpu_model == "host":
        cpu = ET.SubElement(domain, "cpu", mode="host-passthrough")
        ET.SubElement(cpu, "topology", sockets="1", dies="1", cores=str(config.vcpus), threads="1")
        ET.SubElement(cpu, "cache", mode="passthrough")
    elif config.cpu_model == "max":
        ET.SubElement(domain, "cpu", mode="maximum", check="none")
    else:
        cpu = ET.SubElement(domain, "cpu", mode="custom", match="exact")
        ET.SubElement(cpu, "model", fallback="allow").text = config.cpu_model
    ET.SubElement(domain, "on_reboot").text = "destroy"
    devices = ET.SubElement(domain, "devices")
    ET.SubElement(devices, "emulator").text = "/usr/bin/qemu-system-x86_64"
    _disk(devices, str(config.disk), config.disk_format, "vda", config.disk_cache, readonly=False)
    _disk(devices, str(config.seed), "raw", "vdb", config.disk_cache, readonly=True)
    for index, drive in enumerate(config.extra_drives):
        _disk(devices, str(drive), "raw", f"vd{chr(ord('c') + index)}", config.disk_cache, readonly=True)
    nic = ET.SubElement(devices, "interface", type="ethernet")
    ET.SubElement(nic, "mac", address=config.mac)
    ET.SubElement(nic, "target", dev=config.tap, managed="no")
    ET.SubElement(nic, "model", type="virtio")
    ET.SubElement(nic, "driver", name="vhost" if config.vhost else "qemu")
    serial = ET.SubElement(devices, "serial", type="file")
    ET.SubElement(serial, "source", path=str(config.console_log))
    ET.SubElement(devices, "rng", model="virtio").append(_backend())
    ET.indent(domain)
    return ET.tostring(domain, encoding="unicode") + "\n"


def _disk(devices: ET.Element, path: str, fmt: str, target: str, cache: str, *, readonly: bool) -> None:
    disk = ET.SubElement(devices, "disk", type="file", device="disk")
    io = "native" if cache == "none" else "threads"
    ET.SubElement(disk, "driver", name="qemu", type=fmt, cache=cache, io=io)
    ET.SubElement(disk, "source", file=path)
    ET.SubElement(disk, "target", dev=target, bus="virtio")
    if readonly:
        ET.SubElement(disk, "readonly")


def _backend() -> ET.Element:
    backend = ET.Element("backend", model="random")
    backend.text = "/dev/urandom"
    return backend
