"""Capture real Locust CSV files for the parser's tests: Locust runs the web tier's users
(kitlib/measure/image/webtier/locustfile.py) against a stand-in for the application on 127.0.0.1,
the same command line the kit runs (`--reset-stats`, `--csv`, `--csv-full-history`), and its files
are copied here.

    .venv/bin/python tests/data/locust-history/capture.py

Two runs, each of 20 users started 10 a second (so one second of ramp-up before the reset):

- `standin-20users`: 12 s, think 0.05-0.15 s, Table 1's mix (the plan's default): some 2000 requests in the steady
  window, enough to hold the achieved mix against the target, with EventDetail failing (404) for
  every tenth event id;
- `idleops-20users`: 4 s, think 6-7 s, an even mix: each user sends one request when it starts and
  none again before the end, so the steady window holds the first requests of users 11-20 only and
  the operations that users 1-10 alone drew have no request after the reset (`N/A` percentiles). The
  seed is one whose draws give such operations and every operation at least once.

`PREFIX_stats.csv` goes to tests/data/locust/ (the stats parser's real outputs, which the property
test reads too); the history, failures and exceptions files and this script stay here, in the folder
the property test leaves alone (it would read them as stats files). Each child is started in a session
of its own with default signal dispositions and stopped with bounded waits; nothing is left running.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from kitlib.specs.webtier import TABLE1_MIX

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
STATS_DIR = HERE.parent / "locust"
LOCUSTFILE = ROOT / "kitlib" / "measure" / "image" / "webtier" / "locustfile.py"
LOCUST = Path(sys.executable).with_name("locust")
MAX_LINES = 300  # the data files stay small
SERVER_START_S = 10.0
STOP_WAIT_S = 5.0


# -- the stand-in application ---------------------------------------------------------------------


class StandIn(BaseHTTPRequestHandler):
    """The application's HTTP contract, without a database: each route answers its success status
    (EventDetail 404 for every tenth id, so failures appear) and a small body."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the real web server

    def log_message(self, *_args) -> None:  # quiet: thousands of requests
        pass

    def _answer(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _form(self) -> dict[str, list[str]]:
        length = int(self.headers.get("Content-Length") or 0)
        return parse_qs(self.rfile.read(length).decode())

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path == "/":
            self._answer(200, "<h1>Events</h1>")
        elif url.path == "/tags" and query.get("tag"):
            self._answer(200, f"<p>events tagged {query['tag'][0]}</p>")
        elif url.path == "/event" and query.get("id", [""])[0].isdigit():
            n = int(query["id"][0])
            self._answer(404, "no such event") if n % 10 == 0 else self._answer(200, f"<p>event {n}</p>")
        elif url.path == "/person" and query.get("id", [""])[0].isdigit():
            self._answer(200, f"<p>person {query['id'][0]}</p>")
        else:
            self._answer(404, "not found")

    def do_POST(self) -> None:  # noqa: N802
        form = self._form()
        if self.path == "/login" and {"email", "password"} <= set(form):
            self._answer(200, "welcome")
        elif self.path == "/person" and {"name", "email", "password"} <= set(form):
            self._answer(201, "added")
        elif self.path == "/event" and {"person_id", "title", "description", "date", "tags"} <= set(form):
            self._answer(201, "added")
        else:
            self._answer(400, "bad form")


class Server(ThreadingHTTPServer):
    """A thread per connection; a listen backlog for 20 users connecting at once (http.server's 5 drops
    connections, which the client retries a second later: 1000 ms latencies that are no server's)."""

    request_queue_size = 128
    daemon_threads = True


def serve() -> None:
    """The child: bind an ephemeral port, say which on stdout, serve until signalled."""
    server = Server(("127.0.0.1", 0), StandIn)
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


# -- children -------------------------------------------------------------------------------------


def _default_signals() -> None:
    """In the child before exec: SIGINT and SIGTERM end it, whatever the parent ignores."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start(argv: list[str], **kwargs) -> subprocess.Popen:
    return subprocess.Popen(argv, start_new_session=True, restore_signals=True, preexec_fn=_default_signals, **kwargs)


def stop(child: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL to the child's own process group, each wait bounded."""
    if child.poll() is not None:
        return
    child.terminate()
    try:
        child.wait(STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(STOP_WAIT_S)


def server_port(server: subprocess.Popen) -> int:
    """The port the stand-in announced, waited for at most SERVER_START_S."""
    with selectors.DefaultSelector() as sel:
        sel.register(server.stdout, selectors.EVENT_READ)
        if not sel.select(SERVER_START_S):
            raise RuntimeError(f"the stand-in server said nothing in {SERVER_START_S:g} s")
    line = server.stdout.readline().split()
    if len(line) != 2 or line[0] != b"port":
        raise RuntimeError(f"the stand-in server said {line!r}")
    return int(line[1])


# -- the runs -------------------------------------------------------------------------------------

OPERATIONS = tuple(TABLE1_MIX)
RUNS = {
    "standin-20users": {"seconds": 12, "think": (0.05, 0.15), "mix": TABLE1_MIX, "seed": 1, "idle": False},
    "idleops-20users": {
        "seconds": 4,
        "think": (6.0, 7.0),
        "mix": dict.fromkeys(OPERATIONS, 1.0),
        "seed": 2,
        "idle": True,
    },
}


def locust_argv(port: int, prefix: Path, run: dict) -> list[str]:
    """The kit's command line: stats reset at the end of spawning, per-second history, summary only."""
    return [
        str(LOCUST),
        *("-f", str(LOCUSTFILE), "--headless", "--host", f"http://127.0.0.1:{port}"),
        *("-u", "20", "-r", "10", "-t", f"{run['seconds']}s"),
        *("--reset-stats", "--csv", str(prefix), "--csv-full-history", "--only-summary", "--stop-timeout", "5"),
        *("--kit-mix", json.dumps(run["mix"])),
        *("--kit-think-min", str(run["think"][0]), "--kit-think-max", str(run["think"][1])),
        *("--kit-persons", "100", "--kit-events", "100", "--kit-seed", str(run["seed"])),
    ]


def check(name: str, run: dict, prefix: Path) -> None:
    """The run is what the tests take it for: read whole by the kit's parser, every operation named, and
    (the idle run) an operation without requests after the reset; the captured files are kept otherwise."""
    from kitlib.measure.parsers import locust as parser

    stats, history = (Path(f"{prefix}_{s}.csv").read_bytes().decode() for s in ("stats", "stats_history"))
    found = parser.parse_run(stats, history, name)
    window = parser.steady_window(history, name)
    names = {op.operation for op in found[:-1]}
    idle = sorted(op.operation for op in found[:-1] if not op.requests)
    if names != set(OPERATIONS) or bool(idle) != run["idle"]:
        raise RuntimeError(f"{name}: operations {sorted(names)}, without requests {idle}: capture again")
    print(f"{name}: window {window.start}..{window.end} at {window.users} users, {found[-1].requests} requests")
    if len(window.intervals) != window.end - window.start:
        print(f"{name}: Locust's writer skipped a second in the window (real, but rarer than not)")


def capture(name: str, run: dict, port: int, work: Path) -> None:
    """One Locust run, checked, its four files copied; exit 1 (failed requests) is expected."""
    prefix = work / name
    with open(work / f"{name}.log", "wb") as log:
        locust = start(locust_argv(port, prefix, run), stdout=log, stderr=subprocess.STDOUT, cwd=work)
        try:
            code = locust.wait(run["seconds"] + 60)
        finally:
            stop(locust)
    if code not in (0, 1):
        raise RuntimeError(f"locust exited {code}:\n{(work / f'{name}.log').read_text()[-2000:]}")
    check(name, run, prefix)
    for suffix, folder in (("stats", STATS_DIR), ("stats_history", HERE), ("failures", HERE), ("exceptions", HERE)):
        source = Path(f"{prefix}_{suffix}.csv")
        lines = source.read_bytes().count(b"\n")
        if lines > MAX_LINES:
            raise RuntimeError(f"{source.name} has {lines} lines, more than {MAX_LINES}")
        shutil.copyfile(source, folder / source.name)
        print(f"{folder.relative_to(ROOT)}/{source.name}: {lines} lines")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="locust-capture-") as work:
        server = start([sys.executable, __file__, "serve"], stdout=subprocess.PIPE)
        try:
            port = server_port(server)
            for name, run in RUNS.items():
                capture(name, run, port, Path(work))
        finally:
            stop(server)
            server.stdout.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["serve"]:
        serve()
    else:
        main()
