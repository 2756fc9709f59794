"""Figures a reviewer accepts, checked on the real sample records: log axes where an emulator would flatten
the rest, CDFs as steps, every series in a legend, error bars on every mean, µs, and no pooled views."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from kitlib.analyse import analysis, explorer, figures  # noqa: E402


@pytest.fixture(scope="module")
def records():
    return analysis.load(["data/sample"])


@pytest.fixture(scope="module")
def main(records):
    """The records of the sample's main host (a figure draws one host at a time)."""
    return records[records["host"] == records["host"].value_counts().idxmax()]


def _texts(fig) -> str:
    return " ".join(t.get_text() for ax in fig.axes for t in [ax.xaxis.label, ax.yaxis.label, ax.title])


def test_redis_latency_is_on_a_log_axis_and_the_emulator_says_it_is_one(records):
    drawn = figures.draw(records, "redis")
    assert len(drawn) == 1  # one host: the main run and the qemu-tcg run of the same machine
    legends = {name: [t.get_text() for t in fig.legends[0].get_texts()] for name, fig in drawn.items()}
    assert all(fig.axes[1].get_yscale() == "log" for fig in drawn.values())
    assert sorted(map(len, legends.values())) == [records.loc[records["experiment"] == "redis", "env"].nunique()]
    assert "qemu-tcg (emulated, not KVM)" in sum(legends.values(), [])
    for fig in drawn.values():
        plt.close(fig)


def test_the_redis_axis_states_the_pipeline_the_records_hold(records):
    redis = records[records["experiment"] == "redis"]
    (fig,) = figures.draw(redis, "redis").values()
    assert fig.axes[0].xaxis.label.get_text() == "client connections (pipeline 10)"
    plt.close(fig)
    deeper = redis.assign(pipeline=16)
    (fig,) = figures.draw(deeper, "redis").values()
    assert fig.axes[0].xaxis.label.get_text() == "client connections (pipeline 16)"
    plt.close(fig)


def test_latency_cdfs_are_steps_on_a_log_axis_and_say_what_they_are_drawn_from(main):
    shares = figures.latency.latency_cdf(main)
    block = figures.net_block.block(main[main["experiment"] == "block"])
    for fig, ax in ((shares, shares.axes[0]), (block, block.axes[2])):
        assert ax.get_xscale() == "log"
        assert ax.lines and all(line.get_drawstyle() == "steps-post" for line in ax.lines)
        assert any("percentiles" in t.get_text() for t in ax.texts)
        plt.close(fig)


def test_mysql_legend_names_the_loss_curves_and_every_mean_has_an_error_bar(main):
    fig = figures.mysql.mysql_figures(main[main["experiment"] == "mysql"])
    top_left, fig11, _, fig13 = fig.axes[:4]
    labels = [t.get_text() for t in top_left.get_legend().get_texts()]
    assert any(label.endswith("loss vs native") for label in labels)
    assert "native" in labels
    for ax in (fig11, fig13):
        assert ax.containers, "no error bars"
        assert {t.get_text() for t in ax.texts} >= {"1", "16"}  # thread labels
    plt.close(fig)


def test_units_read_microseconds_never_us(records, main):
    for make in (figures.latency.latency_cdf, figures.redis.throughput_latency):
        fig = make(main)
        assert " us" not in _texts(fig) and "(us" not in _texts(fig)
        plt.close(fig)
    fig, _ = explorer.show(records, "net", ["native"], "rtt_mean", "rr")
    assert "(µs)" in fig.axes[0].yaxis.label.get_text()
    plt.close(fig)


def test_the_explorer_never_pools_workloads_or_configurations(records):
    workloads, envs, metrics = explorer._choices(records, "block")
    for workload in ("seq_read", "rand_mixed"):
        fig, table = explorer.show(records, "block", envs, "bandwidth", workload)
        rows = records[(records["workload"] == workload) & (records["metric"] == "bandwidth")]
        if workload == "rand_mixed":
            assert "direction" in table.columns  # read and write of the mix are two bars, not one mean
        assert table["count"].max() <= rows.groupby(["env", "run_id"]).size().max()
        assert (table["mean"] - table["std"].fillna(0) > 0).all()  # no error bar below zero from pooling
        plt.close(fig)


def test_the_explorer_carries_a_static_view_for_front_ends_without_widgets(records):
    import ipywidgets as widgets

    box = widgets.VBox([widgets.Dropdown(options=["redis"])])
    bundle = explorer._with_static_view(box, records, "redis", ["native", "qemu-tcg"], "throughput", "redis")
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == box.model_id
    assert bundle["image/png"].startswith("iVBOR")  # base64 of a PNG
    assert "VBox" not in bundle["text/plain"]
    box.close_all()
