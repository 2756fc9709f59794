"""Progress of a run seen from outside the kernel: `kit run` and `kit reproduce` execute an experiment's
notebook in a Jupyter kernel, whose output papermill only saves; the terminal learns how far the run is
from the store itself, where every measured point lands as `units/<key>.json` the moment it is done.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

from kitlib.measure import experiments
from kitlib.measure.planning import Plan
from kitlib.measure.store import has_records


def planned_units(plan: Plan) -> list[str]:
    """The unit keys the plan measures (one environment, point and repetition each, a duet's two sides
    apart), as the runner names them."""
    from kitlib.measure.run.runner import plan_units  # the runner's own order and keys

    return [unit.key for unit in plan_units(plan, experiments.workloads_of(plan))]


def _status(units_dir: Path, key: str) -> tuple[str | None, float]:
    path = units_dir / f"{key}.json"
    try:
        unit = json.loads(path.read_text())
        status = unit.get("status")
        return (None if status == "ok" and not has_records(unit) else status), path.stat().st_mtime
    except (OSError, ValueError, AttributeError):
        return None, 0.0


def count_done(units_dir: Path, keys: list[str], since: float) -> tuple[int, int]:
    """(points done, of which failed): ok ones, and failed ones written after `since`
    (a rerun retries older failures)."""
    done = failed = 0
    for key in keys:
        status, mtime = _status(units_dir, key)
        if status == "ok":
            done += 1
        elif status == "failed" and mtime >= since:
            done += 1
            failed += 1
    return done, failed


def troubles(units_dir: Path, keys: list[str], since: float) -> tuple[int, int]:
    """(points measured again, points kept disturbed) since `since`: the first from the discarded attempts
    written since, the second from the done points whose records say `disturbed`."""
    again = {
        path.name.split(".attempt")[0] for path in units_dir.glob("*.attempt*.json") if path.stat().st_mtime >= since
    }
    disturbed = 0
    for key in keys:
        path = units_dir / f"{key}.json"
        try:
            if path.stat().st_mtime < since:
                continue
            rows = json.loads(path.read_text()).get("records") or []
        except (OSError, ValueError, AttributeError):
            continue
        disturbed += any(str(row.get("disturbed")) == "True" for row in rows)
    return len(again & set(keys)), disturbed


def format_eta(seconds: float | None) -> str:
    if seconds is None:
        return "time left: estimating"
    if seconds < 90:
        return f"about {int(round(seconds))} s left"
    return f"about {int(round(seconds / 60))} min left"


def line(label: str, done: int, total: int, failed: int, eta: float | None, again: int = 0, disturbed: int = 0) -> str:
    failed_text = f", {failed} failed" if failed else ""
    failed_text += f", {again} measured again" if again else ""
    failed_text += f", {disturbed} kept disturbed" if disturbed else ""
    return f"{label}: {done}/{total} points{failed_text}, {format_eta(eta) if done < total else 'done'}"


class Watcher:
    """A thread that reports points done / total and an estimate of the time left while a run goes on.

    On a terminal one line is rewritten in place; elsewhere (a log file, CI) a line is printed whenever the
    count changes, at most every `every` seconds. The estimate uses the rate of points done in this session.
    """

    def __init__(self, label: str, units_dir: Path, keys: list[str], *, every: float = 2.0, stream=None):
        self.label, self.units_dir, self.keys, self.every = label, Path(units_dir), keys, every
        self.stream = stream or sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kit-progress", daemon=True)
        self._started = time.time()
        self._initial = count_done(self.units_dir, keys, self._started)[0]
        self._last = ""

    def __enter__(self) -> Watcher:
        self._emit(self._initial, 0)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        done, failed = count_done(self.units_dir, self.keys, self._started)
        self._emit(done, failed, final=True)

    def eta(self, done: int) -> float | None:
        new = done - self._initial
        if new <= 0:
            return None
        return (time.time() - self._started) / new * (len(self.keys) - done)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            done, failed = count_done(self.units_dir, self.keys, self._started)
            self._emit(done, failed)

    def _emit(self, done: int, failed: int, final: bool = False) -> None:
        again, disturbed = troubles(self.units_dir, self.keys, self._started) if done else (0, 0)
        text = line(self.label, done, len(self.keys), failed, self.eta(done), again, disturbed)
        tty = getattr(self.stream, "isatty", lambda: False)()
        if tty:
            self.stream.write("\r" + text.ljust(len(self._last)) + ("\n" if final else ""))
        elif text.split(",")[0] != self._last.split(",")[0] or final and text != self._last:
            self.stream.write(text + "\n")
        self.stream.flush()
        self._last = text
