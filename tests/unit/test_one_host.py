"""One host per picture, checked on the sample plus a copy of one of its runs made a second machine (its
provenance given another CPU and no hypervisor, its values doubled so that pooling would show): every
figure names exactly one host, no bar of a figure or of the explorer averages two hosts' records, and
run bookkeeping never splits the explorer's groups."""

from __future__ import annotations

import re
import shutil

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from kitlib import specs  # noqa: E402
from kitlib.analyse import analysis, explorer, figures, tables
from kitlib.analyse.figures import hosts  # noqa: E402
from kitlib.core import paths

from ..support import sample  # noqa: E402
from ..support.another_machine import OTHER_CPU, copy_as_another_machine  # noqa: E402

RUN = "net/" + sample.run_with("net", "native").name  # the main host's network run
MAIN_HOST = sample.main_host()


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory):
    """data/sample plus RUN copied as a run of another, bare-metal machine with doubled values."""
    root = tmp_path_factory.mktemp("two-hosts") / "sample"
    shutil.copytree(paths.PROJECT_ROOT / "data" / "sample", root)
    other = copy_as_another_machine(root / RUN, root / (RUN + "-other"))
    return analysis.load([root]), other


def _host_ids(text: str, known: set[str]) -> set[str]:
    return {h for h in known if re.search(rf"\bhost {h}\b", text)}


def _texts(fig) -> str:
    found = [fig._suptitle.get_text() if fig._suptitle else ""]
    found += [t.get_text() for ax in fig.axes for t in (ax.title, *ax.texts)]
    return "\n".join(found)


def test_the_copy_is_a_machine_of_its_own(two_hosts):
    records, other = two_hosts
    assert other in set(records["host"])
    assert len(set(records.loc[records["experiment"] == "net", "host"])) == 2  # the sample's one, the copy


def test_every_figure_file_names_exactly_one_host_and_what_its_error_bars_are(two_hosts, tmp_path):
    records, other = two_hosts
    known = set(records["host"].astype(str))
    written = analysis.render_figures(records, tmp_path)
    assert any(f"-{other}-" in name for name in written)
    for experiment in sorted(records["experiment"].unique()):
        for name, fig in figures.draw(records, experiment).items():
            named = _host_ids(_texts(fig), known)
            assert len(named) == 1, name
            host = named.pop()
            assert f"-{host}-" in name, name
            own = records[(records["experiment"] == experiment) & (records["host"] == host)]
            assert name.endswith("-" + figures.runs_tag(own)), "and the runs it draws"
            assert "error bars" in fig._suptitle.get_text(), name
            plt.close(fig)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for f in written.values() for p in f)


def test_no_bar_of_the_network_figure_averages_two_hosts(two_hosts):
    """docker-nat-volume's TCP round trip as the run's records.csv holds it on one host, pooled with another
    host's, was once one bar of their mean. Each host's bars are now its own means."""
    records, other = two_hosts
    net = records[records["experiment"] == "net"]
    main = net[net["source"].str.endswith(RUN)]["host"].iloc[0]
    for host in (main, other):
        name = figures.file_name("net-fig2-3-throughput-cpu-rtt", host, net[net["host"] == host])
        fig = figures.draw(net, "net")[name]
        own = net[(net["host"] == host) & (net["workload"] == "rr") & (net["metric"] == "rtt_mean")]
        means = own.groupby(["env", "protocol"])["value"].mean()
        heights = sorted(round(p.get_height(), 6) for p in fig.axes[2].patches)
        assert heights == sorted(round(v, 6) for v in means), host
        plt.close(fig)
    rtt = net[(net["workload"] == "rr") & (net["metric"] == "rtt_mean") & (net["env"] == "docker-nat-volume")]
    tcp = rtt[rtt["protocol"] == "tcp"].groupby("host")["value"].mean()
    in_run = rtt[(rtt["protocol"] == "tcp") & rtt["source"].str.endswith(RUN)]["value"].mean()
    written = pd.read_csv(sample.SAMPLE / RUN / "records.csv")
    as_written = written[
        (written["workload"] == "rr")
        & (written["metric"] == "rtt_mean")
        & (written["env"] == "docker-nat-volume")
        & (written["protocol"] == "tcp")
    ]["value"].mean()
    assert in_run == pytest.approx(as_written) and tcp[other] == pytest.approx(2 * in_run)


def test_a_figure_refuses_two_hosts_records(two_hosts):
    records, _ = two_hosts
    with pytest.raises(hosts.FigureError, match="one host, these hold 2"):
        figures.net_block.network(records[records["experiment"] == "net"])


def test_titles_say_vm_guest_only_for_a_vm_guest(two_hosts):
    records, other = two_hosts
    net = records[records["experiment"] == "net"]
    described = {h: hosts.describe(part, h) for h, part in hosts.by_host(net)}
    assert OTHER_CPU in described[other] and "VM guest" not in described[other]
    assert all("a VM guest (its native is not bare metal)" in d for h, d in described.items() if h != other)
    main = records[records["host"] == MAIN_HOST]
    fig = figures.latency.latency_cdf(main)
    assert "native (a VM guest) vs Docker" in fig.axes[0].get_title() and "bare metal vs" not in fig.axes[0].get_title()
    plt.close(fig)


def test_the_explorer_draws_a_panel_per_host_and_never_averages_two(two_hosts):
    records, other = two_hosts
    known = set(records["host"].astype(str))
    for experiment, workload, metric in (("net", "rr", "rtt_mean"), ("startup", "startup", "start_to_ready")):
        _, envs, _ = explorer._choices(records, experiment, workload)
        fig, table = explorer.show(records, experiment, envs, metric, workload)
        part = records[
            (records["experiment"] == experiment) & (records["workload"] == workload) & (records["metric"] == metric)
        ]
        assert len(fig.axes) == part["host"].nunique() == table["host"].nunique()
        for ax in fig.axes:
            assert len(_host_ids(ax.get_title(), known)) == 1
        for row in table.itertuples():
            own = part[(part["host"] == row.host) & (part["env"] == row.env)]
            if "protocol" in table.columns:
                own = own[own["protocol"] == row.protocol]
            assert row.mean == pytest.approx(own["value"].mean()) and row.count == len(own)
        plt.close(fig)


BOOKKEEPING = {
    "position": lambda n, rng: rng.permutation(n),
    "started": lambda n, rng: [f"2026-01-01T00:00:{i:06d}" for i in rng.permutation(n)],
    "measured_requests": lambda n, rng: rng.integers(1, 10**6, n),
    "steal_pct": lambda n, rng: rng.random(n),
    "attempt": lambda n, rng: rng.integers(1, 3, n),
    "program_source": lambda n, rng: [f"{i:012x}" for i in rng.integers(0, 2**40, n)],
    "array_bytes": lambda n, rng: rng.integers(1, 10**9, n),
}


def test_bookkeeping_never_splits_the_explorers_groups(two_hosts):
    records, _ = two_hosts
    rng = np.random.default_rng(7)
    noisy = records.assign(**{c: make(len(records), rng) for c, make in BOOKKEEPING.items()})
    groups = ones = 0
    for experiment in sorted(records["experiment"].unique()):
        workloads, _, _ = explorer._choices(records, experiment)
        for workload in workloads:
            _, envs, metrics = explorer._choices(records, experiment, workload)
            for metric in metrics:
                _, plain = explorer.show(records, experiment, envs, metric, workload)
                fig, split = explorer.show(noisy, experiment, envs, metric, workload)
                assert not set(BOOKKEEPING) & set(split.columns), (experiment, workload, metric)
                pd.testing.assert_frame_equal(plain, split)
                groups, ones = groups + len(plain), ones + int((plain["count"] == 1).sum())
                plt.close("all")
    print(f"explorer: {groups} groups over every experiment, workload and metric, {ones} of them n = 1")
    assert ones == 0  # the sample's configurations all have 3 runs (or more)


def test_the_explorer_opens_on_a_metric_every_environment_has():
    records = analysis.load(["data/sample"])
    metric = explorer.default_metric(records, "startup", "startup")
    envs = records[(records["experiment"] == "startup")].groupby("metric")["env"].nunique()
    assert metric != "boot_to_ready" and envs[metric] == envs.max()


def test_units_and_scales_a_reader_can_read(two_hosts):
    records, _ = two_hosts
    main = records[records["host"] == MAIN_HOST]
    storage = figures.latency.storage_operations(main[main["experiment"] == "latency"])
    copy_up, listing = storage.axes[2], storage.axes[3]
    assert copy_up.get_ylabel() == "mean latency (ms)" and copy_up.get_ylim()[1] < 1000
    assert listing.get_ylim()[0] == 0 and listing.get_ylabel() == "mean latency (ms)"
    startup = figures.startup.startup_figure(main[main["experiment"] == "startup"])
    assert startup.axes[0].get_yscale() == "linear"
    names = [s.name for e in ("latency", "scaleout", "scaleout-oltp") for s in specs.schema(e).figures]
    assert all(re.search(r"-(closer-look|vroom)-fig", n) for n in names), names
    for fig in (storage, startup):
        assert "seed" not in _texts(fig).lower()
        plt.close(fig)


def test_table_one_keeps_each_host_apart(two_hosts, tmp_path):
    records, _ = two_hosts
    cpu = records[records["experiment"].isin(["cpu", "memory"])]
    other = cpu[cpu["host"] == MAIN_HOST].assign(host="second", value=lambda d: d["value"] * 2)
    table = tables.table_one(pd.concat([cpu, other]))
    ratio = table.set_index(["host", "benchmark", "env"])["mean"]
    assert ratio[("second", "PXZ (MB/s)", "native")] == pytest.approx(2 * ratio[(MAIN_HOST, "PXZ (MB/s)", "native")])
    written = tables.write(table, "table1", tmp_path)
    markdown = written[1].read_text()
    assert markdown.count("### host ") == 2 and "a VM guest" in markdown


def test_littles_law_is_one_readable_figure_per_host(two_hosts):
    from kitlib.analyse.figures import littles_law
    from kitlib.analyse.figures.style import env_label

    records, other = two_hosts
    table = analysis.littles_law_table(records)
    drawn = littles_law.figures(table, records, 0.15)
    assert set(drawn) == set(table["host"].astype(str)) and other in drawn
    for host, fig in drawn.items():
        (legend,) = fig.legends
        labels = [t.get_text() for t in legend.get_texts()]
        colours = [tuple(h.get_facecolor()[0]) for h in legend.legend_handles]
        assert len(set(colours)) == len(colours) == len(labels)  # one colour per series, never repeated
        kinds = {littles_law.series_kind(e) for e in table.loc[table["host"].astype(str) == host, "env"].astype(str)}
        assert sorted(labels) == sorted(env_label(k) for k in kinds)
        assert not any("quota" in label or "shares" in label for label in labels), "a sweep's points are no series"
        assert _host_ids(fig._suptitle.get_text(), set(drawn)) == {host}
        plt.close(fig)


def test_tables_of_a_sweep_keep_hosts_apart(two_hosts):
    records, _ = two_hosts
    redis = analysis.sweep_table(records, "redis", ["throughput"])
    assert redis.groupby(["host", "env", "clients"]).size().max() == 1 and redis["host"].nunique() == 1
    net = analysis.sweep_table(records, "net", ["rtt_mean"])
    assert net["host"].nunique() == 2 and net.groupby(["host", "env"]).size().max() <= 2  # tcp, udp


def test_a_figure_is_named_by_its_host_and_the_runs_it_draws(two_hosts):
    """The sample's network figure and the copy's are two files, each naming its run."""
    records, other = two_hosts
    net = records[records["experiment"] == "net"]
    names = [n for n in figures.draw(net, "net") if n.startswith("net-fig2-3-throughput-cpu-rtt-")]
    copy = net[net["host"] == other]
    assert set(copy["run_id"]) == {copy["run_id"].iloc[0]}, "the copy is one run"
    assert f"net-fig2-3-throughput-cpu-rtt-{other}-{copy['run_id'].iloc[0]}" in names
    main = net[net["host"] == MAIN_HOST]
    runs = sorted(set(main["run_id"]))
    tag = figures.runs_tag(main)
    assert tag == runs[0] if len(runs) == 1 else re.fullmatch(rf"{len(runs)}-runs-[0-9a-f]{{8}}", tag), tag
    assert f"net-fig2-3-throughput-cpu-rtt-{MAIN_HOST}-{tag}" in names and len(names) == 2
    assert figures.file_name("x", "h") == "x-h", "records that name no run: the host alone"
