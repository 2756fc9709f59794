"""The forest plot of one pooled claim part: each host on its own row with its own interval, the
random-effects estimate as a diamond under them, the prediction interval for the next machine as a
bar through it, and the claim's band shaded.

It is the one figure with several machines in it, and it never mixes them: every host keeps its own
row and interval, as its own verdict made them; only the diamond is computed across them, and says so.
"""

from __future__ import annotations

import math

from kitlib.analyse.pooled import METHOD_TEXT, PooledPart

BAND_COLOUR = "#2ca02c"


def forest(part: PooledPart, labels: dict[str, str] | None = None):
    """A Figure of `part` (see the module's description); `labels` names the hosts (default: their ids)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

    rows = part.host_rows()
    k = len(rows)
    fig, ax = plt.subplots(figsize=(8.0, 1.6 + 0.45 * (k + 2)))
    names = [(labels or {}).get(h, h) for h in rows["host"]]
    ys = list(range(k + 1, 1, -1))
    for y, row in zip(ys, rows.itertuples(), strict=True):
        ax.plot([row.ci_low, row.ci_high], [y, y], color="#222222", linewidth=1.5)
        ax.plot([row.effect], [y], marker="s", color="#222222", markersize=6)
    if math.isfinite(part.pooled):
        low, high = part.ci
        ax.fill([low, part.pooled, high, part.pooled], [0.5, 0.75, 0.5, 0.25], color="#1f77b4", label="pooled (95% CI)")
        if all(math.isfinite(v) for v in part.prediction):
            ax.plot(part.prediction, [0.5, 0.5], color="#1f77b4", linewidth=1, linestyle=":", label="prediction (95%)")
    finite = [v for v in (*rows["ci_low"], *rows["ci_high"], *part.ci, *part.prediction) if math.isfinite(v)]
    edges = [e for e in (part.band.low, part.band.high) if math.isfinite(e)]
    lo, hi = min(finite + edges), max(finite + edges)
    if part.scale == "ratio" and lo > 0:
        ax.set_xscale("log")  # a ratio's intervals are symmetric on logarithms; the ticks stay plain numbers
        ax.xaxis.set_major_locator(MaxNLocator(7))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        lo, hi = lo / 1.05, hi * 1.05
    else:
        pad = (hi - lo) * 0.05 or 1.0
        lo, hi = lo - pad, hi + pad
    ax.axvspan(max(part.band.low, lo), min(part.band.high, hi), color=BAND_COLOUR, alpha=0.12, label="claim's band")
    ax.set_xlim(lo, hi)
    ax.set_yticks([*ys, 0.5], [*names, "random effects"])
    ax.set_ylim(0, k + 1.8)
    ax.set_xlabel({"ratio": "ratio", "difference": "difference", "level": "level"}.get(part.scale, part.scale))
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    tau = f"τ² {part.tau2:.3g}, I² {100 * part.i2:.0f}%" if math.isfinite(part.tau2) else "not pooled"
    fig.suptitle(
        f"{part.claim}: {part.subject}\n{k} hosts; {tau}; on average: {part.on_average}; in general: "
        f"{part.in_general}\n{METHOD_TEXT}; bars: each host's own interval",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


__all__ = ["forest"]
