"""Parsers of the network and block tools, on real outputs captured on loopback and /var/tmp."""

from __future__ import annotations

import pytest

from kitlib.core.errors import ParseError
from kitlib.measure import parsers

from ..conftest import DATA


def values(tool: str, name: str) -> dict:
    return {
        (m.metric, m.dims.get("percentile"), m.dims.get("direction")): m.value
        for m in parsers.parse_file(tool, DATA / tool / name)
    }


def test_nuttcp_both_formats():
    parse = values("nuttcp", "nuttcp-t-parse.txt")
    assert parse[("throughput", None, None)] == pytest.approx(19.0351354)
    assert (parse[("cpu_tx", None, None)], parse[("cpu_rx", None, None)]) == (37, 59)
    human = values("nuttcp", "nuttcp-t-human.txt")
    assert human[("throughput", None, None)] == pytest.approx(17.8113153)
    assert human[("retransmits", None, None)] == 0


def test_iperf3_json_and_its_error():
    found = values("iperf3", "iperf3-tcp.json")
    assert found[("throughput", None, None)] == pytest.approx(17.423032238373657)
    assert found[("retransmits", None, None)] == 2
    with pytest.raises(ParseError, match="iperf3 failed: unable to connect to server: Connection refused"):
        parsers.parse_file("iperf3", DATA / "iperf3" / "iperf3-refused.json")


def test_sockperf_full_and_half_round_trips():
    full = parsers.parse_file("sockperf", DATA / "sockperf" / "sockperf-tcp-fullrtt.txt")
    by = {(m.metric, m.dims.get("percentile")): m for m in full}
    assert by[("rtt_mean", None)].value == pytest.approx(16.990)
    assert by[("rtt_mean", None)].dims["rtt_from"] == "sockperf --full-rtt"
    assert by[("rtt_percentile", 99.0)].value == pytest.approx(37.796)
    assert by[("transactions", None)].value == 91091
    half = {
        (m.metric, m.dims.get("percentile")): m
        for m in parsers.parse_file("sockperf", DATA / "sockperf" / "sockperf-tcp-halfrtt.txt")
    }
    assert half[("rtt_mean", None)].value == pytest.approx(2 * 8.850)
    assert half[("rtt_mean", None)].dims["rtt_from"] == "2 x sockperf latency"


def test_netperf_omni_and_classic():
    omni = values("netperf", "netperf-tcp-rr-omni.txt")
    assert omni[("rtt_mean", None, None)] == pytest.approx(17.31)
    assert omni[("rtt_percentile", 99.0, None)] == 29
    assert omni[("transaction_rate", None, None)] == pytest.approx(57607.79)
    classic = values("netperf", "netperf-udp-rr-classic.txt")
    assert classic[("rtt_mean", None, None)] == pytest.approx(1e6 / 69148.40)


def test_fio_json():
    found = values("fio", "fio-randread.json")
    assert found[("iops", None, "read")] == pytest.approx(56293.353323)
    assert found[("bandwidth", None, "read")] == pytest.approx(230.577575)
    assert found[("clat_mean", None, "read")] == pytest.approx(277.522910443)
    assert found[("clat_percentile", 1.0, "read")] == pytest.approx(197.632)
    mixed = values("fio", "fio-randrw.json")
    assert {d for (_, _, d) in mixed} == {"read", "write"}


@pytest.mark.parametrize(
    ("tool", "name"),
    [
        ("nuttcp", "nuttcp-t-parse.txt"),
        ("iperf3", "iperf3-tcp.json"),
        ("sockperf", "sockperf-tcp-fullrtt.txt"),
        ("netperf", "netperf-tcp-rr-omni.txt"),
        ("fio", "fio-randread.json"),
    ],
)
def test_truncated_and_garbage_raise(tool, name, tmp_path):
    text = (DATA / tool / name).read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(text[: len(text) // 3] if tool != "nuttcp" else "nuttcp-t: v8.2.2: socket\n")
    with pytest.raises(ParseError, match=tool):
        parsers.parse_file(tool, cut)
    junk = tmp_path / "junk.txt"
    junk.write_text("Segmentation fault\n")
    with pytest.raises(ParseError, match=f"{tool}.*junk.txt"):
        parsers.parse_file(tool, junk)
