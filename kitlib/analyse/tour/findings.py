"""What each chapter says about its records, computed from them: a chapter's sentences hold for whichever
records it shows (data/sample today, a regenerated sample tomorrow, a student's own results).

Each function takes one machine's records and returns Markdown. A difference is never stated from a point
estimate: each comparison carries its 95% interval (Welch's t on the logarithms, `stats.compare_samples`)
and at least 3 runs a side, and the words follow the interval.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kitlib.analyse import littles_law, replicas
from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import env_order
from kitlib.analyse.tour import points
from kitlib.core import latency_analysis, stats
from kitlib.specs.labels import is_emulated

MIN_RUNS = 3
#: the paper's repetitions of each point
PAPER_RUNS = 10
#: a run whose value is this many times the median of its configuration's runs is named as an outlier
OUTLIER_FACTOR = 3.0
#: the p99 a quota may reach, as a multiple of the unthrottled p99, and still count as not throttled
KNEE_FACTOR = 2.0


# -- shared wording ------------------------------------------------------------------------------------
def interval(result: stats.Comparison, digits: int = 2) -> str:
    return f"{result.ratio:.{digits}f} [{result.ci_low:.{digits}f}, {result.ci_high:.{digits}f}]"


def reading(result: stats.Comparison, baseline: str = "native") -> str:
    """What an interval allows one to say, in words that follow it."""
    if result.verdict.startswith("not comparable"):
        return result.verdict
    if min(result.n, result.n_baseline) < MIN_RUNS:
        return f"too few runs to say anything ({result.n} and {result.n_baseline}; at least {MIN_RUNS} a side)"
    if result.ci_low > 1:
        return f"the whole interval lies above 1: higher than {baseline} on this host"
    if result.ci_high < 1:
        return f"the whole interval lies below 1: lower than {baseline} on this host"
    return f"the interval holds 1: these runs cannot tell it from {baseline}"


def spread(values: pd.Series) -> str:
    """How much runs vary: the standard deviation as a share of the mean."""
    values = pd.Series(values, dtype=float)
    if len(values) < 2 or values.mean() == 0:
        return "one run, no spread"
    return f"runs vary by {values.std() / abs(values.mean()):.0%} of their mean"


def connections(count: float) -> str:
    return f"{count:g} connection{'' if count == 1 else 's'}"


def _too_few(result: stats.Comparison) -> bool:
    return min(result.n, result.n_baseline) < MIN_RUNS


def _holds_one(result: stats.Comparison) -> bool:
    return result.ci_low <= 1 <= result.ci_high


def _machine(df: pd.DataFrame) -> str:
    """Why this host's numbers may differ from the paper's, in words its provenance supports."""
    reasons = []
    if len(df) and hosts.is_vm_guest(df, str(df["host"].iloc[0])):
        reasons.append("this host's `native` is itself a VM guest, not bare metal")
    peers = set(df["peer"].dropna().astype(str)) if "peer" in df.columns else set()
    if peers & {"netns", "loopback"}:
        reasons.append(
            "the client runs on the same machine (" + ", ".join(sorted(peers & {"netns", "loopback"})) + "), "
            "sharing its CPUs, where the paper's ran on a second machine"
        )
    return "; ".join(reasons)


# -- chapter 1: the path of a request ------------------------------------------------------------------
PAPER_HOST = "docker-host-volume"
PAPER_NAT = "docker-nat-volume"


def request_paths(df: pd.DataFrame) -> str:
    """Redis's mean latency at the fewest connections: each environment against native, and what the
    paper's two sentences (NAT adds latency; host networking is as fast as native) meet here."""
    latency = points.redis(df)
    latency = latency[latency["metric"] == "latency_mean"]
    if latency.empty or "native" not in set(latency["env"]):
        return "These records hold no Redis latency of `native`: there is nothing to compare here."
    clients = float(latency["clients"].min())
    point = latency[latency["clients"] == clients]
    native = point[point["env"] == "native"]["value"]
    lines = [
        f"Redis, {connections(clients)} with pipeline 10, mean latency (mean of the runs): native "
        f"{native.mean():.1f} µs ({spread(native)}). Each environment beside it, with its ratio to native (of "
        "geometric means, the model of the 95% interval that follows it):",
        "",
    ]
    results = {}
    others = [e for e in env_order(point) if e != "native"]
    if not others:
        return (
            lines[0].split(" Each environment")[0]
            + " No other environment of this machine in these records to set beside it."
        )
    for env in others:
        values = point[point["env"] == env]["value"]
        results[env] = result = stats.compare_samples(values, native)
        lines.append(
            f"- **{env}**: {values.mean():.1f} µs ({values.mean() - native.mean():+.1f} µs), ratio {interval(result)}, "
            f"{result.n} and {result.n_baseline} runs ({spread(values)}): {reading(result)}."
        )
    if PAPER_NAT in results:
        nat = results[PAPER_NAT]
        if _too_few(nat):
            agrees = f"are too few to say (at least {MIN_RUNS} a side)"
        else:
            agrees = "agree with it" if nat.ci_low > 1 else "cannot show it: their interval reaches 1 or below"
        lines += ["", f"The paper: NAT adds latency to every request. These runs {agrees}."]
    if PAPER_HOST in results and _too_few(results[PAPER_HOST]):
        lines += [
            "",
            "The paper: host networking is as fast as native. These runs are too few to say "
            f"(at least {MIN_RUNS} a side).",
        ]
    elif PAPER_HOST in results:
        host = results[PAPER_HOST]
        if _holds_one(host):
            said = (
                f"These records are consistent with it: the interval {interval(host)} holds 1.0. Its middle, "
                f"{host.ratio:.2f}, is one of the values the runs' noise allows, not a finding."
            )
        else:
            said = f"Here the interval {interval(host)} does not hold 1.0."
        why = _machine(point)
        runs = min(host.n, host.n_baseline)
        if runs < PAPER_RUNS:
            why += f"{'; and ' if why else ''}{runs} runs a side are few (the paper ran {PAPER_RUNS})"
        if why and (not _holds_one(host) or abs(host.ratio - 1) > 0.05):
            said += f" Why these records may differ from the paper's: {why}."
        lines += ["", f"The paper: host networking is as fast as native (a ratio of 1.0). {said}"]
    emulated = [e for e in results if is_emulated(e)]
    if emulated:
        lines.append("")
        lines.append(
            f"{', '.join(emulated)}: software emulation, not KVM: its cost is an emulator's, never a hypervisor's "
            "(hence the logarithmic latency axis)."
        )
    return "\n".join(lines)


# -- chapter 2: a CDF and its tail ---------------------------------------------------------------------
def _runs(rows: pd.DataFrame) -> pd.Series:
    """One value per run (repetition), in run order."""
    keys = [c for c in ("run_id", "repetition") if c in rows.columns]
    return rows.sort_values(keys).groupby(keys, sort=False)["value"].mean()


def outliers(values: pd.Series) -> pd.Series:
    """Runs at least OUTLIER_FACTOR times the median of the runs (only with 3 runs or more)."""
    if len(values) < MIN_RUNS:
        return values.iloc[0:0]
    median = float(values.median())
    return values[values >= OUTLIER_FACTOR * median] if median > 0 else values.iloc[0:0]


def _run_line(label: str, values: pd.Series, unit: str = "µs") -> str:
    line = (
        f"- **{label}**: {', '.join(f'{v:.0f}' for v in values)} {unit} in its {len(values)} runs: mean "
        f"{values.mean():.0f} {unit}, median {values.median():.0f} {unit}."
    )
    far = outliers(values)
    if len(far):
        runs = ", ".join(f"{v:.0f} {unit}" for v in far)
        line += (
            f" The mean is pulled up by {len(far)} run(s) of {runs}, at least {OUTLIER_FACTOR:g}× the median run: "
            "one disturbed run, or a tail that only some runs catch. The median of the runs is the steadier summary."
        )
    return line


def shares_tails(df: pd.DataFrame) -> str:
    """The latency study's p99 run by run (naming a run far from the others), and the medians of the CPU-shares
    container against native."""
    shares = df[df["workload"] == "shares"]
    p99 = shares[shares["metric"] == "latency_p99"]
    if p99.empty:
        return "These records hold no part `shares` of the latency study."
    lines = ["The latency study, CPU shares: the 99th percentile of each run.", ""]
    lines += [_run_line(env, _runs(p99[p99["env"] == env])) for env in env_order(p99)]
    medians = shares[shares["metric"] == "latency_median"]
    native = medians[medians["env"] == "native"]["value"]
    for env in [e for e in env_order(medians) if e != "native"]:
        result = stats.compare_samples(medians[medians["env"] == env]["value"], native)
        lines += [
            "",
            f"The medians of **{env}** against native: ratio {interval(result)}: {reading(result)}.",
        ]
    return "\n".join(lines)


def fio_tails(df: pd.DataFrame) -> str:
    """fio's random-read completion latency: the 99th percentile as a multiple of the median, per environment."""
    fio = df[(df["workload"] == "rand_read_latency") & (df["metric"] == "clat_percentile")]
    if fio.empty or not {50.0, 99.0} <= set(fio["percentile"]):
        return "These records hold no fio latency job with its 50th and 99th percentiles."
    lines = [
        "fio random reads: the 99th percentile of completion latency as a multiple of the median (mean of the runs):",
        "",
    ]
    for env in env_order(fio):
        by = fio[fio["env"] == env].groupby("percentile")["value"].mean()
        lines.append(f"- **{env}**: p50 {by[50.0]:.0f} µs, p99 {by[99.0]:.0f} µs: ×{by[99.0] / by[50.0]:.2f}")
    return "\n".join(lines)


# -- chapter 3: Little's law ---------------------------------------------------------------------------
CLOSED_LOOP_SERVERS = ("redis", "mysql")
#: a gap between X·R and N smaller than this is agreement, not a shape to read
AGREEMENT = 0.02
#: A/A pairs listed before the rest are counted
NOISE_LINES = 8


def closed_loops(table: pd.DataFrame) -> list[str]:
    """The experiments of a `littles_law.check` table a chapter reads: the paper's closed-loop servers (Redis,
    MySQL) where the records hold them, else every closed loop they hold (a student's request-response runs)."""
    present = list(dict.fromkeys(table["experiment"])) if not table.empty else []
    servers = [e for e in CLOSED_LOOP_SERVERS if e in present]
    return servers or sorted(present)


def littles_law_points(df: pd.DataFrame) -> pd.DataFrame:
    """Per closed-loop experiment (`closed_loops`), environment and N: X·R over the runs, how far below or
    above N it lies (mean, min and max over the runs), and how many runs are flagged."""
    table = littles_law.check(df)
    if table.empty:
        return table
    table = table[table["experiment"].isin(closed_loops(table))]
    grouped = table.groupby(["experiment", "env", "N"])
    summary = grouped.agg(
        runs=("XR", "size"),
        XR=("XR", "mean"),
        error_mean=("relative_error", "mean"),
        error_min=("relative_error", "min"),
        error_max=("relative_error", "max"),
        flagged=("flagged", "sum"),
    )
    return summary.reset_index()


def littles_law_shape(df: pd.DataFrame, experiment: str = "redis") -> str:
    """How X·R departs from N across N: the same at every N, or growing with N (requests queued in the
    client grow with the connections; a constant shortfall is not queueing)."""
    table = littles_law_points(df)
    table = table[table["experiment"] == experiment] if not table.empty else table
    if table.empty:
        return f"These records hold no {experiment} points to check against Little's law."
    by_n = table.groupby("N")["error_mean"].mean()
    low, high = float(table["error_mean"].min()), float(table["error_mean"].max())
    side = "below" if high < 0 else "above" if low > 0 else "around"
    near, far = sorted([abs(low), abs(high)]) if side != "around" else (low, high)
    counts = ", ".join(f"{n:g}" for n in by_n.index)
    lines = [
        f"{experiment}: X·R lies between {near:.1%} and {far:.1%} {side} N (mean of the runs per environment) "
        f"at N = {counts}, "
        f"in {table['env'].nunique()} environment(s); {int(table['flagged'].sum())} of {int(table['runs'].sum())} "
        f"runs are off by more than {littles_law.TOLERANCE:.0%}."
    ]
    if max(abs(low), abs(high)) < AGREEMENT:
        lines.append(f"Within {AGREEMENT:.0%} at every N: the latency timer and the throughput clock agree.")
    elif len(by_n) >= 2:
        first, last = abs(float(by_n.iloc[0])), abs(float(by_n.iloc[-1]))
        if last - first > 0.05:
            lines.append(
                f"The gap grows with N (from {first:.0%} at N = {by_n.index[0]:g} to {last:.0%} at "
                f"N = {by_n.index[-1]:g}): requests waiting in the client before the timer starts, more of them "
                "as connections grow."
            )
        elif first - last > 0.05:
            lines.append(f"The gap shrinks as N grows (from {first:.0%} to {last:.0%}).")
        else:
            lines.append(
                f"The gap is about the same at every N ({first:.0%} at N = {by_n.index[0]:g}, {last:.0%} at "
                f"N = {by_n.index[-1]:g}): not client-side queueing, which would grow with the connections, but a "
                "constant share of each request's time (or of the run's) that the latency timer and the throughput "
                "clock do not count alike."
            )
    return " ".join(lines)


def littles_law_findings(df: pd.DataFrame) -> str:
    """`littles_law_shape` of each closed loop the chapter reads, a paragraph each."""
    table = littles_law_points(df)
    if table.empty:
        return "These records hold no closed-loop points to check against Little's law."
    order = sorted(set(table["experiment"]), key=lambda e: (e not in CLOSED_LOOP_SERVERS, _server_rank(e), e))
    return "\n\n".join(littles_law_shape(df, e) for e in order)


def _server_rank(experiment: str) -> int:
    return CLOSED_LOOP_SERVERS.index(experiment) if experiment in CLOSED_LOOP_SERVERS else 0


# -- chapter 4: the CPU-quota cliff --------------------------------------------------------------------
def quota_spread(df: pd.DataFrame) -> pd.DataFrame:
    """Per quota, the p99 and the requests over 1 ms over the runs (mean, min, max, n): the spread to read
    the table's means against."""
    rows = df[(df["workload"] == "quota") & df["metric"].isin(["latency_p99", "slow_requests"])]
    if rows.empty:
        return pd.DataFrame()
    table = rows.groupby(["quota", "metric"])["value"].agg(["mean", "min", "max", "count"]).unstack("metric")
    table.columns = [f"{metric}_{what}" for what, metric in table.columns]
    return table.reset_index().sort_values("quota").reset_index(drop=True)


def predicted_knee(table: pd.DataFrame) -> float | None:
    """The quota (µs per period) the server needs unthrottled: its CPU use at the largest quota × period."""
    use = latency_analysis.unthrottled_utilization(table)
    return None if use is None else use / 100.0 * float(table["period"].iloc[-1])


def measured_knee(table: pd.DataFrame) -> float | None:
    """The smallest quota whose p99 stays within KNEE_FACTOR × the p99 at the largest quota."""
    if table.empty:
        return None
    table = table.sort_values("quota")
    ceiling = KNEE_FACTOR * float(table["latency_p99"].iloc[-1])
    return float(table[table["latency_p99"] <= ceiling]["quota"].min())


def quota_cliff(df: pd.DataFrame) -> str:
    """Where the server's measured CPU need predicts the cliff, which quotas the sweep has between that and
    the full period, and where the p99 measured turns up."""
    table = latency_analysis.quota_table(df)
    if table.empty:
        return "These records hold no quota sweep (the latency study's `quota` part). " + native_cpu_need(df)
    period, largest = float(table["period"].iloc[-1]), float(table["quota"].iloc[-1])
    use = float(latency_analysis.unthrottled_utilization(table))
    predicted = predicted_knee(table)
    measured = measured_knee(table)
    base = float(table["latency_p99"].iloc[-1])
    whole = "the whole period" if largest >= period else f"{largest:.0f} µs, less than the period"
    lines = [
        f"With the largest quota ({whole}, {period:.0f} µs) the server used {use:.0f}% of a CPU and its p99 was "
        f"{base:.0f} µs. So a quota below about {predicted:.0f} µs per {period:.0f} µs should throttle it: that is "
        "the predicted knee (the dotted line)."
    ]
    between = table[(table["quota"] > predicted) & (table["quota"] < largest)]
    if between.empty:
        lines.append(
            f"The sweep has no quota between {predicted:.0f} µs and {largest:.0f} µs, so where the p99 turns up "
            "cannot be seen in these records: measure the quota part again with quotas in between "
            "(`-p quotas '[…]'`)."
        )
    else:
        pairs = zip(between["quota"], between["latency_p99"], strict=True)
        listed = ", ".join(f"{q:.0f} µs (p99 {p:.0f} µs)" for q, p in pairs)
        lines.append(f"Quotas between the knee and the largest: {listed}.")
    below = table[table["quota"] < predicted]
    if not below.empty:
        worst = below.iloc[0]
        lines.append(
            f"Below the knee the tail grows: at {worst['quota']:.0f} µs the p99 is {worst['latency_p99']:.0f} µs "
            f"(×{worst['latency_p99'] / base:.0f}) and {worst['slow_requests']:.0f} requests took over 1 ms."
        )
    if measured is not None:
        where = (
            "the largest quota itself: no smaller quota kept the tail"
            if measured >= largest
            else f"{measured:.0f} µs, {'above' if measured > predicted else 'below'} the predicted {predicted:.0f} µs"
        )
        lines.append(f"The smallest quota whose p99 stays within {KNEE_FACTOR:g}× the unthrottled p99: {where}.")
    return " ".join(lines)


def native_cpu_need(df: pd.DataFrame, period_us: float = 10_000) -> str:
    """Without a quota sweep (no Docker, no root): the knee predicted from the server's CPU use measured
    natively in the shares part, for a period of `period_us`."""
    use = points.rows(df, workload="shares", env="native", metric="server_cpu_utilization")["value"]
    if use.empty:
        return "Nor do they hold the server's CPU use measured natively (the part `shares`), to predict a knee from."
    return (
        f"Natively (the part `shares`, {len(use)} runs) the server used {use.mean():.0f}% of a CPU "
        f"({use.min():.0f}–{use.max():.0f}%): in a container with a period of {period_us:.0f} µs, a quota below "
        f"about {use.mean() / 100 * period_us:.0f} µs would throttle it. An estimate: an average over the runs, "
        "measured outside any container and quota."
    )


# -- chapter 5: ratios and intervals -------------------------------------------------------------------
def interval_lessons(table: pd.DataFrame) -> str:
    """From the ratio table (`points.redis_ratios`): how many intervals hold 1, the widest and narrowest,
    and the most different point, each with its verdict."""
    if table.empty:
        return "These records hold no Redis environment besides native to compare."
    holds = table[(table["low"] <= 1) & (table["high"] >= 1)]
    width = np.log(table["high"] / table["low"])
    widest, narrowest = table.loc[width.idxmax()], table.loc[width.idxmin()]
    apart = table.loc[(np.log(table["ratio"]).abs()).idxmax()]

    def point(row) -> str:
        return (
            f"{row['env']} at {connections(row['clients'])}: {row['ratio']:.2f} [{row['low']:.2f}, {row['high']:.2f}]"
        )

    lines = [
        f"{len(holds)} of {len(table)} intervals hold 1: at those points these runs cannot tell the environment "
        "from native.",
        f"The widest: {point(widest)}; the narrowest: {point(narrowest)}.",
        f"Furthest from 1: {point(apart)}, {apart['verdict']} (Welch's test on the logarithms, the same model "
        "as the interval).",
    ]
    emulated = sorted({e for e in table["env"] if is_emulated(e)})
    if emulated:
        lines.append(f"{', '.join(emulated)} is an emulator: its distance from 1 is an emulator's cost, not KVM's.")
    return " ".join(lines)


def noise_floor(df: pd.DataFrame) -> str:
    """The A/A control where the records hold one (`native+replica` beside `native`): how far from 1 the ratio
    of two series of one configuration may land, the floor every A/B effect of the run is read against."""
    table = replicas.aa_table(df)
    if table.empty:
        return (
            "These records hold no A/A pair (an environment measured twice in one run, e.g. `native` and "
            "`native+replica`), so the machine's noise floor is not measured here."
        )
    lines = ["A/A pairs: the same configuration measured twice in one run; its ratio differs from 1 only by noise.", ""]
    headline = table[~table["metric"].astype(str).str.endswith("percentile")]
    shown = (headline if not headline.empty else table).head(NOISE_LINES)
    for row in shown.itertuples():
        where = f", {row.config}" if row.config else ""
        lines.append(
            f"- **{row.env}** against {row.replicates}, {row.workload} {row.metric}{where}: ratio {row.ratio:.3f} "
            f"[{row.ci_low:.3f}, {row.ci_high:.3f}] (n = {row.n})"
        )
    if len(table) > len(shown):
        lines.append(f"- … and {len(table) - len(shown)} more (`replicas.aa_table(records)`)")
    widest = float(table["noise_pct"].max())
    lines += [
        "",
        f"The widest of all {len(table)} A/A intervals reaches ±{widest:.1f}%: an A/B effect smaller than that is "
        "within this machine's noise.",
    ]
    return "\n".join(lines)
