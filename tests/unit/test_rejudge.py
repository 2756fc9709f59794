"""The run's end holds every counted point against the whole run's capacity probes (rejudge)."""

from __future__ import annotations

from kitlib.core.interference import Rule
from kitlib.measure.run import rejudge


def _unit(key: str, before: float, after: float, status: str = "ok", attempt: int = 1, disturbed=()) -> dict:
    return {
        "key": key,
        "status": status,
        "interference": {
            "attempt": attempt,
            "disturbed": list(disturbed),
            rejudge.ENTRY: rejudge.readings("memory", before, after, usual=50.0),
        },
    }


def _run(first: list[tuple[float, float]], rest: int, level: float = 86.0) -> list[dict]:
    """Points at the `first` probe readings, then `rest` points of a machine at `level`."""
    units = [_unit(f"early{i}", b, a) for i, (b, a) in enumerate(first)]
    return units + [_unit(f"late{i}", level - i % 3, level + i % 2) for i in range(rest)]


def test_points_before_the_machine_changed_are_found_with_the_figures_they_were_judged_by():
    """The sample's LXC memory run: about 50 GB/s at first, 83–90 after."""
    late, kept = rejudge.to_measure_again(_run([(49.0, 51.0), (48.5, 50.0)], rest=10), Rule())
    assert kept is None
    assert [p.key for p in late] == ["early0", "early1"]
    assert late[0].reason == (
        "judged at the run's end against the whole run's usual memory probe figure (86; 50 when it ran): "
        "machine at 57% of its usual capacity < 90%"
    )


def test_a_point_that_ran_on_a_faster_machine_than_the_run_s_is_found_too():
    late, _ = rejudge.to_measure_again(_run([(120.0, 121.0)], rest=8, level=100.0), Rule())
    assert [p.key for p in late] == ["early0"]
    assert "(the machine changed under the run) > 111%" in late[0].reason


def test_a_point_with_one_probe_near_the_usual_figure_stays():
    late, _ = rejudge.to_measure_again(_run([(80.0, 85.0), (120.0, 92.0)], rest=8, level=86.0), Rule())
    assert late == []  # 80 is 93% of 86, within the floor; 92 is 107%, so only one probe is above 111%


def test_a_point_on_its_last_attempt_or_disturbed_in_every_one_gets_one_more_and_never_a_second():
    units = _run([], rest=9, level=86.0)
    units += [
        _unit("disturbed", 40.0, 40.0, attempt=3, disturbed=["machine at 47% of its usual capacity < 90%"]),
        _unit("once_more_too", 40.0, 40.0, attempt=4, disturbed=["machine at 47% of its usual capacity < 90%"]),
        _unit("last", 40.0, 40.0, attempt=3),
        _unit("measured_once_more", 40.0, 40.0, attempt=4),
        _unit("discarded", 40.0, 40.0, status="discarded"),
    ]
    late, kept = rejudge.to_measure_again(units, Rule())
    assert kept is None and [(p.key, p.exhausted) for p in late] == [("last", False), ("disturbed", True)]
    assert late[0].reason.endswith("< 90% (its last of 3 attempts: measured once more)"), late[0].reason
    assert late[1].reason == (
        "disturbed in every one of its 3 attempts (machine at 47% of its usual capacity < 90%): measured once "
        "more at the run's end, after its other points"
    )
    more, _ = rejudge.to_measure_again(units, Rule(max_attempts=4))  # the third attempt is no longer the last
    assert [(p.key, p.exhausted) for p in more] == [
        ("last", False),
        ("measured_once_more", False),
        ("once_more_too", True),
    ]
    assert "last of" not in more[0].reason and "(its last of 4 attempts: measured once more)" in more[1].reason


def test_a_run_disturbed_all_along_measures_none_once_more():
    """Over a third of the run's points disturbed in every attempt: one more try would be disturbed too."""
    always = ["CPU of other processes 40% > 10%"]
    units = [_unit(f"p{i}", 86.0, 86.0, attempt=3, disturbed=always if i % 2 else ()) for i in range(9)]
    assert rejudge.to_measure_again(units, Rule()) == ([], None)
    assert len(rejudge.to_measure_again(units[:6] + units[:1] * 3, Rule())[0]) == 3  # 3 of 9: each once more


def test_a_machine_of_two_regimes_of_about_equal_length_keeps_its_points_and_says_why():
    late, kept = rejudge.to_measure_again(_run([(50.0, 50.0)] * 5, rest=7), Rule())
    assert late == []
    assert kept.startswith("5 of 12 probed points are outside the rule")


def test_a_run_whose_probes_spread_widely_keeps_a_point_within_their_routine():
    """Probes spread by about 10% on a busy guest: a point at 80% of the run's figure is their routine
    there, one at 55% is not; on a machine of 1% spread, 80% is slowed."""
    wide = [_unit(f"p{i}", 86.0 * f, 86.0 * g) for i, (f, g) in enumerate([(0.9, 1.1), (1.0, 0.92), (1.08, 1.0)] * 3)]
    late, _ = rejudge.to_measure_again(wide + [_unit("routine", 69.0, 86.0), _unit("slowed", 47.0, 86.0)], Rule())
    assert [p.key for p in late] == ["slowed"]
    assert "(3 × " in late[0].reason and "the spread of the run's probes" in late[0].reason
    narrow, _ = rejudge.to_measure_again(_run([], rest=9) + [_unit("routine", 69.0, 86.0)], Rule())
    assert [p.key for p in narrow] == ["routine"]


def test_too_few_probes_or_none_judge_nothing():
    assert rejudge.to_measure_again(_run([(40.0, 40.0)], rest=1), Rule()) == ([], None)  # 4 readings
    bare = [{"key": "a", "status": "ok", "interference": {"attempt": 1}}, {"key": "b", "status": "failed"}]
    assert rejudge.to_measure_again(bare, Rule()) == ([], None)
    missing = _run([], rest=6) + [_unit("halfprobed", 40.0, None)]
    assert rejudge.to_measure_again(missing, Rule()) == ([], None)
    assert rejudge.to_measure_again(_run([(40.0, 40.0)], rest=8), Rule(min_capacity_pct=None))[0] == []


def test_the_whole_run_s_figure_leaves_out_the_probes_of_disturbed_points():
    """A reproduce's memory run: the guest at 100 GB/s for its last two points, each disturbed in every
    attempt, beside ten points at about 57."""
    units = _run([], rest=10, level=57.0)
    units += [_unit(f"fast{i}", 100.0, 102.0, attempt=3, disturbed=["machine at 170% …"]) for i in range(2)]
    assert rejudge.whole_run_usual(units) == {"memory": 57.0}
    late, kept = rejudge.to_measure_again(units, Rule())
    assert kept is None and [(p.key, p.exhausted) for p in late] == [("fast0", True), ("fast1", True)]


def test_a_point_kept_after_its_first_attempt_while_the_machine_stayed_disturbed_gets_its_attempts_at_the_end():
    steal = ["steal 6.0% > 2%"]
    units = _run([], rest=9, level=86.0)
    held = _unit("held", 86.0, 86.0, attempt=1, disturbed=steal)
    held["interference"][rejudge.HELD] = "kept after attempt 1: the 3 points before it were kept disturbed"
    units += [held, _unit("unjudged", 86.0, 86.0, attempt=1, disturbed=steal)]  # no HELD: not kept early
    late, _ = rejudge.to_measure_again(units, Rule())
    assert [(p.key, p.exhausted) for p in late] == [("held", True)]
    assert late[0].reason == (
        "disturbed in its only attempt (steal 6.0% > 2%): measured once more at the run's end, after its other points"
    )
