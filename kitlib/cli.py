"""`kit`: the command line, thin over kitlib and papermill."""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

from kitlib import adaptive, fleet, fleet_install, fleet_outcome
from kitlib.analyse import against, analysis, claims, pooled, stability, tour
from kitlib.core import naming, paths, signals
from kitlib.core.errors import KitError, Notice, PlanError
from kitlib.core.parameters import as_seconds, parse_value
from kitlib.measure import estimate, experiments, importers, inventory, parsers
from kitlib.measure.cleanup import clean_leftovers
from kitlib.measure.environments import availability
from kitlib.measure.image import DEFAULT_BASE
from kitlib.measure.run import hostcheck, preflight
from kitlib.measure.run.runner import benchmark_image, likely_search_units, plan_units, run_plan
from kitlib.measure.store import RunStore
from kitlib.measure.vm.prepare import prepare_guest
from kitlib.notebooks import execute_experiment
from kitlib.reproduce import reproduce, reproduce_outlook
from kitlib.results import bundles, load_records


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    handed_on: list[str] = []
    if argv[:2] == ["fleet", "run"] and "--" in argv:  # `kit run`'s options, for every host, unread here
        argv, handed_on = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    args = parser.parse_args(argv)
    if getattr(args, "fleet_command", None) == "run":
        args.run_options = handed_on
    if not getattr(args, "command", None):
        parser.print_help()
        return 2

    warnings.showwarning = _show_warning
    try:
        with signals.stop_on_signals(until_exit=True):
            return args.func(args) or 0
    except KitError as exc:
        print(f"kit: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP turned into the same unwinding
        print(signals.stopped_message(exc), file=sys.stderr)
        return signals.exit_code(exc)
    except BrokenPipeError:  # `kit claims | head`: the reader has what it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's flush at exit must not fail again
        return 0


_default_showwarning = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """The kit's own notices (`errors.Notice`) as one `kit:` line; others as Python shows them."""
    if issubclass(category, Notice):
        print(f"kit: {message}", file=sys.stderr)
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kit", description=__doc__)
    sub = parser.add_subparsers(dest="command")

    envs = sub.add_parser("envs", help="environments this host offers, and why not the others")
    envs.set_defaults(func=cmd_envs)

    run = sub.add_parser("run", help="run an experiment's notebook with papermill into results/")
    run.add_argument("experiment")
    run.add_argument("--env", action="append", dest="envs", metavar="LABEL", help="environment (repeatable)")
    run.add_argument("--profile", default="quick", help="quick | standard | paper (default: quick)")
    run.add_argument("--repetitions", type=int, default=None)
    run.add_argument("--preset", default=None, help="a named parameter set of another study, e.g. seed003-fio")
    run.add_argument(
        "-p",
        "--param",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="an experiment parameter, e.g. -p clients '[1, 8, 32]'",
    )
    run.add_argument("--peer", default="auto", help="auto | netns | loopback | remote")
    run.add_argument("--peer-host", default=None, help="SSH host of a remote peer")
    run.add_argument("--sut-address", default=None, help="the system under test's address as the peer reaches it")
    run.add_argument("--sut-host", default=None, help="run `native` on this SSH host (user@host:port)")
    run.add_argument("--ssh-key", default=None, help="private key for --sut-host / --peer-host")
    run.add_argument("--known-hosts", default=None, help="known_hosts file pinning their host keys")
    run.add_argument(
        "--hosts", default=None, metavar="FILE", help="inventory (TOML) of the study's machines: fills the SSH options"
    )
    run.add_argument("--no-notebook", action="store_true", help="run the plan directly, without papermill")
    run.add_argument(
        "--order",
        "--design",
        dest="order",
        default="interleaved",
        choices=["interleaved", "blocked", "duet"],
        help="interleaved (default): each repetition runs every environment once, in a seeded random order; "
        "blocked: all repetitions of one environment, then the next; duet: each environment at the same moment "
        "as native on the other half of the CPUs (halves swapped every repetition), an A/A duet beside them",
    )
    run.add_argument("--seed", type=int, default=None, help="seed of the interleaved order (default: from the plan)")
    run.add_argument(
        "--survey",
        action="append",
        default=[],
        metavar="LABEL",
        help="measure this one of the --env labels at the sweep's middle point only (repeatable): a label shown "
        "beside the others that no claim compares",
    )
    run.add_argument(
        "--max-attempts",
        type=int,
        default=None,
        help="measure a point disturbed by other load at most this often (default 3; the plan records it)",
    )
    run.add_argument(
        "--interference",
        default=None,
        metavar="JSON",
        help="thresholds of a disturbed point, e.g. '{\"max_foreign_cpu_pct\": 20}' (kitlib.core.interference.Rule)",
    )
    run.add_argument(
        "--steady",
        default=None,
        metavar="JSON",
        help="when a time-bound point is steady enough, e.g. '{\"max_factor\": 2}' to let points grow to at most "
        "twice the profile's duration (see kitlib.core.steady.Rule)",
    )
    run.add_argument(
        "--until-decided",
        action="store_true",
        help="after the first repetitions, add repetitions of what undecided claims need until each is decided, "
        "the budget is spent or the run reaches --max-repetitions (intervals then keep their 95%% over every look)",
    )
    run.add_argument(
        "--budget", default="30m", help="time for the whole run with --until-decided: 1800, 45m, 1.5h (default 30m)"
    )
    run.add_argument(
        "--max-repetitions",
        type=int,
        default=None,
        help="repetitions a run may grow to with --until-decided (default 21; looks at 3, 5, 8, 13, 21 from 3 "
        "repetitions, the last at this limit)",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan, run_id, results folder, points in order and how many are done; start nothing "
        "(with --until-decided: the runs and minutes each claim needs, from an earlier run here)",
    )
    run.set_defaults(func=cmd_run)

    check = sub.add_parser("check", help="is this host quiet and steady enough to measure on (governor, SMT, load …)")
    check.add_argument("--seconds", type=float, default=1.0, help="how long to sample steal and background load")
    check.set_defaults(func=cmd_check)

    hosts = sub.add_parser("hosts", help="the machines of an inventory: `kit hosts check FILE`")
    hosts.add_argument("action", choices=["check"])
    hosts.add_argument("file", help="inventory (TOML): [ssh], [sut], optional [client]")
    hosts.add_argument(
        "--ship-image", action="store_true", help="load the benchmark image into every engine that lacks it"
    )
    hosts.set_defaults(func=cmd_hosts)

    parse = sub.add_parser("parse", help="print the records a tool's raw output file gives, as CSV")
    parse.add_argument("tool")
    parse.add_argument("file")
    parse.set_defaults(func=cmd_parse)

    clean = sub.add_parser("clean", help="remove what interrupted runs left behind")
    clean.set_defaults(func=cmd_clean)

    vm = sub.add_parser("vm", help="VM guests: `kit vm prepare` builds the guest disk and tests KVM by a boot")
    vm.add_argument("action", choices=["prepare"])
    vm.set_defaults(func=cmd_vm)

    calibrate = sub.add_parser("calibrate", help="measure this host's rates the time estimates start from")
    calibrate.set_defaults(func=cmd_calibrate)

    reproduce = sub.add_parser("reproduce", help="quick profile of every experiment on every available environment")
    reproduce.add_argument("--profile", default="quick")
    reproduce.add_argument("--experiment", action="append", dest="experiments", default=None)
    reproduce.add_argument(
        "--budget",
        default=None,
        help="total time for the reproduce (default: the profile's, 45m for quick): what the first repetitions "
        "leave goes to repetitions of what undecided claims need",
    )
    reproduce.add_argument(
        "--fixed", action="store_true", help="only the profile's repetitions: no repetitions added until decided"
    )
    reproduce.add_argument(
        "--dry-run",
        action="store_true",
        help="run nothing: the estimated time, and what budgets would likely decide, read from this host's "
        "earlier runs under results/",
    )
    reproduce.set_defaults(func=cmd_reproduce)

    verdicts = sub.add_parser(
        "claims", help="every claim's verdict on the records under DIR… (default results/), as CSV"
    )
    verdicts.add_argument(
        "dirs",
        nargs="*",
        metavar="DIR",
        help="results folders, experiments' folders or runs' folders (relative to the current directory)",
    )
    verdicts.add_argument(
        "--against",
        default=None,
        metavar="HOST",
        help="each claim's effect beside this host's (e.g. felter2014, after `kit import`), with the interval "
        "of their difference",
    )
    verdicts.add_argument(
        "--pool",
        action="store_true",
        help="pool each claim across the hosts of DIR… (folders or bundles of `kit bundle`, each verified): per "
        "part the random-effects estimate, tau², I², the prediction interval for the next machine, and whether "
        "the claim holds on average and in general",
    )
    verdicts.add_argument(
        "--allowed-signers",
        default=None,
        metavar="FILE",
        help="with --pool: check the bundles' signatures against this ssh-keygen allowed-signers file",
    )
    verdicts.add_argument(
        "--allow-mixed-versions",
        action="store_true",
        help="decide on runs whose tool versions differ within one configuration (by default left undecided, "
        "naming the versions)",
    )
    verdicts.add_argument(
        "--list",
        action="store_true",
        dest="listing",
        help="print every claim (source, verbatim quote, band and rule, kind) and every finding not encoded, as CSV",
    )
    verdicts.set_defaults(func=cmd_claims)

    tour_parser = sub.add_parser(
        "tour",
        help="the course: `kit tour start [DIR]` copies the chapters into a folder of your own; "
        "`kit tour answers` prints the exercises' answers the records give (for a teacher)",
    )
    tour_parser.add_argument("action", choices=["start", "answers"])
    tour_parser.add_argument(
        "dir",
        nargs="?",
        default=None,
        metavar="DIR",
        help="start: your folder (default: my-tour/ here; chapters already in it are kept, never overwritten)",
    )
    tour_parser.add_argument(
        "--records",
        default=tour.SAMPLE,
        metavar="DIR",
        help="answers: the records the chapters read (default: data/sample; e.g. results)",
    )
    tour_parser.set_defaults(func=cmd_tour)

    imports = sub.add_parser(
        "import", help="turn published raw outputs into records of a host of their own: `kit import felter2014 PATH`"
    )
    imports.add_argument("source", help="felter2014: a clone of github.com/thewmf/kvm-docker-comparison")
    imports.add_argument("path", help="the clone (or the folder holding it)")
    imports.add_argument("--results", default=None, help="where to write (default: results/)")
    imports.set_defaults(func=cmd_import)

    bundle = sub.add_parser(
        "bundle", help="one archive of run folders, with every file's hash, signed when asked: `kit bundle DIR… -o F`"
    )
    bundle.add_argument("folders", nargs="+", help="run folders, or folders holding them (results/, results/redis)")
    bundle.add_argument("-o", "--output", required=True, help="the bundle to write (a .tar.gz)")
    bundle.add_argument("--sign", metavar="KEY", default=None, help="SSH private key to sign it with (ssh-keygen -Y)")
    bundle.add_argument("--signer", default=None, help="who signs, as the other lab's allowed_signers names you")
    bundle.set_defaults(func=cmd_bundle)

    verify = sub.add_parser(
        "verify", help="check a bundle: archive, hashes, signature, each run's plan, records, provenance"
    )
    verify.add_argument("bundle")
    verify.add_argument(
        "--allowed-signers", default=None, help="ssh-keygen allowed_signers file: require a valid signature"
    )
    verify.set_defaults(func=cmd_verify)

    fleet_parser = sub.add_parser(
        "fleet", help="one plan on every machine of a fleet at once: `kit fleet run`, `kit fleet install`"
    )
    fleet_sub = fleet_parser.add_subparsers(dest="fleet_command", required=True)
    fleet_run = fleet_sub.add_parser(
        "run",
        help="an experiment on every host of a fleet (SSH or a Slurm job array), each run back as a verified bundle",
        usage="kit fleet run [-h] [-o OUTPUT] [--timeout TIMEOUT] fleet_file experiment [-- KIT_RUN_OPTIONS ...]",
        epilog="After `--`: the options of `kit run` every host is given, e.g. -- --env native -p clients '[1, 8]'.",
    )
    fleet_run.add_argument("fleet_file", help="the fleet (TOML; see `kitlib.fleet`)")
    fleet_run.add_argument("experiment")
    fleet_run.add_argument(
        "-o", "--output", help="folder for the bundles and fleet.json (default: results/fleet/<label>)"
    )
    fleet_run.add_argument("--timeout", default="6h", help="time each host's run may take (default 6h)")
    fleet_run.set_defaults(func=cmd_fleet_run)
    fleet_install = fleet_sub.add_parser(
        "install",
        help="bring this project to every host of an SSH fleet and set it up there (make setup), at once",
    )
    fleet_install.add_argument("fleet_file", help="the fleet (TOML); each host's kit = '<folder>/.venv/bin/kit'")
    fleet_install.add_argument(
        "--only-python", action="store_true", help="`make course` there: the Python environment, no system packages"
    )
    fleet_install.set_defaults(func=cmd_fleet_install)

    merge = sub.add_parser(
        "merge", help="verify a bundle, then add its runs to a results folder (twice changes nothing)"
    )
    merge.add_argument("bundle")
    merge.add_argument("--results", default=None, help="where its runs go (default: results/)")
    merge.add_argument(
        "--allowed-signers", default=None, help="ssh-keygen allowed_signers file: require a valid signature"
    )
    merge.set_defaults(func=cmd_merge)
    return parser


def cmd_envs(_args: argparse.Namespace) -> int:
    rows = availability()
    width = max(len(r.label) for r in rows)
    for row in rows:
        mark = "yes" if row.available else "no "
        print(f"{row.label:<{width}}  {mark}  {row.reason}")
    return 0


def cmd_hosts(args: argparse.Namespace) -> int:
    """Connect to each host of the inventory (pinned keys) and print what it offers; 1 if one refused."""

    hosts = inventory.load(args.file)
    image = hostcheck.local_benchmark_image()
    if args.ship_image and not hostcheck.built_here(image):
        image = benchmark_image(DEFAULT_BASE)
    reports = hostcheck.check(hosts, image=image, ship=args.ship_image, progress=sys.stderr.isatty())
    print(hostcheck.render(reports))
    return 1 if any(report.error for report in reports) else 0


def cmd_check(args: argparse.Namespace) -> int:
    """This host's state for benchmarking, one line per item with what to change (nothing is changed)."""
    if not 0 < args.seconds <= 60:
        raise PlanError(f"--seconds: between 0 and 60, got {args.seconds}")
    print(preflight.render(preflight.check(seconds=args.seconds)))
    return 0


def _thresholds(flag: str, text: str | None) -> dict | None:
    """A rule's thresholds given on the command line as a JSON object (`--interference`, `--steady`)."""
    rule = parse_value(text, flag) if text else None
    if rule is not None and not isinstance(rule, dict):
        raise PlanError(f"{flag}: a JSON object of thresholds, got {text!r}")
    return rule


def _interference_rule(args: argparse.Namespace) -> dict | None:
    """The plan's interference rule from `--interference JSON` and `--max-attempts`."""
    rule = _thresholds("--interference", args.interference) or {}
    if args.max_attempts is not None:
        rule = {**rule, "max_attempts": args.max_attempts}
    return rule or None


def _stopping(args: argparse.Namespace) -> dict | None:
    """The plan's sequential design from `--until-decided` and `--max-repetitions`."""
    if not args.until_decided:
        if args.max_repetitions is not None:
            raise PlanError("--max-repetitions: only with --until-decided")
        return None
    return {} if args.max_repetitions is None else {"max_repetitions": args.max_repetitions}


def cmd_run(args: argparse.Namespace) -> int:
    begun = time.monotonic()
    experiment = experiments.get(args.experiment)
    budget = as_seconds("--budget", args.budget) if args.until_decided else None
    overrides = {name: parse_value(value, name) for name, value in args.param}
    plan = experiment.plan(
        environments=args.envs,
        profile=args.profile,
        repetitions=args.repetitions,
        peer=args.peer,
        peer_host=args.peer_host,
        sut_address=args.sut_address,
        sut_host=args.sut_host,
        ssh_key=args.ssh_key,
        known_hosts=args.known_hosts,
        hosts=args.hosts,
        preset=args.preset,
        order=args.order,
        seed=args.seed,
        survey=args.survey,
        interference=_interference_rule(args),
        steady=_thresholds("--steady", args.steady),
        until_decided=_stopping(args),
        **overrides,
    )
    if budget is not None:  # looks the budget never reaches would only widen every interval
        plan = adaptive.fit_to_budget(plan, budget)
    if args.dry_run:
        return dry_run(plan)
    root = paths.run_folder(plan)
    if args.no_notebook:
        run_plan(plan)
    else:
        try:
            output = execute_experiment(experiment, plan)
        except signals.RunStopped as exc:  # the kernel kept what it measured in the run's folder
            exc.run_root = exc.run_root or str(root)
            raise
        print(f"executed notebook: {output}")
    if budget is not None:
        _until_decided(plan, root, budget - (time.monotonic() - begun))
    store = RunStore(root)
    records, failures = store.consolidate(), store.failures()
    print(f"{len(records)} records, {len(failures)} failed points in {store.root}")
    for _, row in failures.head(5).iterrows():
        print(f"  failed: {row['unit']}: {str(row['reason']).splitlines()[0][:200]}")
    print(stability.report(records))
    return 1 if len(failures) else 0


def _until_decided(plan, root: Path, budget_s: float) -> None:
    """Repetitions added to the run until its claims are decided or the budget is spent; then the verdicts."""
    report = adaptive.extend_until_decided([(plan, root)], max(budget_s, 0.0), lambda p: run_plan(p))
    print(f"{len(report.added)} repetition(s) added in {report.seconds / 60:.1f} min")
    for note in report.notes:
        print(f"  not within reach: {note}")
    verdicts = adaptive.verdicts_of(plan, load_records(root))
    for _, row in verdicts.iterrows():
        print(f"  {row['status']:<17} {row['claim']}")


def dry_run(plan) -> int:
    """What `kit run` would do, read from the plan and the results folder only: nothing is started,
    built, connected to or written."""
    import json

    store = RunStore(paths.run_folder(plan))
    print(json.dumps(plan.model_dump(mode="json"), indent=2, sort_keys=True))
    print(f"run_id: {plan.run_id}")
    print(f"results folder: {store.root}{'' if store.root.exists() else ' (new)'}")
    units = plan_units(plan, extensions=store.extensions())
    done, todo = 0, []
    for unit in units:
        status = store.unit_status(unit.key)
        done += status == "ok"
        if status != "ok":
            todo.append(unit)
        point = ", ".join(f"{k}={v}" for k, v in unit.point.items())
        print(
            f"{unit.position:4d}  {unit.env:<40} {unit.workload.name:<12} r{unit.repetition}  {point}  {status or ''}"
        )
    print(
        f"{len(units)} points ({plan.order} order, seed {plan.seed}), {done} already done, {len(units) - done} to run"
    )
    searched = likely_search_units(plan, units)
    print(estimate.describe(estimate.estimate(plan, todo + searched), estimate.rates()))
    for workload in {u.workload.name: u.workload for u in units}.values():
        note = workload.search_note()
        if note:
            likely = sum(u.workload.name == workload.name for u in searched)
            print(
                f"then {note}: the {likely} points of its likeliest path are in the estimate; what it "
                "really adds depends on what is measured"
            )
    if plan.until_decided is not None:
        _predict(plan)
    return 0


def _predict(plan) -> None:
    """Runs and minutes each claim of the plan would need, from this host's earlier records."""
    if plan.until_decided.looks(plan.repetitions) == 1:
        print(f"the budget leaves no time past the first look: {plan.repetitions} repetitions, decided at 95%")
        return
    table, source = adaptive.predict(plan, paths.results_root())
    if table.empty:
        print(
            f"no earlier run of {plan.experiment} on this host to read its noise from: the first "
            f"{plan.repetitions} repetitions are the pilot, then repetitions are added within the budget"
        )
        return
    print(f"with --until-decided (each interval at {100 * (1 - plan.ci_alpha):.4g}%), from the noise of {source}:")
    print(table.to_string(index=False))


def cmd_parse(args: argparse.Namespace) -> int:
    import csv

    measurements = parsers.parse_file(args.tool, Path(args.file))
    dims = list(dict.fromkeys(k for m in measurements for k in m.dims))
    writer = csv.writer(sys.stdout)
    writer.writerow(["metric", "value", "unit", *dims])
    for m in measurements:
        writer.writerow([m.metric, repr(m.value), m.unit, *(m.dims.get(d, "") for d in dims)])
    return 0


def cmd_clean(_args: argparse.Namespace) -> int:
    removed = clean_leftovers()
    for item in removed:
        print(f"removed {item}")
    print(f"{len(removed)} leftover(s) removed")
    return 0


def cmd_vm(_args: argparse.Namespace) -> int:
    guest, verdict = prepare_guest()
    print(f"guest disk: {guest.disk} (image {guest.image}, kernel {guest.kernel_release})")
    print(f"KVM: {'usable' if verdict.usable else 'not usable'}: {verdict.reason}")
    return 0


def cmd_calibrate(_args: argparse.Namespace) -> int:
    found = estimate.rates(refresh=True)
    print(
        f"Linpack {found.gflops:.2f} GFLOPS, STREAM {found.stream_gbs:.2f} GB/s, RandomAccess {found.gups:.4f} GUP/s, "
        f"xz -2 {found.xz_mbps:.2f} MB/s ({found.source})"
    )
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    budget = as_seconds("--budget", args.budget) if args.budget is not None else None
    if args.dry_run:
        return reproduce_outlook(profile=args.profile, only=args.experiments, budget_s=budget)
    return reproduce(profile=args.profile, only=args.experiments, budget_s=budget, adaptive=not args.fixed)


def cmd_claims(args: argparse.Namespace) -> int:
    """Verdicts as CSV on standard output, one row per claim and host, for scripts and a lab's own CI."""
    if args.listing:
        claims.listing().to_csv(sys.stdout, index=False)
        return 0
    if args.pool:
        return _pooled_claims(args)
    folders = paths.resolve_results_dirs([Path(d).resolve() for d in args.dirs], parameter="DIR")
    verdicts = claims.evaluate_all(analysis.load(folders), allow_mixed_versions=args.allow_mixed_versions)
    if args.against:
        try:
            table = against.against(verdicts, args.against)
        except LookupError as exc:
            raise PlanError(f"--against: {exc}; `kit import {args.against} PATH` writes its records") from None
        table.drop(columns=["reference_host"]).to_csv(sys.stdout, index=False, float_format="%.6g")
        return 0
    table = verdicts.rename(columns={"status": "verdict", "ratio": "effect"})
    columns = ["claim", "host", "verdict", "effect", "ci_low", "ci_high", "n", "reason"]
    table[columns].to_csv(sys.stdout, index=False, float_format="%.6g")
    return 0


def _pooled_claims(args: argparse.Namespace) -> int:
    """`kit claims --pool`: the folders and bundles read together, each claim pooled across their hosts."""
    if args.against:
        raise PlanError("--pool and --against: choose one (the authors' imported runs are pooled as a host)")
    records = pooled.records_of([str(Path(d).resolve()) for d in args.dirs], args.allowed_signers)
    found = pooled.pool(claims.verdicts(records, allow_mixed_versions=args.allow_mixed_versions))
    print(f"# {pooled.METHOD_TEXT}; hosts: {', '.join(sorted(set(records['host'].astype(str))))}", file=sys.stderr)
    pooled.table(found).to_csv(sys.stdout, index=False, float_format="%.6g")
    return 0


def cmd_tour(args: argparse.Namespace) -> int:
    """Copy the chapters into the student's folder and say how to open them; or print the answer key."""
    if args.action == "answers":
        print(f"answers from {args.records} (they follow the records: measured again, they change)")
        for row in tour.answer_key(tour.load(args.records)).itertuples():
            answer = f"{row.answer:.6g}" if isinstance(row.answer, float) else repr(row.answer)
            print(f"{row.chapter} {row.exercise} = {answer} ({row.accepted}): {row.question}")
        return 0
    try:
        started = tour.start(args.dir)
    except ValueError as exc:
        raise PlanError(f"tour start: {exc}") from None
    for path in started.copied:
        print(f"copied {path.name}")
    for path in started.kept:
        print(f"kept   {path.name} (already there: your work is never overwritten)")
    print(tour.student.opening_hint(started.folder))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Write the records of published raw outputs; print the folders, how series were labelled, what failed."""
    importer = importers.get(args.source)
    results = Path(args.results).resolve() if args.results else paths.results_root()
    imported = importer.import_tree(Path(args.path), results)
    print(f"{imported.units} units imported as host {importer.HOST_ID} ({importer.HOST['description']})")
    for line in importer.summary_lines(imported):
        print(line)
    return 0


def cmd_bundle(args: argparse.Namespace) -> int:
    manifest = bundles.write(args.folders, args.output, key=args.sign, signer=args.signer)
    size = sum(entry["size"] for entry in manifest["files"].values())
    signed = f", signed with {args.sign}" if args.sign else ", unsigned"
    print(f"{args.output}: {len(manifest['runs'])} run(s), {len(manifest['files'])} files, {size:,} bytes{signed}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    found = bundles.verify(args.bundle, args.allowed_signers)
    who = f" by {found.signer}" if found.signer else ""
    manifest = found.manifest
    print(
        f"{args.bundle}: verified: {len(found.runs)} run(s), {len(manifest['files'])} files, each as its manifest "
        f"says; kitlib {manifest.get('kit_version')}, results format {manifest.get('results_format')}; "
        f"signature: {found.signature}{who}"
    )
    for experiment, run_id in found.runs:
        print(f"  {experiment}/{run_id}")
    for note in found.notes:
        print(f"  note: {note}")
    return 0


def cmd_fleet_run(args: argparse.Namespace) -> int:
    options = args.run_options
    experiments.get(args.experiment)  # an unknown experiment is refused before anything connects
    _parser().parse_args(["run", args.experiment, *fleet.checked_run_options(options)])  # and a bad option
    machines = fleet.load(args.fleet_file)
    output = Path(args.output) if args.output else paths.results_root() / "fleet" / naming.new_run_label()
    outcomes = fleet.run(machines, args.experiment, options, output, timeout_s=as_seconds("timeout", args.timeout))
    failed = [o for o in outcomes if o.status != "done"]
    print(f"fleet: {len(outcomes) - len(failed)} of {len(outcomes)} host(s) done; {output / 'fleet.json'}")
    print("\n".join(fleet_outcome.summary_lines(outcomes)))
    return 1 if failed else 0


def cmd_fleet_install(args: argparse.Namespace) -> int:
    done = fleet_install.install(fleet.load(args.fleet_file), only_python=args.only_python)
    failed = [d for d in done if d[1] != "done"]
    print(f"fleet install: {len(done) - len(failed)} of {len(done)} host(s) installed")
    print("\n".join(f"  {host:<16} {status:<7} {what}" for host, status, what in done))
    return 1 if failed else 0


def cmd_merge(args: argparse.Namespace) -> int:
    results = Path(args.results).resolve() if args.results else paths.results_root()
    for run, what in bundles.merge(args.bundle, results, args.allowed_signers):
        print(f"{results / run}: {what}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
