"""Build the guest disk ahead of a run and prove (or disprove) KVM by booting its kernel.

`kit envs` must answer quickly, so it only reads a cached KVM verdict; this is what makes one:
`kit vm prepare`, and `make reproduce` on a host that has /dev/kvm.
"""

from __future__ import annotations

from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.image import DEFAULT_BASE, ensure_image
from kitlib.measure.vm.accel import KvmVerdict, kvm_verdict
from kitlib.measure.vm.guest_image import GuestArtifacts, ensure_guest


def prepare_guest(base_image: str = DEFAULT_BASE, *, notify=print) -> tuple[GuestArtifacts, KvmVerdict]:
    client = docker_client()
    guest = ensure_guest(client, ensure_image(client, base_image, notify=notify), notify=notify)
    return guest, kvm_verdict(guest.kernel)
