"""The reference numbers: every row complete, quoted, in a known unit, and findable in its source."""

from __future__ import annotations

from pathlib import Path

from kitlib import reference

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


def test_every_row_is_complete_and_quoted():
    frame = reference.load()
    assert list(frame.columns) == reference.COLUMNS
    assert len(frame) > 90
    assert (frame["quote"].str.len() > 5).all()
    assert set(frame["unit"]) <= reference.UNITS
    assert frame["study"].nunique() == 4


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
