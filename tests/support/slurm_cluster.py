"""A real Slurm cluster on this machine: `munged` and `slurmctld` here, one `slurmd` per namespace host
(each a machine of its own: address, hostname, machine-id), all of Debian's packages, with a
configuration, key, state and sockets of their own in a work folder, so nothing of this machine's own
Slurm or MUNGE (if any) is touched. Clients find it through `SLURM_CONF` (`self.environ`).

    with SlurmCluster(hosts) as cluster:          # root; slurmctld, slurmd, munge installed
        subprocess.run(["sbatch", ...], env={**os.environ, **cluster.environ})

Every daemon is stopped by `stop()` (TERM, bounded, then KILL), and the work folder removed.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.host.lifecycle import StartStop

from .namespace_host import START_TIMEOUT_S, NamespaceHost, _terminate, spawn_daemon, wait_ready

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel")


class SlurmCluster(StartStop):
    """A controller on this machine and a compute node in each of `hosts` (started namespace hosts)."""

    def __init__(self, hosts: list[NamespaceHost]):
        self.hosts = hosts
        self.token = secrets.token_hex(3)
        self.workdir: Path | None = None
        self.nodes = [f"kitnode-{self.token}-{i}" for i in range(len(hosts))]
        self.port = 0
        self._procs: list[subprocess.Popen] = []

    @property
    def conf(self) -> Path:
        return self.workdir / "slurm.conf"

    @property
    def environ(self) -> dict[str, str]:
        """What a Slurm client (sbatch, squeue) needs to reach this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def start(self) -> None:
        if os.geteuid() != 0:
            raise EnvironmentUnavailable("a Slurm cluster of namespace hosts needs root")
        absent = [d for d in DAEMONS if not shutil.which(d) and not Path(f"/usr/sbin/{d}").exists()]
        if absent:
            raise EnvironmentUnavailable(f"Slurm needs {', '.join(absent)} (slurmctld, slurmd, slurm-client, munge)")
        self.workdir = Path(tempfile.mkdtemp(prefix=f"kitslurm{self.token}-", dir="/var/tmp"))
        for sub in ("state", "spool", "munge"):
            (self.workdir / sub).mkdir()
        self.port = _free_port()
        self._munged()
        self._configure()
        controller = self._spawn(["slurmctld", "-D", "-f", str(self.conf)], "slurmctld.log")
        self._wait(lambda: _port_open(self.hosts[0].gateway, self.port), controller, "slurmctld", "slurmctld.log")
        for host, node in zip(self.hosts, self.nodes, strict=True):
            argv = host.inside(["slurmd", "-D", "-f", str(self.conf), "-N", node])
            self._spawn(argv, f"slurmd-{node}.log")
        self._wait(self._nodes_idle, self._procs[-1], "every slurmd registered and idle", "slurmctld.log")

    def _munged(self) -> None:
        key = self.workdir / "munge" / "munge.key"
        key.write_bytes(secrets.token_bytes(128))
        key.chmod(0o600)
        socket_path = self.workdir / "munge" / "munge.socket"
        argv = ["munged", "--foreground", "--force", f"--socket={socket_path}", f"--key-file={key}"]
        home = self.workdir / "munge"
        argv += [f"--pid-file={home / 'munged.pid'}", f"--seed-file={home / 'seed'}"]
        argv += [f"--log-file={self.workdir / 'munged.log'}"]
        proc = self._spawn(argv, "munged.out")
        self._wait(socket_path.exists, proc, "munged", "munged.log")

    def _configure(self) -> None:
        w = self.workdir
        lines = [
            f"ClusterName=kit{self.token}",
            f"SlurmctldHost={socket.gethostname().split('.')[0]}({self.hosts[0].gateway})",
            f"SlurmctldPort={self.port}",
            "SlurmdPort=6818",  # one slurmd per namespace: the same port on each node's own address
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={w / 'munge' / 'munge.socket'}",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={w / 'state'}",
            f"SlurmdSpoolDir={w / 'spool'}/%n",
            f"SlurmctldPidFile={w / 'slurmctld.pid'}",
            f"SlurmdPidFile={w}/slurmd-%n.pid",
            f"SlurmctldLogFile={w / 'slurmctld.log'}",
            f"SlurmdLogFile={w}/slurmd-%n.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "MpiDefault=none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "ReturnToService=2",
            "MinJobAge=600",
            "KillWait=30",
        ]
        cpus = os.cpu_count() or 1
        for host, node in zip(self.hosts, self.nodes, strict=True):
            lines.append(f"NodeName={node} NodeAddr={host.address} CPUs={cpus} RealMemory=512 State=UNKNOWN")
        lines.append(f"PartitionName=kit Nodes={','.join(self.nodes)} Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n")

    def _nodes_idle(self) -> bool:
        said = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%N %T"],
            env={**os.environ, **self.environ},
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
        states = dict(line.split()[:2] for line in said.splitlines() if len(line.split()) >= 2)
        return all(states.get(node) == "idle" for node in self.nodes)

    def _spawn(self, argv: list[str], log: str) -> subprocess.Popen:
        proc = spawn_daemon(argv, self.workdir / log)
        self._procs.append(proc)
        return proc

    def _wait(self, ready, proc: subprocess.Popen, what: str, log: str) -> None:
        if not wait_ready(ready, proc):
            tails = "\n".join(
                f"--- {p.name}:\n{p.read_text(errors='replace')[-1200:]}" for p in sorted(self.workdir.glob("*.log"))
            )
            raise EnvironmentUnavailable(f"Slurm: {what} did not come up within {START_TIMEOUT_S:.0f} s:\n{tails}")

    def stop(self) -> None:
        """Cancel whatever is still queued, stop the daemons (slurmd first), remove the work folder."""
        if self._procs and self.workdir is not None:
            subprocess.run(
                ["scancel", "--full", "--partition", "kit"],
                env={**os.environ, **self.environ},
                capture_output=True,
                timeout=60,
                check=False,
            )
        for proc in reversed(self._procs):
            _terminate(proc)
        self._procs.clear()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def leftovers(self) -> list[str]:
        """Daemons of this cluster still running (empty after `stop()`)."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if f"kitslurm{self.token}".encode() in (entry / "cmdline").read_bytes():
                        found.append(f"process {entry.name}")
                except OSError:
                    continue
        return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return sock.getsockname()[1]


def _port_open(address: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((address, port)) == 0
