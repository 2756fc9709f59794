"""The numbers the studies state in their text (data/reference/*.csv), for laying beside yours."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kitlib.core import paths

REFERENCE_DIR = paths.PROJECT_ROOT / "data" / "reference"
COLUMNS = [
    "study",
    "source_file",
    "section",
    "experiment",
    "workload",
    "env",
    "metric",
    "value",
    "unit",
    "comparison",
    "quote",
    "derivation",  # empty where `value` is quoted; else how it follows from the quote
    "claim",  # the claim that tests this finding, or "not encoded, because …"
]
NOT_ENCODED = "not encoded, because"
UNITS = {"ratio", "%", "us", "Gbps", "GB", "GB/s", "MB", "MB/s", "IOPS", "req/s", "bytes", "count", "s"}


def load(folder: Path | None = None) -> pd.DataFrame:
    frames = [pd.read_csv(path, keep_default_na=False) for path in sorted((folder or REFERENCE_DIR).glob("*.csv"))]
    frame = pd.concat(frames, ignore_index=True)
    frame["value"] = frame["value"].astype(float)
    return frame


def ratios_to_native(frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows a user's ratios to native can be laid beside."""
    frame = load() if frame is None else frame
    return frame[frame["comparison"] == "ratio_to_native"].reset_index(drop=True)


def not_encoded(frame: pd.DataFrame | None = None) -> list[str]:
    """One line per finding the claims do not test, with the reason."""
    frame = load() if frame is None else frame
    rows = frame[frame["claim"].str.startswith(NOT_ENCODED)]
    return [f"{r.study}, {r.section}: {r.env} {r.metric} = {r.value:g} {r.unit}: {r.claim}" for r in rows.itertuples()]
