"""The cells of the spreadsheets that hold the authors' only netperf and nuttcp results.

An .xlsx file is a zip of XML parts; the cells' stored values are read with the standard library
(a formula cell keeps the value the spreadsheet last computed). Each number found is one cell of the
authors' table: a single value (n = 1), never a series of repetitions. Error cells (#DIV/0!) and empty
cells are missing, never zero.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
import zipfile

from kitlib.core.ascii_numbers import is_decimal
from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers

NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
_REF = numbers.pattern(r"^([A-Z]+)(\d+)$")


def cells(data: bytes, tool: str, source: str) -> dict[tuple[int, str], str]:
    """{(row, column letters): stored text} of the first sheet; shared strings resolved."""
    try:
        book = zipfile.ZipFile(io.BytesIO(data))
        names = book.namelist()
        shared = []
        if "xl/sharedStrings.xml" in names:
            for item in ET.fromstring(book.read("xl/sharedStrings.xml")).findall("m:si", NS):
                shared.append("".join(t.text or "" for t in item.iter(f"{{{NS['m']}}}t")))
        sheet = ET.fromstring(book.read("xl/worksheets/sheet1.xml"))
    except (zipfile.BadZipFile, KeyError, ET.ParseError) as exc:
        raise ParseError(tool, source, f"not a readable .xlsx workbook ({exc})") from None
    found = {}
    for cell in sheet.iter(f"{{{NS['m']}}}c"):
        value = cell.find("m:v", NS)
        ref = _REF.match(cell.get("r", ""))
        if value is None or value.text is None or ref is None:
            continue
        text = shared[int(value.text)] if cell.get("t") == "s" else value.text
        if cell.get("t") == "e":
            continue  # an error value such as #DIV/0!: missing
        found[(int(ref.group(2)), ref.group(1))] = text
    return found


def number(text: str | None) -> float | None:
    """A cell's number, or None for text, an empty cell and what float() alone would take but no
    spreadsheet stores as a number (`nan`, `1_000`, another script's digits)."""
    if text is None or not is_decimal(text.strip()):
        return None
    return float(text)


def netperf(data: bytes, source: str) -> list[Measurement]:
    """netperf.xlsx: a row per test (TCP_RR, UDP_RR); for each environment a `<env> /s` column
    (transactions per second) and a `<env>` column (µs per transaction, 1000000 / rate)."""
    table = cells(data, "netperf (spreadsheet)", source)
    header_row = next((r for (r, _c), v in table.items() if v.strip() == "Native /s"), None)
    if header_row is None:
        raise ParseError("netperf (spreadsheet)", source, "no 'Native /s' header cell")
    headers = {c: v.strip() for (r, c), v in table.items() if r == header_row}
    tests = {r: v.strip() for (r, c), v in table.items() if c == "A" and r > header_row}
    found = []
    for row, test in sorted(tests.items()):
        for column, head in headers.items():
            value = number(table.get((row, column)))
            if value is None or value <= 0:
                continue
            env = head.removesuffix(" /s").strip()
            dims = {"test": test, "sheet_env": env, "cell": f"{column}{row}"}
            if head.endswith("/s"):
                found.append(Measurement("transaction_rate", value, "trans/s", dims))
            else:
                found.append(Measurement("rtt_mean", value, "us", dims))
    if not found:
        raise ParseError("netperf (spreadsheet)", source, "no numeric cell under the header row")
    return found


def nuttcp(data: bytes, source: str) -> list[Measurement]:
    """nuttcp.xlsx: `Direction | Native | Docker NAT | Docker Host | KVM`, a row per direction
    (C->S, S->C) in Mbps, then the same row divided by 1000 (Gbps). The Mbps row is read, and returned in
    Gbps (divided by 1000, as the sheet's own second row does), the unit of the kit's nuttcp records."""
    table = cells(data, "nuttcp (spreadsheet)", source)
    header_row = next((r for (r, c), v in table.items() if c == "A" and v.strip() == "Direction"), None)
    if header_row is None:
        raise ParseError("nuttcp (spreadsheet)", source, "no 'Direction' header cell")
    headers = {c: v.strip() for (r, c), v in table.items() if r == header_row and c != "A"}
    found, seen = [], set()
    for row in sorted(r for (r, c) in table if c == "A" and r > header_row):
        direction = table[(row, "A")].strip()
        if direction not in ("C->S", "S->C") or direction in seen:
            continue  # the second row of a direction is the first divided by 1000
        seen.add(direction)
        for column, head in headers.items():
            value = number(table.get((row, column)))
            if value is None or value <= 0:
                continue
            found.append(
                Measurement(
                    "throughput",
                    value / 1000,
                    "Gbps",
                    {"direction": direction, "sheet_env": head, "cell": f"{column}{row}"},
                )
            )
    if not found:
        raise ParseError("nuttcp (spreadsheet)", source, "no throughput cell")
    return found
