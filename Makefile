# The kit's commands: `make reproduce`, `make test` and `make lab`. Each does its own set-up:
#  - as root on Debian/Ubuntu: the Debian packages the experiments use, docker.io, and a running dockerd
#    (`make lab` needs none of them: only Python, no Docker, no root);
#  - a conda env (./.conda-env) when conda is installed, else a virtualenv (./.venv), from pyproject.toml,
#    with the Jupyter kernel `kitlib` (the kernel every notebook names) installed into it. `make lab` installs
#    only what a course needs (kitlib and JupyterLab: the extra `course`); `make test`, `make lint` and
#    `make reproduce` add the tests' and the linter's tools (the extra `dev`: pytest, ruff, selenium, …).
SHELL := /bin/bash
.DEFAULT_GOAL := help

ifneq ($(shell command -v conda 2>/dev/null),)
ENV_DIR := .conda-env
else
ENV_DIR := .venv
endif
BIN := $(ENV_DIR)/bin
PY := $(BIN)/python
KIT := $(BIN)/kit
STAMP := $(ENV_DIR)/.kitlib-installed
DEV_STAMP := $(ENV_DIR)/.kitlib-dev

DEBIAN_PACKAGES := docker.io debootstrap iproute2 iptables procps util-linux python3-venv python3-pip \
  redis-server redis-tools nutcracker haproxy fio sysbench mariadb-server mariadb-client hpcc openmpi-bin libopenblas0-openmp xz-utils \
  nginx php8.2-fpm php8.2-mysql \
  gcc libc6-dev libopenblas-openmp-dev \
  nuttcp iperf3 sockperf qperf numactl qemu-system-x86 qemu-utils e2fsprogs openssh-client openssh-server \
  libvirt-clients libxml2-utils lxc chromium chromium-driver \
  slurmctld slurmd slurm-client munge \
  crun runsc podman slirp4netns uidmap passt catatonit fuse-overlayfs systemd-container

# packages whose install starts a system service: the kit starts its own servers, so these are stopped
# (and disabled) again right after the install that brought them
SERVICES_NOT_LEFT_RUNNING := nginx php8.2-fpm munge slurmctld slurmd

.PHONY: help setup system course python kernel lab docker test test-all test-fast reproduce lint clean-leftovers

help:
	@echo "make lab         JupyterLab at the project root on the kit's own kernel (no Docker, no root needed;"
	@echo "                 installs only what a course needs: kitlib, JupyterLab, the kernel)"
	@echo "make python      only the Python environment ($(ENV_DIR)) with the tests' tools, and the kernel 'kitlib'"
	@echo "make reproduce   quick profile of every experiment on every environment here, then the analysis"
	@echo "make test        the test suite (unit + integration with real tools and Docker: each capability once)"
	@echo "make test-all    the test suite with its extended cases (more signals, runtimes, hosts, failures)"
	@echo "make test-fast   the unit tests (tests/unit: fast, pure; no engine, namespaces or guests)"
	@echo "make lint        ruff"
	@echo "Tour for a course: notebooks/tour/ (offline, on data/sample); a student's own copy: $(KIT) tour start"
	@echo "(teacher's guide: notebooks/tour/TEACHING.md); analysis: notebooks/analysis/"

setup: system python docker

system:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  missing=$$(for p in $(DEBIAN_PACKAGES); do dpkg-query -W -f='$${db:Status-Abbrev}' $$p 2>/dev/null | grep -q '^ii' || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    echo "installing Debian packages: $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	    for service in $(SERVICES_NOT_LEFT_RUNNING); do \
	      case " $$(echo $$missing) " in *" $$service "*) \
	        if command -v systemctl >/dev/null && systemctl is-system-running >/dev/null 2>&1; then systemctl disable --now -q $$service || true; \
	        elif command -v service >/dev/null; then service $$service stop >/dev/null 2>&1 || true; fi;; esac; \
	    done; \
	  fi; \
	else \
	  echo "not root (or no apt-get): skipping system packages; 'kit envs' tells what is missing"; \
	fi

$(STAMP): pyproject.toml environment.yml
ifeq ($(ENV_DIR),.conda-env)
	conda env update -p $(ENV_DIR) -f environment.yml --prune -q
else
	python3 -m venv $(ENV_DIR)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[course]'
endif
	touch $(STAMP)

# The tests' and the linter's tools, on top of the course's environment.
$(DEV_STAMP): $(STAMP)
	$(BIN)/pip install -q -e '.[dev]'
	touch $(DEV_STAMP)

# The kernel every notebook names (kernelspec `kitlib`): the env's Python, so kitlib is always importable.
KERNEL_SPEC := $(ENV_DIR)/share/jupyter/kernels/kitlib/kernel.json
$(KERNEL_SPEC): $(STAMP)
	$(PY) -m ipykernel install --sys-prefix --name kitlib --display-name "Python (kitlib)"

course: $(STAMP) $(KERNEL_SPEC)

python: course $(DEV_STAMP)

kernel: $(KERNEL_SPEC)

# JupyterLab at the project root (figures/, results/, data/ browsable); as root Jupyter needs --allow-root.
# LAB_ARGS adds options, e.g. `make lab LAB_ARGS="--no-browser --ip 127.0.0.1 --port 8899"`.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
lab: course
	$(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" $(ALLOW_ROOT) $(LAB_ARGS)

# The engine the kit starts registers the OCI runtimes installed here (crun, gVisor's runsc) from
# $(DOCKER_CONFIG_FILE); on hybrid cgroups a controller left on v2 is bound to v1 first (crun refuses otherwise).
DOCKER_CONFIG_FILE := /var/lib/kitlib/docker-daemon.json
docker: python
	@if [ "$$(id -u)" = 0 ]; then $(PY) -m kitlib.measure.host.docker_runtimes prepare $(DOCKER_CONFIG_FILE); fi; \
	if command -v docker >/dev/null && docker info >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v dockerd >/dev/null; then \
	  echo "no Docker engine answers and none can be started here: Docker environments will be skipped"; exit 0; fi; \
	if [ -d /run/systemd/system ] && systemctl start docker 2>/dev/null; then :; else \
	  echo "starting dockerd (log: /var/log/kitlib-dockerd.log)"; \
	  nohup dockerd --config-file $(DOCKER_CONFIG_FILE) >/var/log/kitlib-dockerd.log 2>&1 & \
	fi; \
	for i in $$(seq 60); do docker info >/dev/null 2>&1 && exit 0; sleep 1; done; \
	echo "dockerd did not answer within 60 s; see /var/log/kitlib-dockerd.log"; exit 1

# As root the real engine, namespaces and a TCG guest must be there: a missing one fails the tests instead of skipping them.
comma := ,
REQUIRE := $(if $(filter 0,$(shell id -u)),docker$(comma)netns$(comma)vm$(comma)lxc$(comma)slurm$(comma)runtimes$(comma)nspawn$(comma)podman,)

# `make test` runs every capability for real once (about 50 min of pytest on a busy 2-core guest); `make test-all`
# adds the further cases marked `extended` (more signals, runtimes, hosts and failures of the same machinery: about 40 min more)
TEST_SELECTION := -m "not extended"
test: setup
	KIT_REQUIRE=$(REQUIRE) $(PY) -m pytest -q --durations=25 $(TEST_SELECTION)

test-all: TEST_SELECTION :=
test-all: test

# tests/unit needs no root, engine, namespace or server: run with a dead Docker socket, where
# tests/unit/conftest.py puts tripwires in front of `ip`, `docker` and the servers and fails a test that calls one
test-fast: python
	DOCKER_HOST=unix:///nonexistent/kit-unit-tests/docker.sock $(PY) -m pytest -q tests/unit

reproduce: setup
	$(KIT) reproduce

lint: python
	$(BIN)/ruff format --check kitlib tests benchmarks
	$(BIN)/ruff check kitlib tests benchmarks

clean-leftovers: python
	$(KIT) clean
