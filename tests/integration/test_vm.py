"""The VM environment: QEMU command lines and libvirt XML from a config, and a real guest under TCG
that boots, runs a microbenchmark and the Redis experiment, and leaves nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

import kitlib
from kitlib.core import naming
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure import cpus, environments
from kitlib.measure.parsers import kit_linpack, kit_stream
from kitlib.measure.vm import qemu_processes

from ..conftest import host_leftovers, missing, plan_session, process_leftovers, start_kit, wait_for

# -- a real guest under TCG --------------------------------------------------------------------


def vm_leftovers(owner_pid: int) -> list[str]:
    """QEMU processes, taps, forwarding rules and scratch copies made by the process `owner_pid`."""
    found = [f"qemu {name}" for _, name in qemu_processes() if naming.owner_pid(name) == owner_pid]
    return found + host_leftovers(owner_pid, "kt")


@pytest.fixture(scope="module")
def qemu_tcg(docker_client, root_netns, bench_image):
    ok, reason = environments.availability_of("qemu-tcg")
    if not ok:
        missing("vm", f"qemu-tcg cannot run here: {reason}")
    return bench_image


@pytest.mark.extended  # boot, run and removal: the redis notebook on qemu-tcg
@pytest.mark.slow
@pytest.mark.vm
def test_guest_boots_runs_a_microbenchmark_and_is_removed(qemu_tcg):
    layout = cpus.split(1, [])
    label = "qemu-tcg+qcow2"  # a qcow2 overlay on the cached disk (the other tests boot raw copies)
    env = environments.create(label, layout, run_label=naming.new_run_label(), peer_reaches_nat=True, image=qemu_tcg)
    with env:
        assert vm_leftovers(os.getpid()), "the VM, its tap and its disk copy exist while it runs"
        facts = env.describe()
        assert facts["accel"] == "tcg" and "KVM" not in facts["hypervisor"]
        assert facts["vm"]["disk_format"] == "qcow2" and facts["vm"]["disk"].endswith(".qcow2")
        assert 0 < facts["boot_to_ready_s"] < 420
        assert env.run(["nproc"], timeout=60).output.strip() == "1"
        assert env.run(["sh", "-c", "command -v kit-gups"], timeout=60).output.strip() == "/usr/local/bin/kit-gups"
        corpus = f"{env.data_dir}/corpus"
        env.run(["sh", "-c", f"seq 1 200000 > {corpus}"], timeout=120)
        timed = env.run(["bash", "-c", f"TIMEFORMAT=%R; time xz -T1 -2 -c {corpus} > /dev/null"], timeout=300)
        assert float(timed.output.strip().splitlines()[-1]) > 0
        # OpenBLAS picks its kernels from the CPU model the guest sees; under TCG they must all run
        linpack = env.run(["kit-linpack", "200", "2"], timeout=600).output
        assert "Illegal instruction" not in linpack, linpack[-2000:]
        gflops = [m.value for m in kit_linpack.parse(linpack, "guest") if m.metric == "gflops"]
        assert gflops[0] > 0
        stream = kit_stream.parse(env.run(["kit-stream", "100000", "3"], timeout=600).output, "guest")
        assert {m.dims["kernel"] for m in stream if m.metric == "bandwidth"} == {"Copy", "Scale", "Add", "Triad"}
        guest_redis = env.run(["dpkg-query", "-W", "-f=${Version}", "redis-server"], timeout=60).output
        image_redis = subprocess.run(
            ["docker", "run", "--rm", qemu_tcg, "dpkg-query", "-W", "-f=${Version}", "redis-server"],
            capture_output=True,
            text=True,
        ).stdout
        assert guest_redis == image_redis, "the guest runs the image's binaries"
    assert vm_leftovers(os.getpid()) == []


@pytest.mark.slow
@pytest.mark.vm
def test_a_boot_that_times_out_says_why_and_leaves_nothing(qemu_tcg):
    layout = cpus.split(1, [])
    env = environments.create(
        "qemu-tcg", layout, run_label=naming.new_run_label(), peer_reaches_nat=True, image=qemu_tcg, boot_timeout=3
    )
    with pytest.raises(EnvironmentUnavailable, match=r"did not answer SSH within 3 s") as raised:
        with env:
            pass
    assert "console.log" in str(raised.value) or "qemu.log" in str(raised.value), "the guest's last words"
    assert vm_leftovers(os.getpid()) == []


@pytest.mark.slow
@pytest.mark.vm
def test_redis_notebook_on_qemu_tcg_is_labelled_as_emulation(qemu_tcg, isolated_dirs):
    results, figures = isolated_dirs
    done = subprocess.run(
        [sys.executable, "-m", "kitlib.cli", "run", "redis", "--env", "qemu-tcg", "--repetitions", "1"]
        + ["-p", "clients", "[1, 4]", "-p", "requests", "5000"],
        capture_output=True,
        text=True,
        timeout=1200,
        env={**os.environ, "KIT_RESULTS": str(results), "KIT_FIGURES": str(figures)},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    plan = kitlib.plan("redis", environments=["qemu-tcg"], repetitions=1, clients=[1, 4], requests=5000)
    run_dir = results / "redis" / plan.run_id
    records = pd.read_csv(run_dir / "records.csv")
    assert set(records["env"]) == {"qemu-tcg"} and (records["value"] > 0).all()
    assert len(records[(records["op"] == "mix") & (records["metric"] == "throughput")]) == 2
    session = plan_session(run_dir)
    vm = session["environments"]["qemu-tcg"]
    assert vm["accel"] == "tcg" and vm["vm"]["cpu_model"] == "max" and vm["boot_to_ready_s"] > 0
    assert "redis-server" in session["tool_versions"]["qemu-tcg"]
    domain = ET.parse(run_dir / "libvirt" / "qemu-tcg.xml").getroot()
    assert domain.get("type") == "qemu", "libvirt's name for an emulated domain"


@pytest.mark.slow
@pytest.mark.vm
@pytest.mark.timeout(900)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_a_vm_run_removes_everything(qemu_tcg, isolated_dirs, sig):
    """Ctrl-C, or the SIGTERM of a batch scheduler or `timeout`: the guest, its tap, rules, disk copy and
    the load generator all go; the child gets default signal dispositions, however pytest was started."""
    args = ["run", "redis", "--no-notebook", "--env", "qemu-tcg", "--repetitions", "1"]
    proc = start_kit(
        args + ["-p", "clients", "[1]", "-p", "requests", "50000000"], {"KIT_RESULTS": str(isolated_dirs[0])}
    )
    wait_for(lambda: any(i.startswith("qemu") for i in vm_leftovers(proc.pid)), 600, proc, "the VM to start")
    time.sleep(5)  # mid-boot: QEMU, tap, rules and disk copy all exist
    started = time.monotonic()
    proc.send_signal(sig)
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, output
    assert f"stopped by {sig.name}" in output, output
    assert vm_leftovers(proc.pid) == [] and process_leftovers(lambda owner: owner == proc.pid) == []
    print(f"{sig.name} during a TCG guest's run: nothing left, clean-up {time.monotonic() - started:.1f} s")


@pytest.mark.extended  # the guest's run path and its label: the redis notebook on qemu-tcg
@pytest.mark.slow
@pytest.mark.vm
@pytest.mark.timeout(1200)
def test_docker_inside_the_guest_serves_the_peer_and_is_never_called_kvm(qemu_tcg, isolated_dirs):
    """Bounded by design: the guest's engine starts with the image already in its data root (prepared on
    the host), so no layer is unpacked under emulation."""
    plan = kitlib.plan("net", preset="seed003-rr", environments=["docker-in-qemu-tcg"], repetitions=1, seconds=1)
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert len(result.failures) == 0, result.failures.to_dict("records")
    rtt = result.records[result.records["metric"] == "rtt_mean"]
    assert set(rtt["env"]) == {"docker-in-qemu-tcg"} and set(rtt["protocol"]) == {"tcp", "udp"}
    assert (rtt["value"] > 0).all()
    session = plan_session(result.root)
    facts = session["environments"]["docker-in-qemu-tcg"]
    assert facts["accel"] == "tcg" and facts["vm"]["hypervisor"].startswith("none")
    assert facts["docker_in_guest"]["published_ports"], "the peer reached it through the guest's NAT"
    assert facts["image_delivery"].startswith("data root"), "no docker load inside the emulated guest"
    from kitlib.analyse import claims

    verdict = {c.name: c for c in claims.CLAIMS}["docker_in_vm_costs_latency"].evaluate(result.records)
    assert verdict.status == claims.NOT_TESTABLE and "TCG" in verdict.reason
    assert vm_leftovers(os.getpid()) == []


@pytest.mark.extended  # the guest's run path and its label: the redis notebook on qemu-tcg
@pytest.mark.slow
@pytest.mark.vm
def test_the_web_tier_runs_in_the_guest_and_in_docker_inside_it_labelled_as_emulation(qemu_tcg, isolated_dirs):
    """The web tier in a TCG guest and in Docker inside one: the application answers the peer's users in
    both; the post's VM claims stay untestable, an emulator never standing for its hypervisor."""
    from kitlib.analyse import claims

    plan = kitlib.plan(
        "webtier",
        environments=["qemu-tcg", "docker-in-qemu-tcg"],
        repetitions=1,
        users=[4],
        data_users=20,
        ramp_up_s=1,
        steady_s=6,
        think_min_s=0.5,
        think_max_s=1.0,
        peak_max_users=0,
    )
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert len(result.failures) == 0, result.failures.to_dict("records")
    records = result.records
    requests = records[(records["metric"] == "requests") & (records["operation"] == "Aggregated")]
    assert set(requests["env"]) == {"qemu-tcg", "docker-in-qemu-tcg"} and (requests["value"] > 0).all()
    errors = records[(records["metric"] == "errors") & (records["operation"] == "Aggregated")]
    assert (errors["value"] == 0).all(), errors.to_dict("records")
    for name in ("webtier_vm_slightly_above_native", "webtier_docker_in_vm_no_overhead"):
        verdict = {c.name: c for c in claims.CLAIMS}[name].evaluate(records)
        assert verdict.status == claims.NOT_TESTABLE and "emulated" in verdict.reason, verdict.reason
    assert vm_leftovers(os.getpid()) == []
