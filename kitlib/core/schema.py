"""What an experiment's records mean, declared once beside the experiment (`Experiment.schema`).

Analysis, Little's law, the explorer, the figures and the claims read an experiment's column names
from here: which column a workload sweeps, which columns make separate series, which rows stand for
a point (Redis: the SET+GET `mix`), where a closed loop keeps its outstanding requests N, which
figures the records make and which claims they decide. Nothing else spells them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class ClosedLoop:
    """A client that keeps N requests in flight, so Little's law N ≈ X·R holds; where its users think
    between requests, N ≈ X·(R + Z) with Z the mean think time."""

    throughput: str
    latency: str
    #: the column that holds N; None: one request at a time
    outstanding: str | None = None
    #: columns whose mean is the mean think time Z in seconds (a uniform draw between them); () none
    think: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorkloadSchema:
    #: the column the workload sweeps (a figure's x axis); None: one point per configuration
    sweep: str | None = None
    #: columns whose values are series of their own beside the environment
    series: tuple[str, ...] = ()
    #: the rows that stand for a point where a point records several (Redis: op = mix)
    headline: Mapping[str, Any] = field(default_factory=dict)
    closed_loop: ClosedLoop | None = None
    #: the packages this workload's programs come from where they are not the experiment's (`Schema.tools`)
    tools: tuple[str, ...] | None = None
    client_tools: tuple[str, ...] | None = None
    #: where a duet run (`Plan.order` `duet`) applies to the workload, how its points differ from the
    #: whole machine's (each side on half the CPUs; what the two sides share): said on the claims and the
    #: records; None: the workload is not measured in duets
    duet: str | None = None


@dataclass(frozen=True)
class FigureSpec:
    """A figure file: its name, the function of `kitlib.analyse.figures` that draws it ("module.function",
    records in, Figure out), the workloads whose records it needs (any of them; () = any record) and the
    columns it needs."""

    name: str
    draw: str
    workloads: tuple[str, ...] = ()
    #: columns some record must hold a value in (e.g. `instances`, which only a scaled-out run records)
    requires: tuple[str, ...] = ()

    def drawable(self, records: pd.DataFrame) -> bool:
        if records.empty:
            return False
        if any(c not in records.columns or records[c].isna().all() for c in self.requires):
            return False
        return not self.workloads or bool(records["workload"].isin(self.workloads).any())


@dataclass(frozen=True)
class Schema:
    workloads: Mapping[str, WorkloadSchema] = field(default_factory=dict)
    figures: tuple[FigureSpec, ...] = ()
    #: names of the claims (`kitlib.analyse.claims`) decided on this experiment's records
    claims: tuple[str, ...] = ()
    #: the Debian packages (of `provenance.TOOL_PACKAGES`) whose programs measure inside the environment,
    #: and those the load generator runs on the client's side: each record names their versions
    #: (`kitlib.core.tool_versions`), so runs of differing versions are flagged and never pooled unasked
    tools: tuple[str, ...] = ()
    client_tools: tuple[str, ...] = ()

    def workload(self, name: str | None) -> WorkloadSchema:
        return self.workloads.get(name or "", WorkloadSchema())

    def tools_of(self, workload: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The packages a workload's records name the versions of: (in the environment, on the client)."""
        own = self.workload(workload)
        return (
            self.tools if own.tools is None else own.tools,
            self.client_tools if own.client_tools is None else own.client_tools,
        )

    def environment_tools(self) -> set[str]:
        """Every package the experiment's workloads run inside an environment (`tools_of`, first part)."""
        return set(self.tools).union(*(self.tools_of(name)[0] for name in self.workloads))

    def headline_rows(self, records: pd.DataFrame) -> pd.DataFrame:
        """The records without the rows a headline leaves out (Redis's separate SET and GET phases);
        records that do not name their workload are held to every headline of the experiment."""
        keep = pd.Series(True, index=records.index)
        for name, workload in self.workloads.items():
            other = records["workload"] != name if "workload" in records.columns else False
            for column, value in workload.headline.items():
                if column in records.columns:
                    keep &= other | (records[column] == value)
        return records[keep]
