#!/usr/bin/env python3
"""SQL that fills the social events schema, sized from a user count and the same for the same seed.

    python3 generate.py --users N [--seed S] | mariadb <db>

Standard library only: it runs inside the environment under test, which has just python3.
Person i (1-based) logs in as person<i>@example.org with password<i>.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import random
import sys
from collections.abc import Iterable, Sequence

# Day zero of the data, never today's date, so that the data do not depend on the day they were made.
START = datetime.date(2014, 7, 21)
DAYS = 365
TAGS = 200
BATCH = 1000  # rows per INSERT

FIRST = "Ada Alan Barbara Claude Dennis Edsger Frances Grace John Ken Leslie Margaret Niklaus Radia Robin".split()
LAST = "Hopper Knuth Liskov Lamport Perlman Ritchie Thompson Turing Wirth Hamilton Allen Backus Codd Kay".split()
WORDS = """meetup concert picnic workshop party lecture market race tour dinner festival hackathon reading
exhibition match tasting screening fair walk jam""".split()


def sizes(users: int) -> tuple[int, int]:
    """(persons, events) for a number of simulated users."""
    return max(100, 4 * users), max(100, 2 * users)


def quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def inserts(table: str, columns: str, rows: Iterable[Sequence[object]]) -> Iterable[str]:
    """Multi-row INSERTs of at most BATCH rows: few statements, so large loads take seconds."""
    batch: list[str] = []

    def statement() -> str:
        return f"INSERT INTO {table} ({columns}) VALUES\n" + ",\n".join(batch) + ";\n"

    for row in rows:
        batch.append("(" + ",".join(quote(v) if isinstance(v, str) else str(v) for v in row) + ")")
        if len(batch) == BATCH:
            yield statement()
            batch = []
    if batch:
        yield statement()


def generate(users: int, seed: int) -> Iterable[str]:
    rng = random.Random(seed)
    persons, events = sizes(users)

    def person_rows() -> Iterable[tuple[object, ...]]:
        for i in range(1, persons + 1):
            salt = f"{rng.getrandbits(64):016x}"
            digest = hashlib.sha256((salt + f"password{i}").encode()).hexdigest()
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)} {i}"
            yield i, name, f"person{i}@example.org", salt, digest

    # Tag k is picked with weight 1/sqrt(k+1): some popular tags and a long tail, so that "most used" means
    # something, yet the most popular tag is on a few percent of the events only.
    cumulative: list[float] = []
    total = 0.0
    for k in range(TAGS):
        total += (k + 1) ** -0.5
        cumulative.append(total)
    event_rows: list[tuple[object, ...]] = []
    event_tags: list[tuple[int, int]] = []
    attendance: list[tuple[int, int]] = []
    refcount = [0] * TAGS
    for e in range(1, events + 1):
        date = START + datetime.timedelta(days=rng.randrange(DAYS))
        words = rng.sample(WORDS, 2)
        title = f"{words[0].capitalize()} {words[1]} {e}"
        description = f"A {words[0]} with a {words[1]}, for everyone. " * rng.randint(1, 4)
        event_rows.append((e, rng.randint(1, persons), title, description.strip(), date.isoformat()))
        chosen: set[int] = set()
        wanted = rng.randint(1, 5)
        while len(chosen) < wanted:
            chosen.add(rng.choices(range(TAGS), cum_weights=cumulative)[0])
        for k in sorted(chosen):
            refcount[k] += 1
            event_tags.append((e, k + 1))
        attendance.extend((e, p) for p in sorted(rng.sample(range(1, persons + 1), rng.randint(0, 20))))

    # Load quickly: no per-row constraint checks and one commit; the generated data satisfy them.
    yield "SET foreign_key_checks = 0;\nSET unique_checks = 0;\nSET autocommit = 0;\n"
    yield from inserts("person", "id,name,email,salt,password", person_rows())
    yield from inserts("tag", "id,name,refcount", ((k + 1, f"tag{k}", refcount[k]) for k in range(TAGS)))
    yield from inserts("event", "id,person_id,title,description,event_date", event_rows)
    yield from inserts("event_tag", "event_id,tag_id", event_tags)
    yield from inserts("attendance", "event_id,person_id", attendance)
    yield "COMMIT;\nSET unique_checks = 1;\nSET foreign_key_checks = 1;\n"
    yield f"-- kit-webtier persons={persons} events={events} tags={TAGS}\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, required=True, help="simulated users; sizes the data")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    args = parser.parse_args(argv)
    if args.users < 0:
        parser.error("--users must be >= 0")
    out = sys.stdout
    for chunk in generate(args.users, args.seed):
        out.write(chunk)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
