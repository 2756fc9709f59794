"""The users of the web tier: a closed loop, each user sending one request, waiting for its answer and
thinking for a uniform time between `--kit-think-min` and `--kit-think-max` seconds before the next.

Each request is one of the application's seven operations (the methods named after them), drawn with
the shares of `--kit-mix` (the kit passes the plan's mix: the post's Table 1 unless changed; the file
keeps no copy of it) from the user's own random generator (seeded by `--kit-seed` and the user's
number), so that two runs of one plan make the same choices. Locust's own task weights are not used
for the draw: they are whole numbers fixed when the class is defined, before the options are read, and
Locust draws them from the process-wide generator, which no seed per user reaches. Statistics are kept
per operation (each request is named by it); a status other than the operation's success is a failure.

Run as the kit runs it (the statistics are reset when the last user has started, so the CSV files
cover the steady window only):

    locust -f locustfile.py --headless --host http://ADDR:PORT -u USERS -r RATE -t SECONDSs \
        --reset-stats --csv PREFIX --csv-full-history --only-summary --stop-timeout 5 \
        --kit-mix '{"HomePage": 26.14, ...}' --kit-think-min 1 --kit-think-max 3 \
        --kit-persons 400 --kit-events 200 --kit-seed 1

The file is copied alone to the load generator's machine: it imports nothing but Locust.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import math
import random
import uuid

from locust import HttpUser, events, task

#: the application's operations, each a method of SocialUser below (their shares come from `--kit-mix`)
OPERATIONS = ("HomePage", "Login", "TagSearch", "EventDetail", "PersonDetail", "AddPerson", "AddEvent")
TAGS = 200  # the data set's tags: tag0 … tag199
NUMBERS = itertools.count(1)  # each user's number, for its generator and its new persons' addresses
#: this process's mark in new persons' addresses: a later run with the same seed against the same
#: database adds other addresses (the mark is not drawn from the users' generators, so their choices stay)
RUN = uuid.uuid4().hex[:12]


def _mix(text: str) -> dict[str, float]:
    """`--kit-mix`: a JSON object of the known operations, each share finite and not negative, not all 0;
    refused at the command line (argparse's error) rather than by every user at its start."""
    try:
        mix = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(mix, dict) or not mix:
        raise argparse.ArgumentTypeError("a JSON object of operation -> share in %")
    unknown = sorted(set(mix) - set(OPERATIONS))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown operations {unknown}; known: {list(OPERATIONS)}")
    for op, share in mix.items():
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not math.isfinite(share) or share < 0:
            raise argparse.ArgumentTypeError(f"{op}: share {share!r} is not a finite number >= 0")
    if not any(mix.values()):
        raise argparse.ArgumentTypeError("every share is 0")
    return {op: float(share) for op, share in mix.items()}


def _seconds(text: str) -> float:
    """A think time: finite and not negative."""
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time >= 0 s")
    return value


def _size(text: str) -> int:
    """A size of the data set: ids are drawn in [1, n], so n >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count >= 1")
    return value


@events.init_command_line_parser.add_listener
def _options(parser) -> None:
    parser.add_argument(
        "--kit-mix", type=_mix, required=True, help="share of each operation in %% (JSON), e.g. the post's Table 1"
    )
    parser.add_argument("--kit-think-min", type=_seconds, default=1.0, help="shortest think time (s)")
    parser.add_argument("--kit-think-max", type=_seconds, default=3.0, help="longest think time (s)")
    parser.add_argument("--kit-persons", type=_size, default=100, help="persons in the data set (ids 1..n)")
    parser.add_argument("--kit-events", type=_size, default=100, help="events in the data set (ids 1..n)")
    parser.add_argument("--kit-seed", type=int, default=1, help="seed of the users' choices")


@events.init.add_listener
def _check(environment, **_kwargs) -> None:
    """Think times that are no interval stop the run before any user starts (argparse sees one option at
    a time)."""
    options = environment.parsed_options
    if options is not None and options.kit_think_min > options.kit_think_max:
        logging.error("--kit-think-min %g is above --kit-think-max %g", options.kit_think_min, options.kit_think_max)
        raise SystemExit(2)


class SocialUser(HttpUser):
    """One user of the social-events site."""

    def on_start(self) -> None:
        options = self.environment.parsed_options
        self.number = next(NUMBERS)
        self.seed = options.kit_seed
        # a str seed is hashed with SHA-512: the same stream in every process, whatever PYTHONHASHSEED
        self.rng = random.Random(f"{self.seed}:{self.number}")
        mix = options.kit_mix
        self.operations = [op for op, share in mix.items() if share > 0]  # in the mix's order, as the kit writes it
        self.weights = [mix[op] for op in self.operations]
        self.think = (options.kit_think_min, options.kit_think_max)
        self.persons, self.events = options.kit_persons, options.kit_events
        self.added = itertools.count(1)

    def wait_time(self) -> float:
        return self.rng.uniform(*self.think)

    @task
    def operation(self) -> None:
        """One operation, drawn by the mix from this user's generator."""
        chosen = self.rng.choices(self.operations, self.weights)[0]
        getattr(self, chosen)()

    def _expect(self, method: str, path: str, name: str, ok: int, **kwargs) -> None:
        """Send one request named by its operation; any status but `ok` (201 for an insert) is a failure."""
        with self.client.request(method, path, name=name, catch_response=True, **kwargs) as response:
            if response.status_code == ok:
                response.success()
            else:
                response.failure(f"{name}: status {response.status_code}, expected {ok}")

    def HomePage(self) -> None:  # noqa: N802 - named as the post names the operation
        self._expect("GET", "/", "HomePage", 200)

    def Login(self) -> None:  # noqa: N802
        i = self.rng.randint(1, self.persons)
        form = {"email": f"person{i}@example.org", "password": f"password{i}"}
        self._expect("POST", "/login", "Login", 200, data=form)

    def TagSearch(self) -> None:  # noqa: N802
        self._expect("GET", f"/tags?tag=tag{self.rng.randrange(TAGS)}", "TagSearch", 200)

    def EventDetail(self) -> None:  # noqa: N802
        self._expect("GET", f"/event?id={self.rng.randint(1, self.events)}", "EventDetail", 200)

    def PersonDetail(self) -> None:  # noqa: N802
        self._expect("GET", f"/person?id={self.rng.randint(1, self.persons)}", "PersonDetail", 200)

    def AddPerson(self) -> None:  # noqa: N802
        n = next(self.added)
        form = {
            "name": f"User {self.number} {n}",
            # unique: the seed, the user, its counter, and the process's mark for runs that repeat a seed
            "email": f"u{self.seed}-{self.number}-{n}-{RUN}@example.org",
            "password": f"secret{n}",
        }
        self._expect("POST", "/person", "AddPerson", 201, data=form)

    def AddEvent(self) -> None:  # noqa: N802
        tags = ",".join(f"tag{t}" for t in self.rng.sample(range(TAGS), self.rng.randint(1, 3)))
        form = {
            "person_id": str(self.rng.randint(1, self.persons)),
            "title": f"Event of user {self.number}",
            "description": "A gathering.",
            "date": f"{self.rng.choice((2014, 2015))}-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}",
            "tags": tags,
        }
        self._expect("POST", "/event", "AddEvent", 201, data=form)
