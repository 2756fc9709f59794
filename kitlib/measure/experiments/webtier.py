"""The web tier (seed 002, post 3, CloudStone): the kit's social-events application, NGINX with PHP-FPM
against MariaDB, in the environment under test; a closed-loop population of Locust users with think
times on the peer drives the post's operation mix.

Every environment runs the same application: its files (`kitlib/measure/image/webtier/`) are copied
into the environment's scratch folder, and NGINX, PHP-FPM and MariaDB are the environment's own
Debian packages (the benchmark image's in containers and guests), started from plain argv with every
file they write under that folder. The database is generated once per environment, sized from
`data_users`, deterministic for the seed. Each point starts `users` users evenly over the ramp-up, then
Locust's statistics are reset (`--reset-stats`, when every user runs) so that every figure of the point
comes from the steady window; the window's start and end are read back from Locust's per-second
history, which is also the point's sub-intervals for the steady-state rule.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.records import Measurement
from kitlib.measure import capacity
from kitlib.measure.environments.base import Environment, write_text
from kitlib.measure.experiments import instances
from kitlib.measure.experiments.base import Experiment, RawResult, Workload
from kitlib.measure.experiments.mysql import start_server
from kitlib.measure.image import SOURCES
from kitlib.measure.parsers import locust
from kitlib.measure.peer import Peer
from kitlib.specs import webtier as spec
from kitlib.specs.webtier import SPEC, WebtierParams

#: the application's files, shipped with the kit beside the image's sources
APP = SOURCES.parent / "webtier"
APP_FILES = ("app/index.php", "schema.sql", "generate.py", "nginx.conf.in", "php-fpm.conf.in")
LOCUSTFILE = APP / "locustfile.py"
DATABASE = "webtier"
#: the programs the web tier runs in the environment, and the Debian packages they come from
PROGRAMS = ("nginx", "php-fpm8.2", "mariadbd", "mariadb", "mariadb-install-db", "python3")
PACKAGES = "Debian: nginx php8.2-fpm php8.2-mysql mariadb-server mariadb-client python3"
#: seconds a point's users get to finish their requests when the window closes and no ramp-down is asked
STOP_TIMEOUT_S = 2


def locust_program() -> str:
    """Locust beside this interpreter (the kit's environment), else the one on PATH (a remote client)."""
    here = Path(sys.executable).with_name("locust")
    return str(here) if here.exists() else (shutil.which("locust") or "locust")


class CloudstoneWorkload(Workload):
    name = "cloudstone"
    tool = "locust"
    ports_needed = 2  # NGINX, MariaDB
    duration_parameter = "steady_s"
    time_bound = True
    search = "peak-users search"
    #: PHP, NGINX, MariaDB and the load generator spend the point on CPU time: a host that slows the
    #: point's CPUs moves its throughput and latency as it moves Redis's
    capacity_probe = capacity.CPU

    def __init__(self, params: WebtierParams):
        super().__init__(params)
        self.sut_cores = params.server_cores
        self.ports_needed = 2 * params.instances  # NGINX and MariaDB of each instance
        self.instances: list[Instance] = []
        self.locust_version: str | None = None
        self.cpus: list[int] = []
        self.containers = 0  # containers the instances' web tiers run in (0 where not Docker)

    @property
    def apart(self) -> bool:
        """Whether the database runs in an environment of its own (every instance alike)."""
        return bool(self.instances) and self.instances[0].db_home is not self.instances[0].home

    def points(self) -> list[dict[str, Any]]:
        return [{"users": u} for u in self.params.users]

    def next_points(self, records: Any, environments: list[str]) -> dict[str, list[dict[str, Any]]]:
        """The peak-users search (`peak_max_users`): per environment the next population
        `spec.next_population` asks for, judged by the post's pass/fail on every run of each population."""
        p = self.params
        if not p.peak_max_users or records is None or not len(records):
            return {}
        mine = records[records["workload"] == self.name] if "workload" in records.columns else records
        verdicts = spec.population_verdicts(mine)
        found = {}
        for env in environments:
            wanted = spec.next_population(verdicts[verdicts["env"] == env], p.peak_max_users, p.peak_resolution_pct)
            if wanted is not None:
                found[env] = [{"users": wanted}]
        return found

    def search_note(self) -> str | None:
        p = self.params
        if not p.peak_max_users:
            return None
        return (
            f"the peak-users search in every environment: populations doubled up to {p.peak_max_users} users "
            f"while all pass, then the gap to the first failing one halved until within {p.peak_resolution_pct:g}%, "
            "each in every repetition"
        )

    def likely_search_points(self) -> list[dict[str, Any]]:
        """The doublings up to `peak_max_users` (the path where every population passes, as the quick
        profile's all do on a 2-core machine); a failing one adds a few halvings more."""
        p = self.params
        found: list[dict[str, Any]] = []
        peak = max(p.users)
        while p.peak_max_users and peak < p.peak_max_users:
            peak = min(2 * peak, p.peak_max_users)
            found.append({"users": peak})
        return found

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        p = self.params
        # locust's run time, the ramp-down if one is asked (the stop timeout is a bound: users with nothing
        # in flight stop at once) and its start; a quick point took 10.3 s of an estimated 11
        return math.ceil(p.ramp_up_s + p.steady_s) + p.ramp_down_s + 1.0

    # -- the application --------------------------------------------------------------------
    def prepare(self, env: Environment, peer: Peer) -> None:
        p = self.params
        needed = 'for p in "$@"; do command -v "$p" >/dev/null || echo "$p"; done'
        absent = env.run(["sh", "-c", needed, "sh", *PROGRAMS], timeout=30, check=False).output.split()
        if absent:
            raise EnvironmentUnavailable(f"{env.label}: the web tier needs {', '.join(absent)} ({PACKAGES})")
        self.cpus = instances.sut_cpus(env)
        ports = env.layout.ports[: 2 * p.instances]
        self.instances = []
        for i in range(p.instances):
            web_port, db_port = ports[2 * i], ports[2 * i + 1]
            # instance i: here, or its own container of this label; its database there too, or apart in
            # one more container (the post's two-VM layout, "2 containers per CloudStone instance")
            home = env if i == 0 else (env.companion(i, [web_port] if p.tiers == "two" else [web_port, db_port]) or env)
            db_home = (env.companion(p.instances + i, [db_port]) or home) if p.tiers == "two" else home
            self.instances.append(self._start(i, home, db_home, web_port, db_port, peer))
        self.containers = instances.containers(env, [n.home for n in self.instances])
        said = peer.run([locust_program(), "--version"], timeout=60, check=False).output.split()
        self.locust_version = said[1] if len(said) > 1 and said[0] == "locust" else None

    def _start(
        self, i: int, home: Environment, db_home: Environment, web_port: int, db_port: int, peer: Peer
    ) -> Instance:
        """Instance i: its files, its database loaded, PHP-FPM and NGINX started, placed as the plan says."""
        p = self.params
        suffix = "" if p.instances == 1 else f"-{i}"
        root = f"{home.data_dir}/kit-webtier{suffix}"
        run = f"{root}/run"
        home.run(["rm", "-rf", root], timeout=120)
        for name in APP_FILES:
            write_text(home, f"{root}/{name}", (APP / name).read_text())
        home.run(["mkdir", "-p", f"{run}/sessions"], timeout=30)
        apart = db_home is not home
        db_root = f"{db_home.data_dir}/kit-webtier-db{suffix}" if apart else root
        if apart:
            db_home.run(["rm", "-rf", db_root], timeout=120)
            for name in ("schema.sql", "generate.py"):
                write_text(db_home, f"{db_root}/{name}", (APP / name).read_text())
        socket = f"{db_root}/mysql.sock"
        start_server(db_home, f"mariadbd{suffix}", db_port, f"{db_root}/mysql", socket, p.buffer_pool_mb, user=DATABASE)
        load = 'mariadb --socket="$1" "$2" < "$3" && python3 "$4" --users "$5" --seed "$6" | mariadb --socket="$1" "$2"'
        loaded = db_home.run(
            ["sh", "-c", load, "sh", socket, DATABASE, f"{db_root}/schema.sql", f"{db_root}/generate.py"]
            + [str(p.data_users), str(p.seed)],
            timeout=3600,
            check=False,
        )
        if loaded.returncode != 0:
            raise EnvironmentUnavailable(f"{db_home.label}: the data set did not load:\n{loaded.output[-1500:]}")
        # apart, the web tier reaches the database over TCP where a client on the peer would: the host's
        # address and the port it publishes (a container's loopback is its own)
        db_host, db_tcp_port = db_home.address_for_peer(db_port, peer.host_address) if apart else ("127.0.0.1", db_port)
        values = {
            "run": run,
            "app": f"{root}/app",
            "port": web_port,
            "max_children": spec.PHP_CHILDREN,
            "db_socket": "none" if apart else socket,
            "db_host": db_host,
            "db_port": db_tcp_port,
            "db_name": DATABASE,
            "db_user": DATABASE,
            "db_password": DATABASE,
        }
        for name in ("nginx.conf", "php-fpm.conf"):
            write_text(home, f"{run}/{name}", (APP / f"{name}.in").read_text().format(**values))
        # -R: a container runs as root, which php-fpm refuses without it; opcache's lock file under run/
        fpm = ["php-fpm8.2", "-F", "-R", "-y", f"{run}/php-fpm.conf", "-d", f"opcache.lockfile_path={run}"]
        home.start_service(f"php-fpm{suffix}", fpm)
        ready = 'i=0; while [ ! -S "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; [ -S "$1" ]'
        if home.run(["sh", "-c", ready, "sh", f"{run}/php-fpm.sock"], timeout=60, check=False).returncode != 0:
            raise EnvironmentUnavailable(f"{home.label}: php-fpm did not open its socket within 30 s")
        home.start_service(
            f"nginx{suffix}",
            ["nginx", "-c", f"{run}/nginx.conf", "-p", run, "-e", f"{run}/nginx-error.log"],
            ready_port=web_port,
        )
        instance = Instance(i, home, db_home, home.address_for_peer(web_port, peer.host_address))
        if p.placement == "pinned":
            cpu = self.cpus[i % len(self.cpus)]
            place(home, cpu, [f"{run}/php-fpm.pid", f"{run}/nginx.pid"])
            place(db_home, cpu, [f"{db_root}/mysql/mariadbd.pid"])
        return instance

    # -- a point ----------------------------------------------------------------------------
    def locust_argv(self, folder: str, users: int, steady_s: float, target: tuple[str, int]) -> list[str]:
        p = self.params
        host, port = target
        return [
            locust_program(),
            *("-f", f"{folder}/locustfile.py", "--headless", "--only-summary"),
            *("--host", f"http://{host}:{port}", "-u", str(users)),
            *("-r", f"{users / p.ramp_up_s:g}", "-t", f"{math.ceil(p.ramp_up_s + steady_s)}s"),
            *("--reset-stats", "--csv", f"{folder}/point", "--csv-full-history"),
            *("--stop-timeout", f"{max(p.ramp_down_s, STOP_TIMEOUT_S):g}"),
            *("--kit-mix", json.dumps(p.mix), "--kit-think-min", f"{p.think_min_s:g}"),
            *("--kit-think-max", f"{p.think_max_s:g}", "--kit-persons", str(p.persons)),
            *("--kit-events", str(p.events), "--kit-seed", str(p.seed)),
        ]

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any], seconds: float | None = None) -> RawResult:
        """One point: every instance's users at once; `seconds` is the steady window where the steady-state
        rule lengthened it."""
        assert self.instances, "prepare() first"
        p = self.params
        steady = p.steady_s if seconds is None else seconds
        made = peer.run(["mktemp", "-d", "/tmp/kit-webtier.XXXXXX"], timeout=30).output.strip().splitlines()[-1]
        folders = [made if p.instances == 1 else f"{made}/{i}" for i in range(p.instances)]
        try:
            for folder in folders:
                write_text(peer, f"{folder}/locustfile.py", LOCUSTFILE.read_text())
            timeout = p.ramp_up_s + steady + p.ramp_down_s + 300
            argvs = [
                self.locust_argv(f, point["users"], steady, n.target)
                for f, n in zip(folders, self.instances, strict=True)
            ]
            if len(argvs) == 1:
                result = peer.run(argvs[0], timeout=timeout, check=False)
                said, exits = result.output, [result.returncode]
            else:
                said, exits = self._at_once(peer, argvs, timeout)
            outputs = {"locust": said}
            for i, folder in enumerate(folders):
                for name in ("stats", "stats_history"):
                    found = peer.run(["cat", f"{folder}/point_{name}.csv"], timeout=60, check=False)
                    if found.returncode != 0:
                        raise EnvironmentUnavailable(
                            f"locust{'' if p.instances == 1 else f' of instance {i}'} wrote no {name} file "
                            f"(exit {exits[min(i, len(exits) - 1)]}):\n{said[-1500:]}"
                        )
                    outputs[output_name(name, i, p.instances)] = found.output
        finally:
            peer.run(["rm", "-rf", made], timeout=60, check=False)
        # the two files of an instance must be of one run: the stats hold the history's last running totals
        windows = []
        for i in range(p.instances):
            stats, history = (outputs[output_name(n, i, p.instances)] for n in ("stats", "stats_history"))
            window = locust.run_window(stats, history, f"locust at {point['users']} users")
            if window.users != point["users"]:
                raise EnvironmentUnavailable(f"locust ran {window.users} users, not the point's {point['users']}")
            windows.append(window)
        facts = {
            "data_users": p.data_users,
            "persons": p.persons,
            "events": p.events,
            "steady_start": min(w.start for w in windows),  # epoch seconds of the window's first and last history row
            "steady_end": max(w.end for w in windows),
            "locust_exit": max(exits),  # 1 where any request failed: the errors are in the records
            "locust_version": self.locust_version,
        }
        return RawResult(outputs=outputs, facts=facts)

    @staticmethod
    def _at_once(peer: Peer, argvs: list[list[str]], timeout: float) -> tuple[str, list[int]]:
        """Every instance's Locust at the same moment; their words and exit statuses, in instance order."""
        jobs = [f'{shlex.join(argv)} > "$d/{i}" 2>&1; echo $? > "$d/{i}.exit"' for i, argv in enumerate(argvs)]
        reports = [f'echo "== instance {i} exit $(cat "$d/{i}.exit")"; cat "$d/{i}"' for i in range(len(argvs))]
        result = peer.run(
            ["bash", "-c", instances.at_once([f"( {j} )" for j in jobs], reports)], timeout=timeout, check=False
        )
        exits = [int(x) for x in re.findall(r"^== instance [0-9]+ exit ([0-9]+)$", result.output, flags=re.M)]
        if len(exits) != len(argvs):
            raise EnvironmentUnavailable(f"the instances' Locust runs did not all report:\n{result.output[-1500:]}")
        return result.output, exits

    def parse(self, raw: RawResult, source: str) -> list[Measurement]:
        """The stats file's measurements, each operation's with its threshold and its share of the mix in %
        (the target its achieved share is checked against; the aggregate has neither); scaled out, every
        instance's with its `instance`."""
        limits, mix = self.params.thresholds_ms, self.params.mix
        total = sum(mix.values())
        found = []
        for i in range(self.params.instances):
            name = output_name("stats", i, self.params.instances)
            for m in locust.parse(raw.outputs[name], f"{source}.{name}.txt"):
                dims = dict(m.dims)
                if self.params.instances > 1:
                    dims["instance"] = i
                if dims.get("operation") in limits:
                    dims["threshold_ms"] = limits[dims["operation"]]
                    dims["target_share_pct"] = 100.0 * mix.get(dims["operation"], 0.0) / total
                found.append(dataclasses.replace(m, dims=dims))
        return found

    def record_params(self, point: dict[str, Any]) -> dict[str, Any]:
        """The point with the data set, the think times and where the database ran (`db_apart`: in an
        environment of its own; `tiers` two on a kind without companions runs both here, and says so);
        scaled out, the instances, their containers and placement (`placement_applicable`: a CPU each)."""
        p = self.params
        found = {
            **point,
            "data_users": p.data_users,
            "think_min_s": p.think_min_s,
            "think_max_s": p.think_max_s,
            "tiers": p.tiers,
            "db_apart": self.apart,
        }
        if p.peak_max_users:  # the search's limit: a peak there says "at least"
            found["peak_max_users"] = p.peak_max_users
        if p.instances > 1:  # a run of one instance records none of this (`figures.webtier.scaled_out`)
            found["instances"] = p.instances
            found["containers"] = self.containers
        if p.instances > 1 or p.placement != "default":
            found["placement"] = p.placement
            found["placement_applicable"] = len(self.cpus) >= p.instances
        return found

    def intervals(self, raw: RawResult, source: str) -> tuple[list[float], float]:
        """The per-second throughput of the steady window, summed over the instances."""
        found = [
            locust.intervals(raw.outputs[n], f"{source}.{n}.txt")
            for n in (output_name("stats_history", i, self.params.instances) for i in range(self.params.instances))
        ]
        shortest = min(len(f) for f in found)
        return [sum(f[k] for f in found) for k in range(shortest)], 1.0


@dataclasses.dataclass(frozen=True)
class Instance:
    """One running copy of the application: where its web tier and its database run, and the address the
    peer reaches its NGINX at."""

    index: int
    home: Environment
    db_home: Environment
    target: tuple[str, int]


def output_name(name: str, instance: int, count: int) -> str:
    """The raw output's name: `stats` alone, scaled out `stats-<i>` for instance i."""
    return name if count == 1 else f"{name}-{instance}"


def place(home: Environment, cpu: int, pid_files: list[str]) -> None:
    """Pin the processes named by these PID files, every thread and child, to `cpu` (children forked later,
    PHP-FPM's, inherit it from their pinned parent)."""
    script = (
        'cpu=$1; shift; for f in "$@"; do p=$(cat "$f") || exit 1; '
        'for q in $p $(pgrep -P "$p"); do taskset -a -p -c "$cpu" "$q" >/dev/null || exit 1; done; done'
    )
    home.run(["sh", "-c", script, "sh", str(cpu), *pid_files], timeout=60)


EXPERIMENT = Experiment(spec=SPEC, make_workloads=lambda params: [CloudstoneWorkload(params)])
