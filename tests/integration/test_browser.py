"""A user's view of the kit, in a real browser (Debian's headless Chromium driven by chromedriver): a tour
chapter as a student runs it (copied by `kit tour start` into a folder of their own, opened in JupyterLab,
run), and the claims notebook with its explorer; each checked on what the page renders: a figure per
drawing of the chapter's one host, the sentences the records give, the verdict tables' rows, a panel per
host in the explorer. Records come from a copy of data/sample, so nothing of the project is written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from kitlib.analyse import analysis, tour
from kitlib.core import paths

from ..support.another_machine import copy_as_another_machine

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _default_signals() -> None:
    """Children get default dispositions even when the test runs with SIGINT ignored (a background job)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _wait_until(condition, timeout: float, what: str, interval: float = 0.5):
    """Poll `condition` until it gives a value. An element the page redrew while it was read (the explorer
    replaces its widgets and plot on every choice) is no answer yet, not a failure."""
    from selenium.common.exceptions import StaleElementReferenceException

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = condition()
        except StaleElementReferenceException:
            value = None
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def _processes_mentioning(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


@pytest.fixture
def lab(tmp_path):
    """JupyterLab on the project root, on 127.0.0.1 with a token; stopped with all its kernels afterwards."""
    with _lab(tmp_path, paths.PROJECT_ROOT) as (base, token, results):
        yield base, token, results


@pytest.fixture
def student_lab(tmp_path):
    """A student's tour (`kit tour start`) in a folder of their own, and JupyterLab on that folder."""
    folder = tour.start(tmp_path / "student").folder
    with _lab(tmp_path, folder) as (base, token, _):
        yield base, token, folder


@contextlib.contextmanager
def _lab(tmp_path, root: Path):
    """JupyterLab on `root`, on 127.0.0.1 with a token; stopped with all its kernels afterwards."""
    results = tmp_path / "results"
    # no autosave: the notebook under test stays as committed, without outputs
    settings = tmp_path / "settings" / "@jupyterlab" / "docmanager-extension"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text('{"autosave": false}')
    news = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    shutil.copytree(paths.PROJECT_ROOT / "data" / "sample", results)
    redis = next((results / "redis").glob("quick-*/"))  # a second machine's run, for a panel per host
    copy_as_another_machine(redis, redis.with_name(redis.name + "-other"))
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "KIT_RESULTS": str(results),
        "KIT_FIGURES": str(tmp_path / "figures"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(paths.PROJECT_ROOT), os.environ.get("PYTHONPATH")])),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    }
    argv = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}", f"--LabApp.user_settings_dir={tmp_path / 'settings'}",
        "--ServerApp.port_retries=0",
    ]  # fmt: skip
    if os.geteuid() == 0:
        argv.append("--allow-root")
    log = open(tmp_path / "lab.log", "wb")  # noqa: SIM115 - closed below, after the server stopped
    server = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                              preexec_fn=_default_signals)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:

        def answers():
            if server.poll() is not None:
                raise AssertionError(f"JupyterLab exited: {(tmp_path / 'lab.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as response:
                    return response.status == 200
            except OSError:
                return False

        _wait_until(answers, 120, "JupyterLab answering")
        yield base, token, results
    finally:
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
        except ProcessLookupError:
            pass
        log.close()
        assert _processes_mentioning(str(tmp_path / "runtime")) == [], "a kernel of the test's Lab is still running"


@pytest.fixture
def browser(tmp_path):
    """Headless Chromium through chromedriver, with a fresh profile; quit afterwards, nothing left."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("Debian's chromium and chromium-driver are not installed (make system installs them)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    profile = tmp_path / "chromium-profile"
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
        "--window-size=1400,1000", f"--user-data-dir={profile}",
    ):  # fmt: skip
        options.add_argument(flag)
    service = Service(executable_path=str(CHROMEDRIVER), log_output=str(tmp_path / "chromedriver.log"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.save_screenshot(str(tmp_path / "last-view.png"))  # what the browser showed, also on failure
        driver.quit()
        _wait_until(lambda: not _processes_mentioning(str(profile)), 30, "Chromium gone")


def _open_and_run_all(browser, url: str) -> None:
    """Open a notebook in Lab, accept the kernel it names, and run all its cells."""
    browser.get(url)
    _wait_until(lambda: browser.find_elements("css selector", ".jp-Notebook .jp-Cell"), 120, "the notebook open")
    _wait_until(
        lambda: browser.find_elements("css selector", ".jp-Notebook-ExecutionIndicator[data-status='idle']"),
        120,
        "the kernel idle",
    )
    time.sleep(2)
    _accept_dialogs(browser)
    _menu(browser, "Run", "Run All Cells")


def _accept_dialogs(browser) -> None:
    """Lab may ask which kernel to start (the kitlib kernel is offered): accept its choice."""
    for button in browser.find_elements("css selector", ".jp-Dialog .jp-mod-accept"):
        button.click()


def _menu(browser, label: str, item: str) -> None:
    browser.find_element("xpath", f"//div[contains(@class,'lm-MenuBar-itemLabel')][text()='{label}']").click()
    _wait_until(
        lambda: browser.find_elements("xpath", f"//div[contains(@class,'lm-Menu-itemLabel')][text()='{item}']"),
        10,
        f"menu item {item}",
    )[0].click()


def _cell_of(browser, code: str):
    """The notebook cell whose input holds `code`."""
    for cell in browser.find_elements("css selector", ".jp-Notebook .jp-CodeCell"):
        if code in cell.find_element("css selector", ".jp-InputArea").text:
            return cell
    raise AssertionError(f"no cell holds {code!r}")


def _outputs_text(cell) -> str:
    return "\n".join(o.text for o in cell.find_elements("css selector", ".jp-OutputArea-output"))


def test_a_students_tour_chapter_runs_in_jupyterlab_and_shows_what_its_records_say(student_lab, browser, tmp_path):
    base, token, folder = student_lab
    chapter = "01-paths-of-a-request.ipynb"
    committed = (folder / chapter).read_bytes()
    _open_and_run_all(browser, f"{base}/lab/tree/{chapter}?token={token}")
    check = _wait_until(
        lambda: (
            "correct" in _outputs_text(_cell_of(browser, 'tour.check("01"')) and _cell_of(browser, 'tour.check("01"')
        ),
        300,
        "the check cell's answer",
    )
    browser.save_screenshot(str(tmp_path / "tour-chapter.png"))
    text = browser.find_element("css selector", ".jp-Notebook").text
    assert "Traceback" not in text and "Error" not in text
    records = tour.sample()
    assert f"{len(records)} records from data/sample" in text
    # a figure per drawing cell, each of the chapter's one host
    assert records["host"].nunique() == 1
    for code in ("tour.paths_diagram()", "tour.redis_figure(records)"):
        images = _cell_of(browser, code).find_elements("css selector", ".jp-OutputArea-output img")
        assert len(images) == 1, code
        assert images[0].get_property("naturalWidth") > 300
    # the sentences the records give, rendered (Markdown's emphasis gone, its words the same)
    rendered = _outputs_text(_cell_of(browser, "tour.request_paths(records)"))
    for line in tour.request_paths(records).splitlines():
        if line.strip():
            assert line.replace("**", "").replace("`", "").removeprefix("- ").strip() in rendered, line
    assert "0 of 2 correct" in _outputs_text(check) and "not answered" in _outputs_text(check)
    # the answers stay in the student's folder, the chapter as they saved it (no autosave in this Lab)
    assert (folder / "answers.json").exists()
    assert (folder / chapter).read_bytes() == committed


def _explorer_image(driver) -> str | None:
    images = driver.find_elements("css selector", ".widget-output img, .jupyter-widgets-output-area img")
    return images[-1].get_attribute("src") if images else None


def _explorer_view(browser) -> tuple[str, int, str] | None:
    """(image source, its height in pixels, the table's text) of the explorer's output, once both are drawn."""
    images = browser.find_elements("css selector", ".widget-output img, .jupyter-widgets-output-area img")
    tables = browser.find_elements("css selector", ".widget-output table, .jupyter-widgets-output-area table")
    if not images or not tables:
        return None
    return images[-1].get_attribute("src"), int(images[-1].get_property("naturalHeight")), tables[-1].text


@pytest.mark.extended  # JupyterLab in a browser: the tour chapter; the claims notebook: papermill
def test_the_claims_notebook_runs_in_jupyterlab_and_its_explorer_answers(lab, browser, tmp_path):
    from selenium.webdriver.support.ui import Select

    base, token, results = lab
    notebook = paths.PROJECT_ROOT / "notebooks" / "analysis" / "claims.ipynb"
    committed = notebook.read_bytes()
    records = analysis.load([results])
    _open_and_run_all(browser, f"{base}/lab/tree/notebooks/analysis/claims.ipynb?token={token}")

    def widgets_or_dialog():
        _accept_dialogs(browser)
        return browser.find_elements("css selector", ".widget-dropdown select")

    dropdowns = _wait_until(widgets_or_dialog, 300, "the explorer's widgets")
    browser.save_screenshot(str(tmp_path / "claims-explorer.png"))
    text = browser.find_element("css selector", ".jp-Notebook").text
    assert "Traceback" not in text and "Error" not in text.split("## Explore")[0][-2000:]
    assert "records, experiments:" in text
    assert browser.find_elements("css selector", ".widget-select-multiple select"), "no environment picker"

    # the verdict tables: one row per claim and host, every verdict shown
    verdicts = analysis.claims_table(records)
    tables = _cell_of(browser, "analysis.claims_table(records)")
    assert f"{len(verdicts)} verdicts (claim × host)" in _outputs_text(tables)
    rows = tables.find_elements("css selector", ".jp-OutputArea-output table tbody tr")
    assert len(rows) == len(verdicts)

    assert dropdowns

    def pick(name: str, option: str | None = None) -> tuple[str, int, str]:
        """Choose an option of the explorer's dropdown `name` (another than the current one if None) and
        wait for the redrawn view."""
        before = _wait_until(lambda: _explorer_view(browser), 120, "the explorer's view")
        chosen: dict[str, str] = {}

        def choose():
            found = browser.find_elements("css selector", ".widget-dropdown select")  # found again: redrawn
            labels = [d.find_element("xpath", "./preceding-sibling::label").text for d in found]
            menu = Select(found[labels.index(name)])
            current = menu.first_selected_option.text
            wanted = option or next(o.text for o in menu.options if o.text != current)
            if wanted != current:
                menu.select_by_visible_text(wanted)
            chosen.update(option=wanted, current=current)
            return True

        _wait_until(choose, 60, f"the {name} menu")
        option = chosen["option"]
        if option == chosen["current"]:
            return before

        def settled():
            # one choice may redraw more than once (workload, environments and metric follow the experiment)
            first = _explorer_view(browser)
            if not first or first[0] == before[0]:
                return None
            time.sleep(2)
            return first if _explorer_view(browser) == first else None

        return _wait_until(settled, 120, f"the view of {option}")

    before = _wait_until(lambda: _explorer_view(browser), 120, "the explorer's first plot")
    after = pick("metric")
    assert after[0] != before[0]
    browser.save_screenshot(str(tmp_path / "claims-explorer-redrawn.png"))

    # a panel per host: the table names each machine of the experiment, the picture grows by a panel a host
    heights = {}
    for experiment in ("cpu", "redis"):
        _, height, table = pick("experiment", experiment)
        machines = set(records.loc[records["experiment"] == experiment, "host"].astype(str))
        named = {host for host in set(records["host"].astype(str)) if host in table}
        assert named == machines, (experiment, named, machines)
        heights[len(machines)] = height
    assert set(heights) == {1, 2} and heights[2] > 1.6 * heights[1], heights
    browser.save_screenshot(str(tmp_path / "claims-explorer-hosts.png"))

    assert (results / "summary.md").exists(), "the claims' summary of the copied records"
    assert notebook.read_bytes() == committed, "the notebook was saved with outputs"
