"""Every claim and every finding not encoded carries its sentence verbatim from the seed texts, a band,
a rule and a kind; `kit claims --list` prints them as CSV."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from kitlib.analyse import claims
from kitlib.analyse.claims import unencoded
from kitlib.core import paths

#: the seed texts beside the project (../shared/seeds from its root)
SEEDS = paths.PROJECT_ROOT.parent / "shared" / "seeds"


def normalized(text: str) -> str:
    """Whitespace collapsed to one space: the only difference allowed between a quote and its seed (the
    texts break lines and double spaces where their PDF or web page did)."""
    return re.sub(r"\s+", " ", text).strip()


def seed_text(seed: str) -> str:
    found = sorted(SEEDS.glob(f"{seed}_*.txt"))
    assert len(found) == 1, f"seed {seed}: {found}"
    return normalized(found[0].read_text(encoding="utf-8"))


def test_every_claim_carries_its_sentence_band_rule_and_kind():
    for claim in claims.CLAIMS:
        assert claim.seed in {"001", "002", "003", "004"}, claim.name
        assert len(claim.quote) > 20 and claim.band and claim.rule, claim.name
        assert claim.kind in (claims.PAPER, claims.DERIVED), claim.name
    for finding in unencoded.FINDINGS:
        assert finding.seed in {"001", "002", "003", "004"} and len(finding.quote) > 10, finding.name
        assert finding.line.startswith("not encoded, because ")
    names = [c.name for c in claims.CLAIMS] + [f.name for f in unencoded.FINDINGS]
    assert len(names) == len(set(names))


def test_the_kits_own_derivations_are_marked_derived():
    kinds = {c.name: c.kind for c in claims.CLAIMS}
    for name in ("numa_pinning_helps_memory", "scaleout_docker_adds_little", "overlay_explains_lxc_gap"):
        assert kinds[name] == claims.DERIVED, name
    assert kinds["kvm_mysql_loss"] == claims.PAPER


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"the seed texts are not beside this checkout ({SEEDS})")
def test_every_quote_is_verbatim_in_its_seed():
    texts = {seed: seed_text(seed) for seed in ("001", "002", "003", "004")}
    quoted = [(c.name, c.seed, c.quote) for c in claims.CLAIMS]
    quoted += [(f.name, f.seed, f.quote) for f in unencoded.FINDINGS]
    missing = [name for name, seed, quote in quoted if normalized(quote) not in texts[seed]]
    assert missing == []


def test_kit_claims_list_prints_every_claim_and_every_finding_not_encoded(capsys):
    from kitlib import cli

    assert cli.main(["claims", "--list"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False)
    assert list(table.columns) == ["claim", "source", "quote", "band", "kind"]
    assert len(table) == len(claims.CLAIMS) + len(unencoded.FINDINGS)
    assert set(table["kind"]) == {"paper", "derived", "not encoded"}
    row = table.set_index("claim").loc["kvm_adds_rr_latency"]
    assert "an increase of 80%" in row["quote"] and "[1.6, 2]" in row["band"] and "rule:" in row["band"]
    assert row["source"].startswith("seed 001: Felter et al. 2014")
    skipped = table[table["kind"] == "not encoded"]
    assert skipped["band"].str.startswith("not encoded, because ").all()
