"""The users of the web tier: a closed loop, each user sending one request, waiting for its answer and
thinking for a uniform time between `--kit-think-min` and `--kit-think-max` seconds before the next.

Each request is one of the application's seven operations (the methods named after them), drawn with
the shares of `--kit-mix` (the kit passes the plan's mix: the post's Table 1 unless changed) from the
user's own random generator (seeded by `--kit-seed` and the user's
number), so that two runs of one plan make the same choices. Statistics are kept per operation (each
request is named by it); a status other than the operation's success is a failure.
"""

from __future__ import annotations

import itertools
import json
import random
import uuid

from locust import HttpUser, events, task

TAGS = 200  # the data set's tags: tag0 … tag199
NUMBERS = itertools.count(1)  # each user's number, for its generator and its new persons' addresses


@events.init_command_line_parser.add_listener
def _options(parser) -> None:
    parser.add_argument(
        "--kit-mix", required=True, help="share of each operation in %% (JSON), e.g. the post's Table 1"
    )
    parser.add_argument("--kit-think-min", type=float, default=1.0, help="shortest think time (s)")
    parser.add_argument("--kit-think-max", type=float, default=3.0, help="longest think time (s)")
    parser.add_argument("--kit-persons", type=int, default=100, help="persons in the data set")
    parser.add_argument("--kit-events", type=int, default=100, help="events in the data set")
    parser.add_argument("--kit-seed", type=int, default=1, help="seed of the users' choices")


class SocialUser(HttpUser):
    """One user of the social-events site."""

    def on_start(self) -> None:
        options = self.environment.parsed_options
        self.number = next(NUMBERS)
        self.rng = random.Random(f"{options.kit_seed}:{self.number}")
        mix = json.loads(options.kit_mix)
        self.operations = [op for op, share in mix.items() if share > 0 and callable(getattr(self, op, None))]
        if len(self.operations) != sum(1 for share in mix.values() if share > 0):
            raise ValueError(f"--kit-mix names operations this site does not have: {sorted(mix)}")
        self.weights = [mix[op] for op in self.operations]
        self.think = (options.kit_think_min, options.kit_think_max)
        self.persons, self.events = options.kit_persons, options.kit_events
        self.added = itertools.count(1)

    def wait_time(self) -> float:
        return self.rng.uniform(*self.think)

    @task
    def operation(self) -> None:
        chosen = self.rng.choices(self.operations, self.weights)[0]
        getattr(self, chosen)()

    def _expect(self, method: str, path: str, name: str, ok: int, **kwargs) -> None:
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
            # unique across points and runs (each point is a new process), drawn apart from the user's choices
            "email": f"u{self.number}-{n}-{uuid.uuid4().hex[:16]}@example.org",
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
