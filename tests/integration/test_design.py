"""Run identity and experimental design: what names a run, the order it runs in, hosts kept apart,
the A/A control, and `kit run --dry-run` starting nothing."""

from __future__ import annotations

import pytest

from kitlib.results import load_records


@pytest.mark.slow
@pytest.mark.netns
def test_quick_redis_run_gets_hit(root_netns, isolated_dirs, capsys):
    """The quick profile's keyspace is filled before GETs: nearly every GET finds its key."""
    from kitlib.cli import main

    results, _ = isolated_dirs
    argv = ["run", "redis", "--env", "native", "--repetitions", "1", "-p", "clients", "[4]", "--no-notebook"]
    assert main(argv) == 0, capsys.readouterr().err
    records = load_records(results, experiment="redis")
    hits = records[records["metric"] == "hit_rate"]
    assert len(hits) == 1 and hits["value"].iloc[0] > 95
    durations = records[(records["metric"] == "duration") & (records["op"] == "GET")]
    assert durations["value"].iloc[0] > 0.5, "a quick phase measures about two seconds"
    assert records["measured_requests"].iloc[0] > 20_000


@pytest.mark.extended  # a replica label: the design tests in tests/unit, a run in test_quick_redis_run_gets_hit
@pytest.mark.slow
@pytest.mark.netns
def test_a_replica_series_measures_the_noise_floor(root_netns, isolated_dirs, capsys):
    """native against native+replica, interleaved in one run: the A/A ratio of throughput has an interval
    (3 runs a side) and the claims never take the replica for an environment of their own."""
    from kitlib.analyse import replicas
    from kitlib.cli import main

    results, _ = isolated_dirs
    argv = ["run", "redis", "--env", "native", "--env", "native+replica", "--repetitions", "3"]
    argv += ["-p", "clients", "[4]", "-p", "seconds", "1", "--no-notebook"]
    assert main(argv) == 0, capsys.readouterr().err
    records = load_records(results, experiment="redis")
    aa = replicas.aa_table(records)
    throughput = aa[(aa["metric"] == "throughput") & (aa["config"].str.contains("op=mix"))]
    assert len(throughput) == 1 and throughput["n"].iloc[0] == 3
    row = throughput.iloc[0]
    assert 0 < row["ci_low"] <= row["ratio"] <= row["ci_high"] and row["noise_pct"] > 0
    print(f"A/A Redis throughput: ratio {row['ratio']:.3f}, 95% CI {row['ci_low']:.3f}..{row['ci_high']:.3f}")
