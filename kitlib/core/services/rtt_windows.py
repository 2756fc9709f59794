"""sockperf's `--full-log` file as round trips per window: the sub-intervals of a ping-pong run.

    rtt_windows LOGFILE WINDOW_S

sockperf logs one line per message of its valid duration (`packet, txTime(sec), rxTime(sec),
rtt(usec)`) after its summary, and closes the file with a line of dashes. Such a log holds some
18,000 lines a second, megabytes a point, so the peer reduces it where it was written and only the
windows travel back and are kept:

    kit-rtt-windows window_s=0.25 log_messages=10213 received=10213 complete=yes
    0.000, 1021, 53.874
    0.250, 1019, 54.102
    0.500, 0, -
    kit-rtt-windows end

Each line is a window by send time from the first message: its start in seconds, its messages and
their mean round trip in µs ("-": none was sent in it, a round trip outlasted the window). Only
windows the run covered to their end are printed. `received` is the summary's ReceivedMessages of the
valid duration, which the log's lines must match; `complete=no` means the log lacks its closing
line (sockperf was stopped while writing it). Standard library only.
"""

import re
import sys

VALID = re.compile(r"\[Valid Duration\] RunTime=\S+ sec; SentMessages=\S+; ReceivedMessages=([0-9]+)")
HEADER = "packet, txTime(sec), rxTime(sec), rtt(usec)"


def windows(lines, window_s):
    """(received or None, whether the log closed, messages logged, windows covered to their end, and
    per window since the first send: [messages], [sum of round trips in µs]) of a full log's lines, read
    as they stream by: a paper-length log holds a million lines."""
    received, in_rows, closed, logged = None, False, False, 0
    first = last = None
    counts, sums = [], []
    for line in lines:
        line = line.rstrip("\n")
        if not in_rows:
            found = VALID.search(line)
            if found:
                received = int(found.group(1))
            in_rows = line == HEADER
            continue
        if line.startswith("---"):
            closed = True
            break
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 4:
            raise ValueError(f"not a log line: {line[:80]!r}")
        sent, rtt = float(fields[1]), float(fields[3])
        if last is not None and sent < last:
            raise ValueError(f"send times out of order: {line[:80]!r}")
        first = sent if first is None else first
        last = sent
        index = int((sent - first) // window_s)
        while len(counts) <= index:
            counts.append(0)
            sums.append(0.0)
        counts[index] += 1
        sums[index] += rtt
        logged += 1
    covered = 0 if first is None else int((last - first) // window_s)
    return received, closed, logged, covered, counts, sums


def report(path, window_s):
    with open(path) as log:
        received, closed, logged, covered, counts, sums = windows(log, window_s)
    out = [
        f"kit-rtt-windows window_s={window_s:g} log_messages={logged} "
        f"received={'-' if received is None else received} complete={'yes' if closed else 'no'}"
    ]
    for index in range(covered):  # the last window, which the end of the run cut, is left out
        mean = f"{sums[index] / counts[index]:.3f}" if counts[index] else "-"
        out.append(f"{index * window_s:.3f}, {counts[index]}, {mean}")
    out.append("kit-rtt-windows end")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    report(sys.argv[1], float(sys.argv[2]))
