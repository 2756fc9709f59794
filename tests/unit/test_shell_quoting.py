"""Every script the kit builds for `sh -c` / `bash -c`, built with hostile strings and run by a real shell
(the tools it calls replaced by small recorders in a temporary PATH): what an injection would create is
never created, and each value arrives intact as one argument. Free-form values (paths of scratch folders)
work with spaces, quotes, `:` and newlines, and never touch a parent folder."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from kitlib.core.procs import run_bounded

#: each builds a marker file if a shell ran it as code; `{mark}` is the marker's path
INJECTIONS = [
    "x; touch {mark}",
    "$(touch {mark})",
    "`touch {mark}`",
    "x | touch {mark}",
    "x & touch {mark}",
    "x && touch {mark}",
    "x\ntouch {mark}",
    "x'; touch {mark}; '",
    'x"; touch {mark}; "',
    "x > {mark}",
    "-x; touch {mark}",
    "a b\t$PATH * ?",
]

RECORDER = """#!/bin/sh
# records its arguments, NUL-separated, one file per call; keeps what it read on standard input
out="$KIT_TEST_CALLS/$(basename "$0").$$"
for a in "$@"; do printf '%s\\0' "$a"; done > "$out.args"
{stdin}
echo "{name} ran"
"""


@pytest.fixture
def shell(tmp_path):
    """(run, calls, mark): run a script with the recorders first on PATH; the calls each tool received."""
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    calls.mkdir()
    mark = tmp_path / "injected"

    def tool(name: str, stdin: bool = False) -> None:
        path = bin_dir / name
        path.write_text(RECORDER.format(name=name, stdin='cat > "$out.stdin"' if stdin else ""))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)

    for name in ("redis-benchmark", "sysbench"):
        tool(name)
    tool("redis-cli", stdin=True)

    def run(argv: list[str], timeout: float = 60) -> tuple[int | None, str]:
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "KIT_TEST_CALLS": str(calls)}
        proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        try:
            output = proc.communicate(timeout=timeout)[0]
            return proc.returncode, output
        finally:  # whatever it left behind (a proxy of a script that failed) ends with it
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()

    def received(name: str) -> list[list[str]]:
        return [f.read_text().split("\0")[:-1] for f in sorted(calls.glob(f"{name}.*.args"))]

    run.calls, run.received, run.mark, run.bin = calls, received, mark, bin_dir
    return run


def values(mark: Path) -> list[str]:
    return [text.format(mark=mark) for text in INJECTIONS]


def test_the_redis_fill_takes_a_hostile_host_as_one_argument(shell):
    from kitlib.measure.experiments.redis import fill_script

    for host in values(shell.mark):
        shutil.rmtree(shell.calls)
        shell.calls.mkdir()
        code, output = shell(["sh", "-c", fill_script(3, 2, host, 6379)])
        assert code == 0, output
        assert not shell.mark.exists(), f"injected by {host!r}"
        assert shell.received("redis-cli") == [["-h", host, "-p", "6379", "--pipe"]]
        sent = next(shell.calls.glob("redis-cli.*.stdin")).read_bytes()
        assert sent.count(b"SET") == 3 and b"$12\r\n000000000002\r\n$2\r\nvv\r\n" in sent


def test_the_scaleout_load_takes_a_hostile_host_as_one_argument(shell):
    from kitlib.measure.experiments.scaleout import load_script
    from kitlib.specs.scaleout import ScaleoutParams

    p = ScaleoutParams(instances=2, loaders=2, clients=8, seconds=1, keyspace=10)
    for host in values(shell.mark):
        shutil.rmtree(shell.calls)
        shell.calls.mkdir()
        code, output = shell(["bash", "-c", load_script(2, host, 7000, 400, p)])
        assert code == 0, output
        assert not shell.mark.exists(), f"injected by {host!r}"
        calls = shell.received("redis-benchmark")
        assert len(calls) == 4 and all(c[:4] == ["-h", host, "-p", "7000"] for c in calls)
        assert (
            sorted(c[c.index("-n") + 2 :] for c in calls)
            == [["GET", "__rand_int__"]] * 2 + [["SET", "__rand_int__", "v"]] * 2
        )
        assert output.count("redis-benchmark ran") == 4 and "== loader 1 SET 100" in output
        assert "== elapsed" in output


@pytest.mark.parametrize("proxy", ["twemproxy", "haproxy"])
def test_the_proxy_script_writes_its_configuration_byte_for_byte(shell, proxy, monkeypatch):
    """The configuration (with the instances' addresses in it) reaches the proxy's file unchanged."""
    from kitlib.measure.experiments.scaleout import proxy_config, proxy_script
    from kitlib.measure.host.ports import free_ports

    fake = shell.bin / ("nutcracker" if proxy == "twemproxy" else "haproxy")
    fake.write_text(
        "#!/usr/bin/env python3\n"
        "import os, shutil, socket, sys, time\n"
        "args = sys.argv[1:]\n"
        "shutil.copy(args[args.index('-c' if '-c' in args else '-f') + 1], os.environ['KIT_TEST_CALLS'] + '/config')\n"
        "s = socket.socket()\n"
        "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        "s.bind(('127.0.0.1', int(os.environ['KIT_TEST_PORT'])))\n"
        "s.listen()\n"
        "time.sleep(60)\n"
    )
    fake.chmod(0o755)
    port, stats = free_ports(2)
    monkeypatch.setenv("KIT_TEST_PORT", str(port))
    for host in values(shell.mark):
        config = proxy_config(proxy, port, [(host, 7000), ("10.0.0.3", 7001)])
        code, output = shell(["bash", "-c", proxy_script(proxy, config, port, "echo loaded", stats)])
        assert code == 0 and "loaded" in output, output
        assert not shell.mark.exists(), f"injected by {host!r}"
        assert (shell.calls / "config").read_text() == config


def test_the_oltp_bundle_takes_hostile_arguments_intact(shell):
    from kitlib.measure.experiments.mysql import sysbench_argv
    from kitlib.measure.experiments.scaleout_oltp import bundle_script

    for host in values(shell.mark):
        shutil.rmtree(shell.calls)
        shell.calls.mkdir()
        clients = [sysbench_argv((host, 3306 + i), 1, 100, "run", 4, 1.0) for i in range(2)]
        code, output = shell(["bash", "-c", bundle_script(clients)])
        assert code == 0, output
        assert not shell.mark.exists(), f"injected by {host!r}"
        assert sorted(shell.received("sysbench")) == sorted(argv[1:] for argv in clients)
        assert "== instance 1" in output and "== elapsed" in output


@pytest.fixture
def hostile_folder(tmp_path) -> Path:
    """A folder whose name holds every shell metacharacter, `:` (fio's separator) and a newline."""
    folder = tmp_path / "scratch" / f"a b;touch {tmp_path}/injected $(touch {tmp_path}/injected) `x` 'q\" & | :c\nd"
    folder.mkdir(parents=True)
    return folder


def test_the_block_probes_take_a_hostile_folder_as_one_argument(shell, hostile_folder, tmp_path):
    from kitlib.measure.experiments.block import DIRECT_PROBE, LAID_OUT

    test_file = hostile_folder / "fio-test"
    assert shell(["sh", "-c", LAID_OUT, "sh", str(test_file), "100"])[0] != 0, "absent: not laid out"
    test_file.write_bytes(b"x" * 100)
    assert shell(["sh", "-c", LAID_OUT, "sh", str(test_file), "100"])[0] == 0
    assert shell(["sh", "-c", LAID_OUT, "sh", str(test_file), "101"])[0] != 0, "too small: laid out again"

    probe = hostile_folder / ".kit-direct"
    shell(["sh", "-c", DIRECT_PROBE, "sh", str(probe)])
    assert not probe.exists() and test_file.exists() and hostile_folder.is_dir()
    code, output = shell(["sh", "-c", DIRECT_PROBE, "sh", str(hostile_folder / "absent" / ".kit-direct")])
    assert code != 0, "the probe's status is dd's, not that of the rm after it"
    assert not (tmp_path / "injected").exists()


def test_fio_on_a_native_scratch_folder_with_a_hostile_name(hostile_folder, monkeypatch, tmp_path):
    """`block`'s preparation end to end on `native` under a scratch root with every metacharacter: the test
    file is laid out inside it, and stopping removes the run's folder alone, never a prefix of it."""
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    from kitlib.core import naming
    from kitlib.core.errors import EnvironmentUnavailable
    from kitlib.measure.environments.base import Layout
    from kitlib.measure.environments.native import NativeEnvironment
    from kitlib.measure.experiments.block import FioWorkload
    from kitlib.specs.block import BlockParams
    from kitlib.specs.labels import EnvSpec

    monkeypatch.setenv("KIT_SCRATCH", str(hostile_folder))
    env = NativeEnvironment(EnvSpec("native", "native"), Layout([0], [0]), run_label=naming.new_run_label())
    env.start()
    try:
        workload = FioWorkload(BlockParams(file_mb=1, runtime=1, iodepth=1), "seq_read")
        try:
            workload.prepare(env, None)
        except EnvironmentUnavailable as exc:
            pytest.skip(f"no fio here: {exc}")
        laid_out = Path(env.data_dir) / "fio-test"
        assert laid_out.parent.parent.parent == hostile_folder
        assert laid_out.stat().st_size == 1024 * 1024
        assert not (tmp_path / "injected").exists()
        assert list(hostile_folder.parent.iterdir()) == [hostile_folder], "fio wrote nowhere else"
    finally:
        env.stop()
    assert hostile_folder.is_dir() and list(hostile_folder.iterdir()) == []


def test_the_volume_copy_takes_hostile_paths_and_arguments_intact(shell, hostile_folder, tmp_path):
    from kitlib.measure.experiments.latency import copied_first

    source = hostile_folder / "f 1;x"
    source.write_text("lower layer")
    into = hostile_folder / "into $(x)"
    into.mkdir()
    words = values(shell.mark)
    code, output = shell(copied_first(str(source), str(into), ["printf", "[%s]", *words]))
    assert code == 0, output
    assert output == "".join(f"[{w}]" for w in words)
    assert (into / source.name).read_text() == "lower layer"
    assert not shell.mark.exists() and not (tmp_path / "injected").exists()


def test_a_service_behind_a_transport_in_a_hostile_folder_starts_and_stops(shell, hostile_folder, tmp_path):
    """The remote transport's spawn, liveness and stop scripts, run here by a local shell."""
    from kitlib.measure.environments.remote import Transport

    transport = Transport(
        lambda argv, timeout: run_bounded(argv, timeout=timeout), lambda argv, cpus: list(argv), str(hostile_folder)
    )
    word = values(shell.mark)[0] + " " + values(shell.mark)[1]
    service = transport.spawn("svc", ["sh", "-c", 'printf "%s\\n" "$1"; exec sleep 30', "sh", word])
    deadline = time.monotonic() + 10
    while not (hostile_folder / "svc.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        pid = int((hostile_folder / "svc.pid").read_text())
        assert service.alive()
        while word not in service.log_tail() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert service.log_tail() == word
    finally:
        service.stop()
    assert not service.alive() and not Path(f"/proc/{pid}").exists()
    assert not shell.mark.exists() and not (tmp_path / "injected").exists()


def test_a_guest_file_step_writes_to_a_hostile_path(shell, hostile_folder, tmp_path):
    from kitlib.measure.vm.guest_image import _write_file

    target = hostile_folder / "kit.conf"
    text = f"line $(touch {shell.mark})\n`x` 'y' \"z\"\n"
    code, output = shell(["sh", "-c", _write_file(str(target), text, "640")])
    assert code == 0, output
    assert target.read_text() == text and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert not shell.mark.exists() and not (tmp_path / "injected").exists()
