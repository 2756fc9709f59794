"""The system-container environment: the options its label may carry."""

from __future__ import annotations

import pytest

from kitlib.core.errors import PlanError
from kitlib.measure import environments


def test_lxc_refuses_options_it_cannot_honour():
    assert environments.parse_label("lxc+cpus1").options == {"cpus": "1"}
    with pytest.raises(PlanError, match="do not apply to lxc"):
        environments.parse_label("lxc+quota5000")
    with pytest.raises(PlanError, match="do not apply to vm"):
        environments.parse_label("qemu-tcg+shares512")
