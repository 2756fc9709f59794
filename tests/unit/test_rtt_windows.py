"""sockperf's full log reduced to round trips per window on the peer (the shipped program), and the
parser of what it prints: the sub-intervals a sockperf point is judged by for steady state."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from kitlib.core import services, steady
from kitlib.core.errors import ParseError
from kitlib.measure.parsers import rtt_windows

from ..conftest import DATA

LOGS = sorted((DATA / "sockperf-full-log").glob("*.log"))


def run_program(log_path, window_s: float = 0.25) -> subprocess.CompletedProcess:
    """The program as a peer runs it: `python3 -c SOURCE LOG WINDOW_S`."""
    argv = services.command("rtt_windows", log_path, window_s)
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def log_rows(path) -> np.ndarray:
    """(send time, rtt) of every message line of a real full log, read independently of the program."""
    text = path.read_text().splitlines()
    start = text.index("packet, txTime(sec), rxTime(sec), rtt(usec)") + 1
    rows = [line.split(",") for line in text[start:] if not line.startswith("---")]
    return np.array([(float(r[1]), float(r[3])) for r in rows])


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_each_window_is_the_mean_of_the_messages_it_sent(path):
    done = run_program(path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (DATA / "kit-rtt-windows" / f"{path.stem}.txt").read_text(), "the kept output is this run's"
    rows = log_rows(path)
    window_s, found = rtt_windows._windows(done.stdout, "real")
    assert window_s == 0.25
    offsets = rows[:, 0] - rows[0, 0]
    assert len(found) == int(offsets[-1] // window_s) and len(found) >= 5, "only windows the run covered"
    for index, (start, messages, mean) in enumerate(found):
        inside = rows[(offsets >= index * window_s) & (offsets < (index + 1) * window_s)]
        assert start == pytest.approx(index * window_s)
        assert messages == len(inside) and mean == pytest.approx(inside[:, 1].mean(), abs=5e-4)
    values, every = rtt_windows.intervals(done.stdout, "real")
    assert every == 0.25 and values == [mean for _, _, mean in found]
    found_steady = steady.assess(values, every)
    assert found_steady.intervals == len(found) and found_steady.half_width_pct > 0


def test_a_log_cut_while_written_or_not_matching_its_summary_is_refused(tmp_path):
    lines = LOGS[0].read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.log"
    cut.write_text("".join(lines[:-40]))  # sockperf stopped before its closing line
    done = run_program(cut)
    assert done.returncode == 0 and "complete=no" in done.stdout
    with pytest.raises(ParseError, match="cut while written"):
        rtt_windows.intervals(done.stdout, "cut")
    short = tmp_path / "short.log"
    short.write_text("".join(lines[:-3] + lines[-1:]))  # closed, but two messages fewer than its summary
    with pytest.raises(ParseError, match="the log holds"):
        rtt_windows.intervals(run_program(short).stdout, "short")
    with pytest.raises(ParseError, match="no closing"):
        rtt_windows.intervals(run_program(LOGS[0]).stdout.replace(rtt_windows.END, ""), "no end")


def test_a_window_no_message_left_in_has_no_mean_and_is_left_out(tmp_path):
    """One round trip of 0.6 s (a stalled guest) spans two windows: they hold no message and give no
    sub-interval; the stall stays in the mean of the window that sent it."""
    times = [0.0, 0.1, 0.2, 0.3, 0.9, 1.0, 1.1, 1.2, 1.3]
    rtts = [50.0, 50.0, 50.0, 600_000.0, 50.0, 50.0, 50.0, 50.0, 50.0]
    log = tmp_path / "stall.log"
    log.write_text(
        "sockperf: [Valid Duration] RunTime=1.300 sec; SentMessages=9; ReceivedMessages=9\n"
        "------------------------------\n"
        "packet, txTime(sec), rxTime(sec), rtt(usec)\n"
        + "".join(
            f"{i}, {t:.9f}, {t + r / 1e6:.9f}, {r:.3f}\n" for i, (t, r) in enumerate(zip(times, rtts, strict=True))
        )
        + "------------------------------\n"
    )
    output = run_program(log).stdout
    assert output.splitlines()[1:6] == [
        "0.000, 3, 50.000",
        "0.250, 1, 600000.000",
        "0.500, 0, -",
        "0.750, 1, 50.000",
        "1.000, 3, 50.000",
    ]
    values, _ = rtt_windows.intervals(output, "stall")
    assert values == [50.0, 600000.0, 50.0, 50.0]
    records = rtt_windows.parse(output, "stall")
    assert [m.value for m in records if m.metric == "window_messages"] == [3, 1, 0, 1, 3]
    assert len([m for m in records if m.metric == "window_rtt_mean"]) == 4, "no mean for the empty window"


def test_window_lines_out_of_sequence_or_with_a_mean_and_no_message_are_refused():
    header = "kit-rtt-windows window_s=0.25 log_messages=10 received=10 complete=yes\n"
    for body, message in (
        ("0.000, 5, 50.0\n0.500, 5, 51.0\n", "out of sequence"),
        ("0.000, 0, 50.0\n", "exactly when"),
        ("0.000, 5, -\n", "exactly when"),
        ("0.000, 11, 50.0\n", "more messages"),
    ):
        with pytest.raises(ParseError, match=message):
            rtt_windows.intervals(header + body + rtt_windows.END + "\n", "made")


def test_a_log_line_that_is_not_a_message_or_goes_back_in_time_stops_the_program(tmp_path):
    """The program refuses what is not sockperf's log (its exit status fails the point) instead of
    putting a message into the wrong window."""
    lines = LOGS[0].read_text().splitlines(keepends=True)
    start = lines.index("packet, txTime(sec), rxTime(sec), rtt(usec)\n") + 1
    swapped = lines[: start + 5] + [lines[start + 6], lines[start + 5]] + lines[start + 7 :]
    for name, text, message in (
        ("swapped.log", "".join(swapped), "out of order"),
        ("garbled.log", "".join(lines[: start + 5] + ["1, 2, 3\n"] + lines[start + 5 :]), "not a log line"),
    ):
        path = tmp_path / name
        path.write_text(text)
        done = run_program(path)
        assert done.returncode != 0 and message in done.stderr and done.stdout == ""
