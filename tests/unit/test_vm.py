"""The VM environment: QEMU command lines and libvirt XML from a config."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kitlib.core.errors import PlanError
from kitlib.measure import environments
from kitlib.measure.vm.libvirt import domain_xml
from kitlib.measure.vm.qemu import VmConfig, command_line


def _config(tmp_path: Path, *, tuned: bool, accel: str = "kvm", fmt: str = "raw") -> VmConfig:
    return VmConfig(
        name="kit1x0abc-kvm",
        accel=accel,
        tuned=tuned,
        vcpus=2,
        memory_mib=2048,
        host_cpus=[2, 3],
        disk=tmp_path / f"disk.{fmt}",
        disk_format=fmt,
        seed=tmp_path / "seed.img",
        kernel=tmp_path / "vmlinuz",
        initrd=tmp_path / "initrd.img",
        tap="kt1x0abc",
        mac="52:54:00:01:02:03",
        vhost=accel == "kvm",
        hugepages=tuned,
        disk_cache="none",
        workdir=tmp_path,
    )


def test_stock_and_tuned_command_lines_differ_as_the_paper_tuned(tmp_path):
    stock = command_line(_config(tmp_path, tuned=False))
    tuned = command_line(_config(tmp_path, tuned=True))
    assert stock[stock.index("-cpu") + 1] == "qemu64" and tuned[tuned.index("-cpu") + 1] == "host"
    assert stock[stock.index("-smp") + 1] == "2"
    assert tuned[tuned.index("-smp") + 1] == "2,sockets=1,cores=2,threads=1"
    assert "-mem-path" not in stock and tuned[tuned.index("-mem-path") + 1] == "/dev/hugepages"
    assert any(a.startswith("tap,id=net0,ifname=kt1x0abc") and a.endswith("vhost=on") for a in stock)
    assert any("if=virtio,format=raw,cache=none" in a for a in stock)


def test_tcg_is_never_given_the_host_cpu_or_vhost(tmp_path):
    argv = command_line(_config(tmp_path, tuned=True, accel="tcg"))
    assert argv[argv.index("-accel") + 1] == "tcg,thread=multi"
    assert argv[argv.index("-cpu") + 1] == "max", "every feature TCG emulates, never the host's"


def test_vm_labels_parse_and_qcow2_is_vm_only():
    assert environments.parse_label("qemu-tcg").kind == "vm"
    assert environments.parse_label("kvm-tuned+qcow2").storage == "qcow2"
    with pytest.raises(PlanError, match="VM environments only"):
        environments.parse_label("docker-host-volume+qcow2")


@pytest.mark.skipif(shutil.which("virt-xml-validate") is None, reason="virt-xml-validate (libvirt-clients) missing")
@pytest.mark.parametrize("tuned", [False, True])
def test_libvirt_domain_is_valid_and_matches_the_config(tmp_path, tuned):
    config = _config(tmp_path, tuned=tuned, fmt="qcow2")
    path = tmp_path / "domain.xml"
    path.write_text(domain_xml(config))
    done = subprocess.run(["virt-xml-validate", str(path), "domain"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    domain = ET.parse(path).getroot()
    assert domain.get("type") == "kvm" and domain.findtext("vcpu") == "2"
    assert domain.find("devices/disk/driver").get("type") == "qcow2"
    assert domain.find("devices/interface/target").get("dev") == "kt1x0abc"
    pins = {p.get("vcpu"): p.get("cpuset") for p in domain.iter("vcpupin")}
    assert pins == ({"0": "2", "1": "3"} if tuned else {})
    assert (domain.find("cpu").get("mode") == "host-passthrough") is tuned
    assert (domain.find("memoryBacking/hugepages") is not None) is tuned


@pytest.mark.skipif(shutil.which("virt-xml-validate") is None, reason="virt-xml-validate (libvirt-clients) missing")
def test_libvirt_domain_for_tcg_asks_for_the_emulators_maximum_cpu(tmp_path):
    path = tmp_path / "domain.xml"
    path.write_text(domain_xml(_config(tmp_path, tuned=False, accel="tcg")))
    done = subprocess.run(["virt-xml-validate", str(path), "domain"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    domain = ET.parse(path).getroot()
    assert domain.get("type") == "qemu" and domain.find("cpu").get("mode") == "maximum"
