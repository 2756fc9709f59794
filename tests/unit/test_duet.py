"""The duet design: both sides of a comparison at once, halves swapped, the A/A control beside them, and
the statistics that follow it (one sample per duet, a disturbance both sides saw kept)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest

import kitlib
from kitlib.analyse import replicas
from kitlib.analyse.claims import core, disturbance
from kitlib.core import stats
from kitlib.core.errors import KitError, PlanError
from kitlib.measure.run import duet
from kitlib.measure.run.runner import plan_units, segments, with_partners


def duet_plan(**given):
    return kitlib.plan("cpu", environments=["native", "docker-host-volume"], order="duet", repetitions=4, **given)


def test_a_duet_plan_adds_its_a_a_control_and_pairs_every_point_with_the_baseline():
    plan = duet_plan()
    assert plan.environments == ("native", "docker-host-volume", "native+replica")
    assert plan.baseline == "native" and plan.duet_partners() == ["docker-host-volume", "native+replica"]
    units = plan_units(plan)
    assert len({u.key for u in units}) == len(units)  # the baseline runs once in each duet: keys stay apart
    pairs = [units[i : i + 2] for i in range(0, len(units), 2)]
    for first, second in pairs:
        assert first.pairing.duet == second.pairing.duet and first.point == second.point
        assert {first.env, second.env} == {"native", first.pairing.partner if first.env == "native" else first.env}
        assert {first.pairing.half, second.pairing.half} == {0, 1}
        assert second.position == first.position + 1
    # the halves are swapped every repetition: the baseline's half follows the repetition
    for unit in units:
        if unit.env == "native":
            assert unit.pairing.half == unit.repetition % 2
    # each duet is one segment: its two environments started together
    assert all(len({u.env for u in group}) == 2 for _, group in segments(units))


def test_a_duet_run_differs_from_the_interleaved_one_and_names_the_design():
    assert duet_plan().run_id != kitlib.plan("cpu", environments=["native", "docker-host-volume"]).run_id
    assert duet_plan().order == "duet"


def test_software_emulation_and_surveyed_labels_are_measured_alone_in_a_duet_run():
    plan = kitlib.plan("cpu", environments=["native", "docker-host-volume", "qemu-tcg"], order="duet", repetitions=3)
    units = plan_units(plan)
    alone = [u for u in units if u.pairing is None]
    assert alone and {u.env for u in alone} == {"qemu-tcg"}
    assert "qemu-tcg" not in plan.duet_partners()


def test_a_workload_that_declares_no_duet_is_refused_with_the_workloads_that_do():
    with pytest.raises(PlanError, match=r"not measured in duets .*use the interleaved order"):
        kitlib.plan("redis", environments=["native", "docker-host-volume"], order="duet")


def test_a_duet_needs_a_partner_for_the_baseline():
    # the A/A replica is added, so native alone still has a partner: its own replica
    plan = kitlib.plan("cpu", environments=["native"], order="duet", repetitions=3)
    assert plan.duet_partners() == ["native+replica"]


def test_a_duet_side_left_to_measure_brings_its_partner_along():
    units = plan_units(duet_plan())
    one_side = [units[3]]
    again = with_partners(one_side, units)
    assert [u.key for u in again] == [units[2].key, units[3].key]


def test_halves_are_disjoint_and_equal_and_an_odd_cpu_is_left_idle():
    assert duet.halves([0, 1]) == ([0], [1])
    assert duet.halves([3, 0, 2, 1, 4]) == ([0, 1], [2, 3])
    with pytest.raises(KitError, match="two CPUs at least"):
        duet.halves([0])


def test_overlap_is_the_share_of_a_side_s_time_beside_the_other():
    assert duet.overlap((0.0, 10.0), (0.0, 10.0)) == 1.0
    assert duet.overlap((0.0, 10.0), (5.0, 30.0)) == 0.5
    assert duet.overlap((0.0, 10.0), (20.0, 30.0)) == 0.0


def test_only_a_disturbance_one_side_saw_alone_measures_the_duet_again():
    steal = ["steal 30% > 5%"]
    assert duet.remeasure_reasons(steal, steal) == []  # both saw it: it cancels from the ratio
    assert duet.remeasure_reasons([], []) == []
    assert "this side alone" in duet.remeasure_reasons(steal, [])[0]
    assert "other side alone" in duet.remeasure_reasons([], steal)[0]


def test_a_side_that_fails_releases_the_other_at_once():
    meeting = duet.Meeting(("native", "docker-host-volume"), timeout=60)
    raised: list[BaseException] = []

    def waiting_side() -> None:
        try:
            meeting.start(0)
        except KitError as exc:
            raised.append(exc)

    thread = threading.Thread(target=waiting_side)
    started = time.monotonic()
    thread.start()
    meeting.abort()  # the other side failed before its start
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started < 10
    assert "docker-host-volume failed or did not reach the duet's start" in str(raised[0])


def test_the_two_sides_meet_and_learn_each_other_s_span_and_disturbance():
    meeting = duet.Meeting(("native", "docker-host-volume"), timeout=60)
    found: dict[int, tuple[float, list[str]]] = {}

    def side(index: int, span: tuple[float, float], disturbed: list[str]) -> None:
        meeting.start(index)
        found[index] = meeting.exchange(index, span, disturbed)

    threads = [
        threading.Thread(target=side, args=(0, (0.0, 10.0), ["steal"])),
        threading.Thread(target=side, args=(1, (2.0, 10.0), [])),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert found[0] == (0.8, []) and found[1] == (1.0, ["steal"])


def duet_records(ratios: dict[str, list[float]], disturbed: bool = False, partner: bool = False) -> pd.DataFrame:
    """Records of a duet run: native beside each label, the label's value native's times its ratio, and
    native's level moving from duet to duet (the host's capacity), as it does under steal."""
    rng = np.random.default_rng(5)
    rows, position = [], 0
    for label, values in ratios.items():
        for rep, ratio in enumerate(values):
            level = 20.0 * rng.uniform(0.6, 1.4)
            for env, value in (("native", level), (label, level * ratio)):
                rows.append(
                    {
                        "experiment": "cpu",
                        "workload": "linpack",
                        "env": env,
                        "metric": "gflops",
                        "value": value,
                        "unit": "GFLOPS",
                        "run_id": "quick-duet",
                        "repetition": rep,
                        "order": "duet",
                        "position": position,
                        "duet": duet.duet_id(rep, label),
                        "duet_partner": label if env == "native" else "native",
                        "duet_overlap": 0.99,
                        "disturbed": disturbed,
                        "duet_partner_disturbed": partner,
                        "host": "h",
                    }
                )
                position += 1
    return pd.DataFrame(rows)


def test_a_duet_comparison_is_decided_on_the_ratio_within_each_duet():
    rows = duet_records({"docker-host-volume": [1.01, 0.99, 1.00, 1.02, 0.98], "native+replica": [1.0] * 5})
    effect = core.effect_between(rows, "docker-host-volume", "native")
    assert effect.paired and effect.n == 5  # one sample per duet, though native moved ±40% between them
    assert 0.98 < effect.low and effect.high < 1.02
    assert "within each duet" in effect.how and "half-machine" in effect.how
    # the same values one at a time (Welch over the duets' absolute figures) would be far wider
    values = rows[rows["env"] == "docker-host-volume"]["value"]
    baseline = rows[(rows["env"] == "native") & (rows["duet_partner"] == "docker-host-volume")]["value"]
    _, low, high, _, _ = stats.log_ratio_interval(values.to_numpy(), baseline.to_numpy())
    assert high - low > 5 * (effect.high - effect.low)


def test_labels_never_measured_in_one_duet_are_not_compared():
    rows = duet_records({"docker-host-volume": [1.0] * 3, "docker-nat-volume": [0.9] * 3})
    found = core.effect_between(rows, "docker-nat-volume", "docker-host-volume")
    assert isinstance(found, str) and "never measured in one duet" in found


def test_a_duet_run_is_never_pooled_with_a_run_one_at_a_time():
    rows = duet_records({"docker-host-volume": [1.0, 1.01, 0.99]})
    whole = rows.assign(run_id="quick-interleaved", order="interleaved", duet=None, value=rows["value"] * 2)
    effect = core.effect_between(pd.concat([rows, whole], ignore_index=True), "docker-host-volume", "native")
    assert effect.n == 3 and "whole-machine run(s) left out (quick-interleaved)" in effect.how


def test_a_disturbance_both_sides_saw_counts_and_one_side_s_alone_does_not():
    both = duet_records({"docker-host-volume": [1.0] * 3}, disturbed=True, partner=True)
    counted, left_out = disturbance.split(both)
    assert len(counted) == len(both) and left_out.empty
    one = both.assign(duet_partner_disturbed=[i % 2 == 0 for i in range(len(both))])
    counted, left_out = disturbance.split(one)
    assert len(left_out) == len(both) // 2
    plain = both.drop(columns=["duet_partner_disturbed"])  # records one at a time: disturbed is left out
    assert disturbance.split(plain)[0].empty


def test_the_a_a_floor_of_a_duet_run_is_paired_within_its_duets():
    rows = duet_records({"native+replica": [1.01, 0.99, 1.0, 1.0]})
    table = replicas.aa_table(rows)
    row = table.iloc[0]
    assert row["design"] == "duet" and row["n"] == 4 and row["noise_pct"] < 3


def test_table_one_keeps_duet_points_apart_and_gives_their_ratio_within_each_duet():
    from kitlib.analyse import tables

    duets = duet_records({"docker-host-volume": [1.02, 1.02, 1.02]})
    whole = duets.assign(run_id="quick-whole", order="interleaved", duet=None, value=duets["value"] * 3)
    table = tables.table_one(pd.concat([duets, whole], ignore_index=True))
    docker = table[table["env"] == "docker-host-volume"].set_index("benchmark")
    assert set(docker.index) == {"Linpack (GFLOPS)", f"Linpack (GFLOPS) {tables.DUET_LABEL}"}
    assert docker.loc[f"Linpack (GFLOPS) {tables.DUET_LABEL}", "ratio_to_native"] == pytest.approx(1.02)


def test_a_figure_never_draws_duet_points_beside_whole_machine_ones():
    from kitlib.analyse.figures import hosts

    duets = duet_records({"docker-host-volume": [1.0] * 3})
    drawn, note = hosts.one_design(duets)
    assert len(drawn) == len(duets) and note == hosts.DUET_NOTE
    whole = duets.assign(duet=None)
    drawn, note = hosts.one_design(pd.concat([duets, whole], ignore_index=True))
    assert drawn["duet"].isna().all() and f"{len(duets)} duet record(s) not drawn" in note


def test_the_design_with_the_smaller_spread_on_this_host_s_records_is_said_and_a_wider_duet_loses():
    from kitlib.analyse import design_spread

    tight = duet_records({"docker-host-volume": [1.01, 0.99, 1.00, 1.02]})
    rng = np.random.default_rng(3)
    loose = tight.assign(
        run_id="quick-one-at-a-time",
        order="interleaved",
        duet=None,
        value=tight["value"] * np.exp(rng.normal(0, 0.2, len(tight))),
    )
    table = design_spread.spreads(pd.concat([tight, loose], ignore_index=True)).set_index("workload")
    assert table.loc["linpack", "duet_blocks"] == 4 and table.loc["linpack", "one_at_a_time_blocks"] == 4
    assert table.loc["linpack", "duet_sd"] < table.loc["linpack", "one_at_a_time_sd"]
    assert design_spread.duet_loses(pd.concat([tight, loose], ignore_index=True)) == []
    swapped = pd.concat([tight.assign(value=loose["value"].to_numpy()), loose.assign(value=tight["value"].to_numpy())])
    said = design_spread.duet_loses(swapped)
    assert len(said) == 1 and said[0].startswith("linpack: ratio spread") and "one at a time" in said[0]


def test_stream_is_not_measured_in_duets_and_its_duet_records_decide_nothing():
    """STREAM's figure is its best pass, and a duet side's last passes may run alone: its spec withdraws
    the design, a plan is refused, and duet records of it (made before) are left out of any verdict."""
    with pytest.raises(PlanError, match=r"\['stream'\] are not measured in duets"):
        kitlib.plan("memory", environments=["native", "docker-host-volume"], order="duet")
    rows = duet_records({"docker-host-volume": [1.3, 1.3, 1.3]}).assign(
        experiment="memory", workload="stream", metric="bandwidth"
    )
    found = core.effect_between(rows, "docker-host-volume", "native")
    assert isinstance(found, str) and "stream" in found and "one at a time only" in found
