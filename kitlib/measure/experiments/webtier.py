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
import shutil
import sys
from pathlib import Path
from typing import Any

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.records import Measurement
from kitlib.measure.environments.base import Environment, write_text
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

    def __init__(self, params: WebtierParams):
        super().__init__(params)
        self.sut_cores = params.server_cores
        self.target: tuple[str, int] | None = None
        self.locust_version: str | None = None
        self.apart = False  # whether the database runs in an environment of its own

    def points(self) -> list[dict[str, Any]]:
        return [{"users": u} for u in self.params.users]

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        p = self.params
        return p.ramp_up_s + p.steady_s + max(p.ramp_down_s, STOP_TIMEOUT_S) + 5.0

    # -- the application --------------------------------------------------------------------
    def prepare(self, env: Environment, peer: Peer) -> None:
        p = self.params
        needed = 'for p in "$@"; do command -v "$p" >/dev/null || echo "$p"; done'
        absent = env.run(["sh", "-c", needed, "sh", *PROGRAMS], timeout=30, check=False).output.split()
        if absent:
            raise EnvironmentUnavailable(f"{env.label}: the web tier needs {', '.join(absent)} ({PACKAGES})")
        root = f"{env.data_dir}/kit-webtier"
        run = f"{root}/run"
        web_port, db_port = env.layout.ports[:2]
        env.run(["rm", "-rf", root], timeout=120)
        for name in APP_FILES:
            write_text(env, f"{root}/{name}", (APP / name).read_text())
        env.run(["mkdir", "-p", f"{run}/sessions"], timeout=30)
        # the database: here, or in an environment of its own (a second container of this label)
        home = (env.companion(1, [db_port]) or env) if p.tiers == "two" else env
        self.apart = home is not env
        db_root = f"{home.data_dir}/kit-webtier-db" if self.apart else root
        if self.apart:
            home.run(["rm", "-rf", db_root], timeout=120)
            for name in ("schema.sql", "generate.py"):
                write_text(home, f"{db_root}/{name}", (APP / name).read_text())
        socket = f"{db_root}/mysql.sock"
        start_server(home, "mariadbd", db_port, f"{db_root}/mysql", socket, p.buffer_pool_mb, user=DATABASE)
        load = 'mariadb --socket="$1" "$2" < "$3" && python3 "$4" --users "$5" --seed "$6" | mariadb --socket="$1" "$2"'
        loaded = home.run(
            ["sh", "-c", load, "sh", socket, DATABASE, f"{db_root}/schema.sql", f"{db_root}/generate.py"]
            + [str(p.data_users), str(p.seed)],
            timeout=3600,
            check=False,
        )
        if loaded.returncode != 0:
            raise EnvironmentUnavailable(f"{home.label}: the data set did not load:\n{loaded.output[-1500:]}")
        # apart, the web tier reaches the database over TCP where a client on the peer would: the host's
        # address and the port it publishes (a container's loopback is its own)
        db_host, db_tcp_port = (
            home.address_for_peer(db_port, peer.host_address) if self.apart else ("127.0.0.1", db_port)
        )
        values = {
            "run": run,
            "app": f"{root}/app",
            "port": web_port,
            "max_children": spec.PHP_CHILDREN,
            "db_socket": "none" if self.apart else socket,
            "db_host": db_host,
            "db_port": db_tcp_port,
            "db_name": DATABASE,
            "db_user": DATABASE,
            "db_password": DATABASE,
        }
        for name in ("nginx.conf", "php-fpm.conf"):
            write_text(env, f"{run}/{name}", (APP / f"{name}.in").read_text().format(**values))
        # -R: a container runs as root, which php-fpm refuses without it; opcache's lock file under run/
        fpm = ["php-fpm8.2", "-F", "-R", "-y", f"{run}/php-fpm.conf", "-d", f"opcache.lockfile_path={run}"]
        env.start_service("php-fpm", fpm)
        ready = 'i=0; while [ ! -S "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; [ -S "$1" ]'
        if env.run(["sh", "-c", ready, "sh", f"{run}/php-fpm.sock"], timeout=60, check=False).returncode != 0:
            raise EnvironmentUnavailable(f"{env.label}: php-fpm did not open its socket within 30 s")
        env.start_service(
            "nginx",
            ["nginx", "-c", f"{run}/nginx.conf", "-p", run, "-e", f"{run}/nginx-error.log"],
            ready_port=web_port,
        )
        self.target = env.address_for_peer(web_port, peer.host_address)
        said = peer.run([locust_program(), "--version"], timeout=60, check=False).output.split()
        self.locust_version = said[1] if len(said) > 1 and said[0] == "locust" else None

    # -- a point ----------------------------------------------------------------------------
    def locust_argv(self, folder: str, users: int, steady_s: float) -> list[str]:
        p = self.params
        assert self.target is not None
        host, port = self.target
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
        """One point; `seconds` is the steady window where the steady-state rule lengthened it."""
        p = self.params
        steady = p.steady_s if seconds is None else seconds
        folder = peer.run(["mktemp", "-d", "/tmp/kit-webtier.XXXXXX"], timeout=30).output.strip().splitlines()[-1]
        try:
            write_text(peer, f"{folder}/locustfile.py", LOCUSTFILE.read_text())
            timeout = p.ramp_up_s + steady + p.ramp_down_s + 300
            result = peer.run(self.locust_argv(folder, point["users"], steady), timeout=timeout, check=False)
            outputs = {"locust": result.output}
            for name in ("stats", "stats_history"):
                found = peer.run(["cat", f"{folder}/point_{name}.csv"], timeout=60, check=False)
                if found.returncode != 0:
                    raise EnvironmentUnavailable(
                        f"locust wrote no {name} file (exit {result.returncode}):\n{result.output[-1500:]}"
                    )
                outputs[name] = found.output
        finally:
            peer.run(["rm", "-rf", folder], timeout=60, check=False)
        # the two files must be of one run: the stats hold the history's last running totals
        window = locust.run_window(outputs["stats"], outputs["stats_history"], f"locust at {point['users']} users")
        if window.users != point["users"]:
            raise EnvironmentUnavailable(f"locust ran {window.users} users, not the point's {point['users']}")
        facts = {
            "data_users": p.data_users,
            "persons": p.persons,
            "events": p.events,
            "steady_start": window.start,  # epoch seconds of the window's first and last history row
            "steady_end": window.end,
            "locust_exit": result.returncode,  # 1 where any request failed: the errors are in the records
            "locust_version": self.locust_version,
        }
        return RawResult(outputs=outputs, facts=facts)

    def parse(self, raw: RawResult, source: str) -> list[Measurement]:
        """The stats file's measurements, each operation's with its threshold and its share of the mix in %
        (the target its achieved share is checked against; the aggregate has neither)."""
        limits, mix = self.params.thresholds_ms, self.params.mix
        total = sum(mix.values())
        return [
            dataclasses.replace(
                m,
                dims={
                    **m.dims,
                    "threshold_ms": limits[m.dims["operation"]],
                    "target_share_pct": 100.0 * mix.get(m.dims["operation"], 0.0) / total,
                },
            )
            if m.dims.get("operation") in limits
            else m
            for m in locust.parse(raw.outputs["stats"], f"{source}.stats.txt")
        ]

    def record_params(self, point: dict[str, Any]) -> dict[str, Any]:
        """The point with the data set, the think times and where the database ran (`db_apart`: in an
        environment of its own; `tiers` two on a kind without companions runs both here, and says so)."""
        p = self.params
        return {
            **point,
            "data_users": p.data_users,
            "think_min_s": p.think_min_s,
            "think_max_s": p.think_max_s,
            "tiers": p.tiers,
            "db_apart": self.apart,
        }

    def intervals(self, raw: RawResult, source: str) -> tuple[list[float], float]:
        return locust.intervals(raw.outputs["stats_history"], f"{source}.stats_history.txt"), 1.0


EXPERIMENT = Experiment(spec=SPEC, make_workloads=lambda params: [CloudstoneWorkload(params)])
