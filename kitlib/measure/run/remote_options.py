"""A remote system under test's options held to that machine: its CPUs, NUMA nodes and memory are read
over SSH before anything starts, as this host's are when the plan is made (`option_values.beyond_host`).

Why: a plan with `sut_host` cannot be checked against this machine (its CPUs are not the remote one's),
and unchecked, `+cpus0-99` or `+numa7` on a 2-CPU remote host would start, pin to nothing or fail deep in
the engine, or measure a limit that never binds.
"""

from __future__ import annotations

from kitlib.core.errors import EnvironmentUnavailable, PlanError
from kitlib.measure.host import ssh
from kitlib.measure.planning import Plan
from kitlib.specs import option_values
from kitlib.specs.labels import parse_label

#: what the remote kernel prints: online CPUs, each NUMA node's CPUs, /proc/meminfo, between markers
SHAPE_SCRIPT = (
    "cat /sys/devices/system/cpu/online; echo kit-section;"
    ' for n in /sys/devices/system/node/node[0-9]*; do [ -e "$n/cpulist" ] && echo "${n##*node} $(cat "$n/cpulist")";'
    " done; echo kit-section; cat /proc/meminfo"
)
SHAPE_TIMEOUT_S = 30


def read_shape(output: str, name: str) -> option_values.HostShape:
    """The shape `SHAPE_SCRIPT` printed; output that does not hold its three parts is an error."""
    parts = output.split("kit-section\n")
    if len(parts) != 3:
        raise EnvironmentUnavailable(f"{name}: its CPUs and memory could not be read ({output[:200]!r})")
    nodes = {}
    for line in parts[1].splitlines():
        node, _, cpus = line.partition(" ")
        if node.isascii() and node.isdigit():
            nodes[int(node)] = cpus
    try:
        return option_values.shape_from(parts[0], nodes, parts[2], name)
    except ValueError as exc:
        raise EnvironmentUnavailable(f"{name}: its CPUs and memory could not be read ({exc})") from exc


def fetch_shape(plan: Plan) -> option_values.HostShape:
    """The remote system under test's shape, read over its pinned SSH connection."""
    connection = ssh.connect(plan.sut_host, key_filename=plan.ssh_key, known_hosts=plan.known_hosts)
    try:
        _, output = ssh.run(connection, ["sh", "-c", SHAPE_SCRIPT], SHAPE_TIMEOUT_S)
    finally:
        connection.close()
    return read_shape(output, f"the system under test {plan.sut_host}")


def refuse_beyond_remote(plan: Plan, shape: option_values.HostShape | None = None) -> None:
    """PlanError naming every label whose options do not fit the remote system under test."""
    if not plan.sut_host:
        return
    shape = shape or fetch_shape(plan)
    reasons = [
        f"{label!r}: {reason}"
        for label in plan.environments
        for reason in option_values.beyond_host(parse_label(label).options, shape)
    ]
    if reasons:
        raise PlanError(f"options beyond {shape.name}: " + "; ".join(reasons))
