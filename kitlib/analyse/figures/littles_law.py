"""Little's law drawn per host: X·R ÷ N for every closed-loop point and run, one panel per experiment and
workload, one colour per kind of environment (the kit's fixed colours; a resource limit a label carries,
such as the quota of a sweep, makes the panel's own points, not a series of its own, while an OCI runtime
or a user-mode network is another mechanism and keeps its own colour) and one legend outside the panels,
so no series hides behind it."""

from __future__ import annotations

import math

import pandas as pd

from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import env_label, env_order, env_style

#: options that set a resource limit (a sweep's points) or repeat a series (an A/A replica), not another
#: mechanism
SAME_MECHANISM_OPTIONS = ("shares", "quota", "period", "cpus", "mem", "numa", "replica")


def series_kind(env: str) -> str:
    """The series a label's points join: the label without its resource limits and replica
    (`docker-host-volume+period10000+quota2000` joins `docker-host-volume`; `+runtime=crun` stays apart)."""
    base, *options = env.split("+")
    return "+".join([base, *(o for o in options if not o.startswith(SAME_MECHANISM_OPTIONS))])


def figures(table: pd.DataFrame, records: pd.DataFrame, tolerance: float) -> dict[str, object]:
    """{host: Figure} of `littles_law.check`'s table: one figure per machine."""
    if table.empty:
        return {}
    table = table.assign(host=table["host"].astype(str)) if "host" in table.columns else table.assign(host="unknown")
    records = hosts.with_hosts(records)
    return {
        host: figure(part, records[records["host"].astype(str) == host], tolerance)
        for host, part in table.groupby("host", sort=True)
    }


def figure(table: pd.DataFrame, records: pd.DataFrame, tolerance: float):
    """One host's points: X·R ÷ N against N per experiment and workload, the ±tolerance band shaded."""
    import matplotlib.pyplot as plt

    table = table.assign(kind=table["env"].astype(str).map(series_kind))
    panels = list(table.groupby(["experiment", "workload"], sort=True))
    columns = min(3, len(panels))
    rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(
        rows, columns, figsize=(4.2 * columns + 2.2, 3.4 * rows), constrained_layout=True, squeeze=False
    )
    handles: dict[str, object] = {}
    for ax, ((experiment, workload), part) in zip(axes.flat, panels, strict=False):
        for env in env_order(part.assign(env=part["kind"])):
            own = part[part["kind"] == env]
            style = env_style(env)
            handles[env] = ax.scatter(
                own["N"],
                own["XR"] / own["N"],
                s=16,
                color=style["color"],
                marker="s" if "qemu" in env else style["marker"],
            )
        ax.axhline(1.0, color="grey", linestyle=":", linewidth=1)
        ax.axhspan(1 - tolerance, 1 + tolerance, color="grey", alpha=0.12)
        ticks = sorted(part["N"].unique())
        if len(ticks) > 1:
            ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.set_title(f"{experiment} / {workload}", fontsize=9)
        ax.set_xlabel("outstanding requests N")
        ax.set_ylabel("X·R ÷ N")
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    ordered = [e for e in env_order(table.assign(env=table["kind"])) if e in handles]
    fig.legend([handles[e] for e in ordered], [env_label(e) for e in ordered], loc="outside right upper", fontsize=8)
    fig.suptitle(f"Little's law: X·R ÷ N per run (shaded: ±{tolerance:.0%})")
    hosts.stamp(fig, records, "no error bars: one point per run", str(table["host"].iloc[0]))
    return fig
