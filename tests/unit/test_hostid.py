"""Host identity from provenance facts: stable, and honest about what the host is."""

from __future__ import annotations

from kitlib import hostid, provenance


def test_the_id_is_stable_and_prefers_the_machine_id():
    host = provenance.collect_host()
    assert hostid.host_id(host) == hostid.host_id(provenance.collect_host())
    other = {**host, "os": {**host["os"], "machine_id": "0" * 32}}
    assert hostid.host_id(other) != hostid.host_id({**host, "os": {**host["os"], "machine_id": "1" * 32}})


def test_a_vm_guest_is_told_apart_from_a_container_and_bare_metal():
    bare = {"cpu": {"virtualization_flags": ["vmx"]}, "virtualization": "none"}
    assert not hostid.is_virtual_machine(bare)
    assert not hostid.is_virtual_machine({**bare, "virtualization": "docker"})
    assert hostid.is_virtual_machine({**bare, "virtualization": "kvm"})
    assert hostid.is_virtual_machine({"cpu": {"virtualization_flags": ["hypervisor"]}, "virtualization": "docker"})
    assert "a VM guest" in hostid.describe_host({"cpu": {"virtualization_flags": ["hypervisor"]}, "os": {}})
