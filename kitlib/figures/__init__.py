"""Figures, one module per experiment (records DataFrame in, matplotlib Figure out), on one style
(`style`: colours per environment, error bars = standard deviation, emulation dashed); `save`
writes PNG and PDF."""

from kitlib.figures import (
    latency,
    memory,
    mysql,
    net_block,
    placement,
    redis,
    scaleout,
    scaleout_oltp,
    startup,
    style,
)
from kitlib.figures.style import save

__all__ = [
    "latency",
    "memory",
    "mysql",
    "net_block",
    "placement",
    "redis",
    "save",
    "scaleout",
    "scaleout_oltp",
    "startup",
    "style",
]
