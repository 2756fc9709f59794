"""Which versions of its experiment's tools a record was measured with, and where records differ in them.

Each record names them in its `tool_versions` column: `fio 3.33-3`, or `redis-server 5:7.0.15-1~deb12u7;
client redis-tools 5:7.0.15-1~deb12u10`: the Debian packages its experiment declares (`Schema.tools`,
run inside the environment, and `Schema.client_tools`, run by the load generator), at the versions
`dpkg-query` gave provenance. A package a side did not report is unknown there, never a difference.

A tool's new version can move a number as much as an environment does, so records of differing
versions are flagged wherever they are compared (an image and its host often carry different Debian
revisions of one program), and an interval never pools them unless asked (`allow_mixed_versions`):
pyperf refuses to compare runs of different versions; the kit names them and lets the reader choose.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

COLUMN = "tool_versions"
#: the prefix of a package the load generator ran (on the peer, the client's machine)
CLIENT = "client "
#: what separates the packages of one record
SEPARATOR = "; "


def describe(
    tools: Iterable[str],
    client_tools: Iterable[str],
    env_versions: Mapping[str, str],
    client_versions: Mapping[str, str],
) -> str | None:
    """The column's text for one environment: its `tools` at the environment's versions, then the
    `client_tools` at the client's; None where neither side reported any of them."""
    parts = [f"{name} {env_versions[name]}" for name in tools if env_versions.get(name)]
    parts += [f"{CLIENT}{name} {client_versions[name]}" for name in client_tools if client_versions.get(name)]
    return SEPARATOR.join(parts) or None


def of_environment(
    by_label: Mapping[str, Mapping[str, str]], label: str, tools: Iterable[str], client_tools: Iterable[str]
) -> str | None:
    """The column's text for environment `label` from a provenance session's `tool_versions` (versions
    by environment label, the client's under `peer`)."""
    return describe(tools, client_tools, by_label.get(label) or {}, by_label.get("peer") or {})


def parse(text: object) -> dict[str, str]:
    """{package (with `client ` before a client's): version} of one record's text ({} for none)."""
    if not isinstance(text, str) or not text.strip():
        return {}
    found = {}
    for part in text.split(SEPARATOR):
        name, _, version = part.strip().rpartition(" ")
        if name and version:
            found[name] = version
    return found


def _versions(rows: pd.DataFrame, label: pd.Series) -> dict[str, dict[str, set[str]]]:
    """{package: {version: the `label` values (runs, environments) that ran it}} of these records."""
    found: dict[str, dict[str, set[str]]] = {}
    parsed = {text: parse(text) for text in rows[COLUMN].dropna().unique()}
    for text, who in zip(rows[COLUMN], label.astype(str), strict=True):
        for package, version in parsed.get(text, {}).items():
            found.setdefault(package, {}).setdefault(version, set()).add(who)
    return found


def _line(package: str, versions: dict[str, set[str]], what: str) -> str:
    return f"{package} " + " vs ".join(f"{v} ({what}{', '.join(sorted(w))})" for v, w in sorted(versions.items()))


def mixed(rows: pd.DataFrame, by: list[str]) -> list[str]:
    """Where records of one group (one configuration of one environment: `by` names its columns) were
    measured with different versions of a tool, one line per environment and package:
    `native: fio 3.33-3 (run quick-a) vs 3.35-1 (run quick-b)`. [] where every group used one version."""
    if COLUMN not in rows.columns:
        return []
    known = rows[rows[COLUMN].notna()]
    if known[COLUMN].nunique() < 2:
        return []
    keys = [c for c in by if c in known.columns]
    groups = known.groupby(keys, dropna=False, sort=False).ngroup() if keys else pd.Series(0, index=known.index)
    runs = known["run_id"].astype(str) if "run_id" in known.columns else pd.Series("?", index=known.index)
    envs = known["env"].astype(str) if "env" in known.columns else pd.Series("records", index=known.index)
    parsed = {text: parse(text) for text in known[COLUMN].unique()}
    found: dict[tuple[int, str], dict[str, set[str]]] = {}  # (group, package) -> version -> runs
    where: dict[int, set[str]] = {}
    for group, env, run, text in zip(groups, envs, runs, known[COLUMN], strict=True):
        where.setdefault(group, set()).add(env)
        for package, version in parsed[text].items():
            found.setdefault((group, package), {}).setdefault(version, set()).add(run)
    return sorted(
        {
            f"{', '.join(sorted(where[group]))}: {_line(package, versions, 'run ')}"
            for (group, package), versions in found.items()
            if len(versions) > 1
        }
    )


def between(rows: pd.DataFrame, column: str = "env") -> list[str]:
    """Packages whose versions differ between the environments (or other `column` values) compared, one
    line each: `redis-server 5:7.0.15-1~deb12u10 (native) vs 5:7.0.15-1~deb12u7 (docker-host-volume)`."""
    if COLUMN not in rows.columns or column not in rows.columns or rows[column].nunique() < 2:
        return []
    known = rows[rows[COLUMN].notna()]
    return [_line(p, v, "") for p, v in sorted(_versions(known, known[column]).items()) if len(v) > 1]
