"""One verdict rule for every claim: the interval of an effect against the band the paper states.

A claim carries the sentence it encodes (a verbatim quote from the seed texts), the band on an effect
(a ratio or a difference, with its direction) and the rule that turns the sentence into that band (the
`RULE_*` texts below: the same words always give the same band; a band is never widened for noise,
which belongs in the interval). The verdict is **reproduced** when the interval lies inside the band,
**not reproduced** when it lies entirely outside, **inconclusive** otherwise (with the repetitions
that would likely decide it), and never decided on fewer than 3 runs a side. Each interval rests on
one host and one configuration: where records sweep a parameter, every configuration is decided by
itself and all must hold, since no seed averages a sweep. Where configurations are combined, each run
is aggregated over them first (n counts runs); the test follows the run's design (`effect_between`):
pairs within a repetition where an interleaved run drifts, Welch's t otherwise, and no decision from a
blocked run the drift test cannot clear. Intervals are 95%, or on the records of a run that added
repetitions until its claims were decided, at the level its looks keep (`kitlib.core.sequential`). The
evidence text is written from the same numbers as the verdict, so the two cannot disagree.

Many parts, one error rate. A claim of k parts (every configuration, every environment, every
statistic) is **reproduced** when every part's interval lies inside its band at its own level: the
intersection-union rule, valid as it stands, since the claim holds only if each part does. It is **not
reproduced** only when a part lies outside its band after Holm's step-down over the k parts: each
part's p-value for lying outside (two one-sided tests, one per edge of its band, so that p < α exactly
when its own 1 − α interval lies outside) is held, smallest first, to α/k, α/(k − 1), … until one
fails (`Holm`; valid under any dependence between the parts). Without the correction, with the
truth on a band edge, some part reads "outside" in 1 − 0.975^k of draws (18% at k = 8, 32% at
k = 15, for independent parts); with it a false "not reproduced" stays below α = 0.05 whatever k,
about 2.5% on one edge (`benchmarks/calibration.py`). α is each part's own: 0.05,
or a sequential run's per-look level, which the correction divides further (it multiplies with the
looks' split, never replaces it). A part outside at its own level but not at its Holm step reads
inconclusive, and its evidence says so with its interval at the step's level. Holm's first step is
Bonferroni's, so the claim's verdict is the same under either; Holm's later steps name more of the
parts that lie outside. The family is the claim: across claims no correction is made (each is a
finding of its own), and `family_wise_text` says what that means for a table of verdicts.
"""

from __future__ import annotations

import dataclasses
import math
import os
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as sps

from kitlib import specs
from kitlib.core import drift, run_order, sequential, stats
from kitlib.core.errors import PlanError
from kitlib.core.records import BOOKKEEPING_COLUMNS
from kitlib.specs.labels import BASE_LABELS, EMULATED, parse_label, replicated

REPRODUCED, NOT_REPRODUCED = "reproduced", "not reproduced"
PAPER, DERIVED = "paper", "derived"  # the paper's own finding, or the kit's derivation from a sentence
#: how a stated number may be missed: this share of the effect's size (of ratio − 1, or of an offset)
STATED_TOLERANCE = 0.25
#: the smallest effect a word for a large one ('markedly', 'significant', 'greatly', 'noticeably') admits
LARGE = 0.10

RULE_EQUAL = (
    "a statement of equality ('very similar', 'almost identical', 'virtually the same', 'the same', "
    "'negligible', 'no overhead', 'similar') reads as a ratio within ±5%"
)
RULE_STATED = (
    "a stated number (a percentage, a factor, an offset, or a factor in words: 'doubles', 'half') reads "
    f"as that effect within ±{STATED_TOLERANCE:.0%} of its size (of ratio − 1, or of the offset)"
)
RULE_BOUND = "a stated bound ('over', 'higher than', 'less than', 'only', 'up to') reads as that bound, one-sided"
RULE_LARGE = (
    f"a large effect in words ('markedly', 'significant', 'greatly', 'noticeably') reads as at least {LARGE:.0%}"
)
RULE_SMALL = f"a small effect in words ('a little') reads as more than 0 and at most {LARGE:.0%}"
RULE_DIRECTION = "a direction without a size ('increases', 'lower', 'longer') reads as any effect that way"
RULE_EVERY = (
    "every configuration measured must hold by itself; one outside its band refutes the claim where it stays "
    "outside after Holm's step-down over the configurations (family-wise α ≤ 0.05)"
)
RULE_FAMILY = (
    "'not reproduced' needs a part outside its band after Holm's step-down over the claim's k parts (the "
    "part with the smallest p-value for lying outside at α/k, the next at α/(k − 1), …, α each part's own "
    "level): family-wise α ≤ 0.05 within the claim; 'reproduced' needs every part inside at its own level"
)
INCONCLUSIVE, NOT_TESTABLE = "inconclusive", "not testable here"
STATUSES = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTABLE)
MIN_RUNS = 3
ALPHA = 0.05

#: columns that never make two records different configurations (bookkeeping of a run)
BOOKKEEPING = BOOKKEEPING_COLUMNS | {"env"}
#: options that belong to the environment (its label carries them), not to the configuration
ENV_OPTION_COLUMNS = {
    "quota",
    "period",
    "shares",
    "cpus",
    "mem",
    "numa",
    "qcow2",
    "hostnet",
    "volume",
    "replica",
    "oci_runtime",
    "slirp4netns",
    "pasta",
    "filesystem",
    "storage",
    "containers",  # how many containers a scale-out's instances run in: 0 native, N on Docker labels
}


@dataclass(frozen=True)
class Verdict:
    status: str
    reason: str
    ratio: float = float("nan")  # the effect: a ratio, a difference or a level, as the band says
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    p_value: float = float("nan")
    n: int = 0  # fewest runs a side in any configuration the effect rests on
    #: runs a side that would likely decide an inconclusive verdict (80% power; None: no estimate)
    needed: int | None = None
    #: the environments and workloads whose records the verdict rests on (what more runs would repeat)
    envs: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ()
    #: the error rate of the interval (0.05, or a sequential run's per-look level)
    alpha: float = ALPHA
    #: how a verdict on one interval was made, for pooling across hosts (`kitlib.analyse.pooled`): what
    #: it compared, the effect's scale ("ratio" on logarithms, "difference", "level"), the t quantile's
    #: degrees of freedom and the band it was held to; a compound verdict keeps its one-interval parts
    subject: str = ""
    scale: str = ""
    df: float = float("nan")
    band: Band | None = None
    members: tuple[Verdict, ...] = ()
    #: left undecided because its interval pools runs of differing tool versions (`claims.versions`)
    mixed_versions: bool = False
    #: the experiment and metric of the records a one-interval verdict compared (set by `measured`;
    #: empty for a derived figure such as a fitted slope)
    experiment: str = ""
    metric: str = ""
    #: the interval is a paired one (pairs, not runs a side, would decide it)
    paired: bool = False
    #: a verdict of several parts keeps them as combined, with its wording, so that the claim's whole
    #: family of parts is corrected once however deeply they are nested (`combine`)
    parts: tuple[Verdict, ...] = ()
    what: str = ""
    every_part: bool = False

    def leaves(self) -> tuple[Verdict, ...]:
        """The one-interval verdicts this verdict rests on: its parts, or itself."""
        return self.members or ((self,) if self.scale else ())

    @property
    def effect(self) -> float:
        return self.ratio


@dataclass(frozen=True)
class Claim:
    """A finding as a test: the sentence it encodes (`quote`, verbatim from seed `seed` at `source`),
    the `band` its effect must lie in, the `rule` that turns the sentence into that band, and whether it
    is the paper's own finding (`paper`) or the kit's derivation from a sentence (`derived`)."""

    name: str
    source: str
    statement: str
    predicate: Callable[[pd.DataFrame], Verdict] = field(repr=False)
    seed: str = ""
    quote: str = ""
    band: str = ""
    rule: str = ""
    kind: str = PAPER
    #: why no run of the kit can ever test it (its subject is a platform the kit does not run, such as
    #: vSphere's guests), else empty: a reproduce only surveys an experiment all of whose claims say so
    outside_the_kit: str = ""

    @property
    def cited(self) -> str:
        """The source with the seed file it is quoted from."""
        return f"seed {self.seed}: {self.source}" if self.seed else self.source

    def evaluate(self, df: pd.DataFrame) -> Verdict:
        """The predicate's verdict; records without a column it reads make the claim not testable here,
        and any other KeyError (a bug, a dictionary's missing key) is raised, never read as a verdict."""
        try:
            return self.predicate(df)
        except KeyError as exc:
            if not _lacks_column(exc, df):
                raise
            return Verdict(NOT_TESTABLE, f"the records lack {exc}")


def _lacks_column(exc: KeyError, df: pd.DataFrame) -> bool:
    """Whether a KeyError is pandas refusing a column these records do not have (`df["x"]`, or a list
    naming absent ones): raised inside pandas, for a name that is not among the columns. A dictionary's
    missing key in the kit's own code, or a failed row lookup, is something else."""
    frames = traceback.extract_tb(exc.__traceback__)
    in_pandas = bool(frames) and f"{os.sep}pandas{os.sep}" in frames[-1].filename
    key = exc.args[0] if len(exc.args) == 1 else None
    return in_pandas and isinstance(key, str) and key not in df.columns


# ---------------------------------------------------------------- environments


def base_and_options(label: str) -> tuple[str, dict[str, object]]:
    """The label's base and options; `+replica` (an A/A control series) is kept as an option."""
    base, *suffixes = str(label).split("+")
    rest = [s for s in suffixes if s != "replica"]
    try:
        spec = parse_label("+".join([base, *rest]))
    except PlanError:
        return base, {"unknown": True}
    options = dict(spec.options)
    if "replica" in suffixes:
        options["replica"] = True
    return base, options


def kind_of(label: str) -> str | None:
    base = str(label).split("+")[0]
    return BASE_LABELS[base][0] if base in BASE_LABELS else None


def is_replica(label: str) -> bool:
    return replicated(str(label)) is not None


@dataclass(frozen=True)
class Envs:
    """Which environment labels stand for a claim's side: exact labels, or a kind (never a prefix)."""

    text: str
    accepts: Callable[[str], bool] = field(repr=False)

    def members(self, labels: Iterable[str]) -> list[str]:
        return sorted({str(label) for label in labels if not is_replica(label) and self.accepts(str(label))})


def exact(*labels: str) -> Envs:
    return Envs(" or ".join(labels), lambda label: label in labels)


def kind(name: str, option: str | None = None) -> Envs:
    """Labels of this kind with no option (or with exactly this one option); emulated guests never count."""

    def accepts(label: str) -> bool:
        base, options = base_and_options(label)
        if base in EMULATED or kind_of(label) != name or "unknown" in options:
            return False
        return set(options) == ({option} if option else set())

    text = f"every {name} environment" + (f" with +{option}" if option else " without options")
    return Envs(text, accepts)


# ---------------------------------------------------------------- bands


@dataclass(frozen=True)
class Band:
    """Where the effect must lie for the paper's statement to hold."""

    low: float
    high: float
    text: str

    def __str__(self) -> str:
        return f"{self.text} [{_fmt(self.low)}, {_fmt(self.high)}]"


def about_equal(t: float) -> Band:
    return Band(1 - t, 1 + t, f"about equal (within ±{t:.0%})")


def at_least_higher(x: float) -> Band:
    return Band(1 + x, math.inf, "higher" if x == 0 else f"at least {x:.0%} higher")


def at_least_lower(x: float) -> Band:
    return Band(0.0, 1 - x, "lower" if x == 0 else f"at least {x:.0%} lower")


def about_times(k: float, t: float) -> Band:
    return Band(k * (1 - t), k * (1 + t), f"about {k:g}× (±{t:.0%})")


def offset(low: float, high: float, unit: str, text: str) -> Band:
    return Band(low, high, f"{text} ({unit})")


def stated_ratio(ratio: float, high: float | None = None) -> Band:
    """A stated ratio (or range of ratios) within STATED_TOLERANCE of its effect: 1.8 → [1.6, 2.0]."""
    high = ratio if high is None else high
    low_e, high_e = ratio - 1, high - 1
    low = 1 + low_e - STATED_TOLERANCE * abs(low_e)
    top = 1 + high_e + STATED_TOLERANCE * abs(high_e)
    said = f"{ratio:g}" if high == ratio else f"{ratio:g}–{high:g}"
    return Band(min(low, top), max(low, top), f"about {said}× (±{STATED_TOLERANCE:.0%} of the effect)")


def stated_offset(value: float, unit: str, high: float | None = None) -> Band:
    """A stated offset (or range) within STATED_TOLERANCE of its size: +15 µs → [11.25, 18.75] µs."""
    high = value if high is None else high
    said = f"{value:g}" if high == value else f"{value:g}–{high:g}"
    return Band(
        value - STATED_TOLERANCE * abs(value),
        high + STATED_TOLERANCE * abs(high),
        f"about {said} {unit} (±{STATED_TOLERANCE:.0%})",
    )


def large_higher() -> Band:
    return Band(1 + LARGE, math.inf, f"at least {LARGE:.0%} higher")


def large_lower() -> Band:
    return Band(0.0, 1 - LARGE, f"at least {LARGE:.0%} lower")


def small_lower() -> Band:
    return Band(1 - LARGE, 1.0, f"lower by at most {LARGE:.0%}")


def small_higher() -> Band:
    return Band(1.0, 1 + LARGE, f"higher by at most {LARGE:.0%}")


EQUAL = about_equal(0.05)


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.3g}"


# ---------------------------------------------------------------- effects


@dataclass(frozen=True)
class Effect:
    """An effect with its interval (95%, or the level of a sequential run's looks: `alpha`), the fewest
    runs a side behind it and how it was combined; `df` and `paired` say which t the interval used (for
    the runs that would decide it), `undecided` why the interval, however narrow, may not decide (a
    blocked run with a drift)."""

    value: float
    low: float
    high: float
    p_value: float
    n: int
    how: str
    scale: str  # "ratio" (estimated on logarithms), "difference" or "level"
    df: float = math.nan
    paired: bool = False
    undecided: str = ""
    alpha: float = ALPHA


def configuration_columns(rows: pd.DataFrame) -> list[str]:
    """Columns that make records different configurations: all but run bookkeeping and the options an
    environment label carries (quota, shares, filesystem, numa, …)."""
    skip = BOOKKEEPING | ENV_OPTION_COLUMNS
    present = rows.notna().any()  # one pass over the frame, not one per column
    return [c for c in rows.columns if c not in skip and present[c]]


def _keyed(rows: pd.DataFrame, columns: list[str]) -> pd.Series:
    if not columns:
        return pd.Series("all", index=rows.index)
    text = rows[columns].apply(lambda column: column.map(lambda v: "∅" if pd.isna(v) else str(v)))
    return text.agg(" | ".join, axis=1)


#: what makes one run of an environment: its run and repetition (every configuration of a repetition ran
#: in it; a unit's configurations, STREAM's four kernels, even in one process)
RUN_COLUMNS = ("run_id", "repetition")


def _runs(side: pd.DataFrame) -> pd.Series:
    """Each record's run: its run and repetition (its run and duet, for a duet point: the baseline runs
    once in each duet of a repetition), or the record itself where it names none."""
    if "duet" in side.columns and side["duet"].notna().all() and "run_id" in side.columns:
        return side["run_id"].astype(str) + " | " + side["duet"].astype(str)
    columns = [c for c in RUN_COLUMNS if c in side.columns]
    if not columns:
        return pd.Series(side.index.astype(str), index=side.index)
    named = side[columns].notna().all(axis=1)
    text = side[columns].astype(str).agg(" | ".join, axis=1)
    return text.where(named, "record " + side.index.astype(str))


def per_run(side: pd.DataFrame, keys: pd.Series, common: list[str], scale: str) -> tuple[pd.Series, int]:
    """One value per run: the mean over the configurations of that run of the (log) values, so that
    configurations measured together count as one observation, not several. Runs lacking one of the
    configurations are left out; their count is returned beside the values."""
    chosen = keys.isin(common)
    side, keys = side[chosen], keys[chosen]
    values = side["value"].to_numpy(float)
    table = pd.DataFrame(
        {"run": _runs(side), "config": keys, "v": np.log(values) if scale == "ratio" else values}, index=side.index
    )
    wide = table.groupby(["run", "config"])["v"].mean().unstack("config")
    complete = wide.dropna()
    return complete.mean(axis=1), len(wide) - len(complete)


def same_runs(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Both sides from the runs that measured both, where there are such: an environment measured again
    in another run (an LXC run beside the main one) was not interleaved with the baseline, so its
    records would pool two designs. Returns the sides and the run ids left out. Runs that share
    nothing are compared as they are (their order and drift decide, as for any run)."""
    if "run_id" not in a.columns or "run_id" not in b.columns:
        return a, b, []
    ids_a, ids_b = set(a["run_id"].dropna()), set(b["run_id"].dropna())
    shared = ids_a & ids_b
    if not shared or (ids_a == shared and ids_b == shared):
        return a, b, []
    apart = sorted((ids_a | ids_b) - shared)
    return a[a["run_id"].isin(shared)], b[b["run_id"].isin(shared)], apart


def declared_duets(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Both sides without the duet records of workloads whose spec does not take the duet design
    (`WorkloadSchema.duet`: declared where a duet's ratio is a fair one, withdrawn where it is not, as for
    STREAM's best pass), and the workloads left out."""
    if "duet" not in a.columns or "duet" not in b.columns or "workload" not in a.columns:
        return a, b, []
    if a["duet"].isna().all() and b["duet"].isna().all():
        return a, b, []

    def fair(rows: pd.DataFrame) -> pd.Series:
        pairs = rows["experiment"].astype(str) + "/" + rows["workload"].astype(str)
        declared = {
            pair: pair.split("/")[0] in specs.MODULES
            and specs.schema(pair.split("/")[0]).workload(pair.split("/", 1)[1]).duet is not None
            for pair in pairs.unique()
        }
        return rows["duet"].isna() | pairs.map(declared).astype(bool)

    keep_a, keep_b = fair(a), fair(b)
    withdrawn = sorted(set(a.loc[~keep_a, "workload"].astype(str)) | set(b.loc[~keep_b, "workload"].astype(str)))
    return a[keep_a], b[keep_b], withdrawn


def duet_runs_only(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Where some runs measured both sides in duets and others one at a time, the duet runs alone: their
    points ran on half the machine (another regime) and their evidence is the ratio within each duet, so
    the two designs are never pooled. Returns the sides and the run ids left out."""
    if "duet" not in a.columns or "duet" not in b.columns or "run_id" not in a.columns:
        return a, b, []
    both = pd.concat([a, b])
    in_duets = set(both.loc[both["duet"].notna(), "run_id"].dropna())
    if not in_duets:
        return a, b, []
    others = sorted(set(both["run_id"].dropna()) - in_duets)
    return a[a["run_id"].isin(in_duets)], b[b["run_id"].isin(in_duets)], others


def shares_runs(rows: pd.DataFrame, columns: list[str]) -> bool:
    """Whether records of several configurations come from one unit (one process): same run, environment,
    repetition and position, as STREAM's kernels of one hpcc run or fio's read and write of one job."""
    unit = [c for c in ("run_id", "env", "repetition", "position") if c in rows.columns]
    if "position" not in unit or rows["position"].isna().any() or not columns:
        return False
    return bool(_keyed(rows, columns).groupby([rows[c] for c in unit]).nunique().max() > 1)


def effect_between(
    rows: pd.DataFrame, env: str, baseline: str, scale: str = "ratio", context: pd.DataFrame | None = None
) -> Effect | str:
    """`env` against `baseline`, compared only between records whose configuration columns are all equal.
    Each run is aggregated first (the mean over its configurations, of logarithms for a ratio: the
    geometric mean), so n counts runs, never configurations. Interleaved repetitions with a drift over
    the run: the repetition is a block (a paired t on the log ratios within a repetition); otherwise
    Welch's t. A blocked run (or one whose positions were not recorded) is not decided unless the drift
    test clears it (no trend found, and none over 5% of the run within its 95% interval).
    `context` holds the records the drift test looks at (default `rows`). Returns the reason instead
    when there is nothing to compare."""
    a, b = rows[rows["env"] == env], rows[rows["env"] == baseline]
    if a.empty or b.empty:
        return f"no records of {env if a.empty else baseline}"
    a, b, apart = same_runs(a, b)
    a, b, withdrawn = declared_duets(a, b)
    if a.empty or b.empty:
        return f"only duet records of {', '.join(withdrawn)}, whose spec measures them one at a time only"
    a, b, whole_machine = duet_runs_only(a, b)
    columns = [c for c in configuration_columns(rows) if c not in ("env",)]
    ka, kb = _keyed(a, columns), _keyed(b, columns)
    common = sorted(set(ka) & set(kb))
    if not common:
        return f"{env} and {baseline} share no configuration (columns {', '.join(columns)})"
    if scale == "ratio" and ((a["value"] <= 0).any() or (b["value"] <= 0).any()):
        return "values not all positive: no ratio"
    va, dropped_a = per_run(a, ka, common, scale)
    vb, dropped_b = per_run(b, kb, common, scale)
    if va.empty or vb.empty:
        return f"no run of {env if va.empty else baseline} holds every configuration ({len(common)})"
    pairs = sorted(set(va.index) & set(vb.index))
    both = pd.concat([a, b])
    alpha = sequential.alpha_of(both)
    order = run_order.order_of(both)
    if order == run_order.DUET:
        if not pairs:
            return f"{env} and {baseline} were never measured in one duet (each duet pairs an environment with native)"
        trend = []
    else:
        trend = drift.flagged(both if context is None else context[context["env"].isin([env, baseline])])
    paired = order == run_order.DUET or (order == run_order.INTERLEAVED and bool(trend) and len(pairs) >= MIN_RUNS)
    back = math.exp if scale == "ratio" else float
    how = _how(len(common), scale, paired, order, trend)
    if order == run_order.DUET:
        how += _overlap_note(both)
    if dropped_a or dropped_b:
        how += f"; {dropped_a + dropped_b} run(s) lacking a configuration left out"
    if apart:
        how += f"; {len(apart)} run(s) that measured only one of the two left out ({', '.join(apart)})"
    if whole_machine:
        how += (
            f"; {len(whole_machine)} whole-machine run(s) left out ({', '.join(whole_machine)}): a duet's "
            "half-machine points are never pooled with them"
        )
    undecided = ""
    if order in run_order.CONFOUNDED:
        looked = both if context is None else context[context["env"].isin([env, baseline])]
        unclear = drift.unbounded(looked)
        if unclear:
            undecided = (
                f"the runs were {order} and the drift test does not clear them ({'; '.join(unclear)}): a drift "
                "of the machine would read as a difference between the environments; rerun interleaved "
                "(the default order) to decide"
            )
    if paired:
        d = (va[pairs] - vb[pairs]).to_numpy()
        point, n = float(d.mean()), len(d)
    else:
        point, n = float(va.mean() - vb.mean()), min(len(va), len(vb))
    if n < MIN_RUNS:
        return Effect(back(point), math.nan, math.nan, math.nan, n, how, scale, undecided=undecided, alpha=alpha)
    interval = stats.paired_difference_interval if paired else stats.difference_interval
    x, y = (va[pairs], vb[pairs]) if paired else (va, vb)
    _, low, high, p, df = interval(x.to_numpy(), y.to_numpy(), alpha)
    if low == high:
        df = n - 1 if paired else len(va) + len(vb) - 2
    return Effect(back(point), back(low), back(high), p, n, how, scale, float(df), paired, undecided, alpha)


def per_configuration(
    rows: pd.DataFrame, env: str, baseline: str, scale: str = "ratio"
) -> list[tuple[str, Effect | str]] | str:
    """`env` against `baseline` in each configuration both have, one effect each (one host, one
    configuration per interval), named by the columns that tell the configurations apart. Returns the
    reason instead when there is nothing to compare."""
    a, b = rows[rows["env"] == env], rows[rows["env"] == baseline]
    if a.empty or b.empty:
        return f"no records of {env if a.empty else baseline}"
    columns = [c for c in configuration_columns(rows) if c != "env"]
    ka, kb = _keyed(a, columns), _keyed(b, columns)
    common = sorted(set(ka) & set(kb), key=_natural)
    if not common:
        return f"{env} and {baseline} share no configuration (columns {', '.join(columns)})"
    both = pd.concat([a, b])
    varying = [c for c in columns if both[c].astype(str).nunique() > 1]
    found = []
    for key in common:
        part = pd.concat([a[ka == key], b[kb == key]])
        values = dict(zip(columns, key.split(" | "), strict=False)) if columns else {}
        name = ", ".join(f"{c} {values[c]}" for c in varying) if varying else ""
        found.append((name, effect_between(part, env, baseline, scale, context=rows)))
    return found


def _natural(key: str) -> list:
    """Configurations in numeric order where their values are numbers (threads 4 before 16)."""
    out = []
    for part in key.split(" | "):
        try:
            out.append((0, float(part), ""))
        except ValueError:
            out.append((1, 0.0, part))
    return out


def level_of(values: pd.Series, alpha: float = ALPHA) -> Effect | str:
    """The mean of one series with its t interval at 1 − alpha (for a claim on a level, e.g. start-up < 1 s)."""
    v = values.to_numpy(float)
    if len(v) == 0:
        return "no records"
    what = "mean of the runs"
    if len(v) < MIN_RUNS:
        return Effect(float(v.mean()), math.nan, math.nan, math.nan, len(v), what, "level", alpha=alpha)
    half = float(sps.t.ppf(1 - alpha / 2, len(v) - 1)) * v.std(ddof=1) / math.sqrt(len(v))
    return Effect(float(v.mean()), v.mean() - half, v.mean() + half, math.nan, len(v), what, "level", alpha=alpha)


def _overlap_note(rows: pd.DataFrame) -> str:
    """What the duets' overlap says where some sides ran partly alone (`duet.LOW_OVERLAP`)."""
    if "duet_overlap" not in rows.columns:
        return ""
    shares = pd.to_numeric(rows["duet_overlap"], errors="coerce").dropna()
    low = int((shares < run_order.DUET_LOW_OVERLAP).sum())
    return (
        f"; {low} of {len(shares)} duet sides ran less than {run_order.DUET_LOW_OVERLAP:.0%} beside the other"
        if low
        else ""
    )


def _how(k: int, scale: str, paired: bool = False, order: str = "", trend: list[str] | None = None) -> str:
    log = " on log values" if scale == "ratio" else ""
    if order == run_order.DUET:
        return (
            f"paired t{log} within each duet (both sides at once on disjoint halves of the CPUs, swapped every "
            "repetition; one sample per duet; half-machine points: a ratio, not the paper's figures)"
            + (f", {k} configurations aggregated per duet" if k > 1 else "")
        )
    if paired:
        model = f"paired t{log} within each repetition of the interleaved run (the drift test finds a trend)"
    else:
        why = {
            run_order.INTERLEAVED: " (interleaved, no trend: Welch is the more powerful)",
            run_order.BLOCKED: " (blocked run)",
            run_order.UNRECORDED: " (blocked run without positions)",
            run_order.OTHER: " (repetitions not in blocks)",
        }.get(order, "")
        model = f"Welch t{log}{why}"
    if k == 1:
        return f"one configuration, {model}"
    combined = "geometric mean" if scale == "ratio" else "mean"
    return f"{combined} of the {k} configurations of each run, then {model}"


# ---------------------------------------------------------------- the rule


def decide(effect: Effect, band: Band, subject: str) -> Verdict:
    """The verdict of an effect against a band, with evidence written from the same numbers."""
    name = {"ratio": "ratio", "difference": "difference", "level": "mean"}[effect.scale]
    head = f"{subject}: {name} {effect.value:.3g}"
    common = dict(
        ratio=effect.value,
        ci_low=effect.low,
        ci_high=effect.high,
        p_value=effect.p_value,
        n=effect.n,
        alpha=effect.alpha,
        subject=subject,
        scale=effect.scale,
        df=degrees_of_freedom(effect),
        band=band,
        paired=effect.paired,
    )
    if effect.n < MIN_RUNS:  # the runs it lacks (failed, or left out as disturbed) are what would decide it next
        return Verdict(
            INCONCLUSIVE,
            f"{head} from {effect.n} run(s) a side; at least {MIN_RUNS} are needed for an interval; claim: {band}",
            needed=MIN_RUNS,
            **common,
        )
    if not (math.isfinite(effect.low) or effect.low == -math.inf) or math.isnan(effect.high):
        return Verdict(INCONCLUSIVE, f"{head}: no interval could be computed ({effect.how}); claim: {band}", **common)
    ci = f"{sequential.level_text(effect.alpha)} CI {effect.low:.3g}..{effect.high:.3g} ({effect.how})"
    if effect.undecided:
        return Verdict(INCONCLUSIVE, f"{head}, {ci}: not decided: {effect.undecided}; claim: {band}", **common)
    status = band_status(np.array([effect.low]), np.array([effect.high]), band)[0]
    if status == REPRODUCED:
        return Verdict(REPRODUCED, f"{head}, {ci} lies inside the band {band}", **common)
    if status == NOT_REPRODUCED:
        side = "below" if effect.high < band.low else "above"
        return Verdict(NOT_REPRODUCED, f"{head}, {ci} lies entirely {side} the band {band}", **common)
    crossed = [
        edge
        for edge, crosses in (
            (f"lower edge {_fmt(band.low)}", effect.low < band.low),
            (f"upper edge {_fmt(band.high)}", effect.high > band.high),
        )
        if crosses
    ]
    needed, text = repetitions_to_decide(effect, band)
    return Verdict(
        INCONCLUSIVE,
        f"{head}, {ci} crosses the {' and the '.join(crossed)} of the band {band}; {text}",
        **common,
        needed=needed,
    )


def band_status(low: np.ndarray, high: np.ndarray, band: Band) -> np.ndarray:
    """The rule itself, for many intervals at once: inside the band, entirely outside it, or neither."""
    inside = (low >= band.low) & (high <= band.high)
    outside = (high < band.low) | (low > band.high)
    return np.where(inside, REPRODUCED, np.where(outside, NOT_REPRODUCED, INCONCLUSIVE))


#: runs a side past which the kit stops counting: more is never a practical answer
MAX_NEEDED = 1000


def degrees_of_freedom(effect: Effect) -> float:
    """The t quantile's degrees of freedom behind the interval: the effect's own (Welch's), else n - 1
    for pairs and levels and 2n - 2 for two samples."""
    if effect.df > 0:
        return effect.df
    return float(effect.n - 1 if effect.paired or effect.scale == "level" else 2 * effect.n - 2)


def repetitions_to_decide(effect: Effect, band: Band) -> tuple[int | None, str]:
    """Runs a side (pairs, for a paired analysis) for 80% power to decide, and the sentence saying so
    (None where no spread can be read; MAX_NEEDED + 1 where no number of runs is likely to): the spread
    of one run is read back from the interval (its half-width over the t quantile at the interval's level
    and degrees of freedom), and the interval at N runs, at the same level, must clear the distance from
    the estimate to the nearest edge with probability 0.8 (`stats.runs_for_power`, t quantiles at that N)."""
    to = math.log if effect.scale == "ratio" else float
    unknown = None, "more runs would be needed"
    try:
        centre, half = to(effect.value), (to(effect.high) - to(effect.low)) / 2
        edges = [to(e) for e in (band.low, band.high) if math.isfinite(e) and e > 0 or effect.scale != "ratio"]
        edges = [e for e in edges if math.isfinite(e)]
    except ValueError:
        return unknown
    if not edges or not half > 0 or not all(math.isfinite(x) for x in (centre, *edges)):
        return unknown
    distance = min(abs(centre - e) for e in edges)
    if distance == 0:
        return MAX_NEEDED + 1, "the estimate sits on the band's edge: no number of runs is likely to decide it"
    df = degrees_of_freedom(effect)
    se = half / float(sps.t.ppf(1 - effect.alpha / 2, max(df, 1.0)))
    two_samples = not effect.paired and effect.scale != "level"
    sd = se * math.sqrt(effect.n / 2) if two_samples else se * math.sqrt(effect.n)
    n = stats.runs_for_power(sd, distance, power=0.8, paired=not two_samples, cap=MAX_NEEDED, alpha=effect.alpha)
    what = "pairs" if effect.paired else "runs a side"
    if n > MAX_NEEDED:
        return n, f"more than {MAX_NEEDED} {what} would be needed (80% power)"
    return n, f"about {n} {what} would likely decide it (80% power)"


def status_of_parts(statuses: set[str], every_part: bool) -> str:
    """The rule for a claim of parts: reproduced only when every part is, not reproduced when any part
    is (in `combine`, once each part is held to Holm's step-down over the claim's parts), not testable
    when every part is (or, for a compound statement, any part is), else inconclusive."""
    if statuses == {REPRODUCED}:
        return REPRODUCED
    if NOT_REPRODUCED in statuses:
        return NOT_REPRODUCED
    if NOT_TESTABLE in statuses and (every_part or statuses == {NOT_TESTABLE}):
        return NOT_TESTABLE  # a part of a compound statement without records leaves it untestable
    return INCONCLUSIVE


def combine(verdicts: list[Verdict], what: str, every_part: bool = False) -> Verdict:
    """Several sub-verdicts of one claim: reproduced only when every part is (intersection-union: each
    part inside at its own level); not reproduced only when a part lies outside its band after Holm's
    step-down over all the claim's one-interval parts (`Holm`), else inconclusive. Members
    of a family without comparable records are left out (and named); the parts of a compound statement
    (`every_part`) are all needed. The runs that would decide it are the most any undecided part needs;
    it rests on the environments and workloads of all its parts."""
    if not verdicts:
        return Verdict(NOT_TESTABLE, f"no {what}")
    family = [leaf for v in verdicts for leaf in own_parts(v)]
    return _combined(verdicts, what, every_part, Holm.of(family), top=True)


def own_parts(verdict: Verdict) -> tuple[Verdict, ...]:
    """The one-interval parts a verdict was combined from, each as decided at its own level (its
    `leaves` are the same parts as the claim's family of parts read them)."""
    if verdict.parts:
        return tuple(leaf for part in verdict.parts for leaf in own_parts(part))
    return (verdict,) if verdict.scale else ()


@dataclass(frozen=True)
class Holm:
    """Holm's step-down over a claim's k one-interval parts, each tested for lying outside its band:
    the parts found outside (by id, with the error rate of the step that found them) and, where the
    steps stopped at a part outside at its own level, the divisor of that step."""

    k: int
    outside: dict[int, float]
    stopped_at: int | None

    @classmethod
    def of(cls, family: list[Verdict]) -> Holm:
        """Parts outside at their own level, in order of p-value over their level, are tested at α/k,
        α/(k − 1), …, α each part's own (a sequential look's, so the correction multiplies with it),
        until one is not outside at its step: P(any part falsely outside) ≤ α when every part holds."""
        candidates = sorted((v for v in family if v.status == NOT_REPRODUCED and v.scale), key=_p_over_alpha)
        outside: dict[int, float] = {}
        for step, part in enumerate(candidates):
            divisor = len(family) - step
            if not _outside_at(part, part.alpha / divisor):
                return cls(len(family), outside, divisor)
            outside[id(part)] = part.alpha / divisor
        return cls(len(family), outside, None)


def _transformed(leaf: Verdict) -> tuple[float, float, Callable[[float], float]] | None:
    """The interval's centre and standard error on the scale it was made on (logarithms for a ratio),
    with that scale's map, read back from the interval and its t quantile; None where it cannot be."""

    def to(x: float) -> float:
        if leaf.scale != "ratio":
            return float(x)
        return math.log(x) if x > 0 else -math.inf

    low, high = to(leaf.ci_low), to(leaf.ci_high)
    if not (math.isfinite(low) and math.isfinite(high) and leaf.df > 0 and 0 < leaf.alpha < 1):
        return None
    se = (high - low) / 2 / float(sps.t.ppf(1 - leaf.alpha / 2, leaf.df))
    return (low + high) / 2, se, to


def _beyond(leaf: Verdict) -> float:
    """How far the part's centre lies beyond its band, in standard errors (negative: inside)."""
    found = _transformed(leaf)
    if found is None or leaf.band is None:
        return -math.inf
    centre, se, to = found
    distance = max(centre - to(leaf.band.high), to(leaf.band.low) - centre)
    if se == 0:
        return math.inf if distance > 0 else -math.inf
    return distance / se


def _p_over_alpha(leaf: Verdict) -> float:
    """The part's p-value for lying outside the band (two one-sided tests, one per edge: p < α exactly
    when its 1 − α interval lies outside), over its own α: the order of Holm's steps."""
    beyond = _beyond(leaf)
    p = 2 * float(sps.t.sf(beyond, leaf.df)) if math.isfinite(beyond) else float(beyond < 0)
    return p / leaf.alpha


def _widened(leaf: Verdict, alpha: float) -> tuple[float, float] | None:
    """The part's interval at 1 − alpha (back on its own scale), None where it cannot be read back."""
    found = _transformed(leaf)
    if found is None:
        return None
    centre, se, to = found
    half = float(sps.t.ppf(1 - alpha / 2, leaf.df)) * se
    back = math.exp if leaf.scale == "ratio" else float
    return back(centre - half), back(centre + half)


def _outside_at(leaf: Verdict, alpha: float) -> bool:
    """Whether the part's interval at 1 − alpha lies outside its band (its own interval at its own α)."""
    if math.isclose(alpha, leaf.alpha):
        return leaf.status == NOT_REPRODUCED
    found = _widened(leaf, alpha)
    if found is None or leaf.band is None:
        return False
    return bool(band_status(np.array([found[0]]), np.array([found[1]]), leaf.band)[0] == NOT_REPRODUCED)


def _level(alpha: float) -> str:
    return f"{100 * (1 - alpha):.4g}%"


def _held_to_family(leaf: Verdict, holm: Holm) -> Verdict:
    """A part outside its band at its own level, as Holm's step-down over the claim's parts reads it:
    still not reproduced (its interval at the step's level named), or inconclusive (named why)."""
    if leaf.status != NOT_REPRODUCED or not leaf.scale or holm.k == 1:
        return leaf
    if id(leaf) in holm.outside:
        alpha = holm.outside[id(leaf)]
        low, high = _widened(leaf, alpha) or (leaf.ci_low, leaf.ci_high)
        return dataclasses.replace(
            leaf,
            reason=f"{leaf.reason}, and its {_level(alpha)} CI {low:.3g}..{high:.3g} (Holm over the claim's "
            f"{holm.k} parts) lies outside it too",
        )
    alpha = leaf.alpha / (holm.stopped_at or holm.k)
    found = _widened(leaf, alpha)
    shown = f"its {_level(alpha)} CI {found[0]:.3g}..{found[1]:.3g}" if found else "its interval at that level"
    needed, text = _runs_to_decide(leaf, alpha, found)
    return dataclasses.replace(
        leaf,
        status=INCONCLUSIVE,
        needed=needed,
        reason=f"{leaf.reason} at its own level, but {shown} (Holm's step at α/{holm.stopped_at or holm.k} "
        f"over the claim's {holm.k} parts) does not: not decided; {text}",
    )


def _runs_to_decide(leaf: Verdict, alpha: float, found: tuple[float, float] | None) -> tuple[int | None, str]:
    """The runs that would likely decide a part at the level of its Holm step (`repetitions_to_decide`)."""
    if found is None or leaf.band is None:
        return None, "more runs would be needed"
    effect = Effect(leaf.ratio, *found, leaf.p_value, leaf.n, "", leaf.scale, leaf.df, leaf.paired, alpha=alpha)
    return repetitions_to_decide(effect, leaf.band)


def _redecided(verdict: Verdict, holm: Holm) -> Verdict:
    """A sub-verdict read again with the whole claim's family of parts: a combination of parts is
    combined again from them, a one-interval part held to Holm's step-down."""
    if verdict.parts:
        return _combined(list(verdict.parts), verdict.what, verdict.every_part, holm, top=False)
    return _held_to_family(verdict, holm)


def _combined(verdicts: list[Verdict], what: str, every_part: bool, holm: Holm, top: bool) -> Verdict:
    """`combine` with the claim's Holm step-down given; the rule is said once, at the claim's top. The
    members are the parts as the family reads them; the parts are kept as they came (each at its own
    level, `own_parts`), so that a claim combining this verdict again holds them to its own, larger
    family."""
    given, verdicts = verdicts, [_redecided(v, holm) for v in verdicts]
    testable = verdicts if every_part else [v for v in verdicts if v.status != NOT_TESTABLE] or verdicts
    status = status_of_parts({v.status for v in testable}, every_part)
    first = next((v for v in testable if v.status == status), testable[0])
    reason = "; ".join(v.reason for v in verdicts)
    if len(verdicts) > 1:
        reason = f"{what}, each must hold: {reason}"
    if top and holm.k > 1 and (holm.outside or holm.stopped_at):
        reason += f"; {RULE_FAMILY} (here k = {holm.k})"
    open_parts = [v for v in testable if v.status == INCONCLUSIVE]
    needs = [v.needed for v in open_parts]
    needed = None if status != INCONCLUSIVE or not needs or None in needs else max(needs)
    single = len(verdicts) == 1
    return Verdict(
        status,
        reason,
        first.ratio,
        first.ci_low,
        first.ci_high,
        first.p_value,
        first.n,
        needed,
        tuple(sorted({e for v in testable for e in v.envs})),
        tuple(sorted({w for v in testable for w in v.workloads})),
        first.alpha,
        subject=first.subject if single else "",
        scale=first.scale if single else "",
        df=first.df if single else float("nan"),
        experiment=first.experiment if single else "",
        metric=first.metric if single else "",
        band=first.band if single else None,
        paired=first.paired if single else False,
        members=first.members if single else tuple(leaf for v in verdicts for leaf in v.leaves()),
        parts=first.parts if single else tuple(given),
        what=first.what if single else what,
        every_part=first.every_part if single else every_part,
    )


def family_wise_text(statuses: Iterable[str]) -> str:
    """The error rate of 'not reproduced', within each claim and across the claims read together: each
    claim is its own finding and no correction is made across them, so their levels add up."""
    found = list(statuses)
    tested = sum(s in (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE) for s in found)
    refuted = sum(s == NOT_REPRODUCED for s in found)
    bound = tested * ALPHA
    across = (
        f"the chance that any of them is a false 'not reproduced' is at most {tested} × {ALPHA:g} = {bound:.0%}"
        if bound < 1
        else f"their levels add up to {tested} × {ALPHA:g} = {bound:.3g}, which bounds no chance of at least one "
        f"false 'not reproduced' among them (at most {bound:.3g} of them expected, were every claim true)"
    )
    return (
        f"'not reproduced' is decided at family-wise α ≤ {ALPHA:g} within each claim (Holm's step-down over its "
        f"parts; 'reproduced' needs every part inside); across the {tested} claim verdicts tested here "
        f"({refuted} not reproduced) no correction is made, each claim being a finding of its own: {across}"
    )


# ---------------------------------------------------------------- building claims


def select(df: pd.DataFrame, experiment: str, metric: str, **equal) -> pd.DataFrame:
    """The experiment's rows of one metric that stand for a point (its schema's headline: Redis's mix,
    never its SET and GET phases apart), where every given column has the given value(s)."""
    rows = specs.schema(experiment).headline_rows(df[(df["experiment"] == experiment) & (df["metric"] == metric)])
    for column, value in equal.items():
        if column not in rows.columns:
            return rows.iloc[0:0]
        rows = rows[rows[column].isin(value) if isinstance(value, (list, tuple)) else rows[column] == value]
    return rows


def missing(what: str) -> Verdict:
    return Verdict(NOT_TESTABLE, f"no {what} in these records")


def absent_reason(df: pd.DataFrame, subject: Envs) -> str:
    """Why a claim's subject is absent, naming software emulation where that is all there is."""
    labels = set(df["env"].astype(str)) if "env" in df.columns else set()
    emulated = sorted(e for e in labels if e.split("+")[0] in EMULATED)
    if emulated:
        return (
            f"no records of {subject.text}; only software emulation ({', '.join(emulated)}, TCG) here: "
            "an emulator, not a hypervisor, never stands for KVM or for Docker on the host"
        )
    return f"no records of {subject.text} in these records"


def absent_where(df: pd.DataFrame, experiment: str, metric: str, envs: Envs, equal: dict[str, object]) -> str:
    """Why `envs` has no records of the metric where the claim looks: the environment itself, or only
    the configuration the claim names (Redis at 4 connections where the run measured 1, 8 and 48)."""
    every = select(df, experiment, metric)
    present = envs.members(every["env"]) if "env" in every.columns else []
    if not present or not equal:
        return absent_reason(every, envs) + f" ({experiment} {metric})"
    mine = every[every["env"].astype(str).isin(present)]
    chosen = ", ".join(f"{column}={_shown(value)}" for column, value in sorted(equal.items()))
    held = "; ".join(
        f"{column} {', '.join(_shown(v) for v in sorted(mine[column].dropna().unique()))}"
        if column in mine.columns and mine[column].notna().any()
        else f"no {column}"
        for column in sorted(equal)
    )
    return f"no {experiment} {metric} records of {envs.text} at {chosen} (its records have {held})"


def _shown(value: object) -> str:
    """A configuration value as a reader writes it: 4, not 4.0."""
    if isinstance(value, (list, tuple)):
        return " or ".join(_shown(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def compare(
    experiment: str,
    metric: str,
    subject: Envs,
    baseline: Envs | str,
    band: Band,
    scale: str = "ratio",
    **equal,
) -> Callable[[pd.DataFrame], Verdict]:
    """A claim that `subject` relates to `baseline` as `band` says, per configuration, for every member."""
    base = exact(baseline) if isinstance(baseline, str) else baseline

    def predicate(df: pd.DataFrame) -> Verdict:
        rows = select(df, experiment, metric, **equal)
        subjects, baselines = subject.members(rows["env"]), base.members(rows["env"])
        if not subjects:
            return Verdict(NOT_TESTABLE, absent_where(df, experiment, metric, subject, equal))
        if not baselines:
            return Verdict(NOT_TESTABLE, absent_where(df, experiment, metric, base, equal))
        verdicts = []
        for env in subjects:
            for other in baselines:
                verdicts += decide_each(rows, env, other, band, scale)
        verdicts = [measured(v, experiment, metric, equal) for v in verdicts]
        what = f"{len(verdicts)} comparisons (every configuration)"
        if len(verdicts) > 1 and shares_runs(rows, [c for c in configuration_columns(rows) if c != "env"]):
            what += (
                "; configurations measured by one process in each run are correlated, not independent "
                "evidence (the verdict requires all of them)"
            )
        return combine(verdicts, what)

    return predicate


def decide_each(rows: pd.DataFrame, env: str, other: str, band: Band, scale: str = "ratio") -> list[Verdict]:
    """One verdict per configuration `env` and `other` share (or one saying why there is none)."""
    label = f"{env} vs {other}" if scale == "difference" else f"{env} / {other}"
    found = per_configuration(rows, env, other, scale)
    if isinstance(found, str):
        return [Verdict(NOT_TESTABLE, f"{label}: {found}")]
    verdicts = []
    for name, effect in found:
        where = f"{label} at {name}" if name else label
        verdicts.append(
            Verdict(NOT_TESTABLE, f"{where}: {effect}") if isinstance(effect, str) else decide(effect, band, where)
        )
    return [resting_on(v, rows, env, other) for v in verdicts]


def measured(verdict: Verdict, experiment: str, metric: str, equal: dict[str, object]) -> Verdict:
    """The verdict's subject prefixed with what was measured and which records were chosen, so that the
    parts of a claim (mean, median and p99 of one comparison; random read and random write) stay apart
    when hosts are pooled."""
    if not verdict.scale:
        return verdict
    chosen = "".join(f" {column}={value}" for column, value in sorted(equal.items()))
    return dataclasses.replace(
        verdict, subject=f"{experiment} {metric}{chosen}: {verdict.subject}", experiment=experiment, metric=metric
    )


def resting_on(verdict: Verdict, rows: pd.DataFrame, *envs: str) -> Verdict:
    """The verdict with the environments it compared and the workloads of their records."""
    mine = rows[rows["env"].astype(str).isin(envs)] if "env" in rows.columns else rows.iloc[0:0]
    workloads = sorted({str(w) for w in mine["workload"].dropna()}) if "workload" in mine.columns else []
    return dataclasses.replace(verdict, envs=tuple(sorted(envs)), workloads=tuple(workloads))


def level(experiment: str, metric: str, subject: Envs, band: Band, **equal) -> Callable[[pd.DataFrame], Verdict]:
    """A claim on a level of one environment (e.g. start-up below 1 s)."""

    def predicate(df: pd.DataFrame) -> Verdict:
        rows = select(df, experiment, metric, **equal)
        subjects = subject.members(rows["env"])
        if not subjects:
            return Verdict(NOT_TESTABLE, absent_where(df, experiment, metric, subject, equal))
        verdicts = []
        for env in subjects:
            mine = rows[rows["env"] == env]
            found = level_of(mine["value"], sequential.alpha_of(mine))
            verdict = Verdict(NOT_TESTABLE, f"{env}: {found}") if isinstance(found, str) else decide(found, band, env)
            verdicts.append(measured(resting_on(verdict, rows, env), experiment, metric, equal))
        return combine(verdicts, f"{len(verdicts)} environments")

    return predicate


def all_of(what: str, *parts: Callable[[pd.DataFrame], Verdict]) -> Callable[[pd.DataFrame], Verdict]:
    def predicate(df: pd.DataFrame) -> Verdict:
        return combine([p(df) for p in parts], what, every_part=True)

    return predicate


def compare_where(
    experiment: str,
    metric: str,
    subject: Envs,
    baseline: Envs | str,
    band: Band,
    column: str,
    choose: Callable[[list[float]], list[float]],
    what: str,
    scale: str = "ratio",
    **equal,
) -> Callable[[pd.DataFrame], Verdict]:
    """`compare` at the values of `column` that `choose` picks from those the baseline measured (e.g.
    the highest thread count), named by `what` in the evidence when none qualifies."""
    base = exact(baseline) if isinstance(baseline, str) else baseline

    def predicate(df: pd.DataFrame) -> Verdict:
        rows = select(df, experiment, metric, **equal)
        if column not in rows.columns:
            return missing(f"{experiment} {metric} records with {column}")
        measured = rows[rows["env"].astype(str).isin(base.members(rows["env"]))][column].dropna()
        picked = choose(sorted({float(v) for v in measured}))
        if not picked:
            return missing(f"{experiment} {metric} records at {what}")
        return compare(experiment, metric, subject, base, band, scale, **equal, **{column: picked})(df)

    return predicate


def highest(values: list[float]) -> list[float]:
    return values[-1:]


def below_highest(values: list[float]) -> list[float]:
    return values[:-1]


def slope_above_zero(rows: pd.DataFrame, x: str, subject: str) -> Verdict:
    """A claim that a value grows with `x`: the least-squares slope through every run, its t interval
    (95%, or a sequential run's level) above 0; the fewest runs at one `x` set whether it may decide."""
    rows = rows.dropna(subset=[x])
    counts = rows.groupby(x).size()
    if len(counts) < 3:
        return missing(f"{subject} at 3 or more values of {x}")
    xs, ys = rows[x].to_numpy(float), rows["value"].to_numpy(float)
    fit = sps.linregress(xs, ys)
    alpha = sequential.alpha_of(rows)
    half = float(sps.t.ppf(1 - alpha / 2, len(xs) - 2)) * fit.stderr
    effect = Effect(
        float(fit.slope),
        float(fit.slope - half),
        float(fit.slope + half),
        float(fit.pvalue),
        int(counts.min()),
        f"least-squares line through {len(xs)} runs at {len(counts)} values of {x}",
        "difference",
        alpha=alpha,
    )
    return decide(effect, Band(0.0, math.inf, f"slope above 0 (per unit of {x})"), f"{subject}: slope")
