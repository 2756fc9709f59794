"""Signals during a run, on real processes: the first of SIGINT/SIGTERM/SIGHUP unwinds like Ctrl-C, later
ones wait for clean-up, a signal the caller ignores stays ignored; one process per run folder."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from kitlib.core.signals import default_dispositions

PROGRAM = textwrap.dedent(
    """
    import sys, time
    from kitlib.core import signals
    try:
        with signals.stop_on_signals():
            try:
                print("ready", flush=True)
                time.sleep(60)
            finally:
                print("cleaning", flush=True)
                time.sleep(1.5)  # clean-up that later signals must not cut short
                print("cleaned", flush=True)
    except KeyboardInterrupt as exc:
        print(signals.stopped_message(exc), flush=True)
        sys.exit(signals.exit_code(exc))
    """
)


def _start(preexec=default_dispositions, program: str = PROGRAM) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", program],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=preexec,
    )
    assert proc.stdout.readline().strip() == "ready"
    return proc


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_the_first_signal_unwinds_and_later_ones_wait_for_clean_up(sig):
    proc = _start()
    proc.send_signal(sig)
    assert proc.stdout.readline().strip() == "cleaning"
    for again in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        proc.send_signal(again)
    output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig, output
    assert "cleaned" in output and output.count("clean-up continues") == 3, output
    assert f"stopped by {sig.name}" in output and "kit clean" in output


def test_a_signal_the_caller_ignores_stays_ignored():
    def ignore_hangup():  # as nohup starts its command
        default_dispositions()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    proc = _start(ignore_hangup)
    proc.send_signal(signal.SIGHUP)
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=1.5)
    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 143 and "stopped by SIGTERM" in output, output


def test_a_second_process_cannot_take_a_run_folders_lock(tmp_path):
    from kitlib.core.errors import KitError
    from kitlib.measure.store import RunStore

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from kitlib.measure.store import RunStore\n"
            f"with RunStore({str(tmp_path)!r}).locked():\n    print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(KitError, match=rf"another run of this plan is in progress .*pid {holder.pid}"):
            with RunStore(tmp_path).locked():
                pass
    finally:
        holder.kill()
        holder.wait(timeout=30)
    with RunStore(tmp_path).locked():  # the kernel released the lock of the killed holder
        pass


AFTER_THE_BLOCK = textwrap.dedent(
    """
    import os, signal, sys, time
    from kitlib.core import signals
    try:
        with signals.stop_on_signals(until_exit=True):
            print("ready", flush=True)
            time.sleep(60)
    except KeyboardInterrupt as exc:
        os.kill(os.getpid(), signal.SIGHUP)  # arrives after the block, before the exit code is reported
        time.sleep(0.2)
        # ignored at the C level, so it stays ignored while the interpreter shuts down
        print("ignored to the end:", all(signal.getsignal(s) == signal.SIG_IGN for s in signals.HANDLED), flush=True)
        print(signals.stopped_message(exc), flush=True)
        sys.exit(signals.exit_code(exc))
    """
)


def test_a_command_keeps_the_first_signals_exit_code_when_another_comes_after_clean_up():
    proc = _start(program=AFTER_THE_BLOCK)
    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, output
    assert "stopped by SIGTERM" in output and "ignored to the end: True" in output, output
