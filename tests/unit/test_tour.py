"""The tour for a course: every chapter runs offline on data/sample, its sentences are computed from the
records it shows (so they hold when the sample is measured again), and its exercises are checked against
the records (right answers pass, wrong ones do not, blanks are said to be blank, a misspelled name is named).
A student's copy (`kit tour start`) keeps their notebooks and answers out of the project's tracked files."""

from __future__ import annotations

import json

import nbformat
import numpy as np
import pandas as pd
import pytest

from kitlib import cli
from kitlib.analyse import littles_law, tour
from kitlib.analyse.tour import findings, points, student
from kitlib.core import latency_analysis, paths, stats

from ..conftest import DATA

#: a real run of the route without root or Docker (native and native+replica, client on loopback)
LOOPBACK = DATA / "tour" / "loopback-aa"

TOUR = paths.notebooks_root() / "tour"
CHAPTERS = sorted(TOUR.glob("*.ipynb"))


def test_the_tour_has_its_five_chapters_each_with_exercises_and_a_run_line():
    assert [p.stem[:2] for p in CHAPTERS] == ["01", "02", "03", "04", "05"]
    for path in CHAPTERS:
        notebook = nbformat.read(path, 4)
        text = "\n".join(cell.source for cell in notebook.cells)
        assert notebook.metadata.kernelspec.name == "kitlib"
        assert f'tour.check("{path.stem[:2]}", answers, records)' in text
        assert "## Run it yourself" in text and "kit run " in text
        assert "Without root or Docker" in text and "kit tour start" in text
        assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
        parameters = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(parameters) == 1 and 'records_from = "data/sample"' in parameters[0].source


def test_the_run_lines_without_root_use_only_native_on_loopback():
    for path in CHAPTERS:
        text = "\n".join(cell.source for cell in nbformat.read(path, 4).cells)
        unprivileged = text.split("**Without root or Docker**")[1]
        lines = [line for line in unprivileged.splitlines() if line.startswith("kit run ")]
        assert lines, path.name
        for line in lines:
            assert "--peer loopback" in line or "kit run block --env native" in line, line
            envs = [word for word in line.split("--env ")[1:]]
            assert all(env.split()[0] in ("native", "native+replica") for env in envs), line


@pytest.fixture(scope="module")
def records():
    return tour.sample()


@pytest.mark.parametrize("chapter", sorted(tour.EXERCISES))
def test_exercises_accept_the_records_answers_and_refuse_others(chapter, records):
    right = tour.expected(chapter, records)
    assert (tour.check(chapter, right, records)["verdict"] == "correct").all()
    wrong = {k: (v + " not" if isinstance(v, str) else v * 1.5 + 1) for k, v in right.items()}
    assert not (tour.check(chapter, wrong, records)["verdict"] == "correct").any()
    assert (tour.check(chapter, {}, records)["verdict"] == "not answered").all()


def test_the_tour_reads_one_host(records):
    """data/sample holds runs of more than one machine; the lessons compare environments of one."""
    assert records["host"].nunique() == 1 and len(records) > 1000


def test_a_misspelled_answer_is_named_with_the_name_it_meant(records, capsys):
    right = tour.expected("01", records)
    answers = {"nat_extra": right["nat_extra_us"], "host_over_native": right["host_over_native"], "speed": 3}
    table = tour.check("01", answers, records).set_index("exercise")
    assert table.loc["nat_extra", "verdict"] == "unknown name: did you mean 'nat_extra_us'?"
    assert table.loc["speed", "verdict"].startswith("unknown name: the names are: nat_extra_us, host_over_native")
    assert table.loc["nat_extra_us", "verdict"] == "not answered (is 'nat_extra' meant to be 'nat_extra_us'?)"
    assert table.loc["host_over_native", "verdict"] == "correct"
    assert "1 of 2 correct" in capsys.readouterr().out


def test_hints_are_printed_whole(records, capsys):
    wrong = {name: -1.0 for name in tour.expected("04", records)}
    tour.check("04", wrong, records)
    out = capsys.readouterr().out
    hints = [e.hint for e in tour.EXERCISES["04"]]
    assert all(len(h) > 50 for h in hints) and all(f"(hint: {h})" in out for h in hints)
    assert all(e.hint for exercises in tour.EXERCISES.values() for e in exercises)


def test_an_exercise_these_records_cannot_answer_says_so(records):
    without_quota = records[records["workload"] != "quota"]
    verdicts = tour.check("04", {}, without_quota)["verdict"]
    assert (verdicts == "these records cannot answer it: no quota sweep (the latency study's part `quota`)").all()


# -- the sentences, computed from the records ----------------------------------------------------------
def _latency_at_fewest(records):
    rows = points.redis(records)
    rows = rows[rows["metric"] == "latency_mean"]
    return rows[rows["clients"] == rows["clients"].min()]


def test_chapter_1_states_each_ratio_with_its_interval_and_reads_it_by_the_interval(records):
    text = tour.request_paths(records)
    point = _latency_at_fewest(records)
    native = point[point["env"] == "native"]["value"]
    assert f"native {native.mean():.1f} µs" in text
    for env in sorted(set(point["env"]) - {"native"}):
        result = stats.compare_samples(point[point["env"] == env]["value"], native)
        line = next(line for line in text.splitlines() if line.startswith(f"- **{env}**"))
        assert f"ratio {findings.interval(result)}" in line and findings.reading(result) in line
    host = stats.compare_samples(point[point["env"] == "docker-host-volume"]["value"], native)
    if host.ci_low <= 1 <= host.ci_high:
        assert "consistent with it" in text and "not a finding" in text
    else:
        assert "does not hold 1.0" in text
    if abs(host.ratio - 1) > 0.05 or not host.ci_low <= 1 <= host.ci_high:
        assert "Why these records may differ from the paper's" in text and "VM guest" in text and "netns" in text
        assert f"{min(host.n, host.n_baseline)} runs a side are few (the paper ran 10)" in text
    # the same machine's emulator run is shown, named for what it is
    assert "qemu-tcg: software emulation, not KVM" in text


def test_reading_follows_the_interval_and_refuses_fewer_than_three_runs():
    apart = stats.compare_samples([2.0, 2.1, 2.05], [1.0, 1.02, 0.98])
    same = stats.compare_samples([1.0, 1.3, 0.8], [1.1, 0.9, 1.2])
    few = stats.compare_samples([2.0, 2.1], [1.0, 1.02])
    assert findings.reading(apart).startswith("the whole interval lies above 1")
    assert findings.reading(same).startswith("the interval holds 1")
    assert findings.reading(few).startswith("too few runs")


def test_chapter_2_names_a_run_far_from_the_others_and_only_then(records):
    text = tour.shares_tails(records)
    p99 = records[(records["workload"] == "shares") & (records["metric"] == "latency_p99")]
    for env, rows in p99.groupby("env"):
        values = rows.sort_values("repetition")["value"]
        line = next(line for line in text.splitlines() if line.startswith(f"- **{env}**"))
        assert f"mean {values.mean():.0f} µs, median {values.median():.0f} µs" in line
        far = values[values >= findings.OUTLIER_FACTOR * values.median()]
        assert ("pulled up by" in line) == (len(far) > 0)
        assert all(f"{v:.0f} µs" in line for v in far)
    assert list(findings.outliers(pd.Series([63.0, 52.0, 561.0]))) == [561.0]
    assert findings.outliers(pd.Series([63.0, 52.0, 70.0])).empty
    assert findings.outliers(pd.Series([1.0, 100.0])).empty  # two runs: no median to stand against


def test_chapter_2_fio_tail_is_p99_over_p50_of_the_records(records):
    text = tour.fio_tails(records)
    rows = records[(records["workload"] == "rand_read_latency") & (records["metric"] == "clat_percentile")]
    for env, own in rows.groupby("env"):
        by = own.groupby("percentile")["value"].mean()
        assert f"- **{env}**: p50 {by[50.0]:.0f} µs, p99 {by[99.0]:.0f} µs: ×{by[99.0] / by[50.0]:.2f}" in text


def test_chapter_3_shows_redis_and_mysql_and_says_how_the_gap_moves_with_n(records):
    law = tour.littles_law_points(records)
    assert set(law["experiment"]) == {"redis", "mysql"}
    check = littles_law.check(records)
    redis = law[law["experiment"] == "redis"]
    assert redis["runs"].sum() == len(check[check["experiment"] == "redis"])
    text = tour.littles_law_shape(records, "redis")
    near, far = sorted(abs(redis["error_mean"]))[0], sorted(abs(redis["error_mean"]))[-1]
    assert f"between {near:.1%} and {far:.1%} below N" in text
    by_n = redis.groupby("N")["error_mean"].mean().abs()
    growth = float(by_n.iloc[-1] - by_n.iloc[0])
    if far < findings.AGREEMENT:
        assert "the latency timer and the throughput clock agree" in text
    elif growth > 0.05:
        assert "grows with N" in text
    elif growth < -0.05:
        assert "shrinks" in text
    else:
        assert "about the same at every N" in text and "not client-side queueing" in text


def test_chapter_4_predicts_the_knee_and_says_which_quotas_lie_between_it_and_the_period(records):
    table = latency_analysis.quota_table(records)
    text = tour.quota_cliff(records)
    predicted = float(table["server_cpu_utilization"].iloc[-1]) / 100 * float(table["period"].iloc[-1])
    assert findings.predicted_knee(table) == pytest.approx(predicted)
    assert f"below about {predicted:.0f} µs" in text
    between = table[(table["quota"] > predicted) & (table["quota"] < table["quota"].max())]
    if between.empty:
        assert "has no quota between" in text
    else:
        assert all(f"{q:.0f} µs (p99" in text for q in between["quota"])
    knee = tour.expected("04", records)["quota_p99_near_unthrottled"]
    assert knee == findings.measured_knee(table)
    assert ("the largest quota itself" in text) == (knee == table["quota"].max())
    spread = tour.quota_spread(records)
    assert list(spread["quota"]) == list(table["quota"])
    assert (spread["latency_p99_min"] <= table["latency_p99"] + 1e-9).all()
    assert np.allclose(spread["latency_p99_mean"], table["latency_p99"])


def test_chapter_4_without_a_quota_sweep_predicts_the_knee_from_native(records):
    """A machine without Docker measures no quota; its server's CPU use, natively, still predicts the knee."""
    text = tour.quota_cliff(records[records["workload"] != "quota"])
    use = points.rows(records, workload="shares", env="native", metric="server_cpu_utilization")["value"]
    assert text.startswith("These records hold no quota sweep")
    assert f"used {use.mean():.0f}% of a CPU" in text and f"below about {use.mean() * 100:.0f} µs" in text


def test_a_chapter_on_native_alone_says_what_it_cannot_compare(records):
    native = records[records["env"] == "native"]
    assert tour.request_paths(native).endswith(
        "No other environment of this machine in these records to set beside it."
    )
    assert tour.interval_lessons(tour.redis_ratios(native)).startswith("These records hold no Redis environment")
    assert "mysql: X·R" in tour.littles_law_shape(native, "mysql")


def test_chapter_5_counts_the_intervals_that_hold_one(records):
    ratios = tour.redis_ratios(records)
    text = tour.interval_lessons(ratios)
    holding = int(((ratios["low"] <= 1) & (ratios["high"] >= 1)).sum())
    assert text.startswith(f"{holding} of {len(ratios)} intervals hold 1")
    assert "no A/A pair" in tour.noise_floor(records)  # the sample measured none


def test_the_figures_of_the_chapters_name_their_one_host(records):
    import matplotlib.pyplot as plt

    fig, _ = tour.ratio_intervals(records)
    assert str(records["host"].iloc[0]) in fig._suptitle.get_text()
    law = tour.littles_law_figure(records)
    assert {ax.get_title() for ax in law.axes if ax.get_visible()} == {"mysql / oltp_read_write", "redis / redis"}
    plt.close("all")


# -- a student's own copy --------------------------------------------------------------------------------
def test_tour_start_copies_the_chapters_into_the_students_folder_and_keeps_their_work(tmp_path):
    folder = tmp_path / "alice"
    started = tour.start(folder)
    assert [p.name for p in started.copied] == [p.name for p in CHAPTERS] and not started.kept
    assert all((folder / p.name).read_bytes() == p.read_bytes() for p in CHAPTERS)
    marker = json.loads((folder / student.MARKER).read_text())
    assert marker["chapters"] == [p.name for p in CHAPTERS]
    (folder / CHAPTERS[0].name).write_text("her work")
    again = tour.start(folder)
    assert [p.name for p in again.kept] == [p.name for p in CHAPTERS] and not again.copied
    assert (folder / CHAPTERS[0].name).read_text() == "her work"
    with pytest.raises(ValueError, match="tracked tour"):
        tour.start(TOUR)


def test_answers_are_kept_in_the_students_folder_and_nowhere_else(tmp_path, monkeypatch):
    elsewhere = tmp_path / "not-a-tour"
    elsewhere.mkdir()
    assert student.keep_answers("01", {"nat_extra_us": 11}, elsewhere) is None
    assert not (elsewhere / student.ANSWERS).exists()
    folder = tour.start(tmp_path / "bob").folder
    monkeypatch.chdir(folder)  # Jupyter runs a notebook's kernel in the notebook's folder
    tour.check("03", {"outstanding_8": np.float64(80.0)}, tour.sample())
    tour.check("01", {"nat_extra_us": 11}, tour.sample())
    kept = json.loads((folder / student.ANSWERS).read_text())
    assert kept == {"01": {"nat_extra_us": 11}, "03": {"outstanding_8": 80.0}}


def test_a_chapter_opened_in_the_tracked_copy_says_to_make_ones_own(monkeypatch, tmp_path):
    assert "kit tour start" in student.where_note(TOUR)
    assert student.where_note(tmp_path) is None


def test_kit_tour_start_on_the_command_line(tmp_path, capsys):
    assert cli.main(["tour", "start", str(tmp_path / "carol")]) == 0
    out = capsys.readouterr().out
    assert out.count("copied ") == len(CHAPTERS) and "open it with" in out
    assert cli.main(["tour", "start", str(TOUR)]) == 2


def test_kit_tour_answers_prints_the_key_the_records_give(capsys):
    assert cli.main(["tour", "answers"]) == 0
    out = capsys.readouterr().out
    for chapter, answers in tour.EXERCISES.items():
        for exercise in answers:
            assert f"{chapter} {exercise.name} = " in out
    knee = tour.expected("04")["quota_p99_near_unthrottled"]
    assert f"04 quota_p99_near_unthrottled = {knee:.6g} (exact)" in out


# -- a student's own records: the route without root or Docker ------------------------------------------
@pytest.fixture(scope="module")
def loopback():
    return tour.load(str(LOOPBACK))


def test_a_students_loopback_records_read_as_what_they_are(loopback):
    assert set(loopback["env"]) == {"native", "native+replica"} and set(loopback["peer"]) == {"loopback"}
    assert "records from" in tour.describe(loopback, str(LOOPBACK))


def test_chapter_3_reads_the_closed_loops_a_students_records_hold(loopback):
    assert findings.closed_loops(littles_law.check(loopback)) == ["latency"]
    law = tour.littles_law_points(loopback)
    assert set(law["experiment"]) == {"latency"} and set(law["N"]) == {1.0}
    assert tour.littles_law_findings(loopback).startswith("latency: X·R lies between")
    assert tour.littles_law_findings(records_of_the_paper := tour.sample()).split("\n\n")[0].startswith("redis:")
    assert "mysql:" in tour.littles_law_findings(records_of_the_paper)


def test_chapter_5_reads_an_a_a_pair_by_its_interval(loopback):
    from kitlib.analyse import replicas

    table = replicas.aa_table(loopback)
    text = tour.noise_floor(loopback)
    shown = [line for line in text.splitlines() if line.startswith("- **native+replica** against native")]
    assert 0 < len(shown) <= findings.NOISE_LINES and not any("percentile=" in line for line in shown)
    assert f"- … and {len(table) - len(shown)} more" in text
    mean = table[table["metric"] == "latency_mean"].iloc[0]
    assert f"ratio {mean['ratio']:.3f} [{mean['ci_low']:.3f}, {mean['ci_high']:.3f}]" in text
    assert f"The widest of all {len(table)} A/A intervals reaches ±{table['noise_pct'].max():.1f}%" in text


def test_every_chapter_reads_a_students_records_and_says_what_they_lack(loopback):
    assert tour.request_paths(loopback).startswith("These records hold no Redis latency")
    assert tour.fio_tails(loopback).startswith("These records hold no fio latency job")
    assert "native+replica" in tour.shares_tails(loopback)
    assert "Natively (the part `shares`, 3 runs)" in tour.quota_cliff(loopback)
    assert tour.interval_lessons(tour.redis_ratios(loopback)).startswith("These records hold no Redis environment")
    for chapter, answers in tour.EXERCISES.items():
        table = tour.check(chapter, {}, loopback)
        assert len(table) == len(answers)
        assert table["verdict"].str.match(r"^(not answered|these records cannot answer it: .+)$").all()
    assert tour.check("02", {}, loopback).set_index("exercise").loc["native_median_run_p99_us", "verdict"] == (
        "not answered"  # the shares part's p99 is there: the student can answer it on their own records
    )
