"""Repetitions added until decided: the plan's sequential design, the level its records carry, the
repetitions a run grows by, and the choice of what to repeat, on the sample's real records."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import kitlib
from kitlib import adaptive
from kitlib.analyse import claims
from kitlib.analyse.claims.core import INCONCLUSIVE
from kitlib.core import sequential
from kitlib.core.errors import KitError, PlanError
from kitlib.measure.run.runner import plan_units
from kitlib.measure.store import RunStore
from kitlib.results import load_records

from ..support import sample


def test_the_looks_split_alpha_and_enter_the_run_id():
    fixed = kitlib.plan("memory", environments=["native", "docker-host-volume"])
    grown = kitlib.plan("memory", environments=["native", "docker-host-volume"], until_decided={})
    assert fixed.ci_alpha is None and grown.until_decided.max_repetitions == 21
    assert grown.until_decided.look_points(grown.repetitions) == [3, 5, 8, 13, 21]
    assert grown.ci_alpha == pytest.approx(0.05 / 5)
    assert fixed.run_id != grown.run_id, "a sequential run's intervals are wider: never the same folder"
    with pytest.raises(PlanError, match="max_repetitions"):
        kitlib.plan("memory", environments=["native"], until_decided={"max_repetitions": 2})


def test_records_carrying_ci_alpha_widen_every_interval_and_say_so():
    # the sample's run grew until decided (its records carry ci_alpha = 0.05 / 6); the same records read
    # as a fixed design's
    looked_at = load_records(sample.run_with("net", "native"))
    assert set(looked_at["ci_alpha"]) == {0.05 / 6}
    records = looked_at.drop(columns="ci_alpha")
    claim = next(c for c in claims.CLAIMS if c.name == "nat_doubles_rr_latency")
    fixed = claim.evaluate(records)
    looked = claim.evaluate(looked_at)
    # TCP and UDP: each comparison's interval is wider at the sequential level (the verdict's own interval
    # is the member that decided it, which the level may change)
    pairs = list(zip(looked.members, fixed.members, strict=True))
    assert len(pairs) == 2
    for wide, narrow in pairs:
        assert wide.subject == narrow.subject and wide.ratio == pytest.approx(narrow.ratio)
        assert wide.ci_low < narrow.ci_low and wide.ci_high > narrow.ci_high, wide.subject
    assert looked.alpha == pytest.approx(0.05 / 6) and fixed.alpha == 0.05
    assert "99.17% (sequential" in looked.reason and "95% CI" in fixed.reason
    assert sequential.alpha_of(records) == 0.05
    assert sequential.alpha_of(records.assign(ci_alpha=[0.01] + [None] * (len(records) - 1))) == 0.01


@pytest.mark.parametrize("experiment", ["redis", "latency", "net", "mysql"])
def test_every_verdict_on_a_run_grown_until_decided_is_at_the_runs_level_and_says_so(experiment):
    """The main set's runs were planned to grow until decided (their records carry ci_alpha = 0.05 / 6):
    each verdict on them is computed at that level and its evidence names it. The Redis peak claim once
    dropped the level with the client count (a 95% interval in a sequential run); the quota cliff once
    reported α = 0.05 beside evidence at 99.17%."""
    records = load_records(sample.run_with(experiment, "native"))
    level = sequential.alpha_of(records)
    assert level == pytest.approx(0.05 / 6)
    table = claims.evaluate_all(records, experiment=experiment)
    tested = table[table["status"] != claims.NOT_TESTABLE]
    assert not tested.empty
    for _, row in tested[tested["ci_low"].notna()].iterrows():
        assert row["alpha"] == pytest.approx(level), (row["claim"], row["alpha"])
        assert "99.17% (sequential" in row["reason"] and "95% CI" not in row["reason"], row["claim"]


def test_a_verdict_names_what_it_rests_on_and_the_runs_that_would_decide_it():
    records = load_records(sample.run_with("memory", "native"))
    table = claims.evaluate_all(records, experiment="memory")
    row = table.set_index("claim").loc["docker_near_native_stream"]
    assert row["envs"] == ("docker-host-volume", "native")
    assert row["workloads"] == ("stream",)
    if row["status"] == INCONCLUSIVE:
        assert row["needed"] is not None and row["needed"] > row["n"], row["reason"]


def test_added_repetitions_continue_the_run_in_a_seeded_order(tmp_path):
    plan = kitlib.plan("memory", environments=["native", "docker-host-volume", "native+replica"], until_decided={})
    base = plan_units(plan)
    store = RunStore(tmp_path / "run")
    store.add_extension(3, ["native", "docker-host-volume"], ["stream"], ["docker_near_native_stream"])
    with pytest.raises(KitError, match="already added"):
        store.add_extension(3, ["native"], ["stream"], [])
    grown = plan_units(plan, extensions=store.extensions())
    added = grown[len(base) :]
    assert [(u.key, u.position) for u in grown[: len(base)]] == [(u.key, u.position) for u in base]
    assert [u.position for u in added] == list(range(len(base), len(grown)))
    assert {u.env for u in added} == {"native", "docker-host-volume"} and {u.repetition for u in added} == {3}
    assert {u.workload.name for u in added} == {"stream"}
    assert [u.key for u in plan_units(plan, extensions=store.extensions())] == [u.key for u in grown]


def synthetic_run(root, cv: float, alpha: float, reps: int = 3, seed: int = 5) -> None:
    """A sequential run's records drawn here (not measured): RandomAccess on native and Docker,
    interleaved, no effect, runs spread by `cv`, intervals at `alpha`: a claim whose decision depends only
    on how many runs it gets."""
    rng = np.random.default_rng(seed)
    rows, position = [], 0
    for rep in range(reps):
        for env in ("native", "docker-host-volume"):
            value = 0.05 * rng.lognormal(0, cv)
            rows.append(
                {"experiment": "memory", "workload": "randomaccess", "env": env, "metric": "gups", "value": value}
                | {"unit": "GUP/s", "run_id": "synthetic", "repetition": rep, "position": position}
                | {"variant": "System", "host": "synthetichost", "ci_alpha": alpha}
            )
            position += 1
    root.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(root / "records.csv", index=False)


def test_the_choice_repeats_what_undecided_claims_need(tmp_path):
    root = tmp_path / "memory" / "run"
    plan = kitlib.plan("memory", environments=["native", "docker-host-volume"], until_decided={})
    synthetic_run(root, cv=0.02, alpha=plan.ci_alpha)
    verdicts = adaptive.verdicts_of(plan, load_records(root)).set_index("claim")
    assert verdicts.loc["docker_near_native_randomaccess", "status"] == INCONCLUSIVE
    choice, _ = adaptive.choose([(plan, root)], budget_left_s=3600)
    assert choice is not None and choice.claims == ["docker_near_native_randomaccess"]
    assert choice.envs == ["docker-host-volume", "native"] and choice.workloads == ["randomaccess"]
    assert choice.repetition == plan.repetitions == 3 and choice.count == 2, "one step, to the look at 5"
    nothing, _ = adaptive.choose([(plan, root)], budget_left_s=1)
    assert nothing is None, "no repetition beyond the budget"
    capped = plan.model_copy(update={"until_decided": sequential.Stopping(max_repetitions=3)})
    none, why = adaptive.choose([(capped, root)], budget_left_s=3600)
    assert none is None and any("docker_near_native_randomaccess" in line for line in why), why


def test_a_claim_short_of_runs_by_a_disturbed_point_gets_the_repetition_it_lacks(tmp_path):
    """Every attempt of Docker's last run disturbed: the claim has 2 runs on that side, needs a third, and
    the choice repeats the two environments for it."""
    root = tmp_path / "memory" / "run"
    plan = kitlib.plan("memory", environments=["native", "docker-host-volume"], until_decided={})
    synthetic_run(root, cv=0.002, alpha=plan.ci_alpha)
    records = pd.read_csv(root / "records.csv")
    records["disturbed"] = (records["env"] == "docker-host-volume") & (records["repetition"] == 2)
    records.to_csv(root / "records.csv", index=False)
    verdict = adaptive.verdicts_of(plan, load_records(root)).set_index("claim").loc["docker_near_native_randomaccess"]
    assert verdict["status"] == INCONCLUSIVE and verdict["n"] == 2 and verdict["needed"] == 3, verdict["reason"]
    assert "1 point(s) left out, every attempt of theirs disturbed (docker-host-volume × 1" in verdict["reason"]
    choice, _ = adaptive.choose([(plan, root)], budget_left_s=3600)
    assert choice is not None and choice.claims == ["docker_near_native_randomaccess"]
    assert choice.envs == ["docker-host-volume", "native"] and choice.repetition == 3


@pytest.mark.parametrize(
    ("start", "limit", "looks"),
    [
        (3, 21, [3, 5, 8, 13, 21]),
        (3, 8, [3, 5, 8]),
        (3, 10, [3, 5, 8, 10]),
        (3, 4, [3, 4]),
        (3, 3, [3]),
        (5, 21, [5, 8, 13, 21]),
    ],
)
def test_the_looks_grow_geometrically_and_end_at_the_limit(start, limit, looks):
    stopping = sequential.Stopping(max_repetitions=limit)
    assert stopping.look_points(start) == looks and stopping.looks(start) == len(looks)
    assert stopping.look_alpha(start) == pytest.approx(0.05 / len(looks))
    assert [stopping.next_look(start, have) for have in looks] == [*looks[1:], None]
    assert stopping.next_look(3, 6) == (8 if limit >= 8 else None), "a run between two looks goes on to the next"


def test_a_run_grows_a_whole_step_to_its_next_look_and_is_read_only_there(tmp_path):
    """From 3 runs the run grows to 5, then to 8, each step written before it runs; every verdict the
    choice reads is at a look. The runs of each step are drawn here (the integration test measures them)."""
    root = tmp_path / "memory" / "run"
    plan = kitlib.plan("memory", environments=["native", "docker-host-volume"], until_decided={"max_repetitions": 8})
    synthetic_run(root, cv=0.03, alpha=plan.ci_alpha, reps=8, seed=11)
    drawn = pd.read_csv(root / "records.csv")
    pd.DataFrame(drawn[drawn["repetition"] < 3]).to_csv(root / "records.csv", index=False)
    read_at: list[int] = []

    def measure(grown) -> None:  # what run_plan would add: the extensions' repetitions
        wanted = {e["repetition"] for e in RunStore(root).added_repetitions()}
        drawn[drawn["repetition"].isin(wanted | {0, 1, 2})].to_csv(root / "records.csv", index=False)
        read_at.append(int(pd.read_csv(root / "records.csv")["repetition"].max()) + 1)

    report = adaptive.extend_until_decided([(plan, root)], 3600, measure, say=lambda line: None)
    assert [a["repetition"] for a in report.added] == list(range(3, read_at[-1]))
    assert set(read_at) <= {5, 8} and read_at, read_at
    steps = [e["repetition"] for e in RunStore(root).added_repetitions()]
    assert steps == list(range(3, read_at[-1])), "whole steps, none begun past the last look"


def as_units(root) -> None:
    """The drawn records of `synthetic_run` as the run's unit files, one per point, as a run writes them."""
    units = root / "units"
    units.mkdir()
    for _, row in pd.read_csv(root / "records.csv").iterrows():
        key = f"randomaccess__{row['env']}__r{row['repetition']}"
        unit = {"status": "ok", "records": [row.to_dict()], "env": row["env"], "workload": "randomaccess"}
        unit |= {"point": {}, "repetition": int(row["repetition"]), "seconds": 2.0}
        (units / f"{key}.json").write_text(json.dumps(unit))


def test_a_run_the_time_left_cannot_grow_ends_its_looks_at_95_percent(tmp_path):
    """Planned with looks at 3, 5, 8 (each at 98.33%) and 10 s left where its step to 5 takes two
    repetitions: it will not grow whatever it reads, so its first look is its last and its records are at
    95%, said in looks.json; the choice never grows it, and with time for the step nothing ends."""
    plan = kitlib.plan("memory", environments=["native", "docker-host-volume"], until_decided={"max_repetitions": 8})
    roots = {}
    for name in ("short", "long"):
        roots[name] = tmp_path / name / "memory" / "run"
        synthetic_run(roots[name], cv=0.03, alpha=plan.ci_alpha)
        as_units(roots[name])
    said: list[str] = []
    assert plan.ci_alpha == pytest.approx(0.05 / 3)
    assert adaptive.end_looks_out_of_time(plan, roots["short"], 10.0, said.append)
    ended = RunStore(roots["short"]).looks_ended()
    assert ended["ended_at"] == 3 and ended["ci_alpha"] == pytest.approx(0.05) and "no further look" in ended["why"]
    assert (pd.read_csv(roots["short"] / "records.csv")["ci_alpha"] == 0.05).all()
    assert said and said[0].startswith("memory: looks end at 3 repetitions")
    assert adaptive.choose([(plan, roots["short"])], budget_left_s=3600)[0] is None, "an ended run never grows"
    assert not adaptive.end_looks_out_of_time(plan, roots["short"], 10.0, said.append), "ended once"
    assert not adaptive.end_looks_out_of_time(plan, roots["long"], 3600.0, said.append)
    assert RunStore(roots["long"]).looks_ended() is None
    assert adaptive.choose([(plan, roots["long"])], budget_left_s=3600)[0] is not None


def test_the_simulated_give_up_rule_is_the_kits_runs_needed(tmp_path):
    """`simulate(give_up_beyond=M)` leaves a claim where `repetitions_to_decide` says more than M runs:
    on the records of drawn runs, M = the runs the verdict names is within reach and one fewer is not."""
    plan = kitlib.plan("memory", environments=["native", "docker-host-volume"], until_decided={})
    for seed in range(4):
        root = tmp_path / str(seed) / "memory" / "run"
        synthetic_run(root, cv=0.02, alpha=plan.ci_alpha, seed=seed)
        records = load_records(root)
        verdict = adaptive.verdicts_of(plan, records).set_index("claim").loc["docker_near_native_randomaccess"]
        logs = {env: np.log(part.sort_values("repetition")["value"].to_numpy()) for env, part in records.groupby("env")}
        a, b = logs["docker-host-volume"], logs["native"]
        centre = np.array([a.mean() - b.mean()])
        sd = np.sqrt(np.array([a.var(ddof=1) + b.var(ddof=1)]) / 2)  # the spread a side the verdict reads back
        needed = int(verdict["needed"])
        reach = [sequential._within_reach(centre, sd, (0.95, 1.05), plan.ci_alpha, m)[0] for m in (needed - 1, needed)]
        assert reach == [False, True], (seed, needed, verdict["reason"])


def test_giving_up_only_stops_runs_that_would_have_gone_on():
    rng = np.random.default_rng(7)
    values, baseline = rng.lognormal(0, 0.03, (3000, 8)), rng.lognormal(0, 0.03, (3000, 8))
    alphas = [0.05 / 6] * 6
    status, used = sequential.simulate(values, baseline, (0.95, 1.05), alphas)
    left, short = sequential.simulate(values, baseline, (0.95, 1.05), alphas, give_up_beyond=8)
    stopped = left != status
    assert (left[stopped] == INCONCLUSIVE).all() and (short <= used).all()
    assert stopped.mean() > 0.1 and short.mean() < used.mean(), "at CV 3% many equality claims are out of reach"


def test_the_looks_end_where_the_forecast_budget_ends(isolated_dirs, capsys):
    """A look the budget never reaches only widens every interval, so the reproduce cuts each run's
    schedule at the last look its forecast leaves time for: none left gives one look at 95%, the same
    order of points (seed) in a folder of its own; a run begun with another cut keeps it on a resume."""
    from kitlib import reproduce
    from kitlib.core import paths

    plan = kitlib.plan("memory", environments=["native", "docker-host-volume"], until_decided={})
    once = adaptive.looks_within(plan, -60.0, 40.0, adaptive.begun)
    assert once.until_decided.look_points(3) == [3] and once.ci_alpha == pytest.approx(0.05)
    assert once.seed == plan.seed and once.run_id != plan.run_id
    assert adaptive.looks_text(once) == "one look at 3 (95%)"
    two_steps = adaptive.looks_within(plan, 5 * 40.0, 40.0, adaptive.begun)
    assert two_steps.until_decided.look_points(3) == [3, 5, 8] and two_steps.ci_alpha == pytest.approx(0.05 / 3)
    assert adaptive.looks_within(plan, 18 * 40.0, 40.0, adaptive.begun) == plan

    units = RunStore(paths.run_folder(two_steps)).units_dir
    units.mkdir(parents=True)
    (units / "stream__native__r0.json").write_text('{"status": "ok"}')
    assert adaptive.looks_within(plan, -60.0, 40.0, adaptive.begun) == two_steps, "a begun run resumes as planned"

    fitted = reproduce.looks_the_budget_affords(
        {"cpu": kitlib.plan("cpu", environments=["native"], until_decided={})}, 60
    )
    assert fitted["cpu"].ci_alpha == pytest.approx(0.05)
    assert "the profile alone fills the budget" in capsys.readouterr().out


def test_the_time_left_is_shared_so_that_the_looks_planned_together_fit():
    """In rounds, each run's step to its next look, the cheapest first, while it fits: the looks planned
    together never count on the same seconds twice, and a run with no step that fits keeps one look."""
    schedules = {"cheap": ([3, 5, 8, 13], 30.0), "dear": ([3, 5, 8], 100.0), "single": ([3], 10.0)}
    # 300 s: the steps to 5 of cheap (60 s) and dear (200 s); cheap's next (90 s) is over the 40 s left
    assert adaptive.share_budget(schedules, 300.0) == {"cheap": 60.0, "dear": 200.0, "single": 0.0}
    # 600 s: cheap goes on to 8 and 13 (90 and 150 s) while dear's step to 8 (300 s) never fits again
    assert adaptive.share_budget(schedules, 600.0) == {"cheap": 300.0, "dear": 200.0, "single": 0.0}
    assert adaptive.share_budget(schedules, -50.0) == {"cheap": 0.0, "dear": 0.0, "single": 0.0}


def test_a_reproduce_plans_a_second_look_only_where_its_share_of_the_time_reaches_it(isolated_dirs, capsys):
    """Time for the cheaper run's step to its second look and no more: that run is looked at 3 and 5, the
    other, which would have counted on the same minutes, once at 95%; so is the web tier, whose claims no
    run of the kit can test."""
    from kitlib import reproduce
    from kitlib.measure import estimate

    envs = ["native", "docker-host-volume"]
    plans = {name: kitlib.plan(name, environments=envs, until_decided={}) for name in ("cpu", "memory", "webtier")}
    speed = estimate.rates()
    profile = sum(adaptive.forecast_seconds(plan, speed) for plan in plans.values()) + reproduce.ANALYSIS_SECONDS
    one = {name: adaptive.forecast_seconds(plans[name], speed, repetition=0) for name in ("cpu", "memory")}
    cheaper = min(one, key=one.get)
    dearer = "memory" if cheaper == "cpu" else "cpu"
    fitted = reproduce.looks_the_budget_affords(plans, profile + 2.5 * one[cheaper])
    assert fitted[cheaper].until_decided.look_points(3) == [3, 5]
    assert fitted[dearer].until_decided.look_points(3) == [3] and fitted[dearer].ci_alpha == pytest.approx(0.05)
    assert fitted["webtier"].until_decided.look_points(3) == [3]
    assert "the cheapest first" in capsys.readouterr().out
