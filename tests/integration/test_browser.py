"""A user's view of the kit: JupyterLab on the project, the claims notebook run in a real browser
(Debian's headless Chromium driven by chromedriver), the explorer shown as widgets and redrawn when a
dropdown changes. Records come from a copy of data/sample, so nothing of the project is written.
"""

from __future__ import annotations

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

from kitlib import paths

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
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
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
    results = tmp_path / "results"
    # no autosave: the notebook under test stays as committed, without outputs
    settings = tmp_path / "settings" / "@jupyterlab" / "docmanager-extension"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text('{"autosave": false}')
    news = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    shutil.copytree(paths.PROJECT_ROOT / "data" / "sample", results)
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
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={paths.PROJECT_ROOT}",
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


def _explorer_image(driver) -> str | None:
    images = driver.find_elements("css selector", ".widget-output img, .jupyter-widgets-output-area img")
    return images[-1].get_attribute("src") if images else None


def test_the_claims_notebook_runs_in_jupyterlab_and_its_explorer_answers(lab, browser, tmp_path):
    from selenium.webdriver.support.ui import Select

    base, token, results = lab
    notebook = paths.PROJECT_ROOT / "notebooks" / "analysis" / "claims.ipynb"
    committed = notebook.read_bytes()
    browser.get(f"{base}/lab/tree/notebooks/analysis/claims.ipynb?token={token}")
    _wait_until(lambda: browser.find_elements("css selector", ".jp-Notebook .jp-Cell"), 120, "the notebook open")
    _wait_until(
        lambda: browser.find_elements("css selector", ".jp-Notebook-ExecutionIndicator[data-status='idle']"),
        120,
        "the kernel idle",
    )

    def menu(label: str, item: str) -> None:
        browser.find_element("xpath", f"//div[contains(@class,'lm-MenuBar-itemLabel')][text()='{label}']").click()
        _wait_until(
            lambda: browser.find_elements("xpath", f"//div[contains(@class,'lm-Menu-itemLabel')][text()='{item}']"),
            10,
            f"menu item {item}",
        )[0].click()

    def widgets_or_dialog():
        # Lab may ask which kernel to start (the kitlib kernel is offered): accept its choice
        for button in browser.find_elements("css selector", ".jp-Dialog .jp-mod-accept"):
            button.click()
        return browser.find_elements("css selector", ".widget-dropdown select")

    time.sleep(2)
    widgets_or_dialog()
    menu("Run", "Run All Cells")
    dropdowns = _wait_until(widgets_or_dialog, 300, "the explorer's widgets")
    browser.save_screenshot(str(tmp_path / "claims-explorer.png"))
    text = browser.find_element("css selector", ".jp-Notebook").text
    assert "Traceback" not in text and "Error" not in text.split("## Explore")[0][-2000:]
    assert "records, experiments:" in text
    assert browser.find_elements("css selector", ".widget-select-multiple select"), "no environment picker"
    before = _wait_until(lambda: _explorer_image(browser), 120, "the explorer's first plot")

    labels = [d.find_element("xpath", "./preceding-sibling::label").text for d in dropdowns]
    metric = Select(dropdowns[labels.index("metric")])
    current = metric.first_selected_option.text
    other = next(o.text for o in metric.options if o.text != current)
    metric.select_by_visible_text(other)
    after = _wait_until(lambda: (src := _explorer_image(browser)) and src != before and src, 120, "a redrawn plot")
    assert after != before
    browser.save_screenshot(str(tmp_path / "claims-explorer-redrawn.png"))
    assert (results / "summary.md").exists(), "the claims' summary of the copied records"
    assert notebook.read_bytes() == committed, "the notebook was saved with outputs"
