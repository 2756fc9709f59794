"""One host per picture: every figure draws the records of one machine, names it (and whether it is a VM
guest, so its `native` is not bare metal) and says what its error bars are.

Two machines' runs are never averaged into one bar or one point: `figures.draw` gives each host its own
file, the explorer each host its own panel, and a drawing function handed two hosts' records refuses.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pandas as pd

from kitlib.core import hostfacts, hostid
from kitlib.core.errors import KitError

#: error bars, as the figures' notes name them
SD = "error bars: standard deviation over runs (none where a point has n = 1)"
RANGE = "error bars: range (min–max) over trials"
CI95 = "error bars: 95% interval"
NO_BARS = "no error bars: each point is the mean over runs"


class FigureError(KitError):
    """Records a figure cannot draw as one picture (those of several machines)."""


def with_hosts(df: pd.DataFrame) -> pd.DataFrame:
    """Records with a `host` column: as recorded, else from their run folder's provenance, else unknown."""
    if "host" in df.columns and df["host"].notna().all():
        return df
    if "source" in df.columns:
        return hostfacts.with_host(df)
    return df.assign(host=df["host"].fillna(hostfacts.UNKNOWN_HOST) if "host" in df else hostfacts.UNKNOWN_HOST)


def hosts(df: pd.DataFrame) -> list[str]:
    """The machines these records were measured on, sorted."""
    return sorted(with_hosts(df)["host"].astype(str).unique()) if not df.empty else []


def by_host(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(host, its records) for every machine in the records."""
    df = with_hosts(df)
    return [(str(host), part) for host, part in df.groupby(df["host"].astype(str), sort=True)]


def host_of(df: pd.DataFrame, what: str = "a figure") -> str:
    """The one machine of these records; more than one is refused (a picture never pools machines)."""
    found = hosts(df)
    if len(found) > 1:
        raise FigureError(
            f"{what} draws the records of one host, these hold {len(found)} ({', '.join(found)}): "
            "draw each host's records (figures.draw and figures.render do)"
        )
    return found[0] if found else hostfacts.UNKNOWN_HOST


def is_vm_guest(df: pd.DataFrame, host: str) -> bool:
    return hostid.is_virtual_machine(hostfacts.facts_of(df, host))


def describe(df: pd.DataFrame, host: str | None = None) -> str:
    """`host 4a995c87670d — vm: AMD EPYC, 2 CPUs, 24 GiB, a VM guest (its native is not bare metal)`,
    with `legacy records` where the runs predate run order and host ids (they stay a host of their own)."""
    host = host or host_of(df)
    facts = hostfacts.facts_of(df, host)
    if not facts:
        line = f"host {host} (no provenance: the machine is not described)"
    elif facts.get("reference"):
        line = f"host {host}: published records of the study's authors (imported)"
    else:
        line = f"host {host} — {hostid.describe_host(facts)}"
        if hostid.is_virtual_machine(facts):
            line += " (its native is not bare metal)"
    if not facts.get("reference") and ("position" not in df.columns or df["position"].isna().all()):
        line += "; legacy records (no run order recorded)"
    return line


def stamp(fig, df: pd.DataFrame, bars: str, host: str | None = None) -> None:
    """The host and the meaning of the error bars under the figure's title."""
    import textwrap

    title = fig._suptitle.get_text() if fig._suptitle is not None else ""
    width = max(40, int(fig.get_figwidth() * 14))  # characters of 9-point text across the figure
    lines = [title, describe(df, host), bars]
    fig.suptitle("\n".join(textwrap.fill(line, width) for line in lines if line), fontsize=9)


#: what a figure of duet points says under its title (`kitlib.measure.run.duet`)
DUET_NOTE = (
    "duet points: each environment beside native at the same moment, on half the CPUs each; half-machine "
    "figures, to be read as ratios, not as the paper's absolute ones"
)


def one_design(df: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The records a figure draws and what it says of their design: duet points (half-machine, both sides
    at once) are never drawn beside points measured one at a time on the whole machine; where both are
    present the whole-machine ones are drawn and the duet points' count is said."""
    if "duet" not in df.columns or df["duet"].isna().all():
        return df, ""
    in_duet = df["duet"].notna()
    if in_duet.all():
        return df, DUET_NOTE
    return df[~in_duet], f"{int(in_duet.sum())} duet record(s) not drawn: half-machine points, read in the claims"


def one_host(bars: str) -> Callable:
    """A drawing function (records first, Figure out) that refuses records of several machines and writes
    the one machine, the design of its points and the meaning of its error bars on the figure."""

    def decorate(draw: Callable) -> Callable:
        @functools.wraps(draw)
        def drawn(df: pd.DataFrame, *args, **kwargs):
            host = host_of(df, f"{draw.__module__.rsplit('.', 1)[-1]}.{draw.__name__}")
            df, design = one_design(df)
            fig = draw(df, *args, **kwargs)
            if fig is not None:  # None: nothing of the figure's kind in these records
                stamp(fig, df, f"{bars}; {design}" if design else bars, host)
            return fig

        return drawn

    return decorate
