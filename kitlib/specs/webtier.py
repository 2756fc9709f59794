"""The web tier (seed 002, post 3: CloudStone on Docker and vSphere; post 1: Weathervane): a three-tier
social-events application (NGINX with PHP-FPM against MariaDB) driven by a closed-loop user population
with think times on the peer, judged per operation against the post's latency thresholds.

Parameters, profiles and what the records mean. The post's settings are the defaults where it gives
them: the operation mix of its Table 1, NGINX with 4 workers of 4096 connections, PHP with at most 16
children, thresholds of 250 ms for the frequent operations and 500 ms for the others, 1500 users per
instance, a ramp-up, a steady window and a ramp-down (5, 30 and 5 minutes in the post: the `paper`
profile). Think times are the kit's choice (the post ran Faban's default client, whose think time it
does not give): uniform between `think_min_s` and `think_max_s`.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kitlib.core.schema import ClosedLoop, FigureSpec, Schema, WorkloadSchema
from kitlib.specs.base import Spec, sorted_within

#: the post's Table 1, "CloudStone operations frequency for 1500 users": the share of each operation (%)
TABLE1_MIX = {
    "HomePage": 26.14,
    "Login": 10.22,
    "TagSearch": 33.37,
    "EventDetail": 24.71,
    "PersonDetail": 2.65,
    "AddPerson": 0.86,
    "AddEvent": 2.04,
}
#: the post's thresholds: "250 ms for the frequent operations (HomePage, TagSearch, EventDetail, Login)",
#: 500 ms for the others
FREQUENT = ("HomePage", "TagSearch", "EventDetail", "Login")
THRESHOLDS_MS = {op: 250.0 if op in FREQUENT else 500.0 for op in TABLE1_MIX}
#: the post's PHP setting ("maximum number of 16 child processes"); its NGINX settings (4 workers of 4096
#: connections) are written in the application's nginx.conf.in
PHP_CHILDREN = 16


def thresholds_of(df: pd.DataFrame) -> dict[str, float]:
    """Each operation's threshold as the runs recorded it (`threshold_ms` per record), else the post's."""
    if "threshold_ms" not in df.columns:
        return dict(THRESHOLDS_MS)
    recorded = df.dropna(subset=["threshold_ms"]).groupby("operation")["threshold_ms"].first()
    return {**THRESHOLDS_MS, **{str(k): float(v) for k, v in recorded.items()}}


def population_verdicts(df: pd.DataFrame) -> pd.DataFrame:
    """Per environment and population (`users`): whether it passes, the post's pass/fail. A population
    passes when, in the mean over its runs, every operation's 90th percentile (of every instance, scaled
    out) lies at or under the
    operation's threshold (recorded per record as `threshold_ms`, else the post's), and no request of
    any run failed (a server that answers fast with errors must not pass). Columns env, users,
    operations_over, errors, passes."""
    rows = df[df["operation"].isin(list(TABLE1_MIX))]
    p90 = rows[rows["metric"] == "latency_p90"]
    limits = thresholds_of(df)
    # scaled out, each instance's operations are judged apart: every one of them must pass
    keys = ["env", "users", "operation"] + (["instance"] if "instance" in p90.columns else [])
    means = p90.groupby(keys, dropna=False)["value"].mean().reset_index()
    means["over"] = means["value"] > means["operation"].map(limits)
    table = means.groupby(["env", "users"])["over"].sum().astype(int).reset_index(name="operations_over")
    failed = df[(df["metric"] == "errors") & (df["operation"] == "Aggregated")]
    errors = failed.groupby(["env", "users"])["value"].sum()
    table["errors"] = [float(errors.get((e, u), 0.0)) for e, u in zip(table["env"], table["users"], strict=True)]
    table["passes"] = (table["operations_over"] == 0) & (table["errors"] == 0)
    return table


def peak_of(verdicts: pd.DataFrame) -> int | None:
    """The peak population of one environment's verdicts: the largest that passes below the smallest that
    fails (a noisy pass above a failure does not count); None when none passes."""
    failing = verdicts.loc[~verdicts["passes"], "users"]
    passing = verdicts.loc[verdicts["passes"], "users"]
    if len(failing):
        passing = passing[passing < failing.min()]
    return int(passing.max()) if len(passing) else None


def next_population(verdicts: pd.DataFrame, most: int, resolution_pct: float) -> int | None:
    """The population the peak search measures next in one environment, or None when it is done: twice
    the peak while nothing fails (at most `most`), then the middle between the peak and the smallest
    failing population until that one is within `resolution_pct` above the peak; below the smallest
    population when even that fails. Never a population already measured, so the search ends."""
    measured = set(int(u) for u in verdicts["users"])
    failing = verdicts.loc[~verdicts["passes"], "users"]
    peak = peak_of(verdicts)
    if not len(failing):
        if peak is None or peak >= most:
            return None
        wanted = min(2 * peak, most)
    else:
        lowest_fail = int(failing.min())
        floor = peak or 0
        if peak is not None and lowest_fail <= peak * (1 + resolution_pct / 100.0):
            return None
        wanted = (floor + lowest_fail) // 2
    return wanted if wanted >= 1 and wanted not in measured else None


class WebtierParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    users: list[int] = Field(description="concurrent users per instance, swept (the post: 1500 per instance)")
    data_users: int = Field(
        1500,
        description="users the data set is generated for (persons 4×, events 2×; the post: 1500); ≤ 1e6",
        ge=10,
        le=1_000_000,
    )
    think_min_s: float = Field(1.0, description="shortest think time between a user's requests (s)", ge=0, le=60)
    think_max_s: float = Field(3.0, description="longest think time between a user's requests (s)", ge=0, le=60)
    ramp_up_s: float = Field(description="users started evenly over this many seconds, not recorded", gt=0, le=3600)
    steady_s: float = Field(description="the steady window every statistic is taken from (s)", gt=0, le=7200)
    ramp_down_s: float = Field(
        0.0, description="time given to the users to finish after the window, not recorded (s)", ge=0, le=3600
    )
    mix: dict[str, float] = Field(
        default_factory=lambda: dict(TABLE1_MIX), description="share of each operation in % (the post's Table 1)"
    )
    thresholds_ms: dict[str, float] = Field(
        default_factory=lambda: dict(THRESHOLDS_MS), description="latency threshold of each operation (ms)"
    )
    tiers: Literal["one", "two"] = Field(
        "one",
        description="one: web server and database in one environment; two: the database in its own "
        "environment of the same label (a second container on Docker labels: the post's '2 containers per "
        "CloudStone instance', its two-VM layout), reached over TCP",
    )
    buffer_pool_mb: int = Field(256, description="MariaDB's InnoDB buffer pool (MB)", ge=16, le=4 * 2**20)
    server_cores: int = Field(1, description="CPUs the web and database tiers are pinned to", ge=1, le=1024)
    instances: int = Field(
        1,
        description="application instances, each its own NGINX, PHP-FPM and MariaDB (its own container on "
        "Docker labels) driven by its own users, all at once (the post scaled out to 8)",
        ge=1,
        le=64,
    )
    placement: Literal["default", "pinned"] = Field(
        "default",
        description="default: every instance on all the server CPUs; pinned: instance i's processes on server "
        "CPU i (modulo their count)",
    )
    seed: int = Field(1, description="seed of the data set and of the users' choices", ge=0, le=2**31 - 1)
    peak_max_users: int = Field(
        0,
        description="after the sweep, search each environment's peak population up to this many users "
        "(doubling while every population passes, then halving the gap to the first that fails); 0: no search",
        ge=0,
        le=100_000,
    )
    peak_resolution_pct: float = Field(
        50.0,
        description="the search stops when the first failing population is within this % above the largest passing one",
        ge=1,
        le=100,
    )

    @field_validator("users")
    @classmethod
    def _users(cls, value: list[int]) -> list[int]:
        return sorted_within(value, 1, 100_000, "user counts")

    @field_validator("mix", "thresholds_ms")
    @classmethod
    def _operations(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(TABLE1_MIX))
        if unknown:
            raise ValueError(f"unknown operations {unknown}; the application serves {list(TABLE1_MIX)}")
        return value

    @field_validator("mix")
    @classmethod
    def _mix(cls, value: dict[str, float]) -> dict[str, float]:
        if any(v < 0 for v in value.values()) or sum(value.values()) <= 0:
            raise ValueError("shares must be ≥ 0 and not all 0")
        return value

    @field_validator("thresholds_ms")
    @classmethod
    def _thresholds(cls, value: dict[str, float]) -> dict[str, float]:
        if any(not 0 < v <= 600_000 for v in value.values()):
            raise ValueError("thresholds must be above 0 and at most 600000 ms")
        return {**THRESHOLDS_MS, **value}

    @model_validator(mode="after")
    def _think(self) -> WebtierParams:
        if self.think_max_s < self.think_min_s:
            raise ValueError(f"think_max_s {self.think_max_s} is below think_min_s {self.think_min_s}")
        return self

    @property
    def persons(self) -> int:
        """Rows of the person table the data set holds (the application's generator sizes it so)."""
        return max(100, 4 * self.data_users)

    @property
    def events(self) -> int:
        return max(100, 2 * self.data_users)


SPEC = Spec(
    name="webtier",
    notebook="experiments/webtier.ipynb",
    params_model=WebtierParams,
    profiles={
        "quick": {
            "users": [20, 60],
            "data_users": 200,
            "ramp_up_s": 2,
            "steady_s": 8,
            "ramp_down_s": 0,
            "peak_max_users": 480,
        },
        "standard": {
            "users": [50, 150, 400, 800],
            "data_users": 1500,
            "ramp_up_s": 30,
            "steady_s": 120,
            "peak_max_users": 6400,
            "peak_resolution_pct": 10.0,
        },
        "paper": {"users": [1500], "data_users": 1500, "ramp_up_s": 300, "steady_s": 1800, "ramp_down_s": 300},
    },
    default_envs=("native", "docker-host-volume"),
    schema=Schema(
        workloads={
            "cloudstone": WorkloadSchema(
                sweep="users",
                series=("operation", "instance"),  # `instance` only where scaled out
                # the point as a whole: every operation together (Locust's Aggregated row)
                headline={"operation": "Aggregated"},
                closed_loop=ClosedLoop(
                    "throughput", "latency_mean", outstanding="users", think=("think_min_s", "think_max_s")
                ),
            )
        },
        figures=(
            FigureSpec("webtier-cloudstone-fig2-3", "webtier.latency_figures"),
            FigureSpec("webtier-cloudstone-fig4-5", "webtier.scaleout_figures", requires=("instances",)),
        ),
        tools=("nginx", "php8.2-fpm", "mariadb-server"),
        client_tools=(),
        claims=(
            "webtier_vm_slightly_above_native",
            "webtier_docker_in_vm_no_overhead",
            "webtier_two_vms_slightly_higher",
        ),
    ),
)
