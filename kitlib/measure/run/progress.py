"""One line of progress per experiment: points done, measured again and kept disturbed, failed, and the
time left (tqdm's), updated in place after every point instead of a line per point."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kitlib.results import read_json


@dataclass
class PointProgress:
    """What the points of one run's call came to so far, shown beside its bar."""

    remeasured: int = 0
    disturbed: int = 0
    failed: int = 0

    def point(self, bar: Any, store: Any, unit: Any) -> None:
        """Count one finished point (as its unit file says) and move the bar."""
        path = store.units_dir / f"{unit.key}.json"
        document = read_json(path) if path.exists() else {}
        if document.get("status") == "failed":
            self.failed += 1
        self.remeasured += int(bool(store.attempts_of(unit.key)))
        if any(str(row.get("disturbed")) == "True" for row in document.get("records") or []):
            self.disturbed += 1
        bar.set_postfix_str(self.text(), refresh=False)
        bar.update(1)

    def text(self) -> str:
        return f"measured again {self.remeasured}, kept disturbed {self.disturbed}, failed {self.failed}"
