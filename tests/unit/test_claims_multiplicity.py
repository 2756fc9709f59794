"""'Not reproduced' across a claim's parts at a family-wise error rate (Holm's step-down), on records
built here with a known truth: a part just outside its band at its own 95% but not after the
correction leaves the claim inconclusive; a part far outside still refutes it; 'reproduced' still
needs every part inside at its own level, with no correction."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from kitlib.analyse import analysis, claims
from kitlib.analyse.claims import core

from .test_claims import quota_rows, runs, shares, verdict

#: KVM against native at each of 8 thread counts; "more than 40% lower" is the band [0, 0.60]
THREADS = (1, 2, 4, 8, 16, 32, 64, 128)
#: inside the band by far at every level
HELD = 0.50
#: outside the band at its own 95% (n = 5, CV 2%: lower end 0.607) but not at 1 − 0.05/8 (0.595)
JUST_OUTSIDE = 0.6245
#: outside the band at any level a claim of 8 parts would use
FAR_OUTSIDE = 0.80


def mysql(ratios: dict[int, float], **extra) -> list[dict]:
    """Records of `kvm_mysql_loss`: native and KVM at each thread count, KVM at `ratios[threads]`."""
    rows = []
    for threads, ratio in ratios.items():
        rows += runs("mysql", "tps", "native", 100.0 * threads, threads=threads, **extra)
        rows += runs("mysql", "tps", "kvm", 100.0 * threads * ratio, threads=threads, **extra)
    return rows


def with_one(ratio: float) -> dict[int, float]:
    return {t: (ratio if t == 16 else HELD) for t in THREADS}


def test_the_part_just_outside_is_outside_at_its_own_level():
    alone = verdict("kvm_mysql_loss", mysql({16: JUST_OUTSIDE}))
    assert alone.status == claims.NOT_REPRODUCED
    assert alone.ci_low > 0.60 and "Holm" not in alone.reason  # one part: the rule is the interval's own


def test_a_part_just_outside_among_8_leaves_the_claim_inconclusive():
    found = verdict("kvm_mysql_loss", mysql(with_one(JUST_OUTSIDE)))
    assert found.status == claims.INCONCLUSIVE
    assert "(here k = 8)" in found.reason and "family-wise α ≤ 0.05" in found.reason
    part = next(p for p in found.reason.split("; ") if "at threads 16" in p)
    assert "lies entirely above the band" in part and "at its own level, but its 99.38% CI" in part
    assert "does not: not decided" in part
    assert found.needed is not None and found.needed > 5  # more runs would decide it


def test_a_part_far_outside_among_8_still_refutes_the_claim():
    found = verdict("kvm_mysql_loss", mysql(with_one(FAR_OUTSIDE)))
    assert found.status == claims.NOT_REPRODUCED
    assert found.ratio == pytest.approx(FAR_OUTSIDE)
    assert "99.38% CI" in found.reason and "lies outside it too" in found.reason


def test_reproduced_stays_the_intersection_of_the_parts_at_their_own_level():
    inside = verdict("kvm_mysql_loss", mysql(with_one(HELD)))
    assert inside.status == claims.REPRODUCED and "Holm" not in inside.reason
    # a part crossing the edge at its own level leaves the claim open, however many parts hold
    crossing = verdict("kvm_mysql_loss", mysql(with_one(0.60)))
    assert crossing.status == claims.INCONCLUSIVE


def test_holm_names_every_part_outside_after_the_first():
    """Two parts far outside: the first at α/8, the second at α/7, both named outside."""
    ratios = with_one(FAR_OUTSIDE) | {32: 0.85}
    found = verdict("kvm_mysql_loss", mysql(ratios))
    assert found.status == claims.NOT_REPRODUCED
    assert found.reason.count("lies outside it too") == 2
    assert "99.38% CI" in found.reason and "99.29% CI" in found.reason


def test_the_correction_multiplies_with_a_sequential_looks_alpha():
    """Records of a run looked at 5 times carry ci_alpha 0.01: the part's Holm step is 0.01 / 8."""
    found = verdict("kvm_mysql_loss", mysql(with_one(FAR_OUTSIDE), ci_alpha=0.01))
    assert found.status == claims.NOT_REPRODUCED and found.alpha == pytest.approx(0.01)
    assert "99.88% CI" in found.reason  # 1 − 0.01/8
    # just outside at the look's own level (0.01) is not outside at 0.01 / 8
    edge = math.exp(math.log(0.60) + 0.05)  # lower end at 99%: about 0.605; at 1 − 0.01/8: below 0.60
    held = verdict("kvm_mysql_loss", mysql({16: edge}, ci_alpha=0.01))
    assert held.status == claims.NOT_REPRODUCED
    assert verdict("kvm_mysql_loss", mysql(with_one(edge), ci_alpha=0.01)).status == claims.INCONCLUSIVE


def test_nested_parts_are_corrected_once_over_the_whole_claim():
    """Mean, median and p99 are three comparisons (`all_of` over three one-part claims): the family is
    3, and the rule is said once, for the claim."""
    rows = [r for r in shares(1.06) if r["metric"] != "latency_mean"]
    rows += [r for r in shares(0.894) if r["metric"] == "latency_mean"]
    found = verdict("docker_shares_near_native_latency", rows)
    assert found.status == claims.NOT_REPRODUCED
    assert found.reason.count("(here k = 3)") == 1 and "k = 1" not in found.reason
    assert len(found.leaves()) == 3


def test_combine_holds_constructed_parts_to_holm():
    """Eight one-interval parts of one band, seven inside and one just beyond its edge at 95%."""
    band = core.about_equal(0.05)

    def part(value: float, half: float, name: str) -> core.Verdict:
        effect = core.Effect(value, value * math.exp(-half), value * math.exp(half), 0.5, 10, "demo", "ratio", 18.0)
        return core.decide(effect, band, name)

    parts = [part(1.0, 0.02, f"p{i}") for i in range(7)]
    beyond = part(1.05 * math.exp(0.03), 0.025, "beyond")  # its lower end 1.0557 is above 1.05
    assert beyond.status == claims.NOT_REPRODUCED
    assert core.combine([*parts, beyond], "8 parts").status == claims.INCONCLUSIVE
    # at k = 2 its 98.75% interval (half-width 0.029 on logarithms) still clears the edge
    assert core.combine([parts[0], beyond], "2 parts").status == claims.NOT_REPRODUCED
    far = part(1.3, 0.025, "far")
    assert core.combine([*parts, far], "8 parts").status == claims.NOT_REPRODUCED


def test_the_summary_states_the_family_wise_level_across_claims(tmp_path):
    table = pd.DataFrame(
        {
            "claim": ["a", "b", "c"],
            "host": ["h"] * 3,
            "source": ["s"] * 3,
            "statement": ["A", "B", "C"],
            "status": [claims.REPRODUCED, claims.NOT_REPRODUCED, claims.NOT_TESTABLE],
            "reason": ["r"] * 3,
        }
    )
    text = core.family_wise_text(table["status"])
    assert "within each claim" in text and "across the 2 claim verdicts tested here (1 not reproduced)" in text
    assert "at most 2 × 0.05 = 10%" in text
    summary = analysis.write_summary(table, {}, tmp_path / "summary.md").read_text()
    assert f"**Error rate:** {text}." in summary
    many = core.family_wise_text([claims.INCONCLUSIVE] * 30)
    assert "30 × 0.05 = 1.5" in many and "bounds no chance" in many


def test_a_quota_on_the_wrong_side_only_at_its_own_level_leaves_the_quota_sweep_open():
    """Quotas 1000 and 2000 µs lie well below the server's need, 5000 well above (m = 3 tested): 2000 µs
    at 2.92× the unthrottled p99 is "not collapsed" at 95% (upper end 2.98) but not at 1 − 0.05/3."""
    use = {1000: 10, 2000: 20, 3000: 30, 5000: 35, 10000: 35}
    cliff = {1000: 8000, 2000: 4000, 3000: 1500, 5000: 160, 10000: 150}
    held = verdict("quota_cliff", quota_rows({**cliff, 2000: 150 * 2.917}, use))
    assert held.status == claims.INCONCLUSIVE
    assert "on the wrong side at its own level, not at α/3: 2000 µs (98.33% CI" in held.reason
    assert "(here m = 3)" in held.reason and "undecided at 2000 µs" in held.reason
    flat = verdict("quota_cliff", quota_rows({**cliff, 2000: 160}, use))
    assert flat.status == claims.NOT_REPRODUCED and "contradicted at 2000 µs" in flat.reason


def test_a_pooled_claim_of_parts_is_refuted_by_the_same_step_down():
    """Three hosts, two parts: the pooled write part lies just above ±5% at its own 95% (t on 2 degrees
    of freedom) but not at 1 − 0.05/2, so the pooled claim stays open; further out it is refuted."""
    from kitlib.analyse import pooled

    from .test_pooled import effect

    claim = claims.Claim("demo", "source", "statement", lambda df: None)

    def pooled_claim(write: float) -> pooled.PooledClaim:
        def host(ratio: float) -> core.Verdict:
            parts = [
                core.decide(effect(1.0, 0.01), core.EQUAL, "read"),
                core.decide(effect(ratio, 0.001), core.EQUAL, "write"),
            ]
            return core.combine(parts, "read and write", every_part=True)

        rows = [(f"h{i}", claim, host(write * math.exp(d))) for i, d in enumerate((-0.0046, 0.0, 0.0046))]
        [found] = pooled.pool(rows)
        return found

    near = pooled_claim(1.0648)
    write = next(p for p in near.parts if p.subject == "write")
    assert write.on_average == claims.NOT_REPRODUCED and write.ci[0] > 1.05
    assert near.on_average == claims.INCONCLUSIVE
    assert pooled_claim(1.07).on_average == claims.NOT_REPRODUCED
