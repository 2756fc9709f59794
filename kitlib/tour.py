"""The tour's logic (notebooks/tour/): the sample records, a diagram of a request's paths, and the
exercises, whose answers are computed from the records so that a student's answer can be checked.

Each exercise is a question, the function of the records that answers it, and a tolerance; a notebook
holds only the student's answers and calls `check(chapter, answers)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from kitlib import analysis, experiments, latency_analysis, littles_law, paths, stats
from kitlib.figures.style import env_order, env_style, readable_log_ticks

SAMPLE = "data/sample"


def sample() -> pd.DataFrame:
    """The records of data/sample's main host (real runs made by the kit, with provenance): records of
    two machines are never pooled, and the tour's lessons compare environments of one machine."""

    records = analysis.load([paths.PROJECT_ROOT / SAMPLE])
    main_host = records["host"].value_counts().idxmax()
    return records[records["host"] == main_host].reset_index(drop=True)


# -- a request's three paths ---------------------------------------------------------------------------
PATHS = {
    "native / Docker --net=host": ["client", "host NIC +\nTCP/IP stack", "server process"],
    "Docker NAT (bridge + -p)": [
        "client",
        "host TCP/IP stack",
        "iptables DNAT\n(conntrack)",
        "docker0 bridge",
        "veth pair",
        "container's netns\nTCP/IP stack",
        "server process",
    ],
    "VM (virtio-net)": [
        "client",
        "host TCP/IP stack",
        "tap device\n(+ forwarding)",
        "vhost-net / QEMU\nvirtio queues",
        "guest kernel\nTCP/IP stack",
        "server process",
    ],
}


def paths_diagram():
    """Boxes and arrows: what each environment puts between the client and the server (one lane each)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    fig, ax = plt.subplots(figsize=(12, 4.6), constrained_layout=True)
    colours = {
        "native / Docker --net=host": "#222222",
        "Docker NAT (bridge + -p)": "#ff7f0e",
        "VM (virtio-net)": "#2ca02c",
    }
    for lane, (name, hops) in enumerate(PATHS.items()):
        y = 2 - lane
        ax.text(-0.65, y, name, ha="right", va="center", fontsize=10, fontweight="bold", color=colours[name])
        step = 7.0 / max(len(hops) - 1, 1)
        for i, hop in enumerate(hops):
            x = i * step
            extra = hop not in ("client", "server process", "host NIC +\nTCP/IP stack", "host TCP/IP stack")
            ax.add_patch(
                FancyBboxPatch(
                    (x - 0.5, y - 0.28),
                    1.0,
                    0.56,
                    boxstyle="round,pad=0.02",
                    facecolor="#fde9d9" if extra else "#eeeeee",
                    edgecolor=colours[name],
                )
            )
            ax.text(x, y, hop, ha="center", va="center", fontsize=7)
            if i:
                ax.annotate("", (x - 0.52, y), (x - step + 0.52, y), arrowprops={"arrowstyle": "->"})
    ax.text(3.5, -0.75, "shaded: hops the environment adds to every request (and every response, in reverse)",
            ha="center", fontsize=8, color="grey")  # fmt: skip
    ax.set_xlim(-3.6, 7.7)
    ax.set_ylim(-1.0, 2.6)
    ax.axis("off")
    ax.set_title("The path of one request from the client to the server")
    return fig


# -- exercises -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Exercise:
    name: str
    question: str
    answer: Callable[[pd.DataFrame], object]
    tolerance: float = 0.05  # relative, for numbers; text answers must match exactly (case aside)
    hint: str = ""


def _mean(df: pd.DataFrame, **equal) -> float:
    rows = df
    for column, value in equal.items():
        rows = rows[rows[column] == value]
    if rows.empty:
        raise KeyError(f"no records with {equal}")
    return float(rows["value"].mean())


def _redis_points(df: pd.DataFrame) -> pd.DataFrame:
    """Redis's records that stand for a point (the SET+GET mix, as the experiment declares)."""
    return experiments.schema("redis").headline_rows(df[df["experiment"] == "redis"])


def _redis(df: pd.DataFrame, env: str, metric: str, clients: int) -> float:
    return _mean(_redis_points(df), env=env, metric=metric, clients=clients)


def _redis_values(df: pd.DataFrame, env: str, metric: str, clients: int) -> pd.Series:
    rows = _redis_points(df)
    return rows[(rows["env"] == env) & (rows["metric"] == metric) & (rows["clients"] == clients)]["value"]


def _quota_p99_near_unthrottled(df: pd.DataFrame) -> float:
    """The smallest quota whose p99 is at most twice the p99 with the largest quota (the server unthrottled)."""

    table = latency_analysis.quota_table(df).sort_values("quota")
    unthrottled = float(table["latency_p99"].iloc[-1])
    return float(table[table["latency_p99"] <= 2 * unthrottled]["quota"].min())


def _unthrottled(df: pd.DataFrame) -> float:
    from kitlib import latency_analysis

    return float(latency_analysis.unthrottled_utilization(latency_analysis.quota_table(df)))


def _tail_ratio(df: pd.DataFrame) -> float:
    rows = df[(df["workload"] == "rand_read_latency") & (df["metric"] == "clat_percentile") & (df["env"] == "native")]
    by = rows.groupby("percentile")["value"].mean()
    return float(by[99.0] / by[50.0])


def _xr(df: pd.DataFrame, env: str, clients: int) -> float:
    table = littles_law.check(df)
    rows = table[(table["experiment"] == "redis") & (table["env"] == env) & (table["clients"] == clients)]
    return float(rows["XR"].mean())


def _nat_verdict(df: pd.DataFrame) -> str:
    nat = _redis_values(df, "docker-nat-volume", "throughput", 48)
    native = _redis_values(df, "native", "throughput", 48)
    return stats.compare_samples(nat, native).verdict


EXERCISES: dict[str, list[Exercise]] = {
    "01": [
        Exercise(
            "nat_extra_us",
            "Redis, 1 connection (pipeline 10): how many µs does docker-nat-volume add to native's mean latency?",
            lambda df: _redis(df, "docker-nat-volume", "latency_mean", 1) - _redis(df, "native", "latency_mean", 1),
            0.10,
            "mean latency_mean of the runs, NAT minus native, op 'mix', clients 1",
        ),
        Exercise(
            "host_over_native",
            "Same point: the ratio docker-host-volume / native of the mean latency (host networking, no NAT)?",
            lambda df: _redis(df, "docker-host-volume", "latency_mean", 1) / _redis(df, "native", "latency_mean", 1),
            0.05,
        ),
    ],
    "02": [
        Exercise(
            "native_p99_us",
            "Latency study, CPU shares: native's 99th-percentile round trip (µs, mean of the runs)?",
            lambda df: _mean(df, workload="shares", env="native", metric="latency_p99"),
            0.02,
        ),
        Exercise(
            "fio_tail_ratio",
            "fio random read, native: how many times its median is the 99th percentile of completion latency?",
            _tail_ratio,
            0.05,
        ),
    ],
    "03": [
        Exercise(
            "outstanding_8",
            "Redis with 8 connections and pipeline 10: how many requests are outstanding (N)?",
            lambda df: 80.0,
            0.0,
        ),
        Exercise(
            "xr_native_8",
            "Native at 8 connections: throughput × mean latency (X·R, mean over the runs)?",
            lambda df: _xr(df, "native", 8),
            0.05,
            "littles_law.check(records) has the column XR",
        ),
    ],
    "04": [
        Exercise(
            "unthrottled_cpu_pct",
            "The server's CPU use without a tight quota (% of one CPU), as the latency analysis estimates it?",
            _unthrottled,
            0.05,
        ),
        Exercise(
            "quota_p99_near_unthrottled",
            "The smallest --cpu-quota (µs per 10 ms period) whose p99 stays within twice the p99 at the largest quota?",
            _quota_p99_near_unthrottled,
            0.0,
        ),
    ],
    "05": [
        Exercise(
            "nat_throughput_ratio",
            "Redis, 48 connections: docker-nat-volume's throughput as a ratio to native's (ratio of means)?",
            lambda df: float(
                _redis_values(df, "docker-nat-volume", "throughput", 48).mean()
                / _redis_values(df, "native", "throughput", 48).mean()
            ),
            0.02,
        ),
        Exercise(
            "nat_throughput_verdict",
            "Is that difference 'significant' or 'not significant' (Welch's test, 3 runs a side)?",
            _nat_verdict,
            hint="stats.compare_samples(nat_values, native_values).verdict",
        ),
    ],
}


def questions(chapter: str) -> None:
    """Print the chapter's exercises, each with the name its answer goes under."""
    for exercise in EXERCISES[chapter]:
        print(f"{exercise.name}: {exercise.question}")


def expected(chapter: str, df: pd.DataFrame | None = None) -> dict[str, object]:
    """The answers the records give (for a teacher, and for the tests)."""
    df = sample() if df is None else df
    return {e.name: e.answer(df) for e in EXERCISES[chapter]}


def _correct(given, truth, tolerance: float) -> bool:
    if isinstance(truth, str):
        return str(given).strip().lower() == truth.lower()
    try:
        given = float(given)
    except (TypeError, ValueError):
        return False
    return abs(given - truth) <= max(tolerance * abs(truth), 1e-9)


def check(chapter: str, answers: dict[str, object], df: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each answer against the records: correct, not yet (with a hint), or not answered."""
    df = sample() if df is None else df
    rows = []
    for exercise in EXERCISES[chapter]:
        given = answers.get(exercise.name)
        truth = exercise.answer(df)
        if given is None:
            verdict = "not answered"
        elif _correct(given, truth, exercise.tolerance):
            verdict = "correct"
        else:
            verdict = "not yet" + (f" (hint: {exercise.hint})" if exercise.hint else "")
        rows.append({"exercise": exercise.name, "your answer": given, "verdict": verdict})
    table = pd.DataFrame(rows)
    print(f"{(table['verdict'] == 'correct').sum()} of {len(table)} correct")
    return table


# -- figures of the chapters ---------------------------------------------------------------------------
def ratio_intervals(df: pd.DataFrame, metric: str = "throughput"):
    """Redis: each environment's ratio to native per connection count, with its 95% interval."""
    import matplotlib.pyplot as plt

    rows = _redis_points(df)
    rows = rows[rows["metric"] == metric]
    fig, ax = plt.subplots(figsize=(8, 4), constrained_layout=True)
    table = []
    for env in [e for e in env_order(rows) if e != "native"]:
        for clients in sorted(rows["clients"].unique()):
            mine = rows[(rows["env"] == env) & (rows["clients"] == clients)]["value"]
            native = rows[(rows["env"] == "native") & (rows["clients"] == clients)]["value"]
            result = stats.compare_samples(mine, native)
            table.append({"env": env, "clients": clients, "ratio": result.ratio, "low": result.ci_low,
                          "high": result.ci_high, "verdict": result.verdict})  # fmt: skip
        part = pd.DataFrame([t for t in table if t["env"] == env])
        ax.errorbar(part["clients"], part["ratio"], yerr=[part["ratio"] - part["low"], part["high"] - part["ratio"]],
                    capsize=3, label=env, **env_style(env))  # fmt: skip

    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log", base=2)
    clients = sorted(rows["clients"].unique())
    ax.set_xticks(clients, [f"{c:g}" for c in clients])
    ax.set_yscale("log")
    readable_log_ticks(ax.yaxis)
    ax.set_xlabel("client connections (pipeline 10)")
    ax.set_ylabel(f"{metric} / native (95% interval, log scale)")
    ax.set_title("Redis: ratio to native with its interval")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return fig, pd.DataFrame(table)
