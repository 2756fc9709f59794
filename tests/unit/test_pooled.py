"""Pooling one claim across hosts: each host's interval read back to its estimate and standard error,
the random-effects numbers checked against statsmodels and the textbook prediction interval, the band
rule applied to both intervals, and what may not be pooled left out by name."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.meta_analysis import combine_effects

from kitlib.analyse import claims, pooled
from kitlib.analyse.claims.core import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    Band,
    Claim,
    Effect,
    about_equal,
    combine,
    decide,
)
from kitlib.results import bundles

from ..support import sample
from ..support.another_machine import copy_as_another_machine

EQUAL = about_equal(0.05)


def effect(ratio: float, half_log: float, n: int = 5, df: float = 8.0) -> Effect:
    """A ratio with a t interval of half-width `half_log` on logarithms."""
    centre = math.log(ratio)
    return Effect(ratio, math.exp(centre - half_log), math.exp(centre + half_log), 0.5, n, "test", "ratio", df=df)


def verdicts_of(*per_host: tuple[str, float, float], claim: Claim | None = None, subject: str = "a / b"):
    claim = claim or Claim("demo", "source", "statement", lambda df: None)
    return [(host, claim, decide(effect(r, h), EQUAL, subject)) for host, r, h in per_host]


def test_each_host_is_read_back_to_its_estimate_and_standard_error():
    verdict = decide(effect(1.02, 0.03, df=8.0), EQUAL, "a / b")
    found = pooled.host_effect("h1", verdict)
    assert found.estimate == pytest.approx(math.log(1.02))
    assert found.se == pytest.approx(0.03 / sps.t.ppf(0.975, 8.0))
    assert (found.ci_low, found.ci_high) == (verdict.ci_low, verdict.ci_high)


def test_pooled_numbers_agree_with_statsmodels_and_the_prediction_interval_formula():
    hosts = [("h1", 1.01, 0.02), ("h2", 0.97, 0.03), ("h3", 1.04, 0.025), ("h4", 0.99, 0.04)]
    [claim] = pooled.pool(verdicts_of(*hosts))
    [part] = claim.parts
    estimates = np.log([r for _, r, _ in hosts])
    variances = np.array([(h / sps.t.ppf(0.975, 8.0)) ** 2 for _, _, h in hosts])
    expected = combine_effects(estimates, variances, method_re="pm")
    mean, se = float(expected.mean_effect_re), float(expected.sd_eff_w_re)
    assert part.pooled == pytest.approx(math.exp(mean))
    assert part.tau2 == pytest.approx(max(float(expected.tau2), 0.0))
    assert part.i2 == pytest.approx(max(float(expected.i2), 0.0))
    half = sps.t.ppf(0.975, 3) * se
    assert part.ci == pytest.approx((math.exp(mean - half), math.exp(mean + half)))
    spread = sps.t.ppf(0.975, 2) * math.sqrt(part.tau2 + se**2)
    assert part.prediction == pytest.approx((math.exp(mean - spread), math.exp(mean + spread)))
    assert len(part.hosts) == 4 and part.left_out == []


def test_the_band_rule_decides_on_average_and_in_general_apart():
    """Four close hosts: the pooled interval lies inside ±5% (on average), and with τ² near zero so
    does the next machine's; spread hosts: the average holds, the prediction interval crosses the band."""
    close = [("h1", 1.00, 0.01), ("h2", 1.005, 0.01), ("h3", 0.995, 0.01), ("h4", 1.002, 0.01)]
    [part] = pooled.pool(verdicts_of(*close))[0].parts
    assert (part.on_average, part.in_general) == (REPRODUCED, REPRODUCED)
    spread = [("h1", 1.03, 0.005), ("h2", 0.97, 0.005), ("h3", 1.00, 0.005), ("h4", 1.02, 0.005), ("h5", 0.98, 0.005)]
    [part] = pooled.pool(verdicts_of(*spread))[0].parts
    assert part.tau2 > 0 and part.i2 > 0.9
    assert part.on_average == REPRODUCED and part.in_general == INCONCLUSIVE
    far = [("h1", 1.30, 0.01), ("h2", 1.28, 0.01), ("h3", 1.33, 0.01)]
    [part] = pooled.pool(verdicts_of(*far))[0].parts
    assert part.on_average == NOT_REPRODUCED


def test_two_hosts_give_an_average_but_no_prediction_and_one_host_nothing():
    [part] = pooled.pool(verdicts_of(("h1", 1.0, 0.01), ("h2", 1.01, 0.01)))[0].parts
    assert math.isfinite(part.pooled) and not math.isfinite(part.prediction[0])
    assert part.in_general == INCONCLUSIVE and "at least 3 hosts (2 here)" in part.left_out[0]
    [part] = pooled.pool(verdicts_of(("h1", 1.0, 0.01)))[0].parts
    assert not math.isfinite(part.pooled) and part.on_average == INCONCLUSIVE
    assert "at least 2 hosts" in part.left_out[0]


def test_too_few_runs_mixed_versions_and_untestable_hosts_are_left_out_by_name():
    claim = Claim("demo", "source", "statement", lambda df: None)
    few = decide(effect(1.0, 0.01, n=2), EQUAL, "a / b")
    mixed = dataclasses.replace(decide(effect(1.0, 0.01), EQUAL, "a / b"), status=INCONCLUSIVE, mixed_versions=True)
    untestable = claims.Verdict(NOT_TESTABLE, "no records")
    good = [(h, claim, decide(effect(1.0, 0.01), EQUAL, "a / b")) for h in ("h1", "h2")]
    [found] = pooled.pool([("few", claim, few), ("mixed", claim, mixed), ("none", claim, untestable), *good])
    assert [h.host for h in found.parts[0].hosts] == ["h1", "h2"]
    text = "; ".join(found.left_out + found.parts[0].left_out)
    assert "few: 2 run(s) a side" in text and "mixed: its intervals pool runs of differing tool versions" in text
    assert "none: not testable there" in text


def test_a_claim_of_parts_is_pooled_part_by_part_and_holds_only_when_every_part_does():
    claim = Claim("demo", "source", "statement", lambda df: None)

    def host(read: float, write: float) -> claims.Verdict:
        parts = [decide(effect(read, 0.01), EQUAL, "read"), decide(effect(write, 0.01), EQUAL, "write")]
        return combine(parts, "read and write", every_part=True)

    rows = [("h1", claim, host(1.0, 1.3)), ("h2", claim, host(1.01, 1.32)), ("h3", claim, host(0.99, 1.29))]
    [found] = pooled.pool(rows)
    by_subject = {p.subject: p for p in found.parts}
    assert set(by_subject) == {"read", "write"}
    assert by_subject["read"].on_average == REPRODUCED and by_subject["write"].on_average == NOT_REPRODUCED
    assert found.on_average == NOT_REPRODUCED
    table = pooled.table([found])
    assert list(table["part"]) == ["read", "write"] and set(table["claim_on_average"]) == {NOT_REPRODUCED}


def test_the_sample_and_another_machine_pool_and_the_cli_reads_a_verified_bundle(tmp_path):
    """data/sample's Redis run and the same run as another machine's (values doubled: the same ratios):
    each part shared by both hosts is pooled with τ² = 0; `kit claims --pool` reads the copy from a
    bundle, verified on the way."""
    run = sample.run_with("redis", "native")
    other = tmp_path / "other" / "redis" / run.name
    other.parent.mkdir(parents=True)
    host = copy_as_another_machine(run, other)
    bundle = tmp_path / "other.tar.gz"
    bundles.write([other], bundle)
    records = pd.concat([pd.read_csv(run / "records.csv"), pd.read_csv(other / "records.csv")], ignore_index=True)
    found = pooled.pool(claims.verdicts(records, experiment="redis"))
    two = [p for c in found for p in c.parts if len(p.hosts) == 2]
    assert two, "no claim part measured on both hosts"
    assert all(p.tau2 == pytest.approx(0.0, abs=1e-12) for p in two)
    printed = subprocess.run(
        [sys.executable, "-m", "kitlib.cli", "claims", "--pool", str(run), str(bundle)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    table = pd.read_csv(pd.io.common.StringIO(printed.stdout))
    assert host in printed.stderr and set(pooled.COLUMNS) <= set(table.columns)
    assert (table["hosts"] == 2).sum() == len(two)


def test_a_tampered_bundle_is_refused_by_the_pooled_claims(tmp_path):
    run = sample.run_with("redis", "native")
    bundle = tmp_path / "sample.tar.gz"
    bundles.write([run], bundle)
    data = bytearray(bundle.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bundle.write_bytes(bytes(data))
    refused = subprocess.run(
        [sys.executable, "-m", "kitlib.cli", "claims", "--pool", str(bundle)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert refused.returncode != 0 and str(bundle) in refused.stderr


def test_band_of_each_part_is_its_own():
    """A part's verdict carries the band it was held to, so parts of one claim may differ in band."""
    verdict = decide(effect(1.0, 0.01), Band(1.04, 1.08, "about 1.06×"), "x")
    assert verdict.band == Band(1.04, 1.08, "about 1.06×") and verdict.leaves() == (verdict,)


def test_the_many_labs_notebook_pools_two_machines_and_draws_their_forest_plots(tmp_path):
    """The notebook on the sample's Redis run and a bundle of it as another machine's: the pooled table
    is written, and one forest plot per part both machines measured."""
    from kitlib.core import paths
    from kitlib.notebooks import execute

    run = sample.run_with("redis", "native")
    other = tmp_path / "other" / "redis" / run.name
    other.parent.mkdir(parents=True)
    copy_as_another_machine(run, other)
    bundle = tmp_path / "other.tar.gz"
    bundles.write([other], bundle)
    execute(
        paths.notebooks_root() / "analysis" / "many-labs.ipynb",
        tmp_path / "many-labs.ipynb",
        {
            "results_dirs": [str(run), str(bundle)],
            "figures_dir": str(tmp_path / "figures"),
            "tables_dir": str(tmp_path / "tables"),
        },
    )
    table = pd.read_csv(tmp_path / "tables" / "pooled-claims.csv")
    shared = table[table["hosts"] == 2]
    assert len(shared) > 0
    drawn = sorted((tmp_path / "figures").glob("forest-*.png"))
    assert len(drawn) == len(shared) and all(p.with_suffix(".pdf").exists() for p in drawn)
