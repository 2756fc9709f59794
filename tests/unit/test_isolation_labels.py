"""The labels of isolation beyond 2014 (`+runtime=NAME`, Podman rootful and rootless, nspawn): one
spelling each, refused where they do not apply, record columns that never collide with a workload's
parameters, figures that tell runtimes apart, and what `make reproduce` adds where a host offers it."""

from __future__ import annotations

import pandas as pd
import pytest

import kitlib
from kitlib.analyse.claims.core import ENV_OPTION_COLUMNS, kind_of
from kitlib.analyse.figures.style import env_order, env_style
from kitlib.core.errors import PlanError
from kitlib.measure import experiments
from kitlib.measure.host import docker_runtimes, stranded_shims
from kitlib.measure.planning import Plan
from kitlib.measure.run.runner import plan_units
from kitlib.progress import planned_units
from kitlib.reproduce import ISOLATION_LABELS, environments_for, plan_of
from kitlib.specs.labels import known_labels, option_columns, parse_label, slug


def test_a_runtime_is_an_option_of_docker_labels_with_one_spelling():
    spec = parse_label("docker-nat-overlay+cpus1+runtime=runsc-hostinet")
    assert (spec.kind, spec.network, spec.options) == ("docker", "nat", {"cpus": "1", "runtime": "runsc-hostinet"})
    with pytest.raises(PlanError, match="write 'docker-host-volume\\+cpus1\\+runtime=crun'"):
        parse_label("docker-host-volume+runtime=crun+cpus1")
    with pytest.raises(PlanError, match="needs a value matching"):
        parse_label("docker-host-volume+runtime=")
    with pytest.raises(PlanError, match="needs a value matching"):
        parse_label("docker-host-volume+runtime=Crun;rm")
    for other in ("lxc", "nspawn", "podman-host-volume", "qemu-tcg", "native"):
        with pytest.raises(PlanError):
            parse_label(f"{other}+runtime=crun")


def test_rootless_nat_names_its_user_mode_network_and_host_network_takes_none():
    assert parse_label("podman-rootless-nat-volume+slirp4netns").network == "slirp4netns"
    assert parse_label("podman-rootless-nat-overlay+pasta").network == "pasta"
    assert parse_label("podman-rootless-host-volume").network == "host"
    with pytest.raises(PlanError, match="add \\+slirp4netns or \\+pasta"):
        parse_label("podman-rootless-nat-volume")
    with pytest.raises(PlanError, match="takes no network mode"):
        parse_label("podman-rootless-host-volume+pasta")
    with pytest.raises(PlanError, match="do not apply"):
        parse_label("podman-nat-volume+slirp4netns")


def test_every_known_label_parses_and_its_kind_is_known_from_its_base():
    labels = known_labels()
    assert {"podman-rootless-nat-volume+slirp4netns", "podman-rootless-nat-volume+pasta", "nspawn"} <= set(labels)
    assert "podman-rootless-nat-volume" not in labels
    for label in labels:
        assert parse_label(label).label == label
        assert kind_of(label) == parse_label(label).kind
    assert kind_of("podman-rootless-nat-volume+pasta+replica") == "podman-rootless"


def test_names_made_from_labels_hold_only_what_names_may():
    assert (
        slug("docker-host-volume+cpus0-1+runtime=runsc-hostinet") == "docker-host-volume-cpus0-1-runtime-runsc-hostinet"
    )


def test_the_runtime_column_never_collides_with_fios_runtime():
    columns = option_columns(parse_label("docker-host-volume+quota5000+runtime=crun+replica").options)
    assert columns == {"quota": 5000, "oci_runtime": "crun"}
    assert "oci_runtime" in ENV_OPTION_COLUMNS and "runtime" not in ENV_OPTION_COLUMNS


def test_figures_tell_runtimes_apart_and_keep_each_beside_its_base():
    styles = {
        label: (style["color"], style["marker"])
        for label in ("docker-host-volume", *(f"docker-host-volume+runtime={n}" for n in ("crun", "runsc", "other")))
        for style in [env_style(label)]
    }
    assert len(set(styles.values())) == len(styles)
    rows = pd.DataFrame({"env": ["zzz-unknown", "docker-host-volume+runtime=crun", "native", "docker-host-volume"]})
    assert env_order(rows) == ["native", "docker-host-volume", "docker-host-volume+runtime=crun", "zzz-unknown"]


def test_reproduce_adds_the_isolation_labels_this_host_offers_to_the_experiments_that_compare_them():
    offered = {"native": True, "docker-host-volume": True, "docker-nat-volume": True}
    offered |= {label: label.endswith("crun") or label == "nspawn" for label in ISOLATION_LABELS}
    defaults = ("native", "docker-host-volume")
    assert environments_for(defaults, offered, "redis") == [*defaults, "docker-host-volume+runtime=crun", "nspawn"]
    assert environments_for(defaults, offered, "cpu") == list(defaults)
    assert environments_for(defaults, offered, "block") == list(defaults)  # run when asked: see ISOLATION_EXPERIMENTS


def test_a_runtime_the_engine_lacks_is_explained_with_what_it_lists():
    text = docker_runtimes.unregistered("kata", ["crun", "runc"])
    assert "no runtime 'kata'" in text and "it lists: crun, runc" in text


def test_known_runtime_errors_are_explained_and_others_kept_verbatim():
    crun = "OCI runtime create failed: cgroups in hybrid mode not supported, drop all controllers from cgroupv2"
    assert "binds it to v1" in docker_runtimes.explain(crun) and crun in docker_runtimes.explain(crun)
    assert docker_runtimes.explain("exec format error\nmore") == "exec format error"


def test_stray_v2_controllers_are_read_from_a_hybrid_hierarchy(tmp_path):
    assert docker_runtimes.stray_v2_controllers(tmp_path) == []  # no `unified`: pure v1 or v2
    (tmp_path / "unified").mkdir()
    (tmp_path / "unified" / "cgroup.controllers").write_text("hugetlb\n")
    assert docker_runtimes.stray_v2_controllers(tmp_path) == ["hugetlb"]


def test_gvisor_platform_and_network_are_read_from_its_arguments():
    assert docker_runtimes._flag(["--platform=kvm", "--network", "host"], "network") == "host"
    assert docker_runtimes._flag(["--platform=kvm"], "platform") == "kvm"
    assert docker_runtimes._flag([], "platform") is None


#: a containerd shim's and gVisor's command lines, as /proc shows them on a Docker host
SHIM = ["/usr/bin/containerd-shim-runc-v2", "-namespace", "moby", "-id", "a" * 64, "-address", "/run/containerd.sock"]
SANDBOX = ["runsc-sandbox", "--root=/var/run/docker/runtime-runc/moby", "boot", "--bundle=/b/" + "a" * 64, "a" * 64]


def fake_proc(root, processes: dict[int, list[str]]):
    for pid, argv in processes.items():
        (root / str(pid)).mkdir()
        (root / str(pid) / "cmdline").write_bytes("\0".join(argv).encode() + b"\0")
    (root / "self").mkdir()
    return root


def test_a_shim_whose_container_the_engine_forgot_is_found_with_its_sandbox(tmp_path):
    other_namespace = [*SHIM[:2], "k8s.io", *SHIM[3:4], "b" * 64]
    proc = fake_proc(tmp_path, {10: SHIM, 11: SANDBOX, 12: other_namespace, 13: ["redis-server", "a" * 64]})
    (found,) = stranded_shims.find(set(), proc)
    assert (found.container_id, found.shim_pid) == ("a" * 64, 10)
    assert found.sandboxes == (("runsc-sandbox", "/var/run/docker/runtime-runc/moby"),)
    assert stranded_shims.find({"a" * 64}, proc) == []
    assert stranded_shims.shim_container(other_namespace) is None
    assert stranded_shims.shim_container(["containerd-shim-runc-v2", "-namespace", "moby", "-id"]) is None


def test_a_port_still_held_is_replaced_for_the_next_environment_and_the_others_kept():
    import socket

    from kitlib.measure import cpus
    from kitlib.measure.host.ports import free_ports, is_free
    from kitlib.measure.run.runner import layout_with_free_ports

    held_port, kept_port = free_ports(2)
    layout = cpus.Layout(sut_cpus=[1], client_cpus=[0], ports=[held_port, kept_port])
    assert layout_with_free_ports(layout) is layout  # nothing held: the run's own ports
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", held_port))
        holder.listen()
        assert not is_free(held_port)
        moved = layout_with_free_ports(layout)
    assert moved.ports[1] == kept_port and moved.ports[0] != held_port and is_free(moved.ports[0])
    assert (moved.sut_cpus, moved.client_cpus, layout.ports) == ([1], [0], [held_port, kept_port])


def test_a_reproduce_surveys_the_isolation_labels_at_the_sweeps_middle_point():
    offered = {"native": True, "docker-host-volume": True, "docker-nat-volume": True, "nspawn": True}
    plan = plan_of("redis", offered, "quick", adaptive=True)
    assert plan.survey == ("nspawn",) and "nspawn" in plan.environments
    units = plan_units(plan)
    clients = {env: sorted({u.point["clients"] for u in units if u.env == env}) for env in plan.environments}
    sweep = [p["clients"] for p in experiments.workloads_of(plan)[0].points()]
    assert clients["nspawn"] == [sweep[len(sweep) // 2]] and clients["native"] == sweep
    assert len(units) == plan.repetitions * (3 * len(sweep) + 1)
    assert sorted(planned_units(plan)) == sorted(u.key for u in units)  # the progress counts the same units
    assert plan_of("cpu", offered, "quick", adaptive=True).survey == ()


def test_a_survey_is_part_of_the_run_and_names_only_measured_labels():
    whole = kitlib.plan("redis", environments=["native", "nspawn"])
    surveyed = kitlib.plan("redis", environments=["native", "nspawn"], survey=["nspawn"])
    assert whole.run_id != surveyed.run_id and "survey" not in whole.identity()
    assert Plan.model_validate(surveyed.model_dump(mode="json")).run_id == surveyed.run_id  # plan.json resumes
    assert whole.run_id == kitlib.plan("redis", environments=["native", "nspawn"], survey=[]).run_id
    with pytest.raises(PlanError, match=r"survey names environments the plan does not measure: \['lxc'\]"):
        kitlib.plan("redis", environments=["native"], survey=["lxc"])
