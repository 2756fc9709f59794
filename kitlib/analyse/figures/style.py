"""The figures' common style and helpers: colours per environment, mean ± sd sweeps, step CDFs,
grouped bars, readable log ticks, and saving (PNG + PDF). Each experiment's figures are in the
module of its name beside this one: a records DataFrame in, a matplotlib Figure out.

Error bars are the standard deviation across repetitions, as in the paper's figures, unless a figure
says otherwise (every figure names its error bars, `hosts.stamp`); a point of one run has none, never a
zero bar. Labels that are not hardware virtualization (`qemu-tcg`) are drawn dashed and named as emulated
so no one reads them as KVM.
"""

from __future__ import annotations

from pathlib import Path

from kitlib.core import paths

#: A fixed colour per environment, so every figure of the kit reads the same way.
ENV_COLOURS = {
    "native": "#222222",
    "docker-host-volume": "#1f77b4",
    "docker-host-overlay": "#17becf",
    "docker-nat-volume": "#ff7f0e",
    "docker-nat-overlay": "#d62728",
    "kvm": "#2ca02c",
    "kvm-tuned": "#98df8a",
    "qemu-tcg": "#9467bd",
    "lxc": "#8c564b",
    "nspawn": "#c49c94",
    "podman-host-volume": "#393b79",
    "podman-host-overlay": "#6b6ecf",
    "podman-nat-volume": "#8c6d31",
    "podman-nat-overlay": "#e7ba52",
    "podman-rootless-host-volume": "#637939",
    "podman-rootless-nat-volume": "#b5cf6b",
    "podman-rootless-nat-overlay": "#cedb9c",
    "docker-in-kvm": "#bcbd22",
    "docker-in-qemu-tcg": "#e377c2",
}
#: a Docker label under another OCI runtime (`+runtime=NAME`) takes its runtime's colour and marker,
#: so `docker-host-volume` and `docker-host-volume+runtime=runsc` are told apart in one figure
RUNTIME_STYLES = {
    "runc": ("#1f77b4", "D"),
    "crun": ("#7b4173", "s"),
    "runsc": ("#843c39", "^"),
    "runsc-hostinet": ("#d6616b", "v"),
}


#: the studies the figures reproduce, by the short name their figure files carry
STUDIES = {
    "felter": "Felter et al. 2014",
    "closer-look": "Latency Impact of Docker Containers: A Closer Look",
    "vroom": "VMware VROOM! blog",
    "cloud-containers": "A Performance Study of Containers in Cloud Environment",
}


def env_label(env: str) -> str:
    """An environment's name in a legend: an emulator says it is one."""
    return f"{env} (emulated, not KVM)" if "qemu-tcg" in env.split("+")[0] else env


def env_style(env: str) -> dict:
    """Colour, line and marker of an environment's series (emulation dashed)."""
    base, *options = env.split("+")
    runtime = next((o.split("=", 1)[1] for o in options if o.startswith("runtime=")), None)
    colour, marker = (
        RUNTIME_STYLES.get(runtime, (ENV_COLOURS.get(base), "P")) if runtime else (ENV_COLOURS.get(base), "o")
    )
    return {"color": colour, "linestyle": "--" if "qemu-tcg" in base else "-", "marker": marker}


def mean_std(df, x: str, metric: str, **filters):
    """Mean and standard deviation of `metric` per env and x, after filtering columns by equality."""
    rows = df[df["metric"] == metric]
    for column, value in filters.items():
        if column in rows.columns:
            rows = rows[rows[column] == value]
    return rows.groupby(["env", x])["value"].agg(["mean", "std", "count"]).reset_index()


def sweep_axes(ax, df, x: str, metric: str, ylabel: str, *, scale: float = 1.0, **filters) -> None:
    """One line per environment of `metric` against `x`, with standard-deviation error bars."""
    table = mean_std(df, x, metric, **filters)
    for env in env_order(table):
        rows = table[table["env"] == env]
        ax.errorbar(
            rows[x], rows["mean"] * scale, yerr=rows["std"] * scale, label=env_label(env), capsize=3, **env_style(env)
        )
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)


def readable_log_ticks(axis) -> None:
    """Plain numbers at 1-2-5 steps on a log axis (10, 20, 50, 100, … not 10^1 with crowded minor labels)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def unit_label(unit: str) -> str:
    """Units as a reader expects them: µs, never `us` (records keep the ASCII unit)."""
    return {"us": "µs", "usec": "µs"}.get(str(unit), str(unit))


def step_cdf(ax, curve, env: str, **kwargs) -> None:
    """A CDF from percentiles (index: percentile 0–100, values: latency) drawn as steps, never joined by
    straight lines that would invent latencies between two recorded points."""
    style = {**env_style(env), "marker": None, **kwargs}
    ax.step(curve.values, curve.index / 100.0, where="post", label=env_label(env), **style)


def save(fig, name: str, directory: str | Path | None = None) -> list[Path]:
    """Write the figure as PNG and PDF; return the paths."""
    folder = Path(directory) if directory else paths.figures_root()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in ("png", "pdf"):
        path = folder / f"{name}.{suffix}"
        fig.savefig(path, dpi=150)
        written.append(path)
    return written


def legend(ax, **kwargs) -> None:
    """A legend where the axes hold labelled artists (an empty panel says so instead of warning)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)
    else:
        ax.text(0.5, 0.5, "no records", transform=ax.transAxes, ha="center", va="center", color="grey")


def shared_legend(fig, axes, ncol: int = 4) -> None:
    """One legend under the panels, which draw the same environments in the same colours: with more
    than a few environments a legend inside each panel covers its bars and lines."""
    handles: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if handles:
        fig.legend(
            list(handles.values()), list(handles), loc="outside lower center", ncol=min(len(handles), ncol), fontsize=8
        )


def env_order(rows) -> list:
    """Environments in the kit's fixed order (native first; a label with options beside its base),
    unknown labels last."""
    known = list(ENV_COLOURS)

    def position(env: str) -> tuple[int, str]:
        base = env.split("+")[0]
        return (known.index(base) if base in known else 99, env)

    return sorted(rows["env"].unique(), key=position)


def grouped_bars(ax, rows, group: str, groups: list[str], ylabel: str, values: str | None = None) -> None:
    """Bars of mean ± sd per environment within each group (kernel, direction, protocol, workload); a bar of
    one run has no error bar and says `n=1`. `values` (a format, `{:.2g} s`) writes each mean on its bar,
    so short bars beside a tall one can still be read on a linear axis."""
    import numpy as np

    envs = env_order(rows)
    width = 0.8 / max(len(envs), 1)
    for i, env in enumerate(envs):
        stats = rows[rows["env"] == env].groupby(group)["value"].agg(["mean", "std", "count"]).reindex(groups)
        x = np.arange(len(groups)) + i * width
        ax.bar(
            x,
            stats["mean"],
            width,
            yerr=stats["std"],
            capsize=3,
            label=env_label(env),
            color=env_style(env)["color"],
            hatch="//" if "qemu-tcg" in env else None,  # emulation, never to be read as KVM
        )
        for position, mean, sd, count in zip(x, stats["mean"], stats["std"], stats["count"], strict=True):
            words = [values.format(mean)] if values and mean == mean else []
            words += ["n=1"] if count == 1 else []
            if words:
                top = mean + (sd if sd == sd else 0)
                ax.annotate(
                    "\n".join(words),
                    (position, top),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    fontsize=6,
                )
    ax.set_xticks(np.arange(len(groups)) + width * (len(envs) - 1) / 2, groups)
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", alpha=0.3)
    legend(ax, fontsize=7)
