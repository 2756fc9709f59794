"""Placement studies: seed 003's presets, NUMA placement reported as not applicable on one node,
and seed 003's claims evaluated on real runs of lxc and Docker."""

from __future__ import annotations

import pytest

import kitlib
from kitlib.core.errors import PlanError


def test_a_preset_replaces_the_profile_and_explicit_values_replace_the_preset():
    plan = kitlib.plan("block", preset="seed003-fio")
    assert plan.preset == "seed003-fio"
    assert plan.params.iodepth == 16 and plan.params.numjobs == 8 and plan.params.file_mb == 1024
    assert plan.params.workloads == ["rand_read", "rand_write"]
    assert plan.params.runtime == kitlib.plan("block").params.runtime, "the profile still sets the rest"
    assert kitlib.plan("block", preset="seed003-fio", file_mb=64).params.file_mb == 64
    assert kitlib.plan("net", preset="seed003-rr").params.workloads == ["rr"]


def test_an_unknown_preset_names_the_known_ones():
    with pytest.raises(PlanError, match="unknown preset 'seed003'; known presets: seed003-fio"):
        kitlib.plan("block", preset="seed003")
    with pytest.raises(PlanError, match="known presets: none"):
        kitlib.plan("cpu", preset="seed003-fio")
