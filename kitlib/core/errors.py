"""One family of errors, so callers can catch everything the kit raises with one clause."""

from __future__ import annotations

from pathlib import Path


class Notice(UserWarning):
    """Something the person running the kit should know that does not stop it (packages that differ
    between environments, points that failed): `kit` shows it as one `kit:` line, without Python's
    file and line."""


class KitError(Exception):
    """Base of every error kitlib raises on purpose."""


class PlanError(KitError, ValueError):
    """A parameter of a plan is invalid; raised before anything is started."""


class ParameterError(PlanError):
    """A parameter of a notebook or a command is of no form the kit reads (`kitlib.core.parameters`)."""


class RecordError(KitError, ValueError, TypeError):
    """A record or a records file holds what no measurement can be (NaN, not a number, a row cut short);
    the message names the metric, or the file and line."""


class EnvironmentUnavailable(KitError):
    """An environment cannot run on this host; the message says why."""


class CommandFailed(KitError):
    """A command run inside an environment or on the peer exited non-zero or timed out."""

    def __init__(self, where: str, argv: list[str] | str, returncode: int | None, output: str = ""):
        self.where = where
        self.argv = argv
        self.returncode = returncode
        self.output = output
        shown = argv if isinstance(argv, str) else " ".join(argv)
        status = "timed out" if returncode is None else f"exited {returncode}"
        tail = output.strip().splitlines()[-5:]
        detail = ("\n  " + "\n  ".join(tail)) if tail else ""
        super().__init__(f"{where}: `{shown}` {status}{detail}")


class UnexpectedOutput(CommandFailed):
    """A command succeeded but reported a state the run cannot go on from (a keyspace not filled):
    handled as the command's failure, with what it said."""

    def __init__(self, where: str, argv: list[str] | str, said: str):
        KitError.__init__(self, f"{where}: `{argv if isinstance(argv, str) else ' '.join(argv)}`: {said}")
        self.where, self.argv, self.returncode, self.output = where, argv, 0, said


class ParseError(KitError):
    """A parser did not recognise its input; never answered with a guessed number."""

    def __init__(self, tool: str, source: str | Path, reason: str):
        self.tool = tool
        self.source = str(source)
        super().__init__(f"{tool}: cannot parse {self.source}: {reason}")
