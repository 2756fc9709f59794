"""The social events web tier on this host: a private MariaDB filled by generate.py, php-fpm and nginx
started from the templates on a loopback port, and every route of the HTTP contract checked with urllib.
Every process started is stopped afterwards, also when a check fails.

Needs Debian's mariadb-server, mariadb-client, nginx, php8.2-fpm and php8.2-mysql.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from email.message import Message
from pathlib import Path

import pytest

from kitlib.core import paths
from kitlib.core.procs import kill_group
from kitlib.core.signals import default_dispositions

pytestmark = [pytest.mark.slow]

WEBTIER = paths.PROJECT_ROOT / "kitlib" / "measure" / "image" / "webtier"
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/bin"])
PROGRAMS = ["mariadb-install-db", "mariadbd", "mariadb", "mariadb-admin", "php-fpm8.2", "nginx"]
DB_NAME, DB_USER, DB_PASSWORD = "social", "kit", "kit-secret"
USERS = 50  # generate.py --users 50: 200 persons, 100 events
PERSONS, EVENTS = 200, 100


def _popen(argv: Sequence[str], log: Path) -> subprocess.Popen:
    """A server in its own process group, its output into `log`. Not marked as a kit run's (KITLIB_OWNER):
    the servers outlive single tests, so conftest's check after each test would count them; _stop checks
    instead that nothing of the group is left."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            list(argv),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            restore_signals=True,
            preexec_fn=default_dispositions,  # whatever this test inherited (a background job)
        )


def _run(argv: Sequence[str], *, timeout: float, input: bytes | None = None, cwd: Path | None = None) -> str:
    """Run to completion within `timeout` (its whole process group killed if not); its stdout, or a failure."""
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        start_new_session=True,
        restore_signals=True,
        preexec_fn=default_dispositions,  # whatever this test inherited (a background job)
    )
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc, grace=0)
        proc.communicate(timeout=10)
        raise AssertionError(f"{argv[0]} did not finish within {timeout} s") from None
    assert proc.returncode == 0, f"{list(argv)} failed ({proc.returncode}): {err.decode(errors='replace')[-2000:]}"
    return out.decode()


def _stop(proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM to the group, a bounded wait, then SIGKILL to whatever of the group is left; the group must
    then be gone."""
    kill_group(proc, grace)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise AssertionError(f"processes of {proc.args[0]}'s group {proc.pid} are still there")


def _wait_until(ready: Callable[[], bool], timeout: float, what: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{what}: exited with {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        if ready():
            return
        time.sleep(0.2)
    raise AssertionError(f"{what}: not ready within {timeout} s: {log.read_text(errors='replace')[-2000:]}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def programs() -> dict[str, str]:
    found = {name: shutil.which(name, path=SEARCH_PATH) for name in PROGRAMS}
    if None in found.values():
        missing = [name for name, path in found.items() if path is None]
        pytest.skip(f"{', '.join(missing)} missing: apt-get install mariadb-server nginx php8.2-fpm php8.2-mysql")
    return found  # type: ignore[return-value]


class Database:
    def __init__(self, mariadb: str, socket_path: Path) -> None:
        self.mariadb, self.socket = mariadb, socket_path
        self.generated = ""  # generate.py's output, as loaded

    def sql(self, statements: str = "", database: str = DB_NAME, input: bytes | None = None) -> str:
        """The statements' tab-separated rows, or those of `input` fed to the client."""
        argv = [self.mariadb, "--no-defaults", f"--socket={self.socket}", "-u", "root", "-N", "-B"]
        if input is None:
            argv += ["-e", statements]
        return _run([*argv, database], timeout=120, input=input)


@pytest.fixture(scope="module")
def database(programs, tmp_path_factory) -> Iterator[Database]:
    """A private MariaDB on a unix socket only, filled by schema.sql and generate.py --users 50."""
    base = tmp_path_factory.mktemp("mariadb")
    data, run = base / "data", base / "run"
    run.mkdir()
    _run(
        [programs["mariadb-install-db"], "--no-defaults", f"--datadir={data}", "--user=root",
         "--auth-root-authentication-method=socket", "--skip-test-db"],
        timeout=180, cwd=base,
    )  # fmt: skip
    sock, log = run / "mysql.sock", run / "mariadbd.log"
    argv = [programs["mariadbd"], "--no-defaults", f"--datadir={data}", f"--socket={sock}", "--skip-networking",
            "--user=root", f"--pid-file={run}/mariadb.pid", f"--log-error={log}", f"--tmpdir={run}"]  # fmt: skip
    server = _popen(argv, log)
    try:

        def answers() -> bool:
            ping = [programs["mariadb-admin"], "--no-defaults", f"--socket={sock}", "-u", "root", "ping"]
            try:
                return sock.exists() and subprocess.run(ping, capture_output=True, timeout=10).returncode == 0
            except subprocess.TimeoutExpired:
                return False

        _wait_until(answers, 120, "mariadbd", server, log)
        db = Database(programs["mariadb"], sock)
        db.sql(
            f"CREATE DATABASE {DB_NAME}; CREATE USER '{DB_USER}'@'localhost' IDENTIFIED BY '{DB_PASSWORD}';"
            f" GRANT ALL ON {DB_NAME}.* TO '{DB_USER}'@'localhost';",
            database="mysql",
        )
        db.sql(input=(WEBTIER / "schema.sql").read_bytes())
        db.generated = _run([sys.executable, str(WEBTIER / "generate.py"), "--users", str(USERS)], timeout=60)
        db.sql(input=db.generated.encode())
        yield db
    finally:
        _stop(server, grace=60)


class Web:
    def __init__(self, base: str, run: Path) -> None:
        self.base, self.run = base, run
        # loopback only: no proxy from the environment
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def request(self, method: str, path: str, form: dict[str, str] | None = None) -> tuple[int, str, Message]:
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        try:
            with self.opener.open(request, timeout=30) as response:
                return response.status, response.read().decode(), response.headers
        except urllib.error.HTTPError as error:
            with error:
                return error.code, error.read().decode(), error.headers

    def get(self, path: str) -> tuple[int, str]:
        status, body, _ = self.request("GET", path)
        return status, body

    def post(self, path: str, form: dict[str, str]) -> tuple[int, str]:
        status, body, _ = self.request("POST", path, form)
        return status, body


@pytest.fixture(scope="module")
def web(programs, database, tmp_path_factory) -> Iterator[Web]:
    """php-fpm and nginx from the templates, nginx on a free loopback port."""
    run = tmp_path_factory.mktemp("webtier")
    port = _free_port()
    values = {
        "run": run, "app": WEBTIER / "app", "port": f"127.0.0.1:{port}", "max_children": 16,
        "db_socket": database.socket, "db_host": "127.0.0.1", "db_port": 3306,
        "db_name": DB_NAME, "db_user": DB_USER, "db_password": DB_PASSWORD,
    }  # fmt: skip
    for name in ("nginx.conf", "php-fpm.conf"):
        (run / name).write_text((WEBTIER / f"{name}.in").read_text().format(**values))
    started: list[subprocess.Popen] = []
    try:
        fpm_log = run / "php-fpm.out"
        fpm = _popen([programs["php-fpm8.2"], "-F", "-R", "-y", str(run / "php-fpm.conf")], fpm_log)
        started.append(fpm)
        _wait_until((run / "php-fpm.sock").exists, 30, "php-fpm", fpm, fpm_log)
        nginx_log = run / "nginx.out"
        nginx = _popen([programs["nginx"], "-c", str(run / "nginx.conf"), "-p", str(run)], nginx_log)
        started.append(nginx)
        web = Web(f"http://127.0.0.1:{port}", run)

        def answers() -> bool:
            try:
                return web.get("/nothing")[0] == 404
            except OSError:
                return False

        _wait_until(answers, 30, "nginx", nginx, nginx_log)
        yield web
    finally:
        for proc in reversed(started):
            _stop(proc, grace=30)


def _count(pattern: str, body: str) -> int:
    return len(re.findall(pattern, body))


def test_generated_data_are_sized_from_users_and_the_same_for_a_seed(database):
    assert database.generated.rstrip().endswith(f"-- kit-webtier persons={PERSONS} events={EVENTS} tags=200")
    counts = database.sql(
        "SELECT COUNT(*) FROM person; SELECT COUNT(*) FROM event; SELECT COUNT(*) FROM tag;"
        " SELECT MIN(event_date), MAX(event_date) FROM event;"
        " SELECT MIN(n), MAX(n) FROM (SELECT COUNT(*) n FROM event_tag GROUP BY event_id) t;"
        " SELECT COUNT(*) FROM tag t WHERE refcount <> (SELECT COUNT(*) FROM event_tag WHERE tag_id = t.id)"
    ).split()
    assert counts[:3] == [str(PERSONS), str(EVENTS), "200"]
    assert "2014-07-21" <= counts[3] <= counts[4] <= "2015-07-20"
    assert 1 <= int(counts[5]) <= int(counts[6]) <= 5
    assert counts[7] == "0"  # refcount is what HomePage ranks by
    again = _run([sys.executable, str(WEBTIER / "generate.py"), "--users", str(USERS), "--seed", "1"], timeout=60)
    other = _run([sys.executable, str(WEBTIER / "generate.py"), "--users", str(USERS), "--seed", "2"], timeout=60)
    assert again == database.generated and other != database.generated


def test_home_page_lists_the_next_ten_events_and_twenty_tags(web):
    status, body = web.get("/")
    assert status == 200
    assert _count(r'<a href="/event\?id=\d+">', body) == 10
    assert _count(r'<a href="/tags\?tag=tag\d+">', body) == 20
    dates = re.findall(r"</a> (\d{4}-\d\d-\d\d)", body)
    assert dates == sorted(dates) and dates[0] >= "2014-07-21"


def test_login(web, database):
    name = database.sql("SELECT name FROM person WHERE id = 3").strip()
    status, body, headers = web.request("POST", "/login", {"email": "person3@example.org", "password": "password3"})
    assert status == 200 and name in body
    assert "PHPSESSID=" in headers.get("Set-Cookie", "")
    assert list((web.run / "sessions").glob("sess_*"))  # file sessions in the folder the pool config names
    assert web.post("/login", {"email": "person3@example.org", "password": "password4"})[0] == 403
    assert web.post("/login", {"email": "nobody@example.org", "password": "password3"})[0] == 403
    assert web.post("/login", {"email": "person3@example.org"})[0] == 400


def test_tag_search(web, database):
    tag, used = database.sql("SELECT name, refcount FROM tag ORDER BY refcount DESC, name LIMIT 1").split()
    status, body = web.get(f"/tags?tag={tag}")
    assert status == 200
    assert _count(r'<a href="/event\?id=\d+">', body) == min(int(used), 50) > 0
    dates = re.findall(r"</a> (\d{4}-\d\d-\d\d)", body)
    assert dates == sorted(dates, reverse=True)  # newest first
    status, body = web.get("/tags?tag=no-such-tag")
    assert status == 200 and "<li>" not in body
    assert web.get("/tags")[0] == 400


def test_event_detail(web, database):
    title, submitter = database.sql(
        "SELECT e.title, p.name FROM event e JOIN person p ON p.id = e.person_id WHERE e.id = 7"
    ).split("\t")
    tags = database.sql("SELECT t.name FROM event_tag et JOIN tag t ON t.id = et.tag_id WHERE et.event_id = 7").split()
    attendees = int(database.sql("SELECT COUNT(*) FROM attendance WHERE event_id = 7"))
    status, body = web.get("/event?id=7")
    assert status == 200
    assert title in body and submitter.strip() in body and all(tag in body for tag in tags)
    assert _count(r'<li><a href="/person\?id=\d+">', body) == attendees
    assert web.get(f"/event?id={EVENTS + 1000}")[0] == 404
    assert web.get("/event?id=seven")[0] == 400


def test_person_detail(web, database):
    attending = int(database.sql("SELECT COUNT(*) FROM attendance WHERE person_id = 3"))
    status, body = web.get("/person?id=3")
    assert status == 200 and "person3@example.org" in body
    assert _count(r'<a href="/event\?id=\d+">', body) == min(attending, 50)
    assert web.get(f"/person?id={PERSONS + 1000}")[0] == 404
    assert web.get("/person?id=-3")[0] == 400


def test_add_person(web):
    form = {"name": "New Person", "email": "new.person@example.org", "password": "secret words"}
    status, body = web.post("/person", form)
    assert status == 201 and re.fullmatch(r"id=\d+", body.strip()) and int(body.strip()[3:]) > PERSONS
    assert web.post("/login", {"email": form["email"], "password": form["password"]})[0] == 200
    assert web.post("/person", form)[0] == 409
    assert web.post("/person", {**form, "email": "not an address"})[0] == 400
    assert web.post("/person", {**form, "email": "x@example.org", "name": "n" * 101})[0] == 400


def test_add_event_then_its_detail_and_tag_search(web, database):
    before = int(database.sql("SELECT refcount FROM tag WHERE name = 'tag1'"))
    form = {
        "person_id": "3", "title": "Kit webtier picnic", "description": "Bring <food> & friends",
        "date": "2014-08-15", "tags": "tag1, kit-new-tag,TAG1",
    }  # fmt: skip
    status, body = web.post("/event", form)
    assert status == 201 and re.fullmatch(r"id=\d+", body.strip())
    event_id = int(body.strip()[3:])
    assert event_id > EVENTS
    status, body = web.get(f"/event?id={event_id}")
    assert status == 200
    assert "Kit webtier picnic" in body and "Bring &lt;food&gt; &amp; friends" in body
    assert "2014-08-15" in body and "kit-new-tag, tag1" in body
    status, body = web.get("/tags?tag=kit-new-tag")
    assert status == 200 and f'href="/event?id={event_id}"' in body
    assert int(database.sql("SELECT refcount FROM tag WHERE name = 'tag1'")) == before + 1
    for bad in ({"date": "2014-02-30"}, {"person_id": str(PERSONS + 1000)}, {"title": ""},
                {"tags": "no spaces inside"}, {"person_id": "three"}):  # fmt: skip
        assert web.post("/event", {**form, **bad})[0] == 400, bad


def test_anything_else_is_not_found(web):
    for method, path in [("GET", "/login"), ("GET", "/nothing"), ("POST", "/"), ("PUT", "/event"),
                         ("DELETE", "/person?id=3"), ("GET", "/index.php")]:  # fmt: skip
        form = {} if method in ("POST", "PUT") else None
        assert web.request(method, path, form)[0] == 404, (method, path)
