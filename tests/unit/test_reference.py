"""The reference numbers: every row complete, quoted, in a known unit, and findable in its source."""

from __future__ import annotations

from pathlib import Path

from kitlib.analyse import reference

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"


def test_every_row_is_complete_and_quoted():
    frame = reference.load()
    assert list(frame.columns) == reference.COLUMNS
    assert len(frame) > 90
    assert (frame["quote"].str.len() > 5).all()
    assert set(frame["unit"]) <= reference.UNITS
    assert frame["study"].nunique() == 4


def test_every_finding_maps_to_a_claim_or_says_why_not():
    from kitlib.analyse import claims

    frame = reference.load()
    names = {c.name for c in claims.CLAIMS}
    unmapped = [c for c in frame["claim"] if c not in names and not c.startswith(reference.NOT_ENCODED)]
    assert unmapped == []
    assert sorted(names - set(frame["claim"])) == []  # every claim has the reference row of its finding
    # the findings the claims must test, by their reference rows
    for name in (
        "kvm_pxz_loss",
        "kvm_mysql_loss",
        "nat_doubles_rr_latency",
        "nat_offset_vmware",
        "vm_offset_vmware",
        "docker_starts_under_a_second",
        "kvm_starts_slower_than_docker",
        "docker_rtt_vs_lxc",
    ):
        assert name in set(frame["claim"]), name
    assert len(reference.not_encoded(frame)) == frame["claim"].str.startswith(reference.NOT_ENCODED).sum()


def test_derived_values_say_how_they_follow_from_the_quote():
    frame = reference.load()
    derived = frame[frame["derivation"] != ""]
    assert derived["derivation"].str.startswith("derived: ").all()
    six = frame[(frame["workload"] == "rand_read") & (frame["env"] == "lxc")]
    assert "6.1" in six["derivation"].iloc[0]
    over_20 = frame[frame["quote"].str.contains("over 20%")]
    assert over_20["section"].tolist() == ["5"]


def test_the_numbers_the_readme_promises():
    frame = reference.load()
    seed3 = frame[frame["study"].str.startswith("A Performance Study") & (frame["workload"] == "stream")]
    assert {"Scale", "Add", "Copy", "Triad"} <= {q.split()[2] for q in seed3["quote"]}
    vmware_net = frame[
        frame["study"].str.startswith("VMware") & (frame["metric"] == "rtt_mean") & (frame["unit"] == "us")
    ]
    assert sorted(vmware_net["value"]) == [9.5, 15.0]


def test_key_numbers_of_the_ibm_report():
    frame = reference.ratios_to_native()
    felter = frame[frame["study"].str.startswith("Felter")]
    kvm_pxz = felter[(felter["workload"] == "pxz") & (felter["env"] == "kvm")]
    assert kvm_pxz["value"].tolist() == [0.78]
    assert "22% slower" in kvm_pxz["quote"].iloc[0]


def test_quotes_appear_in_the_sources_where_they_are_verbatim():
    """Quotes that are not table cells are the sources' own words."""
    if not SEEDS.exists():
        import pytest

        pytest.skip("the source texts are not beside this checkout")
    frame = reference.load()
    texts = {path.name: " ".join(path.read_text(errors="replace").split()) for path in SEEDS.glob("*.txt")}
    prose = frame[~frame["quote"].str.startswith(("Table", "Docker 1.25", "Docker-Machine 120"))]
    missing = []
    for _, row in prose.iterrows():
        text = texts[Path(row["source_file"]).name]
        if " ".join(row["quote"].split()) not in text:
            missing.append(row["quote"])
    assert missing == []
