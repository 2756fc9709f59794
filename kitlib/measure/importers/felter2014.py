"""The raw outputs of Felter et al. (IBM, 2014) as records of the kit, from a clone of their repository.

The authors published `thewmf/kvm-docker-comparison` (no licence: users clone it; the kit copies none of
its files). Each `<benchmark>/results/` folder becomes a run folder `results/<experiment>/felter2014-…/`
whose provenance names the authors' machine (a host of its own, never pooled with the user's) and, per
unit, the repository, commit, file and block each record comes from.

How the files are counted and labelled (each rule is in the unit files too):

* Environments: `linux`/`native`/`bml` → `native`; `vm`/`KVM` → `kvm`, except LINPACK invocations whose
  own header shows the host's topology (2 sockets, 16 cores, 32 threads: vCPUs pinned, topology passed
  through) → `kvm-tuned`; Docker by its configuration (below).
* Docker: MySQL series by the packets per transaction in their dstat files against native's (1× =
  host networking, more = a bridge with NAT), storage by the folder name (`nofs` = no host volume =
  the image's AUFS, i.e. overlay). Redis: `dockerhost`/`dockerbridge` → host/NAT (data in memory;
  labelled volume). fio: `-v` volume (the paper), NAT (Docker's default). STREAM, RandomAccess and
  LINPACK: Docker's defaults, NAT and the image's filesystem (the paper names no other).
* Repetitions: one invocation of a tool is one repetition. LINPACK's trials inside one invocation share
  one matrix and process, so an invocation counts once, with LINPACK's own Average over its trials
  (`counted_as` says so in the records). netperf and nuttcp exist only as spreadsheet cells: one value
  each (`sample` = "spreadsheet cell (n = 1)"), never repetitions.
* A block the tool did not finish (cut off, no summary) is a failed unit with the parser's reason.
* STREAM: the `*.log` files (both bindings, in the order the run script ran them); the per-binding files
  repeat the same blocks and are not read twice. A block without a numactl header takes the binding of
  the native block at the same position (its thread count confirms it). RandomAccess likewise; its
  `*.single-socket.localalloc.log` files hold, by their own header, the interleaved blocks.
"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kitlib.core import hostid
from kitlib.core.errors import KitError, ParseError
from kitlib.core.records import Measurement, Record
from kitlib.measure import provenance
from kitlib.measure.parsers.felter2014 import (
    dstat,
    fio208,
    gups,
    linpack,
    numactl_options,
    redis28,
    stream,
    sysbench04,
    xlsx,
)
from kitlib.measure.store import RunStore, unit_key

NAME = "felter2014"
REPOSITORY = "https://github.com/thewmf/kvm-docker-comparison"
COMMIT = "6820500beab45d7c8d005caefb40eda7381eb05f"
FIO_HISTORY = ("fio/results/history-b72ae3e/vm.log", "b72ae3e")
HOST_ID = hostid.FELTER2014
RUN_ID = "felter2014-6820500"
#: the machine as the paper describes it (§3): the records' host
HOST: dict[str, Any] = {
    "host_id": HOST_ID,
    "reference": "the authors' published raw outputs, imported (not measured by the kit)",
    "description": (
        "IBM System x3650 M4: two 2.4-3.0 GHz Intel Sandy Bridge-EP Xeon E5-2665 processors, 16 cores "
        "(32 threads), 256 GB RAM (Felter et al. 2014, §3; the authors' published raw outputs)"
    ),
    "cpu": {
        "model": "Intel Xeon E5-2665 (Sandy Bridge-EP), 2.4-3.0 GHz",
        "logical_cpus": 32,
        "sockets": 2,
        "cores": 16,
    },
    "numa": {"nodes": 2},
    "memory": {"MemTotal": f"{256 * 2**20} kB"},
    "os": {"hostname": "arldcn24 (IBM System x3650 M4)", "distro": "Ubuntu 13.10 (the paper)"},
    "virtualization": "none",
}
SPREADSHEET = "spreadsheet cell (n = 1)"
LINPACK_COUNT = "invocation: LINPACK's Average over its trials, which share one matrix"
DOCKER_DEFAULT = "docker-nat-overlay"


@dataclass
class Unit:
    experiment: str
    workload: str
    env: str
    point: dict[str, Any]
    measurements: list[Measurement]
    path: str
    block: int | None = None
    notes: dict[str, Any] = field(default_factory=dict)


@dataclass
class Failed:
    experiment: str
    workload: str
    env: str
    path: str
    block: int | None
    reason: str


@dataclass
class Imported:
    folders: dict[str, Path]
    units: int
    failed: list[Failed]
    mysql_series: list[dict[str, Any]]


def repository_root(path: Path) -> Path:
    """The clone (or unpacked tarball) itself, given it or the folder holding it."""
    path = Path(path).expanduser()
    for candidate in (path, path / "kvm-docker-comparison"):
        if (candidate / "Stream" / "results").is_dir() or (candidate / "mysql" / "results").is_dir():
            return candidate
    raise KitError(
        f"{path}: not a clone of {REPOSITORY} (no Stream/results or mysql/results folder); "
        f"clone it with `git clone {REPOSITORY}` and give that folder"
    )


def commit_of(root: Path) -> tuple[str, str]:
    """(commit, how it is known): git's HEAD in a clone, else the commit the importer was written for."""
    if (root / ".git").exists():
        try:
            head = subprocess.run(
                ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30, check=True
            ).stdout.strip()
            return head, "git rev-parse HEAD"
        except (OSError, subprocess.SubprocessError):
            pass
    return COMMIT, "not a git clone: the commit the importer reads (the reference tarball's)"


# ---------------------------------------------------------------- environments


def env_of(stem: str) -> str:
    head = stem.split(".")[0].lower()
    if head in ("linux", "native", "bml"):
        return "native"
    if head in ("vm", "kvm"):
        return "kvm"
    if head.startswith("docker"):
        return DOCKER_DEFAULT
    raise KitError(f"{stem}: no environment is known for this file name")


def numa_of(numactl: str | None) -> str | None:
    if numactl:
        return "interleaved" if "--interleave" in numactl else "one-node" if "--localalloc" in numactl else None
    return None


# ---------------------------------------------------------------- memory: STREAM and RandomAccess


def _memory_blocks(root: Path, folder: str, module, workload: str, failed: list[Failed]):
    """Every parsed block of a memory benchmark's logs (one per environment; the per-binding copies of the
    same blocks are skipped), with its binding: from the block's own numactl header, else from the native
    log's block at the same position. A block that does not parse is added to `failed`."""
    logs = root / folder / "results"
    native = _native_bindings(logs / "linux.log", module.blocks)
    for path in sorted(logs.glob("*.log")):
        if path.name.count(".") > 1:  # per-binding copies of the same blocks
            continue
        env, rel = env_of(path.stem), _rel(root, path)
        for i, block in enumerate(module.blocks(path.read_text(errors="replace"))):
            try:
                found = module.parse_block(block, rel)
            except ParseError as exc:
                failed.append(Failed("memory", workload, env, rel, i, str(exc)))
                continue
            numa, how = numa_of(found[0].dims.get("numactl")), "the block's numactl header"
            if numa is None and i < len(native):
                numa, how = native[i], "the native block at the same position (no header here)"
            yield env, rel, i, found, numa, how


def stream_units(root: Path) -> tuple[list[Unit], list[Failed]]:
    units, failed = [], []
    for env, rel, i, found, numa, how in _memory_blocks(root, "Stream", stream, "stream", failed):
        point = {"threads": int(found[0].dims["threads"]), "numa": numa}
        kept = [
            Measurement(
                m.metric,
                m.value,
                m.unit,
                {
                    "kernel": m.dims["kernel"],
                    "variant": "System",
                    "benchmark": "STREAM",
                    "method": "stream.c with OpenMP: every thread of the binding at once, one process",
                    "array_elements": m.dims["array_elements"],
                },
            )
            for m in found
        ]
        units.append(Unit("memory", "stream", env, point, kept, rel, i, {"numa_from": how}))
    return units, failed


def gups_units(root: Path) -> tuple[list[Unit], list[Failed]]:
    units, failed = [], []
    for env, rel, i, found, numa, how in _memory_blocks(root, "RandomAccess", gups, "randomaccess", failed):
        # numa is an environment option the claims do not pair on: the policy is a column of its own
        point = {"numa": numa, "numa_policy": numa}
        dims = {
            "variant": "Single",
            "benchmark": "RandomAccess",
            "method": "the authors' gups.c: one process, one thread",
            "table_words": found[0].dims["table_words"],
        }
        kept = [Measurement(m.metric, m.value, m.unit, dims) for m in found]
        units.append(Unit("memory", "randomaccess", env, point, kept, rel, i, {"numa_from": how}))
    return units, failed


def _native_bindings(path: Path, split) -> list[str | None]:
    """The binding of each block of the native log, by position ([] where there is no such log)."""
    if not path.exists():
        return []
    return [numa_of(numactl_options(block.splitlines()[0])) for block in split(path.read_text(errors="replace"))]


# ---------------------------------------------------------------- cpu: LINPACK


def linpack_units(root: Path) -> tuple[list[Unit], list[Failed]]:
    folder = root / "linpack" / "results"
    units, failed = [], []
    for path in sorted(folder.glob("*.log")):
        if path.name.count(".") > 1:
            continue
        base, rel = env_of(path.stem), _rel(root, path)
        for i, (numactl, block) in enumerate(linpack.blocks(path.read_text(errors="replace"))):
            try:
                found = linpack.parse_block(block, rel, numactl)
            except ParseError as exc:
                failed.append(Failed("cpu", "linpack", base, rel, i, str(exc)))
                continue
            dims = found[0].dims
            env = base
            topology = f"{dims.get('sockets')} socket(s), {dims.get('cores')} cores, {dims['threads']} threads"
            if base == "kvm" and dims.get("sockets") == 2 and dims.get("cores") == 16:
                env = "kvm-tuned"
            point = {"hpl_n": dims["hpl_n"], "threads": dims["threads"]}
            kept = [
                Measurement(
                    "gflops",
                    found[0].value,
                    "GFLOPS",
                    {"benchmark": "Intel optimized LINPACK", "counted_as": LINPACK_COUNT},
                )
            ]
            notes = {"trials": dims["trials"], "topology_seen": topology, "cpu_ghz": dims.get("cpu_ghz")}
            if numactl:
                notes["numactl"] = numactl
            units.append(Unit("cpu", "linpack", env, point, kept, rel, i, notes))
    return units, failed


# ---------------------------------------------------------------- block: fio

FIO_WORKLOAD = {"write": "seq_write", "read": "seq_read", "randwrite": "rand_write", "randread": "rand_read"}


def fio_units(root: Path) -> tuple[list[Unit], list[Failed]]:
    folder = root / "fio" / "results"
    units, failed = [], []
    paths = sorted(folder.glob("*.log")) + [p for p in [root / FIO_HISTORY[0]] if p.exists()]
    for path in paths:
        env, rel = env_of(path.stem), _rel(root, path)
        env = "docker-nat-volume" if env == DOCKER_DEFAULT else env
        try:
            found = fio208.parse(path.read_text(errors="replace"), rel)
        except ParseError as exc:
            failed.append(Failed("block", "fio", env, rel, None, str(exc)))
            continue
        groups: dict[str, list[Measurement]] = defaultdict(list)
        for m in found:
            groups[m.dims["job"]].append(m)
        for job, ms in groups.items():
            rw = ms[0].dims["rw"]
            workload = FIO_WORKLOAD.get(rw, "rand_mixed")
            point = {k: ms[0].dims[k] for k in ("rw", "block_size", "iodepth", "numjobs")}
            kept = [Measurement(m.metric, m.value, m.unit, {"direction": m.dims["direction"], "job": job}) for m in ms]
            notes = {"commit": FIO_HISTORY[1]} if rel == FIO_HISTORY[0] else {}
            units.append(Unit("block", workload, env, point, kept, rel, None, notes))
    return units, failed


# ---------------------------------------------------------------- mysql: sysbench + dstat

MYSQL_SET = "mysql/results/performance-governor"


def mysql_units(root: Path) -> tuple[list[Unit], list[Failed], list[dict[str, Any]]]:
    """The final set (`performance-governor/`): one folder per series, `records-<stamp>-<k>` the k-th
    repetition of the thread sweep, its dstat file the whole series' packets."""
    folder = root / MYSQL_SET
    units, failed, series = [], [], []
    parsed: dict[str, list[tuple[int, str, list[Measurement]]]] = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        rows = []
        for path in sorted(sub.glob("records-*"), key=lambda p: int(p.name.rsplit("-", 1)[1])):
            rel = _rel(root, path)
            try:
                rows.append(
                    (int(path.name.rsplit("-", 1)[1]), rel, sysbench04.parse(path.read_text(errors="replace"), rel))
                )
            except ParseError as exc:
                failed.append(Failed("mysql", "oltp_read_only", sub.name, rel, None, str(exc)))
        parsed[sub.name] = rows
    per_tx = {}
    for name, rows in parsed.items():
        tx = sum(m.value for _k, _r, ms in rows for m in ms if m.metric == "transactions")
        files = sorted(folder.joinpath(name).glob("dstat*.csv"))
        if not files or tx <= 0:
            per_tx[name] = None
            continue
        try:
            packets = {
                m.metric: m.value for m in dstat.parse(files[0].read_text(errors="replace"), _rel(root, files[0]))
            }
            per_tx[name] = (packets["packets_received"] / tx, _rel(root, files[0]))
        except ParseError as exc:
            failed.append(Failed("mysql", "dstat", name, _rel(root, files[0]), None, str(exc)))
            per_tx[name] = None
    native = next((per_tx[n] for n in per_tx if n.lower() in ("bml", "native", "linux") and per_tx[n]), None)
    for name, rows in parsed.items():
        env, how = mysql_env(name, per_tx.get(name), native)
        series.append(
            {
                "folder": f"{MYSQL_SET}/{name}",
                "env": env,
                "packets_per_transaction": per_tx[name][0] if per_tx.get(name) else None,
                "relative_to_native": (per_tx[name][0] / native[0]) if per_tx.get(name) and native else None,
                "how": how,
            }
        )
        for k, rel, ms in rows:
            by_threads: dict[int, list[Measurement]] = defaultdict(list)
            for m in ms:
                by_threads[int(m.dims["threads"])].append(m)
            for threads, group in by_threads.items():
                kept = [Measurement(m.metric, m.value, m.unit, {"mode": m.dims.get("mode")}) for m in group]
                point = {"threads": threads, "rows": 2_000_000}
                units.append(Unit("mysql", "oltp_read_only", env, point, kept, rel, k, {"series": how}))
    for earlier in earlier_mysql_series(root, native) if (root / "mysql" / "results").is_dir() else []:
        series.append({**earlier, "env": "not imported", "how": _earlier_text(earlier)})
    return units, failed, series


def _earlier_text(earlier: dict[str, Any]) -> str:
    if "packets_per_transaction" not in earlier:
        return earlier.get("how", "")
    return (
        f"{earlier['packets_per_transaction']:.2f} packets per transaction in {earlier['dstat']} "
        f"({earlier['outputs']} sysbench outputs), {earlier['relative_to_native']:.2f}× the final native's: "
        f"{earlier['network']}; an earlier set, not imported"
    )


def mysql_env(name: str, per_tx: tuple[float, str] | None, native: tuple[float, str] | None) -> tuple[str, str]:
    lowered = name.lower()
    if lowered in ("bml", "native", "linux"):
        return "native", "folder name (bare metal)"
    if lowered in ("kvm", "vm"):
        return "kvm", "folder name"
    if not lowered.startswith("docker"):
        raise KitError(f"{MYSQL_SET}/{name}: no environment is known for this series")
    storage = "overlay" if "nofs" in lowered else "volume"
    if per_tx is None or native is None:
        net = "nat" if "nonet" in lowered else "host"
        return f"docker-{net}-{storage}", "folder name only (no dstat packets to check it against)"
    ratio = per_tx[0] / native[0]
    net = "host" if ratio < 1.5 else "nat"
    path = "host networking: each packet crosses one interface" if net == "host" else "a bridge and NAT"
    where = "no host filesystem: the image's AUFS" if storage == "overlay" else "a host volume"
    return (
        f"docker-{net}-{storage}",
        f"{per_tx[0]:.2f} packets per transaction in {per_tx[1]}, {ratio:.2f}× native's {native[0]:.2f} "
        f"({path}); storage from the folder name ({where})",
    )


def earlier_mysql_series(root: Path, native: tuple[float, str] | None) -> list[dict[str, Any]]:
    """The MySQL series of the earlier sets (every folder of mysql/results/ but the final set): not
    imported (their runs predate the performance governor the paper's figures were measured with), but
    each one's network is checked the same way, from its packets per transaction against native's."""
    folder = root / "mysql" / "results"
    found = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and p.name != "performance-governor"):
        files = [f for f in sorted(sub.glob("dstat*.csv")) if "cleaned" not in f.name]
        outputs = [
            f for f in sorted(sub.iterdir()) if f.name.startswith(("results-", "records-")) and f.suffix != ".csv"
        ]
        for dstat_file in files:
            token = dstat_file.stem.rsplit("-", 1)[-1]
            mine = outputs if len(files) == 1 else [f for f in outputs if f"-{token}" in f.name]
            transactions = 0.0
            for path in mine:
                try:
                    parsed = sysbench04.parse(path.read_text(errors="replace"), _rel(root, path))
                except ParseError:
                    continue
                transactions += sum(m.value for m in parsed if m.metric == "transactions")
            try:
                packets = {
                    m.metric: m.value
                    for m in dstat.parse(dstat_file.read_text(errors="replace"), _rel(root, dstat_file))
                }
            except ParseError as exc:
                found.append({"folder": _rel(root, sub), "dstat": _rel(root, dstat_file), "how": str(exc)})
                continue
            if transactions <= 0 or native is None:
                continue
            per_tx = packets["packets_received"] / transactions
            ratio = per_tx / native[0]
            found.append(
                {
                    "folder": _rel(root, sub),
                    "dstat": _rel(root, dstat_file),
                    "outputs": len(mine),
                    "packets_per_transaction": per_tx,
                    "relative_to_native": ratio,
                    "network": "host networking (or bare metal)" if ratio < 1.5 else "bridge + NAT (or a tap)",
                }
            )
    return found


# ---------------------------------------------------------------- redis

REDIS_ENV = {"native": "native", "dockerhost": "docker-host-volume", "dockerbridge": "docker-nat-volume", "vm": "kvm"}


def redis_units(root: Path) -> tuple[list[Unit], list[Failed]]:
    folder = root / "redis" / "results"
    units, failed = [], []
    for path in sorted(folder.glob("run_*.txt")):
        kind = path.name.split("_")[1]
        if kind not in REDIS_ENV:
            raise KitError(f"{_rel(root, path)}: no environment is known for '{kind}'")
        env, rel = REDIS_ENV[kind], _rel(root, path)
        for run, connections, body in redis28.invocations(path.read_text(errors="replace")):
            try:
                found = redis28.parse_invocation(body, rel)
            except ParseError as exc:
                failed.append(Failed("redis", "redis", env, rel, run, str(exc)))
                continue
            kept = [Measurement(m.metric, m.value, m.unit, {"op": m.dims["op"]}) for m in found]
            rates = {m.dims["op"]: m for m in found}
            if "SET" in rates and "GET" in rates and rates["SET"].dims["requests"] == rates["GET"].dims["requests"]:
                mix = 2.0 / (1.0 / rates["SET"].value + 1.0 / rates["GET"].value)
                kept.append(Measurement("throughput", mix, "req/s", {"op": "mix"}))
            point = {
                "clients": connections,
                "requests": found[0].dims["requests"],
                "value_size": found[0].dims.get("value_size"),
            }
            units.append(Unit("redis", "redis", env, point, kept, rel, run, {}))
    return units, failed


# ---------------------------------------------------------------- net: spreadsheet cells

SHEET_ENV = {"Native": "native", "Docker NAT": "docker-nat-volume", "Docker Host": "docker-host-volume", "KVM": "kvm"}


def net_units(root: Path) -> tuple[list[Unit], list[Failed]]:
    units, failed = [], []
    cells: dict[tuple, Unit] = {}
    for path, reader in (
        (root / "netperf/results/netperf.xlsx", xlsx.netperf),
        (root / "nuttcp/results/nuttcp.xlsx", xlsx.nuttcp),
    ):
        if not path.exists():
            continue
        rel = _rel(root, path)
        try:
            found = reader(path.read_bytes(), rel)
        except ParseError as exc:
            failed.append(Failed("net", path.stem, "", rel, None, str(exc)))
            continue
        for m in found:
            env = SHEET_ENV.get(m.dims["sheet_env"])
            if env is None:
                continue
            if "test" in m.dims:
                protocol = m.dims["test"].split("_")[0].lower()
                point = {"protocol": protocol, "tool": "netperf", "sample": SPREADSHEET}
                workload = "rr"
            else:
                direction = {"C->S": "sut_tx", "S->C": "sut_rx"}[m.dims["direction"]]
                point = {"direction": direction, "tool": "nuttcp", "sample": SPREADSHEET}
                workload = "bandwidth"
            key = (workload, env, tuple(point.items()))
            if key not in cells:  # one cell each of rate and time per test: one unit, one value each
                cells[key] = Unit("net", workload, env, point, [], rel, None, {"cells": []})
                units.append(cells[key])
            cells[key].measurements.append(Measurement(m.metric, m.value, m.unit))
            cells[key].notes["cells"].append(m.dims["cell"])
    return units, failed


# ---------------------------------------------------------------- writing


def collect(root: Path) -> tuple[list[Unit], list[Failed], list[dict[str, Any]]]:
    units, failed = [], []
    for reader in (stream_units, gups_units, linpack_units, fio_units, redis_units, net_units):
        u, f = reader(root)
        units += u
        failed += f
    u, f, series = mysql_units(root)
    return units + u, failed + f, series


def import_tree(path: Path | str, results: Path | str) -> Imported:
    """Read the clone at `path` and write one run folder per experiment under `results`."""
    root = repository_root(Path(path))
    commit, commit_how = commit_of(root)
    units, failed, series = collect(root)
    if not units:
        raise KitError(f"{root}: no result file of the authors could be read")
    by_experiment: dict[str, list[Unit]] = defaultdict(list)
    for unit in units:
        by_experiment[unit.experiment].append(unit)
    folders = {}
    for experiment, members in sorted(by_experiment.items()):
        folder = Path(results) / experiment / RUN_ID
        _write(
            folder, experiment, members, [f for f in failed if f.experiment == experiment], commit, commit_how, series
        )
        folders[experiment] = folder
    return Imported(folders, len(units), failed, series)


def _write(
    folder: Path,
    experiment: str,
    units: list[Unit],
    failed: list[Failed],
    commit: str,
    commit_how: str,
    series: list[dict[str, Any]],
) -> None:
    store = RunStore(folder)
    if store.units_dir.exists():  # an earlier import: replaced whole, never mixed
        for old in store.units_dir.glob("*.json"):
            old.unlink()
    envs = sorted({u.env for u in units})
    store.write_plan(
        {
            "experiment": experiment,
            "environments": envs,
            "imported": NAME,
            "repository": REPOSITORY,
            "commit": commit,
            "profile": "authors' published outputs",
        },
        ignore=("commit",),
    )
    counters: dict[tuple, int] = defaultdict(int)
    for unit in units:
        config = (unit.workload, unit.env, tuple(sorted((k, str(v)) for k, v in unit.point.items())))
        repetition = counters[config]
        counters[config] += 1
        records = [
            Record(
                experiment=experiment,
                workload=unit.workload,
                env=unit.env,
                metric=m.metric,
                value=float(m.value),
                unit=m.unit,
                run_id=RUN_ID,
                repetition=repetition,
                params={**{k: v for k, v in unit.point.items() if v is not None}, **m.dims, "host": HOST_ID},
            )
            for m in unit.measurements
        ]
        source = _source(unit.path, unit.block, commit, unit.notes)
        key = unit_key(unit.env, unit.point, repetition, unit.workload)
        store.save_ok(key, records, {"env": unit.env, "source": source, **unit.notes})
    for i, fail in enumerate(failed):
        key = unit_key(fail.env or "unknown", {"file": fail.path, "block": fail.block}, i, fail.workload)
        store.save_failed(key, fail.reason, {"env": fail.env, "source": _source(fail.path, fail.block, commit, {})})
    store.consolidate()
    session = {
        "started": provenance.now(),
        "imported": NAME,
        "repository": REPOSITORY,
        "commit": commit,
        "commit_known_from": commit_how,
        "host": HOST,
        "host_id": HOST_ID,
        "environments": {env: _env_rule(experiment, env) for env in envs},
    }
    if experiment == "mysql":
        session["mysql_series"] = series
    (folder / "provenance.json").unlink(missing_ok=True)
    store.append_provenance(session)


def _source(path: str, block: int | None, commit: str, notes: dict[str, Any]) -> dict[str, Any]:
    found = {"repository": REPOSITORY, "commit": notes.get("commit", commit), "file": path}
    if block is not None:
        found["block"] = block
    return found


def _env_rule(experiment: str, env: str) -> str:
    rules = {
        "native": "linux/native/bml: bare metal",
        "kvm": "vm/KVM: the authors' untuned KVM guest",
        "kvm-tuned": "a LINPACK invocation whose header shows 2 sockets, 16 cores, 32 threads inside the guest",
    }
    if env in rules:
        return rules[env]
    return {
        "mysql": "the series' packets per transaction against native (see mysql_series), storage from the folder name",
        "redis": "run_dockerhost → host networking, run_dockerbridge → bridge + NAT",
        "block": "the paper's `-v` volume; Docker's default network",
        "net": "the spreadsheet's column header",
    }.get(experiment, "Docker's defaults (bridge + NAT, the image's filesystem): the paper names no other")


def _rel(root: Path, path: Path) -> str:
    return str(path.relative_to(root))


#: what the published outputs cannot give, whatever a claim asks of them
NOT_IN_THE_DATA = (
    "Redis latency: redis-benchmark 2.8 prints each test's throughput and a 1 ms-resolution distribution, "
    "no mean latency (nat_adds_redis_latency, kvm_slower_redis)",
    "Docker NAT round trip: the netperf spreadsheet's Docker NAT cell holds #DIV/0!, no value "
    "(nat_doubles_rr_latency, nat_adds_rr_latency, nat_offset_vmware)",
    "netperf, nuttcp: one spreadsheet cell per environment (n = 1), never decided at 3 runs a side",
    "fio: one run per environment (two for KVM, one of them from commit b72ae3e), never decided",
    "RandomAccess: gups.c ran as one process (variant Single); the claim compares the whole system's rate (System)",
    "MySQL Docker NAT with a volume: no series ran it (overlay_slows_mysql)",
    "PXZ and container start-up: the repository holds no such outputs",
)


def summary_lines(imported: Imported) -> Iterable[str]:
    """What `kit import` prints: the folders written, the MySQL series' configuration, the failed units,
    and what the outputs cannot give."""
    for experiment, folder in imported.folders.items():
        yield f"{experiment}: {folder}"
    for s in imported.mysql_series:
        yield f"mysql series {s['folder']}: {s['env']} ({s['how']})"
    for fail in imported.failed:
        where = f"{fail.path}" + (f" block {fail.block}" if fail.block is not None else "")
        yield f"not imported: {where}: {fail.reason}"
    for line in NOT_IN_THE_DATA:
        yield f"not in the data: {line}"
