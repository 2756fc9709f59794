"""Every claim's verdicts on small synthetic record sets (built here, not measured): reproduced, not
reproduced, inconclusive and not testable, each from records whose truth is set by construction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kitlib.analyse import claims, replicas
from kitlib.analyse.claims import core

from ..support import sample


#: spread pattern of n runs: mean 0, so a side's mean is exactly its level
def spread(n: int, cv: float) -> np.ndarray:
    z = np.linspace(-1.0, 1.0, n)
    return 1 + cv * z / z.std(ddof=1) if n > 1 else np.ones(1)


def runs(experiment: str, metric: str, env: str, level: float, n: int = 5, cv: float = 0.02, **dims) -> list[dict]:
    values = level * spread(n, cv)
    return [
        {
            "experiment": experiment,
            "metric": metric,
            "env": env,
            "value": float(v),
            "unit": "x",
            "repetition": i,
            "run_id": "synthetic",
            **dims,
        }
        for i, v in enumerate(values)
    ]


def verdict(name: str, rows: list[dict]) -> core.Verdict:
    return {c.name: c for c in claims.CLAIMS}[name].evaluate(pd.DataFrame(rows))


#: claim -> (experiment, metric, subject env, baseline env, dims, value that reproduces, one that does not)
PAIRS = {
    "docker_near_native_pxz": ("cpu", "throughput", "docker-host-volume", "native", {"workload": "pxz"}, 1.0, 0.8),
    "kvm_pxz_loss": ("cpu", "throughput", "kvm", "native", {"workload": "pxz"}, 0.78, 1.0),
    "kvm_tuning_no_pxz_gain": ("cpu", "throughput", "kvm-tuned", "kvm", {"workload": "pxz"}, 1.0, 0.8),
    "docker_near_native_linpack": ("cpu", "gflops", "docker-nat-volume", "native", {"workload": "linpack"}, 1.01, 1.2),
    "kvm_untuned_linpack_loss": ("cpu", "gflops", "kvm", "native", {"workload": "linpack"}, 0.7, 1.1),
    "kvm_tuned_linpack_near_native": ("cpu", "gflops", "kvm-tuned", "native", {"workload": "linpack"}, 1.0, 0.8),
    "docker_near_native_stream": (
        "memory",
        "bandwidth",
        "docker-host-volume",
        "native",
        {"workload": "stream", "variant": "System"},
        0.995,
        0.85,
    ),
    "kvm_near_native_stream": (
        "memory",
        "bandwidth",
        "kvm",
        "native",
        {"workload": "stream", "variant": "System"},
        1.0,
        0.9,
    ),
    "docker_near_native_randomaccess": (
        "memory",
        "gups",
        "docker-host-volume",
        "native",
        {"workload": "randomaccess", "variant": "System"},
        1.0,
        0.8,
    ),
    "kvm_near_native_randomaccess": (
        "memory",
        "gups",
        "kvm",
        "native",
        {"workload": "randomaccess", "variant": "System"},
        1.0,
        0.8,
    ),
    "lxc_docker_similar_stream": (
        "memory",
        "bandwidth",
        "lxc",
        "docker-host-volume",
        {"workload": "stream", "variant": "System", "kernel": "Triad"},
        1.0,
        0.8,
    ),
    "docker_in_vm_similar_stream": (
        "memory",
        "bandwidth",
        "docker-in-kvm",
        "docker-host-volume",
        {"workload": "stream", "variant": "System", "kernel": "Copy"},
        1.0,
        0.8,
    ),
    "nat_doubles_rr_latency": ("net", "rtt_mean", "docker-nat-volume", "native", {"protocol": "tcp"}, 2.0, 1.1),
    "kvm_adds_rr_latency": ("net", "rtt_mean", "kvm", "native", {"protocol": "tcp"}, 1.8, 1.0),
    "host_network_rtt_equals_native_vmware": (
        "net",
        "rtt_mean",
        "docker-host-volume",
        "native",
        {"protocol": "tcp"},
        1.0,
        1.3,
    ),
    "docker_negligible_sequential_io": (
        "block",
        "bandwidth",
        "docker-host-volume",
        "native",
        {"workload": "seq_read"},
        1.0,
        0.8,
    ),
    "kvm_negligible_sequential_io": ("block", "bandwidth", "kvm", "native", {"workload": "seq_write"}, 1.0, 0.8),
    "docker_no_random_io_overhead": (
        "block",
        "iops",
        "docker-nat-volume",
        "native",
        {"workload": "rand_read"},
        1.0,
        0.8,
    ),
    "kvm_halves_random_iops": ("block", "iops", "kvm", "native", {"workload": "rand_read"}, 0.5, 0.95),
    "kvm_raises_read_latency": ("block", "clat_mean", "kvm", "native", {"workload": "rand_read_latency"}, 2.5, 1.2),
    "kvm_redis_parity_beyond_100": ("redis", "throughput", "kvm", "native", {"op": "mix", "clients": 128}, 1.0, 0.8),
    "nat_lowers_redis_vmware": (
        "redis",
        "throughput",
        "docker-nat-volume",
        "native",
        {"op": "mix", "clients": 4},
        0.8,
        1.0,
    ),
    "overlay_slows_mysql": ("mysql", "tps", "docker-nat-overlay", "docker-nat-volume", {"threads": 8}, 0.8, 1.1),
    "docker_near_native_mysql": ("mysql", "tps", "docker-host-volume", "native", {"threads": 8}, 0.98, 0.8),
    "kvm_mysql_loss": ("mysql", "tps", "kvm", "native", {"threads": 8}, 0.5, 0.9),
    "nat_mysql_little_overhead": ("mysql", "tps", "docker-nat-volume", "docker-host-volume", {"threads": 8}, 0.95, 1.1),
    "kvm_starts_slower_than_docker": (
        "startup",
        "start_to_ready",
        "kvm",
        "docker-host-volume",
        {"workload": "startup"},
        20.0,
        2.0,
    ),
    "docker_rtt_vs_lxc": ("net", "rtt_mean", "docker-nat-volume", "lxc", {"protocol": "tcp"}, 1.25, 1.0),
    "docker_in_vm_costs_latency": (
        "net",
        "rtt_mean",
        "docker-in-kvm",
        "docker-nat-overlay",
        {"protocol": "tcp"},
        1.5,
        0.8,
    ),
}
DIFFERENCES = {
    "nat_offset_vmware": ("net", "rtt_mean", "docker-nat-volume", "native", {"protocol": "tcp"}, 9.5, 40.0),
    "kvm_slower_redis": ("redis", "latency_mean", "kvm", "native", {"op": "mix", "clients": 4}, 83.0, 0.0),
    "native_mysql_peak_cpu_higher": (
        "mysql",
        "cpu_utilization",
        "native",
        "docker-host-volume",
        {"threads": 16},
        1.5,
        0.0,
    ),
}
#: claims whose band is narrower than the default spread of 2% allows to decide: their runs spread less
TIGHT = {
    "docker_near_native_stream": 0.004,
    "kvm_near_native_stream": 0.004,
    "docker_near_native_mysql": 0.002,
    "native_mysql_peak_cpu_higher": 0.001,
}


def pair_rows(name: str, effect: float, n: int = 5, cv: float | None = None) -> list[dict]:
    cv = TIGHT.get(name, 0.02) if cv is None else cv
    if name in DIFFERENCES:
        experiment, metric, env, base, dims, *_ = DIFFERENCES[name]
        level = 50.0
        return runs(experiment, metric, base, level, n, cv, **dims) + runs(
            experiment, metric, env, level + effect, n, cv, **dims
        )
    experiment, metric, env, base, dims, *_ = PAIRS[name]
    return runs(experiment, metric, base, 100.0, n, cv, **dims) + runs(
        experiment, metric, env, 100.0 * effect, n, cv, **dims
    )


ALL_PAIRS = {**PAIRS, **DIFFERENCES}


@pytest.mark.parametrize("name", sorted(ALL_PAIRS))
def test_reproduced_when_the_interval_lies_inside_the_band(name):
    result = verdict(name, pair_rows(name, ALL_PAIRS[name][5]))
    assert result.status == claims.REPRODUCED, result.reason
    assert "lies inside the band" in result.reason and result.ci_low <= result.ratio <= result.ci_high


@pytest.mark.parametrize("name", sorted(ALL_PAIRS))
def test_not_reproduced_when_the_interval_lies_outside_the_band(name):
    result = verdict(name, pair_rows(name, ALL_PAIRS[name][6]))
    assert result.status == claims.NOT_REPRODUCED, result.reason
    assert "lies entirely" in result.reason


@pytest.mark.parametrize("name", sorted(ALL_PAIRS))
def test_inconclusive_when_the_spread_is_wide_or_runs_are_few(name):
    noisy = verdict(name, pair_rows(name, ALL_PAIRS[name][5], n=3, cv=0.6 if name not in DIFFERENCES else 0.9))
    assert noisy.status == claims.INCONCLUSIVE, noisy.reason
    assert "crosses the" in noisy.reason and ("runs a side" in noisy.reason or "no number" in noisy.reason)
    few = verdict(name, pair_rows(name, ALL_PAIRS[name][5], n=2))
    assert few.status == claims.INCONCLUSIVE and "at least 3 are needed" in few.reason, few.reason


@pytest.mark.parametrize("name", sorted(ALL_PAIRS))
def test_not_testable_without_the_subject(name):
    rows = [r for r in pair_rows(name, ALL_PAIRS[name][5]) if r["env"] == ALL_PAIRS[name][3]]
    result = verdict(name, rows)
    assert result.status == claims.NOT_TESTABLE and result.reason, result.reason


def test_emulation_never_stands_for_kvm_or_docker_on_the_host():
    rows = runs("net", "rtt_mean", "native", 50, protocol="tcp") + runs(
        "net", "rtt_mean", "qemu-tcg", 100, protocol="tcp"
    )
    rows += runs("net", "rtt_mean", "docker-in-qemu-tcg", 100, protocol="tcp")
    rows += runs("net", "rtt_mean", "docker-nat-overlay", 60, protocol="tcp")
    kvm = verdict("kvm_adds_rr_latency", rows)
    assert kvm.status == claims.NOT_TESTABLE and "software emulation" in kvm.reason
    in_vm = verdict("docker_in_vm_costs_latency", rows)
    assert in_vm.status == claims.NOT_TESTABLE and "TCG" in in_vm.reason
    cpu = runs("memory", "bandwidth", "native", 100, workload="stream", variant="System", kernel="Triad")
    cpu += runs("memory", "bandwidth", "docker-in-qemu-tcg", 20, workload="stream", variant="System", kernel="Triad")
    assert verdict("docker_near_native_stream", cpu).status == claims.NOT_TESTABLE


def shares(ratio: float, n: int = 5, cv: float = 0.005) -> list[dict]:
    rows = []
    for metric in ("latency_mean", "latency_median", "latency_p99"):
        rows += runs("latency", metric, "native", 240.0, n, cv, workload="shares")
        rows += runs("latency", metric, "docker-host-volume+shares1024", 240.0 * ratio, n, cv, workload="shares")
    return rows


def test_shares_cost_about_6_percent_on_mean_median_and_p99():
    assert verdict("docker_shares_near_native_latency", shares(1.06)).status == claims.REPRODUCED
    faster = verdict("docker_shares_near_native_latency", shares(0.894))
    assert faster.status == claims.NOT_REPRODUCED and "below the band" in faster.reason
    assert verdict("docker_shares_near_native_latency", shares(1.15)).status == claims.NOT_REPRODUCED
    only_mean = [r for r in shares(1.06) if r["metric"] == "latency_mean"]
    assert verdict("docker_shares_near_native_latency", only_mean).status == claims.NOT_TESTABLE


def test_every_configuration_is_decided_by_itself_never_averaged():
    """'higher than 40% in all measured cases': one thread count at 30% loss refutes it, however large the
    others; a configuration only one side measured is left out."""
    rows = []
    for threads, ratio in ((1, 0.5), (8, 0.5), (16, 0.7)):
        rows += runs("mysql", "tps", "native", 100.0 * threads, threads=threads)
        rows += runs("mysql", "tps", "kvm", 100.0 * threads * ratio, threads=threads)
    rows += runs("mysql", "tps", "kvm", 10.0, threads=64)  # no native at 64 threads
    result = verdict("kvm_mysql_loss", rows)
    assert result.status == claims.NOT_REPRODUCED and "at threads 16" in result.reason
    assert result.ratio == pytest.approx(0.7) and "threads 64" not in result.reason
    held = [r for r in rows if r["threads"] != 16]
    assert verdict("kvm_mysql_loss", held).status == claims.REPRODUCED


def test_docker_mysql_is_judged_at_its_highest_concurrency_only():
    rows = []
    for threads, ratio in ((1, 0.8), (16, 0.98)):
        rows += runs("mysql", "tps", "native", 100.0 * threads, cv=0.002, threads=threads)
        rows += runs("mysql", "tps", "docker-host-volume", 100.0 * threads * ratio, cv=0.002, threads=threads)
    result = verdict("docker_near_native_mysql", rows)
    assert result.status == claims.REPRODUCED and "threads 1" not in result.reason
    assert result.ratio == pytest.approx(0.98)


def test_docker_mysql_latency_rises_faster_below_the_highest_load():
    rows = []
    for threads, ratio in ((1, 1.2), (4, 1.3), (16, 0.9)):
        rows += runs("mysql", "latency_mean", "native", 10.0 * threads, threads=threads)
        rows += runs("mysql", "latency_mean", "docker-host-volume", 10.0 * threads * ratio, threads=threads)
    assert verdict("docker_mysql_latency_rises_faster", rows).status == claims.REPRODUCED
    flat = [{**r, "value": r["value"] / 1.4} if r["env"] != "native" and r["threads"] == 4 else r for r in rows]
    assert verdict("docker_mysql_latency_rises_faster", flat).status == claims.NOT_REPRODUCED


def redis_rows(metric: str, env: str, by_clients: dict[int, float], cv: float = 0.01) -> list[dict]:
    rows = []
    for clients, level in by_clients.items():
        rows += runs("redis", metric, env, level, 5, cv, op="mix", clients=clients)
    return rows


def test_nat_redis_latency_at_4_and_100_connections():
    native = redis_rows("latency_mean", "native", {4: 50.0, 100: 500.0}, cv=0.002)
    good = native + redis_rows("latency_mean", "docker-nat-volume", {4: 52.5, 100: 575.0}, cv=0.002)
    assert verdict("nat_adds_redis_latency", good).status == claims.REPRODUCED
    flat = native + redis_rows("latency_mean", "docker-nat-volume", {4: 52.5, 100: 505.0}, cv=0.002)
    assert verdict("nat_adds_redis_latency", flat).status == claims.NOT_REPRODUCED
    elsewhere = [{**r, "clients": 8 if r["clients"] == 4 else 48} for r in good]
    found = verdict("nat_adds_redis_latency", elsewhere)
    assert found.status == claims.NOT_TESTABLE
    # the reason is the client counts measured, not the environments, which are there
    assert "records of docker-nat-volume or docker-nat-overlay at clients=4 (its records have clients 8, 48)" in (
        found.reason
    )
    assert "at clients=100" in found.reason and "no records of docker-nat" not in found.reason
    only_nat = [r for r in good if r["env"] != "native"] + [r for r in native if r["clients"] == 4]
    assert "no redis latency_mean records of native at clients=100 (its records have clients 4)" in (
        verdict("nat_adds_redis_latency", only_nat).reason
    )


def test_host_networking_redis_needs_throughput_and_latency():
    same = redis_rows("throughput", "native", {1: 100.0, 8: 300.0})
    same += redis_rows("latency_mean", "native", {1: 50.0, 8: 80.0})
    docker = redis_rows("throughput", "docker-host-volume", {1: 99.0, 8: 301.0})
    docker += redis_rows("latency_mean", "docker-host-volume", {1: 50.5, 8: 80.0})
    assert verdict("docker_host_equals_native_redis", same + docker).status == claims.REPRODUCED
    slow = [
        {**r, "value": r["value"] * 1.3} if r["metric"] == "latency_mean" and r["clients"] == 8 else r for r in docker
    ]
    assert verdict("docker_host_equals_native_redis", same + slow).status == claims.NOT_REPRODUCED
    no_latency = [r for r in same + docker if r["metric"] == "throughput"]
    assert verdict("docker_host_equals_native_redis", no_latency).status == claims.NOT_TESTABLE


def test_nat_peak_compares_each_environment_at_its_own_peak():
    native = redis_rows("throughput", "native", {1: 100.0, 8: 300.0, 48: 290.0})
    nat = redis_rows("throughput", "docker-nat-volume", {1: 90.0, 8: 250.0, 48: 270.0})
    result = verdict("nat_keeps_redis_from_peak", native + nat)
    assert result.status == claims.REPRODUCED and result.ratio == pytest.approx(0.9)
    level = redis_rows("throughput", "docker-nat-volume", {1: 90.0, 8: 250.0, 48: 330.0})
    assert verdict("nat_keeps_redis_from_peak", native + level).status == claims.NOT_REPRODUCED


def test_tcp_and_udp_compared_within_each_environment():
    rows = []
    for env, level in (("native", 30.0), ("docker-nat-volume", 60.0)):
        rows += runs("net", "rtt_mean", env, level, protocol="tcp") + runs(
            "net", "rtt_mean", env, level, protocol="udp"
        )
    assert verdict("tcp_udp_similar_latency", rows).status == claims.REPRODUCED
    apart = [{**r, "value": r["value"] * 0.8} if r["protocol"] == "udp" and r["env"] == "native" else r for r in rows]
    assert verdict("tcp_udp_similar_latency", apart).status == claims.NOT_REPRODUCED
    tcp_only = [r for r in rows if r["protocol"] == "tcp"]
    assert verdict("tcp_udp_similar_latency", tcp_only).status == claims.NOT_TESTABLE


def nuttcp(env: str, gbps: float, cpu: float, direction: str = "sut_tx") -> list[dict]:
    rows = runs("net", "throughput", env, gbps, workload="bandwidth", direction=direction)
    return rows + runs("net", "cpu_utilization", env, cpu, workload="bandwidth", direction=direction)


def test_nat_transmit_path_is_cpu_per_gbps():
    native = nuttcp("native", 10.0, 50.0)
    # the same CPU moving fewer bytes: a longer path per byte
    longer = native + nuttcp("docker-nat-volume", 8.0, 50.0)
    assert verdict("nat_lengthens_transmit_path", longer).status == claims.REPRODUCED
    same = native + nuttcp("docker-nat-volume", 10.0, 51.0)
    assert verdict("nat_lengthens_transmit_path", same).status == claims.NOT_REPRODUCED
    cpu_only = [r for r in same if r["metric"] == "cpu_utilization"]
    assert verdict("nat_lengthens_transmit_path", cpu_only).status == claims.NOT_TESTABLE


def test_a_vsphere_finding_is_never_decided_on_kvm():
    rows = pair_rows("kvm_adds_rr_latency", 1.3)
    for name in ("vm_offset_vmware", "scaleout_vm_fastest_out_of_box"):
        result = verdict(name, rows)
        assert result.status == claims.NOT_TESTABLE and "vSphere" in result.reason


def test_growth_with_layers_and_file_size():
    rows = []
    for layers in (1, 2, 4, 8):
        rows += runs(
            "latency", "latency_mean", "docker-host-overlay", 2000 + 50 * layers, workload="layers", layers=layers
        )
    assert verdict("layers_slow_directory_walk", rows).status == claims.REPRODUCED
    flat = [{**r, "value": 2000.0 * (1 + 0.02 * (r["repetition"] - 2))} for r in rows]
    assert verdict("layers_slow_directory_walk", flat).status == claims.INCONCLUSIVE
    copy = []
    for size in (1, 16, 64):
        copy += runs("latency", "latency_mean", "docker-host-overlay", 3000 * size, workload="copy_up", size_mb=size)
    assert verdict("copy_up_grows_with_file_size", copy).status == claims.REPRODUCED
    assert verdict("copy_up_grows_with_file_size", copy[:10]).status == claims.NOT_TESTABLE


def test_random_io_of_seed_003_per_workload():
    def iops_of(env, read, write):
        return runs("block", "iops", env, read, 5, 0.005, workload="rand_read") + runs(
            "block", "iops", env, write, 5, 0.005, workload="rand_write"
        )

    docker = iops_of("docker-nat-overlay", 100.0, 100.0)
    assert verdict("lxc_beats_docker_random_io", docker + iops_of("lxc", 106.1, 116.6)).status == claims.REPRODUCED
    averaged = iops_of("lxc", 100.0, 123.0)  # their mean is near 1.11, yet neither workload matches
    assert verdict("lxc_beats_docker_random_io", docker + averaged).status == claims.NOT_REPRODUCED
    vm = iops_of("docker-in-kvm", 59.9, 57.3)
    assert verdict("docker_in_vm_costs_disk_io", docker + vm).status == claims.REPRODUCED
    read_only = [r for r in docker + vm if r["workload"] == "rand_read"]
    assert verdict("docker_in_vm_costs_disk_io", read_only).status == claims.NOT_TESTABLE


def test_environment_options_are_not_configuration():
    assert "quota" not in core.configuration_columns(pd.DataFrame({"quota": [1000], "threads": [1]}))
    assert "threads" in core.configuration_columns(pd.DataFrame({"quota": [1000], "threads": [1]}))


def test_replica_series_are_never_a_subject_and_give_the_noise_floor():
    rows = runs("cpu", "throughput", "native", 100.0, workload="pxz")
    rows += runs("cpu", "throughput", "native+replica", 101.0, workload="pxz")
    assert verdict("docker_near_native_pxz", rows).status == claims.NOT_TESTABLE
    floor = replicas.aa_table(pd.DataFrame(rows))
    assert list(floor["replicates"]) == ["native"] and floor["ratio"].iloc[0] == pytest.approx(1.01)


def test_hosts_are_never_pooled():
    first = pair_rows("nat_doubles_rr_latency", 2.0)
    second = pair_rows("nat_doubles_rr_latency", 1.1)
    rows = [{**r, "host": "aaaa"} for r in first] + [{**r, "host": "bbbb"} for r in second]
    table = claims.evaluate_all(pd.DataFrame(rows)).set_index(["claim", "host"])
    assert table.loc[("nat_doubles_rr_latency", "aaaa"), "status"] == claims.REPRODUCED
    assert table.loc[("nat_doubles_rr_latency", "bbbb"), "status"] == claims.NOT_REPRODUCED


def test_start_up_under_a_second():
    fast = runs("startup", "start_to_ready", "docker-host-volume", 0.3, workload="startup")
    assert verdict("docker_starts_under_a_second", fast).status == claims.REPRODUCED
    slow = runs("startup", "start_to_ready", "docker-host-volume", 3.0, workload="startup")
    assert verdict("docker_starts_under_a_second", slow).status == claims.NOT_REPRODUCED
    assert verdict("docker_starts_under_a_second", fast[:2]).status == claims.INCONCLUSIVE
    assert verdict("docker_starts_under_a_second", []).status == claims.NOT_TESTABLE


def iops(env: str, level: float, n: int = 4) -> list[dict]:
    rows = []
    for workload in ("rand_read", "rand_write"):
        rows += runs("block", "iops", env, level, n, 0.02, workload=workload, iodepth=16, numjobs=8)
    return rows


def test_overlay_explains_the_lxc_gap():
    explained = iops("lxc", 100) + iops("docker-nat-overlay", 80) + iops("docker-host-volume", 99)
    assert verdict("overlay_explains_lxc_gap", explained).status == claims.REPRODUCED
    no_gap = iops("lxc", 100) + iops("docker-nat-overlay", 120) + iops("docker-host-volume", 99)
    assert verdict("overlay_explains_lxc_gap", no_gap).status == claims.NOT_REPRODUCED
    no_volume = iops("lxc", 100) + iops("docker-nat-overlay", 80)
    assert verdict("overlay_explains_lxc_gap", no_volume).status == claims.NOT_TESTABLE
    noisy = iops("lxc", 100, 3) + iops("docker-nat-overlay", 80, 3) + iops("docker-host-volume", 99, 2)
    assert verdict("overlay_explains_lxc_gap", noisy).status == claims.INCONCLUSIVE


def storage(open_ratio: float, write_ratio: float, n: int = 4) -> list[dict]:
    rows = []
    for env, o, w in (("docker-host-volume", 1.0, 1.0), ("docker-host-overlay", open_ratio, write_ratio)):
        rows += runs("latency", "latency_mean", env, 20 * o, n, workload="storage", operation="open")
        for size in (4, 64):
            rows += runs(
                "latency", "latency_mean", env, size * w, n, workload="storage", operation="write", size_kb=size
            )
    return rows


def test_overlay_slows_open_and_leaves_every_write_size_alone():
    assert verdict("overlay_slows_open", storage(1.5, 1.0)).status == claims.REPRODUCED
    assert verdict("overlay_slows_open", storage(1.1, 1.0)).status == claims.NOT_REPRODUCED
    assert verdict("overlay_slows_open", storage(1.5, 1.0, 2)).status == claims.INCONCLUSIVE
    assert verdict("overlay_write_unaffected", storage(1.5, 1.0)).status == claims.REPRODUCED
    assert verdict("overlay_write_unaffected", storage(1.5, 2.0)).status == claims.NOT_REPRODUCED
    one_size_slow = [
        {**r, "value": r["value"] * 1.3}
        if r["env"] == "docker-host-overlay" and r["operation"] == "write" and r.get("size_kb") == 4
        else r
        for r in storage(1.5, 1.0)
    ]
    result = verdict("overlay_write_unaffected", one_size_slow)
    assert result.status == claims.NOT_REPRODUCED and "size_kb 4" in result.reason


def bridge(offset_us: float, slope: float, n: int = 4, cv: float = 0.01) -> list[dict]:
    rows = []
    for size, jitter in ((1, 0.3), (16, -0.2), (64, 0.1), (100, -0.2)):
        common = {"workload": "bridge", "size_kb": size, "direction": "request"}
        rows += runs("latency", "latency_mean", "docker-host-volume", 100.0, n, cv, **common)
        rows += runs(
            "latency", "latency_mean", "docker-nat-volume", 100 + offset_us + slope * size + jitter, n, cv, **common
        )
    return rows


def test_bridge_cost_is_a_fixed_offset_whatever_the_offset():
    assert verdict("bridge_cost_fixed_offset", bridge(10.0, 0.0)).status == claims.REPRODUCED
    # the size band is fixed by the paper's numbers: a large offset does not widen it
    assert verdict("bridge_cost_fixed_offset", bridge(400.0, 0.2)).status == claims.NOT_REPRODUCED
    assert verdict("bridge_cost_fixed_offset", bridge(10.0, 1.0)).status == claims.NOT_REPRODUCED
    assert verdict("bridge_cost_fixed_offset", bridge(10.0, 0.0, 2)).status == claims.INCONCLUSIVE
    assert verdict("bridge_cost_fixed_offset", []).status == claims.NOT_TESTABLE


def quota_rows(
    p99_by_quota: dict[int, float], utilization: dict[int, float], n: int = 3, cv: float = 0.01
) -> list[dict]:
    rows = []
    for quota, p99 in p99_by_quota.items():
        common = {"workload": "quota", "quota": quota, "period": 10000}
        env = f"docker-host-volume+period10000+quota{quota}"
        for metric, value in (
            ("latency_p99", p99),
            ("latency_mean", p99 / 3),
            ("latency_median", 90.0),
            ("slow_requests", 0.0),
            ("server_cpu_utilization", utilization[quota]),
        ):
            rows += runs("latency", metric, env, value, n, cv, **common)
    return rows


def test_quota_cliff_where_quota_is_below_the_servers_need():
    use = {1000: 10, 2000: 20, 3000: 30, 5000: 35, 10000: 35}
    cliff = {1000: 8000, 2000: 4000, 3000: 1500, 5000: 160, 10000: 150}
    assert verdict("quota_cliff", quota_rows(cliff, use)).status == claims.REPRODUCED
    flat = {1000: 160, 2000: 150, 3000: 155, 5000: 160, 10000: 150}
    assert verdict("quota_cliff", quota_rows(flat, use)).status == claims.NOT_REPRODUCED
    assert verdict("quota_cliff", quota_rows(cliff, use, 2)).status == claims.INCONCLUSIVE
    noisy = verdict("quota_cliff", quota_rows({**cliff, 2000: 600}, use, 3, 0.5))
    assert noisy.status == claims.INCONCLUSIVE and "undecided at" in noisy.reason
    assert noisy.ci_low < noisy.ratio < noisy.ci_high
    light = verdict("quota_cliff", quota_rows(flat, {q: 5 for q in use}))  # every quota is above the need
    assert light.status == claims.NOT_TESTABLE and "no quota well below" in light.reason


def test_numa_pinning_needs_a_multi_node_host_in_the_records_provenance():
    rows = runs("memory", "bandwidth", "native", 100.0, workload="stream", kernel="Triad")
    result = verdict("numa_pinning_helps_memory", rows)
    assert result.status == claims.NOT_TESTABLE and "one NUMA node" in result.reason
    pinned = rows + runs("memory", "bandwidth", "docker-host-volume", 100.0, workload="stream", kernel="Triad")
    pinned += runs("memory", "bandwidth", "docker-host-volume+numa0", 130.0, workload="stream", kernel="Triad")
    assert verdict("numa_pinning_helps_memory", pinned).status == claims.REPRODUCED


def test_every_claim_is_covered_here():
    covered = set(ALL_PAIRS) | {
        "docker_starts_under_a_second",
        "docker_shares_near_native_latency",
        "overlay_explains_lxc_gap",
        "overlay_slows_open",
        "overlay_write_unaffected",
        "bridge_cost_fixed_offset",
        "quota_cliff",
        "numa_pinning_helps_memory",
        "docker_mysql_latency_rises_faster",
        "nat_adds_redis_latency",
        "docker_host_equals_native_redis",
        "nat_keeps_redis_from_peak",
        "tcp_udp_similar_latency",
        "nat_lengthens_transmit_path",
        "vm_offset_vmware",
        "scaleout_vm_fastest_out_of_box",
        "layers_slow_directory_walk",
        "copy_up_grows_with_file_size",
        "lxc_beats_docker_random_io",
        "docker_in_vm_costs_disk_io",
        # the receive path and host networking's CPU cost: the transmit path's metric and code
        "kvm_costs_receive_path",
        "host_network_path_equals_native",
        # seed 002's scale-out claims: tests/test_scaleout.py, on a real quick run
        "scaleout_speedup_below_n",
        "scaleout_pinning_helps_native",
        "scaleout_docker_adds_little",
        # seed 002 post 2, the OLTP scale-out: tests/unit/test_scaleout_oltp.py, on real quick runs
        "scaleout_oltp_docker_adds_little",
        # seed 002 post 3, the web tier on vSphere: test_the_web_tier_vm_claims_are_never_decided_on_kvm_or_tcg
        "webtier_vm_slightly_above_native",
        "webtier_docker_in_vm_no_overhead",
        "webtier_two_vms_slightly_higher",
    }
    assert covered == {c.name for c in claims.CLAIMS}


def test_empty_records_give_one_not_testable_row_per_claim():
    table = claims.evaluate_all(pd.DataFrame())
    assert list(table["claim"]) == [c.name for c in claims.CLAIMS]
    assert set(table["status"]) == {claims.NOT_TESTABLE}


def write_run(folder, rows: list[dict], host: dict) -> None:
    import json

    folder.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(folder / "records.csv", index=False)
    (folder / "provenance.json").write_text(json.dumps({"sessions": [{"host": host}]}))


def test_kit_claims_prints_one_row_per_claim_and_host_from_relative_folders(tmp_path, monkeypatch, capsys):
    import io

    from kitlib import cli
    from kitlib.core import hostid

    first = {"os": {"machine_id": "a" * 32}, "numa": {"nodes": 1}}
    second = {"os": {"machine_id": "b" * 32}, "numa": {"nodes": 2}, "virtualization": "kvm"}
    write_run(tmp_path / "runs" / "net" / "one", pair_rows("nat_doubles_rr_latency", 2.0), first)
    write_run(tmp_path / "runs" / "net" / "two", pair_rows("nat_doubles_rr_latency", 1.1), second)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["claims", "runs"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(table.columns) == ["claim", "host", "verdict", "effect", "ci_low", "ci_high", "n", "reason"]
    assert len(table) == 2 * len(claims.CLAIMS)
    nat = table[table["claim"] == "nat_doubles_rr_latency"].set_index("host")["verdict"]
    assert nat[hostid.host_id(first)] == claims.REPRODUCED
    assert nat[hostid.host_id(second)] == claims.NOT_REPRODUCED
    assert set(table["verdict"]) <= set(claims.STATUSES)
    assert cli.main(["claims", "absent"]) == 2


def test_summary_names_a_vm_guest_native_and_evidence_matches_the_verdict(tmp_path):
    from kitlib.analyse import analysis

    guest = {"os": {"machine_id": "c" * 32}, "virtualization": "kvm", "docker": {"storage_driver": "overlay2"}}
    write_run(tmp_path / "cpu" / "one", pair_rows("docker_near_native_pxz", 1.0), guest)
    records = analysis.load([tmp_path])
    verdicts = analysis.claims_table(records)
    row = verdicts.set_index("claim").loc["docker_near_native_pxz"]
    assert row["status"] == claims.REPRODUCED and "native (a VM guest)" in row["statement"]
    assert "Overlay (overlay2)" in verdicts.set_index("claim").loc["overlay_slows_mysql", "statement"]
    summary = analysis.write_summary(verdicts, {}, tmp_path / "summary.md").read_text()
    line = next(s for s in summary.splitlines() if "PXZ" in s and "Docker" in s)
    assert "**reproduced**" in line and "lies inside the band" in line


def test_an_environment_measured_again_in_another_run_is_not_pooled_with_the_interleaved_one():
    """The sample's memory run interleaved Docker with native; Docker measured again in a second run (its
    records copied under another run id) was never interleaved with native, so it is left out, named."""
    from kitlib.results import load_records

    rows = load_records(sample.run_with("memory", "native"))
    rows = rows[(rows["metric"] == "gups") & (rows["variant"] == "System")]
    alone = core.effect_between(rows, "docker-host-volume", "native")
    again = rows[rows["env"] == "docker-host-volume"].assign(run_id="quick-0000000000", value=lambda d: d["value"] * 3)
    both = core.effect_between(pd.concat([rows, again]), "docker-host-volume", "native")
    assert (both.value, both.low, both.high, both.n) == (alone.value, alone.low, alone.high, alone.n)
    assert "1 run(s) that measured only one of the two left out (quick-0000000000)" in both.how


def test_records_without_a_column_make_a_claim_untestable_but_a_bug_is_raised():
    """Only pandas refusing a column the records lack reads as "not testable here"; a KeyError of the
    kit's own code (here a dictionary's) surfaces as the error it is."""
    from kitlib.analyse.claims.core import NOT_TESTABLE, Claim

    records = pd.DataFrame({"env": ["native"], "value": [1.0]})
    lacking = Claim("lacking", "s", "t", lambda df: df["workload"]).evaluate(records)
    assert lacking.status == NOT_TESTABLE and "workload" in lacking.reason
    with pytest.raises(KeyError, match="workload"):
        Claim("buggy", "s", "t", lambda df: {"value": 1}["workload"]).evaluate(records)


@pytest.mark.parametrize("guest", ["kvm", "qemu-tcg", "docker-in-kvm"])
def test_the_web_tier_vm_claims_are_never_decided_on_kvm_or_tcg(guest):
    """The post's VMs are vSphere's: web-tier runs in a KVM guest, an emulated one or Docker in KVM, with
    a clear difference from native, still leave every one of its claims not testable, naming the guest."""
    rows = []
    for env, level in (("native", 10.0), (guest, 30.0), ("docker-host-volume", 10.5)):
        for op in ("HomePage", "Login"):
            rows += runs("webtier", "latency_mean", env, level, n=5, users=20, operation=op, workload="cloudstone")
    records = pd.DataFrame(rows)
    for claim in claims.of("webtier"):
        verdict = claim.evaluate(records)
        assert verdict.status == claims.NOT_TESTABLE, (claim.name, verdict)
        assert "vSphere" in verdict.reason and guest in verdict.reason
