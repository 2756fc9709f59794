"""Network and block experiments: the CPU sampler and the plans' bounds."""

from __future__ import annotations

import time

import pytest

import kitlib
from kitlib.core.errors import PlanError
from kitlib.measure import cpu_sampler


def test_cpu_sampler_sees_a_busy_loop():
    with cpu_sampler.CpuSampler() as idle:
        time.sleep(0.5)
    with cpu_sampler.CpuSampler() as busy:
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            pass
    assert busy.utilization is not None and 0 < busy.utilization <= 100
    # one of the host's CPUs was busy the whole interval
    import os

    assert busy.utilization >= 100 / os.cpu_count() * 0.6
    assert idle.utilization is not None and idle.utilization >= 0


def test_bad_parameters():
    with pytest.raises(PlanError, match="rr_tool"):
        kitlib.plan("net", rr_tool="ping")
    with pytest.raises(PlanError, match="iodepth"):
        kitlib.plan("block", iodepth=0)
