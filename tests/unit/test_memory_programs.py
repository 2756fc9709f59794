"""The kit's own measuring programs: their parsers on real outputs, the sizing rules, the sources' digest."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import kitlib
from kitlib.core import caches, services
from kitlib.core.errors import EnvironmentUnavailable, ParseError, PlanError
from kitlib.measure import estimate, parsers
from kitlib.measure.experiments import programs
from kitlib.measure.experiments.cpu import settle
from kitlib.measure.run.runner import plan_units
from kitlib.specs.cpu import SPEC, CpuParams

from ..conftest import DATA

STREAM = DATA / "kit-stream" / "native-2threads-16m.txt"
GUPS = DATA / "kit-gups" / "native-2threads-2p27-1update.txt"
LINPACK = DATA / "kit-linpack" / "native-2threads-n2000-3trials.txt"


def test_stream_parser_reads_each_kernel_as_gb_per_second():
    found = parsers.parse_file("kit-stream", STREAM)
    rates = {m.dims["kernel"]: m for m in found if m.metric == "bandwidth"}
    assert set(rates) == {"Copy", "Scale", "Add", "Triad"}
    assert rates["Copy"].value == 21.0406 and rates["Copy"].unit == "GB/s"  # `best_MBps 21040.6`
    assert {m.dims["variant"] for m in rates.values()} == {"System"}
    assert next(m.value for m in found if m.metric == "vector_size") == 16777216


def test_gups_parser_reads_the_rate_and_the_error_fraction():
    found = {m.metric: m.value for m in parsers.parse_file("kit-gups", GUPS)}
    assert found["gups"] == 0.098137417 and found["table_words"] == 2**27
    assert 0 <= found["error_fraction"] < 0.01


def test_linpack_parser_counts_the_trials_after_the_first():
    found = {m.metric: m.value for m in parsers.parse_file("kit-linpack", LINPACK)}
    assert found["gflops"] == pytest.approx((17.8063 + 16.6706) / 2)
    assert found["trials_counted"] == 2


@pytest.mark.parametrize("path", [STREAM, GUPS, LINPACK], ids=lambda p: p.parent.name)
def test_a_cut_off_output_is_refused_never_read(path, tmp_path):
    tool = path.parent.name
    text = path.read_text()
    for cut in (len(text) - 5, len(text) // 2, 40):
        partial = tmp_path / "cut.txt"
        partial.write_text(text[:cut])
        with pytest.raises(ParseError, match=tool):
            parsers.parse_file(tool, partial)


def test_a_program_refuses_another_programs_output(tmp_path):
    with pytest.raises(ParseError, match="not kit-gups output"):
        parsers.parse_file("kit-gups", STREAM)
    failed = tmp_path / "failed.txt"
    failed.write_text(LINPACK.read_text().replace("check pass", "check fail", 1))
    with pytest.raises(ParseError, match="failed trial"):
        parsers.parse_file("kit-linpack", failed)


def test_output_from_other_source_is_refused():
    with pytest.raises(EnvironmentUnavailable, match="not built from this kit's source"):
        programs.check_source("kit-stream", "kit-stream source 0000000000000000\nend\n", "native")
    programs.check_source("kit-stream", f"kit-stream source {programs.source_digest('kit-stream')}\n", "native")


def _cache(root: Path, cpu: int, index: int, level: int, kind: str, size: str, shared: str) -> None:
    folder = root / f"cpu{cpu}" / "cache" / f"index{index}"
    folder.mkdir(parents=True)
    for name, value in {"level": level, "type": kind, "size": size, "shared_cpu_list": shared}.items():
        (folder / name).write_text(f"{value}\n")


def test_the_last_level_cache_is_summed_over_its_instances(tmp_path):
    # two sockets of two CPUs each: an L3 per socket, counted once per socket
    for cpu in range(4):
        _cache(tmp_path, cpu, 0, 1, "Data", "32K", str(cpu))
        _cache(tmp_path, cpu, 1, 1, "Instruction", "32K", str(cpu))
        _cache(tmp_path, cpu, 3, 3, "Unified", "130M" if cpu < 2 else "133120K", "0-1" if cpu < 2 else "2-3")
    assert caches.last_level_total(tmp_path) == 260 * 2**20
    assert caches.last_level_total(tmp_path / "absent") is None
    assert caches.last_level_total(caches.SYSFS_CPUS) is None or caches.last_level_total() > 0


def test_memory_sizes_are_settled_with_the_plan_and_refused_beyond_memory():
    plan = kitlib.plan("memory", environments=["native", "docker-host-volume"])
    llc = caches.last_level_total() or 32 * 2**20
    assert plan.params.stream_elements * 8 >= 4 * llc
    assert 8 * 2**plan.params.gups_log2_words >= max(4 * llc, 2**30)
    assert "last-level cache" in plan.params.sizing_basis or "no cache" in plan.params.sizing_basis
    with pytest.raises(PlanError, match="stream_elements"):
        kitlib.plan("memory", environments=["native"], stream_elements=2 * 10**12)


def test_linpack_n_leaves_room_for_both_matrices():
    """The size the plan settles on, before the time estimate: a slow or loaded host would refuse such
    a point as overlong when planned (the test below), whatever its memory."""
    params = CpuParams(**{**SPEC.profiles["quick"], "linpack_n_cap": 200_000, "linpack_memory_fraction": 0.5})
    settled = settle(params, ["native"])
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 2 * 8 * settled.linpack_n**2 <= 0.5 * memory
    assert settled.linpack_n > 1000 and "for two matrices" in settled.linpack_n_basis


def test_a_point_that_would_outrun_its_command_is_refused_when_planned():
    """Linpack at N = 200000 is days of work on any laptop or server: refused before anything starts,
    naming the parameter, never killed an hour in."""
    with pytest.raises(PlanError, match=r"linpack point in native would take about .* make -p linpack_n smaller"):
        kitlib.plan("cpu", environments=["native"], linpack_n=200_000)


def test_the_estimate_covers_every_point_and_environment_start():
    plan = kitlib.plan("memory", environments=["native", "docker-host-volume"], repetitions=3)
    found = estimate.estimate(plan, plan_units(plan))
    assert len(found.unit_seconds) == 12 and found.sources == {"model": 12}
    assert found.start_stop_seconds > 0 and found.total > sum(found.unit_seconds)
    assert "estimated time here" in estimate.describe(found, estimate.rates())


def test_an_emulator_lengthens_size_bound_points_and_not_time_bound_ones(tmp_path):
    """fio runs its stated seconds under TCG too; Linpack's work takes the emulator's slowdown."""
    rates = estimate.Rates(gflops=10.0, stream_gbs=8.0, gups=0.03, xz_mbps=5.0)

    def seconds(experiment: str, env: str, **params) -> list[float]:
        plan = kitlib.plan(experiment, environments=[env], repetitions=1, **params)
        return estimate.estimate(plan, plan_units(plan), history_root=tmp_path, calibrated=rates).unit_seconds

    assert seconds("block", "qemu-tcg", workloads=["rand_read"]) == seconds("block", "native", workloads=["rand_read"])
    assert seconds("mysql", "qemu-tcg") == seconds("mysql", "native")
    emulated, native = seconds("cpu", "qemu-tcg", linpack_n=1000), seconds("cpu", "native", linpack_n=1000)
    probes = estimate.PROBES_SECONDS  # on the host, around the point: not emulated
    assert [s - probes for s in emulated] == pytest.approx([estimate.EMULATION_SLOWDOWN * (s - probes) for s in native])


def test_the_xz_calibration_gives_every_thread_a_block_of_its_own(tmp_path):
    """xz -2 splits its input into blocks, one per thread: a corpus of one block calibrates one thread's
    rate (a 4 MiB corpus read 3 MB/s on a 2-core guest where the run's 32 MiB read 4.6)."""
    size = estimate.xz_calibration_bytes(2)
    corpus = tmp_path / "corpus.txt"
    subprocess.run(services.command("corpus", corpus, size, 1_000_000_000), check=True, timeout=120)
    packed = tmp_path / "corpus.xz"
    with open(corpus, "rb") as data, open(packed, "wb") as out:
        subprocess.run(["xz", "-T2", "-2", "-c"], stdin=data, stdout=out, check=True, timeout=300)
    listing = subprocess.run(["xz", "--robot", "--list", str(packed)], capture_output=True, text=True, check=True)
    blocks = int(next(line for line in listing.stdout.splitlines() if line.startswith("file")).split("\t")[2])
    assert corpus.stat().st_size == size and blocks == 2
    assert estimate.xz_calibration_bytes(1) == 6 * 2**20 and estimate.xz_calibration_bytes(64) == 96 * 2**20


def test_a_probed_point_is_estimated_with_its_capacity_probes(tmp_path):
    """Redis' points are probed (`kitlib.measure.capacity`): each costs its two phases, the warm-up and the probes."""
    plan = kitlib.plan("redis", environments=["native"], repetitions=1, clients=[1, 8], seconds=2.0)
    found = estimate.estimate(plan, plan_units(plan), history_root=tmp_path)
    assert found.unit_seconds == pytest.approx([2 * 2.0 + 1.0 + estimate.PROBES_SECONDS] * 2)
