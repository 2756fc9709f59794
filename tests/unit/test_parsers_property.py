"""Every registered parser on every real output in tests/data, and on that output broken the ways a
killed tool, a careless copy and a fuzzer break it: empty, cut at every position of its last lines
and at every line end, another tool's output, random text, random edits. Each input either raises
the kit's own error or gives only values the input holds (parser_oracle says how that is judged);
a cut output gives exactly the full output's records or raises: it never loses a record silently.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kitlib.core.errors import KitError
from kitlib.core.records import Measurement
from kitlib.measure import parsers

from . import parser_oracle as oracle

OUTPUTS = oracle.real_outputs()
FILES = [(tool, path) for tool, paths in sorted(OUTPUTS.items()) for path in paths]
IDS = [path.relative_to(oracle.DATA).as_posix() for _, path in FILES]
#: deterministic and bounded: the same examples on every run, however loaded the machine
PROPERTY = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: how far from its end an output is cut at every character
TAIL = 400
#: what random edits insert: the strings a strict reader must refuse, and the ones that look right
#: (another script's digit too: `oracle.tokens` reads ASCII digits only, so no value read from one is held)
INSERTS = ["nan", "NaN", "inf", "-", "-1", ".", "1e999", "0", "7", "\n", " ", ",", "=", "1_0", "\r", '"', "\x00", "é"]
INSERTS += ["٣", "１"]


def attempt(tool: str, text: str, source: str = "property", **asked: object) -> list[Measurement] | None:
    """The parser's records, or None when it refused with the kit's error naming the input; anything
    else (a traceback) fails. `asked`: what the caller passes beside the text (`oracle.asked`)."""
    try:
        return parsers.get(tool)(text, source, **asked)
    except KitError as exc:
        assert f"cannot parse {source}" in str(exc), f"{tool}: an error that does not name the input: {exc}"
        return None


def assert_held(tool: str, text: str, found: list[Measurement]) -> None:
    """Each value read stands in `text` as a number token; each derived value is at least finite
    (its derivation is checked on the untruncated files)."""
    held = oracle.tokens(text)
    for m in found:
        assert math.isfinite(m.value), f"{tool}: {m} is not finite"
        if not oracle.derived(tool, m):
            assert oracle.stands(tool, m, held), f"{tool}: {m.metric}={m.value!r} {m.dims} is not in the input"


def test_every_registered_parser_has_a_real_output():
    missing = sorted(set(parsers.known_tools()) - set(OUTPUTS))
    assert not missing, f"registered parsers with no real output under tests/data: {missing}"


def test_every_data_folder_is_a_registered_tool():
    unknown = {tool: [p.name for p in OUTPUTS[tool]] for tool in sorted(set(OUTPUTS) - set(parsers.known_tools()))}
    assert not unknown, (
        f"tests/data holds outputs of tools no parser is registered for: {unknown} "
        "(name the folder after the tool, or map it in parser_oracle)"
    )


@pytest.mark.parametrize(("tool", "path"), FILES, ids=IDS)
def test_a_real_output_is_read_or_its_failure_named(tool, path):
    """A successful run's values stand in its text or are its documented derivations; a failed run
    (named so, see parser_oracle.FAILED_RUNS) is refused."""
    text = path.read_text()
    found = attempt(tool, text, str(path))
    if oracle.failed_run(path):
        assert found is None, f"{tool} read numbers from the failed run {path.name}"
        return
    assert found, f"{tool} refused its real output {path.name}"
    held = oracle.tokens(text)
    expected = oracle.DERIVATIONS[tool].expected(text) if tool in oracle.DERIVATIONS else []
    for m in found:
        if not oracle.derived(tool, m):
            assert oracle.stands(tool, m, held), f"{path.name}: {m.metric}={m.value!r} is not in the file"
            continue
        matches = [v for metric, dims, v in expected if metric == m.metric and dims.items() <= m.dims.items()]
        assert len(matches) == 1, f"{path.name}: derived {m.metric} {m.dims} has no documented derivation"
        assert m.value == pytest.approx(matches[0], rel=1e-9), f"{path.name}: {m.metric} {m.dims}"
    for metric, dims, _ in expected:
        assert any(m.metric == metric and dims.items() <= m.dims.items() for m in found), (path.name, metric)


@pytest.mark.parametrize("tool", parsers.known_tools())
def test_empty_input_is_refused(tool):
    for text in ("", "\n", " \n\n", "\x00"):
        assert attempt(tool, text) is None, f"{tool} accepted {text!r}"


@pytest.mark.parametrize(("tool", "path"), FILES, ids=IDS)
def test_a_cut_output_raises_or_gives_exactly_the_full_records(tool, path):
    text = path.read_text()
    full = attempt(tool, text)
    asked = oracle.asked(tool, full)
    cuts = set(range(max(0, len(text) - TAIL), len(text)))
    cuts |= {i + 1 for i, char in enumerate(text) if char == "\n"} - {len(text)}
    for cut in sorted(cuts):
        found = attempt(tool, text[:cut], **asked)
        if found is not None:
            assert found == full, (
                f"{path.name} cut at {cut} of {len(text)} ({text[max(0, cut - 30) : cut]!r}): records differ"
            )


@pytest.mark.parametrize("tool", parsers.known_tools())
def test_another_tools_output_is_refused(tool):
    for other, path in FILES:
        if other != tool:
            assert attempt(tool, path.read_text(), str(path)) is None, f"{tool} accepted {other}'s {path.name}"


@pytest.mark.parametrize("tool", parsers.known_tools())
@PROPERTY
@given(text=st.text(max_size=400))
def test_random_text_is_refused_or_held(tool, text):
    found = attempt(tool, text)
    if found is not None:
        assert_held(tool, text, found)


@st.composite
def edited(draw, text: str) -> str:
    """`text` after one to three edits, half of them at a number: a span deleted, a string inserted, a
    character replaced, a line dropped, doubled or swapped with another."""
    numbers = [m.start() for m in oracle._TOKEN.finditer(text)] or [0]
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.one_of(st.integers(0, len(text)), st.sampled_from(numbers)))
        at = min(at, len(text))
        kind = draw(st.sampled_from(["delete", "insert", "replace", "drop", "double", "swap"]))
        lines = text.splitlines(keepends=True)
        line = text.count("\n", 0, at)
        if kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 12)) :]
        elif kind == "insert":
            text = text[:at] + draw(st.one_of(st.sampled_from(INSERTS), st.text(max_size=4))) + text[at:]
        elif kind == "replace":
            text = text[:at] + draw(st.sampled_from(INSERTS + list("0123456789"))) + text[at + 1 :]
        elif lines and line < len(lines):
            other = draw(st.integers(0, len(lines) - 1))
            if kind == "drop":
                del lines[line]
            elif kind == "double":
                lines.insert(line, lines[line])
            else:
                lines[line], lines[other] = lines[other], lines[line]
            text = "".join(lines)
    return text


@pytest.mark.parametrize(("tool", "path"), FILES, ids=IDS)
@PROPERTY
@given(data=st.data())
def test_an_edited_output_is_refused_or_held(tool, path, data):
    text = data.draw(edited(path.read_text()))
    found = attempt(tool, text)
    if found is not None:
        assert_held(tool, text, found)


#: digits of other scripts, each the same value as its ASCII digit: Python's `\d`, `int()` and `float()`
#: read all of them (Arabic-Indic, Extended Arabic-Indic, Devanagari, Bengali, Fullwidth)
UNICODE_ZEROS = ("\u0660", "\u06f0", "\u0966", "\u09e6", "\uff10")
#: examples per parser of `test_a_cut_a_doubled_line_or_a_foreign_digit_gives_the_full_values_or_is_refused`
DAMAGES = settings(PROPERTY, max_examples=30)


@st.composite
def damaged(draw, text: str) -> str:
    """`text` cut anywhere, with one line given twice, or with one digit of a number written in another
    script's digit of the same value."""
    kind = draw(st.sampled_from(["cut", "double", "digit"]))
    if kind == "cut":
        return text[: draw(st.integers(0, max(0, len(text) - 1)))]
    if kind == "double":
        rows = text.splitlines(keepends=True)
        at = draw(st.integers(0, len(rows) - 1))
        return "".join(rows[:at] + [rows[at]] + rows[at:])
    digits = [i for token in oracle._TOKEN.finditer(text) for i in range(*token.span()) if text[i].isdigit()]
    if not digits:
        return text[:-1]
    at = draw(st.sampled_from(digits))
    zero = draw(st.sampled_from(UNICODE_ZEROS))
    return text[:at] + chr(ord(zero) + int(text[at])) + text[at + 1 :]


@pytest.mark.parametrize("tool", sorted(OUTPUTS))
@DAMAGES
@given(data=st.data())
def test_a_cut_a_doubled_line_or_a_foreign_digit_gives_the_full_values_or_is_refused(tool, data):
    """The parsers' contract on their real outputs: damaged so, an output is either read as the whole
    file is (a line no parser reads may be given twice) or refused with ParseError; never a record lost,
    doubled or read from a digit no tool prints."""
    path = data.draw(st.sampled_from(OUTPUTS[tool]))
    text = path.read_text()
    full = attempt(tool, text)
    broken = data.draw(damaged(text))
    found = attempt(tool, broken, **oracle.asked(tool, full))
    if found is not None:
        assert found == full, f"{path.name}: {broken[-80:]!r} read otherwise than the full file"
