"""The bottom layer: what the kit does on this host itself, below environments, peers and VMs.

`commands` runs and logs every command on the host (links, namespaces, firewall rules, mounts, QEMU
and helper daemons), so a run's provenance holds those command lines beside the ones run in its
environments and on its peer.
"""
