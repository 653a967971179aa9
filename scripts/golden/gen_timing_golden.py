#!/usr/bin/env python3
"""Generates fixtures/timing/golden.jsonl: golden cases for nudge's timing core.

Every expected answer comes from code nobody on the nudge team wrote (see shared ORACLES.md):

- ``temporal``        the TC39 Temporal reference polyfill (temporal_oracle.mjs, pinned in
                      package-lock.json): durations via ZonedDateTime.add, wall clocks.
- ``temporal+numpy``  durations with business days: Temporal's PlainDateTime.add for the calendar
                      part, numpy.busday_offset for the business days, zoneinfo for the wall clock
                      -> instant step, then the fixed part as elapsed time.
- ``numpy``           ``+Nbd HH:MM`` until forms (numpy.busday_offset + zoneinfo).
- ``zoneinfo``        wall-clock and ``+Nd HH:MM`` until forms (fold=0), cross-checked against
                      Temporal inside this script; RFC 3339 instants via datetime.fromisoformat.
- ``systemd``         calendar patterns via ``systemd-analyze calendar`` (only far from DST changes).
- ``spec-rule``       calendar patterns on DST changes, written by hand from docs/timing.md, "Daylight-saving changes".
- ``zoneinfo-bruteforce``  send/SMS windows: a minute-by-minute scan written here, independent of
                      the Rust code, with zoneinfo for every local time.
- ``phonenumbers``    phone -> E.164 + candidate zones.
- ``spec-refusal``    inputs the documented grammar refuses; only the code is compared.

Run from anywhere:  python3 scripts/golden/gen_timing_golden.py
Needs: pip install -r scripts/requirements.txt; (cd scripts/golden && npm ci); systemd-analyze.
Deterministic: a fixed seed, fixed inputs, pinned tools; a rerun reproduces the file byte for byte.
"""

from __future__ import annotations

import functools
import json
import random
import re
import subprocess
import sys
import zoneinfo
from datetime import date, datetime, time, timedelta, timezone
from fractions import Fraction
from pathlib import Path

import numpy as np
import phonenumbers
from phonenumbers import timezone as phone_tz
import tzdata

# Use the pinned `tzdata` package (2025b, the same release chrono-tz 0.10.4 embeds), not whatever
# the host has, so a regeneration elsewhere reproduces the file.
zoneinfo.reset_tzpath(to=())

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
OUT = REPO / "fixtures" / "timing" / "golden.jsonl"
UTC = timezone.utc
rng = random.Random(20260131)

EXPECTED_VERSIONS = {"numpy": "2.2.6", "phonenumbers": "9.0.33", "tzdata": "2025b"}


def check_versions() -> None:
    got = {"numpy": np.__version__, "phonenumbers": phonenumbers.__version__, "tzdata": tzdata.IANA_VERSION}
    if got != EXPECTED_VERSIONS:
        sys.exit(f"tool versions differ from the pinned ones: {got} != {EXPECTED_VERSIONS}")
    # Not pinnable from here, so only reported: systemd decides which patterns are kept, and the
    # Temporal polyfill reads zone rules from Node's ICU (tz 2025c on Node 20.20: same rules as
    # 2025b for every zone and date used here).
    sd = subprocess.run(["systemd-analyze", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    node_tz = subprocess.run(["node", "-p", "process.versions.tz"], capture_output=True, text=True).stdout.strip()
    if not sd.startswith("systemd 252") or node_tz != "2025c":
        print(f"warning: generated with systemd 252 and Node ICU tz 2025c; this machine has {sd!r}, "
              f"tz {node_tz!r}: the file may differ", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# Small helpers


def zi(name: str):
    """A tzinfo for a request's `tz`: IANA name, UTC, or ±HH:MM."""
    if name == "UTC":
        return UTC
    m = re.fullmatch(r"([+-])(\d\d):(\d\d)", name)
    if m:
        sign = 1 if m.group(1) == "+" else -1
        return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    return zoneinfo.ZoneInfo(name)


def parse_instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def fmt_instant(dt: datetime) -> str:
    """RFC 3339 in UTC with a Z, milliseconds only when not zero."""
    dt = dt.astimezone(UTC)
    ms = dt.microsecond // 1000
    assert dt.microsecond % 1000 == 0
    base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{base}.{ms:03d}Z" if ms else f"{base}Z"


def to_ms(dt: datetime) -> int:
    return int(round(dt.timestamp() * 1000))


def from_ms(ms: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)


def wall_to_instant(local: datetime, tz: str) -> datetime:
    """docs/timing.md, "Daylight-saving changes" via zoneinfo: fold=0 is the first occurrence in a fold, and in a gap the offset
    before it (forward by the gap's length)."""
    return local.replace(tzinfo=zi(tz), fold=0).astimezone(UTC)


def local_of(instant: datetime, tz: str) -> datetime:
    return instant.astimezone(zi(tz)).replace(tzinfo=None)


def busday(d: date, n: int, holidays: list[str]) -> date:
    """docs/timing.md, "Durations" bd stepping via numpy; n=0 moves by zero days (docs/timing.md, "Daylight-saving changes")."""
    if n == 0:
        return d
    res = np.busday_offset(np.datetime64(d.isoformat()), n, roll="backward",
                           holidays=[np.datetime64(h) for h in holidays])
    return date.fromisoformat(str(res))


class Temporal:
    """Batches questions to one node process."""

    def __init__(self) -> None:
        self.questions: list[dict] = []

    def ask(self, q: dict) -> int:
        self.questions.append(q)
        return len(self.questions) - 1

    def run(self) -> list[dict]:
        payload = "".join(json.dumps(q) + "\n" for q in self.questions)
        res = subprocess.run(["node", str(HERE / "temporal_oracle.mjs")], input=payload,
                             capture_output=True, text=True, check=True, cwd=HERE)
        answers = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
        assert len(answers) == len(self.questions)
        return answers


def case(oracle: str, request: dict, expect: dict, **extra) -> dict:
    c = {"oracle": oracle, "request": request, "expect": expect}
    c.update(extra)
    return c


# ---------------------------------------------------------------------------------------------
# Durations

FIXED_SPELLINGS = {
    "ms": ["ms", "millisecond", "milliseconds"],
    "s": ["s", "sec", "secs", "second", "seconds"],
    "m": ["m", "min", "mins", "minute", "minutes"],
    "h": ["h", "hr", "hrs", "hour", "hours"],
}
CAL_SPELLINGS = {
    "d": ["d", "day", "days"],
    "bd": ["bd", "business day", "business days"],
    "w": ["w", "week", "weeks"],
    "mo": ["mo", "month", "months"],
    "y": ["y", "year", "years"],
}
UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}


def render(parts: dict[str, str], style: str) -> str:
    """Writes {unit: number-text} as a duration string: shuffled order, short or long spellings,
    with or without spaces."""
    units = list(parts)
    if style != "canonical":
        rng.shuffle(units)
    out = []
    for u in units:
        spellings = FIXED_SPELLINGS.get(u) or CAL_SPELLINGS[u]
        if style == "canonical":
            sp = spellings[0]
        else:
            sp = rng.choice(spellings)
        # "business day(s)" contains a space; other units may follow the number directly or not.
        if sp.startswith("business"):
            gap = " "
        elif style != "canonical" and (len(sp) > 2 or rng.random() < 0.3):
            gap = " "
        else:
            gap = ""
        out.append(f"{parts[u]}{gap}{sp}")
    sep = "" if style == "canonical" else rng.choice(["", " ", " "])
    return sep.join(out)


def components(parts: dict[str, str]) -> tuple[dict, int, int]:
    """(calendar dict for Temporal, business days, fixed ms) of a parts dict."""
    cal = {}
    key = {"y": "years", "mo": "months", "w": "weeks", "d": "days"}
    fixed = Fraction(0)
    bd = 0
    for u, num in parts.items():
        if u in key:
            cal[key[u]] = int(num)
        elif u == "bd":
            bd = int(num)
        else:
            fixed += Fraction(num) * UNIT_MS[u]
    assert fixed.denominator == 1
    return cal, bd, int(fixed)


ZONES_DST = [
    "Europe/Prague", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe",
    "Pacific/Chatham", "America/St_Johns", "America/Sao_Paulo",
]
ZONES_ODD = ["Asia/Kathmandu", "Asia/Kolkata", "UTC", "+05:45", "-03:30", "+14:00", "Asia/Tokyo",
             "America/Argentina/Buenos_Aires", "US/Eastern"]

# Instants near DST changes (UTC), both hemispheres, and month ends / leap days.
DST_STARTS = [
    "2026-03-29T00:30:00Z", "2026-03-28T01:30:00Z", "2026-03-28T12:00:00Z",  # Prague spring 01:00Z
    "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-24T00:30:00Z",  # Prague fall 01:00Z
    "2026-03-08T06:30:00Z", "2026-03-07T07:30:00Z", "2026-11-01T05:30:00Z",  # New York
    "2026-11-01T06:30:00Z", "2026-10-31T05:30:00Z", "2026-11-01T06:15:00Z",
    "2026-10-03T15:30:00Z", "2026-10-03T16:30:00Z", "2026-04-04T15:30:00Z",  # Sydney 2026-10-04 / 04-05
    "2026-04-04T14:30:00Z", "2026-04-04T16:30:00Z",
    "2026-10-03T15:15:00Z", "2026-04-04T14:45:00Z", "2026-04-04T15:15:00Z",  # Lord Howe 30-min
    "2026-09-26T13:45:00Z", "2026-04-04T13:45:00Z", "2026-04-04T14:15:00Z",  # Chatham
    "2026-03-08T05:00:00Z", "2026-11-01T04:00:00Z", "2026-10-31T03:31:00Z",  # St Johns
    "2018-11-03T03:30:00Z", "2019-02-16T02:30:00Z", "2019-02-17T01:30:00Z",  # Sao Paulo history
    "2018-11-04T02:30:00Z",
]
MONTH_ENDS = [
    "2026-01-31T10:00:00Z", "2024-02-29T12:00:00Z", "2024-01-31T23:30:00Z", "2025-12-31T23:59:59Z",
    "2026-08-31T06:00:00Z", "2028-02-29T00:00:00Z", "2027-03-31T22:00:00Z", "2026-05-31T21:30:00Z",
    "2025-10-31T12:00:00.500Z", "2030-12-31T12:00:00Z",
]


def random_instant(lo: str = "2020-01-01", hi: str = "2030-06-30") -> str:
    a = datetime.fromisoformat(lo).replace(tzinfo=UTC)
    b = datetime.fromisoformat(hi).replace(tzinfo=UTC)
    secs = rng.randrange(int((b - a).total_seconds()))
    dt = a + timedelta(seconds=secs)
    if rng.random() < 0.7:
        dt = dt.replace(second=0)
    if rng.random() < 0.5:
        dt = dt.replace(minute=rng.choice([0, 15, 30, 45]), second=0)
    return fmt_instant(dt)


def random_parts(kind: str) -> dict[str, str]:
    """kind: 'cal', 'fixed', 'mixed', 'bd'."""
    parts: dict[str, str] = {}
    if kind in ("cal", "mixed"):
        for u, hi in (("y", 3), ("mo", 14), ("w", 5), ("d", 40)):
            if rng.random() < 0.45:
                parts[u] = str(rng.randrange(0, hi + 1))
        if not parts:
            parts[rng.choice(["mo", "d", "w", "y"])] = str(rng.randrange(1, 13))
    if kind == "bd":
        parts["bd"] = str(rng.choice([0, 1, 1, 2, 2, 3, 5, 5, 7, 10, 15, 22]))
        if rng.random() < 0.3:
            parts[rng.choice(["d", "w", "mo"])] = str(rng.randrange(1, 4))
        if rng.random() < 0.3:
            parts["h"] = str(rng.randrange(1, 30))
    if kind in ("fixed", "mixed"):
        n = rng.randrange(1, 4)
        for u in rng.sample(["h", "m", "s", "ms"], n):
            if u == "ms":
                parts[u] = str(rng.randrange(0, 2000))
            elif rng.random() < 0.25:
                parts[u] = rng.choice(["1.5", "0.25", "2.75", "0.5", "1.125", "12.5", "0.001"])
            else:
                parts[u] = str(rng.randrange(0, 100))
    return parts


def gen_durations(T: Temporal) -> list:
    """Returns deferred cases: (builder, question ids)."""
    pending = []

    def add_case(now: str, text, tz: str | None, parts: dict | None, holidays=None, ms=None):
        if parts is not None:
            cal, bd, fixed = components(parts)
        else:
            cal, bd, fixed = {}, 0, ms
        req = {"now": now, "duration": text}
        if tz is not None:
            req["tz"] = tz
        if holidays:
            req["holidays"] = holidays
        zone = tz or "UTC"
        start = parse_instant(now)
        if bd == 0:
            dur = dict(cal)
            dur["milliseconds"] = fixed
            qid = T.ask({"op": "add", "start_ms": to_ms(start), "tz": zone, "dur": dur})
            pending.append(("temporal", req, qid, None))
        else:
            local = local_of(start, zone)
            qid = T.ask({"op": "plain_add", "local": local.isoformat(timespec="milliseconds"),
                         "dur": cal or {"days": 0}})
            pending.append(("temporal+numpy", req, qid, (zone, bd, fixed, holidays or [])))

    # Hand-picked: the examples of docs/timing.md and its zero-calendar-part rule ("Daylight-saving changes").
    hand = [
        ("2026-01-31T10:00:00Z", "1mo15d2h", "Europe/Prague"),
        ("2026-01-31T10:00:00Z", "1mo", "Europe/Prague"),
        ("2024-01-31T10:00:00Z", "1mo", "America/New_York"),
        ("2024-02-29T12:00:00Z", "1y", "Europe/Prague"),
        ("2024-02-29T12:00:00Z", "4y", "UTC"),
        ("2024-02-29T12:00:00Z", "12mo", "Asia/Tokyo"),
        ("2024-02-29T12:00:00Z", "1y1d", "UTC"),
        ("2023-03-31T12:00:00Z", "11mo", "UTC"),
        ("2026-11-01T06:30:00Z", "1h", "America/New_York"),   # 01:30 EST, the second 01:30
        ("2026-11-01T06:30:00Z", "0d1h", "America/New_York"),
        ("2026-11-01T06:30:00Z", "0d", "America/New_York"),
        ("2026-11-01T06:30:00Z", "0y0mo0w0d30m", "America/New_York"),
        ("2026-11-01T06:30:00Z", "1d", "America/New_York"),
        ("2026-11-01T06:30:00Z", "1d1h", "America/New_York"),
        ("2026-11-01T05:30:00Z", "1h", "America/New_York"),   # 01:30 EDT, the first 01:30
        ("2026-10-31T05:30:00Z", "1d", "America/New_York"),   # lands in the fold: first one
        ("2026-03-07T07:30:00Z", "1d", "America/New_York"),   # lands in the gap: forward
        ("2026-03-07T07:30:00Z", "24h", "America/New_York"),
        ("2026-03-28T01:30:00Z", "1d", "Europe/Prague"),      # 02:30 CET -> gap -> 03:30 CEST
        ("2026-03-28T01:30:00Z", "1d30m", "Europe/Prague"),
        ("2026-10-25T00:30:00Z", "1h", "Europe/Prague"),
        ("2026-10-25T01:30:00Z", "1h", "Europe/Prague"),
        ("2026-10-25T01:30:00Z", "0mo1h", "Europe/Prague"),
        ("2026-10-25T01:30:00Z", "1w", "Europe/Prague"),
        ("2026-10-24T00:30:00Z", "1d", "Europe/Prague"),
        ("2026-10-24T00:30:00Z", "24h", "Europe/Prague"),
        ("2026-10-03T15:30:00Z", "1d", "Australia/Lord_Howe"),
        ("2026-04-04T14:45:00Z", "1d", "Australia/Lord_Howe"),
        ("2026-04-04T15:15:00Z", "30m", "Australia/Lord_Howe"),
        ("2026-04-04T15:15:00Z", "0d30m", "Australia/Lord_Howe"),
        ("2018-11-03T03:30:00Z", "1d", "America/Sao_Paulo"),
        ("2019-02-16T01:30:00Z", "1d", "America/Sao_Paulo"),
        ("2019-02-16T02:30:00Z", "1d", "America/Sao_Paulo"),
        ("2026-03-01T12:00:00Z", "0s", "Europe/Prague"),
        ("2026-03-01T12:00:00.250Z", "750ms", "UTC"),
        ("2026-03-01T12:00:00Z", "1.5h", None),
        ("2026-03-01T12:00:00Z", "1.5 hours", "Asia/Kathmandu"),
        ("2026-03-01T12:00:00Z", "30 seconds", None),
        ("2026-03-01T12:00:00Z", "2 weeks", "Pacific/Chatham"),
        ("2026-03-01T12:00:00Z", "2h30m", "America/St_Johns"),
        ("2026-03-01T12:00:00Z", "7d", "+05:45"),
        ("2026-03-01T12:00:00Z", "1mo 15d", "-03:30"),
        ("2026-03-01T12:00:00Z", "15d1mo", "Europe/Prague"),
        ("2026-03-01T12:00:00Z", "2h 1y", "Asia/Kolkata"),
        ("2026-03-01T12:00:00Z", "0.001s", None),
    ]
    for now, text, tz in hand:
        add_case(now, text, tz, parse_simple(text))

    # Numbers as milliseconds.
    for now, ms, tz in [("2026-03-01T12:00:00Z", 30000, None), ("2026-03-01T12:00:00Z", 0, "Europe/Prague"),
                        ("2026-03-28T12:00:00Z", 86400000, "Europe/Prague"),
                        ("2026-11-01T05:30:00Z", 3600000, "America/New_York"),
                        ("2026-03-01T12:00:00Z", 1, None), ("2026-03-01T12:00:00Z", 90061001, "Asia/Tokyo"),
                        ("2026-03-01T12:00:00.999Z", 1, None), ("2026-02-28T23:59:59Z", 1000, "UTC"),
                        ("2026-03-01T12:00:00Z", 604800000, "Australia/Sydney"),
                        ("2026-03-01T12:00:00Z", 2592000000, "America/New_York")]:
        add_case(now, ms, tz, None, ms=ms)

    # Random compound durations near DST changes, month ends and anywhere.
    starts = DST_STARTS + MONTH_ENDS
    for i in range(520):
        if i < 220:
            now = rng.choice(starts)
        else:
            now = random_instant()
        tz = rng.choice(ZONES_DST + ZONES_DST + ZONES_ODD + [None])
        if tz == "America/Sao_Paulo" and not now.startswith(("2018", "2019")):
            tz = rng.choice(ZONES_DST[:4])
        kind = rng.choice(["cal", "cal", "fixed", "mixed", "mixed"])
        parts = random_parts(kind)
        style = rng.choice(["canonical", "mixed", "mixed"])
        add_case(now, render(parts, style), tz, parts)

    # Business days: from weekends, Fridays, holidays, across DST, with and without holidays.
    hol_sets = [
        [],
        ["2026-12-24", "2026-12-25", "2026-12-31", "2027-01-01"],
        ["2026-03-30", "2026-04-03", "2026-04-06"],
        ["2026-11-26", "2026-11-27"],
        ["2026-10-26", "2026-10-28"],
        ["2025-12-25", "2025-12-26", "2026-01-01", "2026-01-02"],
    ]
    bd_starts = [
        "2026-12-23T15:00:00Z", "2026-12-24T09:00:00Z", "2026-12-18T10:00:00Z", "2026-12-19T10:00:00Z",
        "2026-12-20T23:30:00Z", "2026-03-27T10:00:00Z", "2026-03-28T10:00:00Z", "2026-03-27T01:30:00Z",
        "2026-04-02T08:00:00Z", "2026-11-25T17:00:00Z", "2026-11-26T12:00:00Z", "2026-10-23T23:30:00Z",
        "2026-10-24T00:30:00Z", "2026-10-30T05:30:00Z", "2026-10-31T05:30:00Z", "2026-03-06T07:30:00Z",
        "2025-12-24T16:00:00Z", "2026-01-02T22:00:00Z", "2026-01-03T03:00:00Z", "2026-10-02T15:30:00Z",
    ]
    bd_hand = [
        ("2026-12-18T10:00:00Z", "1bd", "UTC", []),           # Friday -> Monday
        ("2026-12-19T10:00:00Z", "1bd", "UTC", []),           # Saturday -> Monday
        ("2026-12-20T10:00:00Z", "1bd", "UTC", []),           # Sunday -> Monday
        ("2026-12-19T10:00:00Z", "0bd", "UTC", []),           # zero days, weekend or not
        ("2026-12-23T10:00:00Z", "1bd", "Europe/Prague", ["2026-12-24", "2026-12-25"]),
        ("2026-12-24T10:00:00Z", "1bd", "Europe/Prague", ["2026-12-24", "2026-12-25"]),
        ("2026-12-23T10:00:00Z", "2 business days", "Europe/Prague", ["2026-12-24", "2026-12-25"]),
        ("2026-03-27T01:30:00Z", "1bd", "Europe/Prague", []),  # Fri 02:30 CET -> Mon 02:30 CEST
        ("2026-03-27T01:30:00Z", "1bd", "Europe/Prague", ["2026-03-30"]),
        ("2026-10-30T05:30:00Z", "1bd", "America/New_York", []),
        ("2026-03-06T07:30:00Z", "1bd", "America/New_York", []),  # Fri 02:30 -> Mon 02:30 (no gap)
        ("2026-03-05T07:30:00Z", "2bd", "America/New_York", []),
        ("2026-03-06T12:00:00Z", "1 business day", "America/New_York", []),
        ("2026-12-31T23:30:00Z", "1bd", "Asia/Tokyo", ["2027-01-01"]),
        ("2026-12-18T10:00:00Z", "1bd2h", "UTC", []),
        ("2026-12-18T10:00:00Z", "1w1bd", "UTC", []),
    ]
    for now, text, tz, hol in bd_hand:
        add_case(now, text, tz, parse_simple(text), holidays=hol)
    for i in range(160):
        now = rng.choice(bd_starts) if i < 100 else random_instant("2025-01-01", "2028-12-31")
        tz = rng.choice(["Europe/Prague", "America/New_York", "Australia/Sydney", "Asia/Kathmandu",
                         "UTC", "Pacific/Chatham", "Asia/Tokyo", "+05:45", None])
        hol = rng.choice(hol_sets)
        parts = random_parts("bd")
        add_case(now, render(parts, rng.choice(["canonical", "mixed"])), tz, parts, holidays=hol)
    return pending


SIMPLE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*(business days?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?|months?|years?|ms|secs?|mins?|hrs?|bd|mo|s|m|h|d|w|y)")
LONG_TO_UNIT = {}
for _u, _sps in {**FIXED_SPELLINGS, **CAL_SPELLINGS}.items():
    for _sp in _sps:
        LONG_TO_UNIT[_sp] = _u


def parse_simple(text: str) -> dict[str, str]:
    """Splits the hand-written cases above into parts (the generator writes its own inputs; this
    is not the product grammar, just a reader for this file's literals)."""
    parts = {}
    pos = 0
    for m in SIMPLE_RE.finditer(text):
        assert text[pos:m.start()].strip() == "", text
        pos = m.end()
        u = LONG_TO_UNIT[m.group(2)]
        assert u not in parts
        parts[u] = m.group(1)
    assert text[pos:].strip() == "", text
    return parts


def finish_durations(pending, answers) -> list[dict]:
    out = []
    for oracle, req, qid, extra in pending:
        ans = answers[qid]
        if oracle == "temporal":
            at = from_ms(ans["ms"])
        else:
            zone, bd, fixed, hol = extra
            local = datetime.fromisoformat(ans["local"])
            d = busday(local.date(), bd, hol)
            local = datetime.combine(d, local.time())
            at = wall_to_instant(local, zone) + timedelta(milliseconds=fixed)
        out.append(case(oracle, req, {"at": fmt_instant(at)}))
    return out


# ---------------------------------------------------------------------------------------------
# until: wall clocks, absolute instants, +Nd / +Nbd HH:MM


def gen_until(T: Temporal) -> tuple[list[dict], list]:
    cases = []
    checks = []  # (qid, expected ms) cross-checks against Temporal

    def emit(oracle, now, text, tz, at: datetime, hol=None):
        req = {"now": now, "until": text}
        if tz is not None:
            req["tz"] = tz
        if hol:
            req["holidays"] = hol
        n = parse_instant(now)
        if at == n:
            return  # "past" is undefined for exactly now; keep the file unambiguous
        exp = {"at": fmt_instant(at)}
        if at < n:
            exp["past"] = True
        cases.append(case(oracle, req, exp))

    # Wall clocks (zoneinfo, every one cross-checked against Temporal).
    walls = [
        ("2026-06-01T00:00:00Z", "2026-09-01 08:00", "Europe/Prague"),
        ("2026-06-01T00:00:00Z", "2026-09-01 08:00:30", "Europe/Prague"),
        ("2026-06-01T00:00:00Z", "2026-09-01 08:00", None),
        ("2026-01-01T00:00:00Z", "2026-03-29 02:30", "Europe/Prague"),   # gap -> 03:30 CEST
        ("2026-01-01T00:00:00Z", "2026-03-29 02:00", "Europe/Prague"),
        ("2026-01-01T00:00:00Z", "2026-03-29 03:00", "Europe/Prague"),
        ("2026-01-01T00:00:00Z", "2026-10-25 02:30", "Europe/Prague"),   # fold -> first
        ("2026-01-01T00:00:00Z", "2026-10-25 02:00", "Europe/Prague"),
        ("2026-01-01T00:00:00Z", "2026-10-25 03:00", "Europe/Prague"),
        ("2026-01-01T00:00:00Z", "2026-03-08 02:30", "America/New_York"),
        ("2026-01-01T00:00:00Z", "2026-11-01 01:30", "America/New_York"),
        ("2026-01-01T00:00:00Z", "2026-11-01 01:59:59", "America/New_York"),
        ("2026-01-01T00:00:00Z", "2026-10-04 02:30", "Australia/Sydney"),
        ("2026-01-01T00:00:00Z", "2026-04-05 02:30", "Australia/Sydney"),
        ("2026-01-01T00:00:00Z", "2026-10-04 02:15", "Australia/Lord_Howe"),
        ("2026-01-01T00:00:00Z", "2026-04-05 01:45", "Australia/Lord_Howe"),
        ("2026-01-01T00:00:00Z", "2026-09-27 02:45", "Pacific/Chatham"),
        ("2026-01-01T00:00:00Z", "2026-04-05 03:15", "Pacific/Chatham"),
        ("2026-01-01T00:00:00Z", "2026-03-08 02:30", "America/St_Johns"),
        ("2026-01-01T00:00:00Z", "2026-11-01 01:30", "America/St_Johns"),
        ("2018-01-01T00:00:00Z", "2018-11-04 00:30", "America/Sao_Paulo"),
        ("2018-01-01T00:00:00Z", "2019-02-16 23:30", "America/Sao_Paulo"),
        ("2026-06-01T00:00:00Z", "2026-01-01 00:00", "Asia/Kathmandu"),   # past
        ("2026-06-01T00:00:00Z", "2026-05-31 23:59:59", "UTC"),            # past
        ("2026-06-01T00:00:00Z", "2026-06-01 02:00", "Europe/Prague"),     # 00:00Z, equal: skipped
        ("2026-06-01T00:00:00Z", "2026-06-01 02:01", "Europe/Prague"),
        ("2026-06-01T00:00:00Z", "2026-06-01 01:59", "Europe/Prague"),     # one minute past
        ("2026-06-01T00:00:00Z", "2028-02-29 12:00", "+05:45"),
        ("2026-06-01T00:00:00Z", "2028-02-29 12:00", "-03:30"),
        ("2026-06-01T00:00:00Z", "2027-01-01 00:00", "Pacific/Chatham"),
        ("2026-06-01T00:00:00Z", "2027-01-01 00:00", "Asia/Kolkata"),
        ("2026-06-01T00:00:00Z", "2027-01-01 00:00", "US/Eastern"),
    ]
    zones = ZONES_DST[:6] + ["Asia/Kathmandu", "Asia/Kolkata", "UTC", "+05:45", "Asia/Tokyo"]
    for _ in range(70):
        now = random_instant("2024-01-01", "2029-12-31")
        tz = rng.choice(zones)
        target = parse_instant(random_instant("2024-01-01", "2029-12-31"))
        loc = local_of(target, tz)
        text = loc.strftime("%Y-%m-%d %H:%M") if rng.random() < 0.7 else loc.strftime("%Y-%m-%d %H:%M:%S")
        walls.append((now, text, tz))
    for now, text, tz in walls:
        local = datetime.fromisoformat(text.replace(" ", "T"))
        at = wall_to_instant(local, tz or "UTC")
        qid = T.ask({"op": "wall", "local": local.isoformat(), "tz": tz or "UTC"})
        checks.append((qid, to_ms(at), text, tz))
        emit("zoneinfo", now, text, tz, at)

    # Absolute RFC 3339 instants: their own offset; tz is not consulted.
    absolutes = [
        ("2026-06-01T00:00:00Z", "2026-09-01T08:00:00Z", None),
        ("2026-06-01T00:00:00Z", "2026-09-01T10:00:00+02:00", "America/New_York"),
        ("2026-06-01T00:00:00Z", "2026-09-01T08:00:00-05:00", "Europe/Prague"),
        ("2026-06-01T00:00:00Z", "2026-09-01T08:00:00.123Z", None),
        ("2026-06-01T00:00:00Z", "2026-09-01T08:00:00.5+05:45", "Asia/Tokyo"),
        ("2026-06-01T00:00:00Z", "2026-03-29T02:30:00+01:00", "Europe/Prague"),
        ("2026-06-01T00:00:00Z", "2026-05-01T08:00:00Z", "Europe/Prague"),          # past
        ("2026-06-01T00:00:00Z", "2026-05-31T23:59:59.999Z", None),                # past by 1 ms
        ("2026-06-01T00:00:00Z", "2026-06-01T00:00:00.001Z", None),
        ("2026-06-01T00:00:00Z", "2026-06-01T05:45:00+05:45", "UTC"),              # == now: skipped
        ("2026-06-01T00:00:00Z", "2030-12-31T23:59:59-14:00", None),
        ("2026-06-01T00:00:00Z", "2026-06-01T01:00:00+14:00", None),               # past
    ]
    for _ in range(20):
        now = random_instant("2025-01-01", "2028-12-31")
        t = parse_instant(random_instant("2025-01-01", "2028-12-31"))
        off = rng.choice(["Z", "+02:00", "-05:00", "+05:45", "+09:00", "-03:30", "+00:00", "+13:45"])
        if off == "Z":
            text = fmt_instant(t)
        else:
            sign = 1 if off[0] == "+" else -1
            delta = sign * timedelta(hours=int(off[1:3]), minutes=int(off[4:6]))
            text = t.astimezone(timezone(delta)).strftime("%Y-%m-%dT%H:%M:%S") + off
        absolutes.append((now, text, rng.choice([None, "Europe/Prague", "Asia/Tokyo"])))
    for now, text, tz in absolutes:
        emit("zoneinfo", now, text, tz, parse_instant(text))

    # +Nd HH:MM (calendar days from today's local date in tz) and +Nbd HH:MM (numpy).
    offs = [
        ("2026-03-28T12:00:00Z", "+1d 02:30", "Europe/Prague", None),      # lands in the gap
        ("2026-10-24T12:00:00Z", "+1d 02:30", "Europe/Prague", None),      # lands in the fold
        ("2026-03-01T10:00:00Z", "+0d 08:00", "Europe/Prague", None),      # today 08:00: past
        ("2026-03-01T10:00:00Z", "+0d 18:00", "Europe/Prague", None),
        ("2026-03-01T23:30:00Z", "+1d 08:00", "Europe/Prague", None),      # local date is 03-02
        ("2026-03-01T23:30:00Z", "+1d 08:00", None, None),
        ("2026-03-01T20:00:00Z", "+2d 09:30", "Pacific/Chatham", None),
        ("2026-03-07T12:00:00Z", "+1d 02:30", "America/New_York", None),
        ("2026-10-31T12:00:00Z", "+1d 01:30", "America/New_York", None),
        ("2026-12-18T10:00:00Z", "+1bd 09:30", "Europe/Prague", []),       # Friday -> Monday
        ("2026-12-19T10:00:00Z", "+1bd 09:30", "Europe/Prague", []),       # Saturday -> Monday
        ("2026-12-19T10:00:00Z", "+0bd 08:00", "Europe/Prague", []),       # zero days: today (past)
        ("2026-12-19T06:00:00Z", "+0bd 08:00", "Europe/Prague", []),       # today, future
        ("2026-12-23T10:00:00Z", "+1bd 09:00", "Europe/Prague", ["2026-12-24", "2026-12-25"]),
        ("2026-12-23T10:00:00Z", "+2bd 09:00", "Europe/Prague", ["2026-12-24", "2026-12-25"]),
        ("2026-03-27T12:00:00Z", "+1bd 02:30", "Europe/Prague", []),       # Monday 02:30 (no gap)
        ("2026-03-27T12:00:00Z", "+0bd 02:30", "Europe/Prague", []),
        ("2026-03-06T12:00:00Z", "+2bd 08:00", "America/New_York", []),
        ("2026-10-03T00:00:00Z", "+1bd 02:30", "Australia/Sydney", []),
        ("2026-12-31T20:00:00Z", "+1bd 08:00", "Asia/Tokyo", ["2027-01-01"]),
    ]
    hol_sets = [[], ["2026-12-24", "2026-12-25", "2026-12-31", "2027-01-01"], ["2026-03-30", "2026-04-03"],
                ["2026-11-26", "2026-11-27"]]
    for i in range(110):
        now = random_instant("2026-01-01", "2027-01-31")
        tz = rng.choice(zones + [None])
        hh = f"{rng.randrange(24):02d}:{rng.choice([0, 15, 30, 45, 7]):02d}"
        if rng.random() < 0.5:
            text = f"+{rng.choice([0, 1, 1, 2, 3, 7, 10, 31])}d {hh}"
            offs.append((now, text, tz, None))
        else:
            text = f"+{rng.choice([0, 1, 1, 2, 3, 5, 10])}bd {hh}"
            offs.append((now, text, tz, rng.choice(hol_sets)))
    for now, text, tz, hol in offs:
        m = re.fullmatch(r"\+(\d+)(bd|d) (\d\d):(\d\d)", text)
        n, unit, hh, mm = int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))
        today = local_of(parse_instant(now), tz or "UTC").date()
        if unit == "d":
            d, oracle = today + timedelta(days=n), "zoneinfo"
        else:
            d, oracle = busday(today, n, hol or []), "numpy"
        local = datetime.combine(d, time(hh, mm))
        at = wall_to_instant(local, tz or "UTC")
        qid = T.ask({"op": "wall", "local": local.isoformat(), "tz": tz or "UTC"})
        checks.append((qid, to_ms(at), text, tz))
        emit(oracle, now, text, tz, at, hol)
    return cases, checks


# ---------------------------------------------------------------------------------------------
# Calendar patterns: systemd-analyze, only far from DST changes.

TRANSITIONS: dict[str, list[datetime]] = {}


def transitions(tz: str) -> list[datetime]:
    """Instants (hour resolution) around which the zone's UTC offset changes, 2017–2032."""
    if tz not in TRANSITIONS:
        z = zi(tz)
        t = datetime(2017, 1, 1, tzinfo=UTC)
        end = datetime(2032, 1, 1, tzinfo=UTC)
        prev = t.astimezone(z).utcoffset()
        out = []
        while t < end:
            t += timedelta(hours=1)
            off = t.astimezone(z).utcoffset()
            if off != prev:
                out.append(t)
                prev = off
        TRANSITIONS[tz] = out
    return TRANSITIONS[tz]


def far_from_dst(tz: str, base: datetime, answer: datetime, margin_h: int = 6) -> bool:
    """No offset change between base - margin and answer + margin: systemd and the documented rule then agree."""
    lo, hi = base - timedelta(hours=margin_h), answer + timedelta(hours=margin_h)
    return not any(lo <= t <= hi for t in transitions(tz))


def systemd_next(pattern: str, tz: str, base: datetime) -> datetime | None:
    base_text = base.strftime("%Y-%m-%d %H:%M:%S") + " UTC"
    res = subprocess.run(["systemd-analyze", "calendar", f"--base-time={base_text}", "--iterations=1",
                          f"{pattern} {tz}"], capture_output=True, text=True, env={"TZ": "UTC", "LC_ALL": "C"})
    if res.returncode != 0:
        return None
    m = re.search(r"Next elapse: (?:\w+ )?(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC", res.stdout)
    if not m:
        return None  # "never"
    return datetime.fromisoformat(m.group(1)).replace(tzinfo=UTC)


def systemd_refuses(pattern: str) -> bool:
    """systemd cannot parse the pattern at all (as opposed to parsing it and finding no match)."""
    res = subprocess.run(["systemd-analyze", "calendar", "--iterations=1", f"{pattern} UTC"],
                         capture_output=True, text=True, env={"TZ": "UTC", "LC_ALL": "C"})
    return res.returncode != 0 and "Failed to parse calendar specification" in res.stderr


PATTERNS = [
    "mon 09:00", "Mon 09:00", "MON 09:00", "mon..fri 08:30", "Mon..Fri 08:30", "sat,sun 10:00",
    "mon,wed,fri 17:45", "Tue..Thu 12:00", "fri..mon 07:00", "*-*-01 08:00", "*-*-15 12:30",
    "*:*:0/5", "*:0/15", "*:*:00", "*-*-* 08:00,17:30", "*-*-* 08,17:30", "*-*-* 09..11:00",
    "*-*-* 00:00", "*-12-25 09:00", "*-02-29 12:00", "2027-*-* 09:00", "2026..2028-06-01 06:00",
    "2028-02-29 00:00", "*-01,07-01 00:00", "*-*-1..7 10:00", "Sat *-*-1..7 18:00",
    "mon *-*-* 09:00:30", "*-*-* 12:00:00", "*-*-* 23:59:59", "*-1/3-01 08:00", "*-*-* 08:00/20",
    "*-*-* *:30", "wed 14:15", "sun 23:45", "*-06-* 06:00", "fri *-*-13 13:13",
    "*-*-* 06,18:00", "mon..wed,fri 08:00", "*-*-* 08..17:00/30", "2026-*-* 08:00",
]
PATTERN_ZONES = ["UTC", "Europe/Prague", "America/New_York", "Asia/Kathmandu", "Asia/Kolkata",
                 "Australia/Sydney", "Australia/Lord_Howe", "Pacific/Chatham", "America/St_Johns",
                 "Asia/Tokyo", "America/Argentina/Buenos_Aires"]


def gen_patterns() -> list[dict]:
    cases = []
    seen = set()
    tries = 0
    while len(cases) < 300 and tries < 3000:
        tries += 1
        pattern = PATTERNS[tries % len(PATTERNS)] if tries <= 2 * len(PATTERNS) else rng.choice(PATTERNS)
        tz = rng.choice(PATTERN_ZONES)
        now = random_instant("2025-01-01", "2029-06-30")
        base = parse_instant(now)
        if (pattern, tz, now) in seen:
            continue
        seen.add((pattern, tz, now))
        nxt = systemd_next(pattern, tz, base)
        if nxt is None or not far_from_dst(tz, base, nxt):
            continue
        req = {"now": now, "until": pattern}
        if tz != "UTC" or rng.random() < 0.5:
            req["tz"] = tz
        cases.append(case("systemd", req, {"at": fmt_instant(nxt)}))
    return cases


def gen_pattern_spec_rule() -> list[dict]:
    """Patterns that hit a DST gap or fold: docs/timing.md, "Daylight-saving changes" — each local match maps to one instant by
    docs/timing.md, "Daylight-saving changes" (gap forward, fold first occurrence only), earliest instant strictly after now. Worked
    out by hand; each comment gives the local reasoning. A zoneinfo assertion below checks the
    arithmetic of each hand answer (not the rule)."""
    P, NY, LH = "Europe/Prague", "America/New_York", "Australia/Lord_Howe"
    hand = [
        # Prague spring forward 2026-03-29 02:00 CET -> 03:00 CEST (01:00Z).
        ("2026-03-28T12:00:00Z", "*-*-* 02:30", P, "2026-03-29T01:30:00Z"),  # 02:30 -> 03:30 CEST
        ("2026-03-28T12:00:00Z", "*-*-* 02:00", P, "2026-03-29T01:00:00Z"),  # 02:00 -> 03:00 CEST
        ("2026-03-28T12:00:00Z", "sun 02:59", P, "2026-03-29T01:59:00Z"),
        ("2026-03-28T12:00:00Z", "*-03-29 02:30", P, "2026-03-29T01:30:00Z"),
        ("2026-03-29T00:45:00Z", "*:0/15", P, "2026-03-29T01:00:00Z"),       # 01:45 CET -> 02:00 -> 03:00 CEST
        ("2026-03-29T00:45:00Z", "*-*-* 02,03:15,30", P, "2026-03-29T01:15:00Z"),  # 02:15->03:15 = 03:15
        ("2026-03-29T01:20:00Z", "*-*-* 02,03:15,30", P, "2026-03-29T01:30:00Z"),  # 02:30->03:30 = 03:30
        ("2026-03-29T01:40:00Z", "*-*-* 02:30", P, "2026-03-30T00:30:00Z"),
        # Prague fall back 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z): 02:xx happens twice.
        ("2026-10-24T12:00:00Z", "*-*-* 02:30", P, "2026-10-25T00:30:00Z"),  # first 02:30 (CEST)
        ("2026-10-25T00:45:00Z", "*-*-* 02:30", P, "2026-10-26T01:30:00Z"),  # not the second 02:30
        ("2026-10-25T00:40:00Z", "*:0/30", P, "2026-10-25T02:00:00Z"),       # skips 02:00/02:30 CET
        ("2026-10-25T00:59:45Z", "*:*:0/30", P, "2026-10-25T02:00:00Z"),     # after 02:59:30 CEST: 03:00 CET
        # New York spring forward 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z).
        ("2026-03-07T12:00:00Z", "sun 02:30", NY, "2026-03-08T07:30:00Z"),   # 02:30 -> 03:30 EDT
        ("2026-03-07T12:00:00Z", "*-*-* 02:15", NY, "2026-03-08T07:15:00Z"),
        # New York fall back 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z).
        ("2026-10-31T12:00:00Z", "sun 01:30", NY, "2026-11-01T05:30:00Z"),   # first 01:30 (EDT)
        ("2026-11-01T05:45:00Z", "*-*-* 01:30", NY, "2026-11-02T06:30:00Z"),
        ("2026-11-01T05:45:00Z", "*:0/20", NY, "2026-11-01T07:00:00Z"),      # 01:xx EST skipped; 02:00 EST
        # Lord Howe: 30-minute DST. Spring 2026-10-04 02:00 -> 02:30 (+10:30 -> +11, 15:30Z).
        ("2026-10-03T06:00:00Z", "*-*-* 02:15", LH, "2026-10-03T15:45:00Z"),  # 02:15 -> 02:45 (+11)
        # Autumn 2026-04-05 02:00 (+11) -> 01:30 (+10:30), at 15:00Z: 01:30–02:00 happens twice.
        ("2026-04-04T06:00:00Z", "*-*-* 01:45", LH, "2026-04-04T14:45:00Z"),  # first 01:45 (+11)
        ("2026-04-04T14:50:00Z", "*-*-* 01:45", LH, "2026-04-05T15:15:00Z"),
        # Sydney spring 2026-10-04 02:00 AEST -> 03:00 AEDT (16:00Z).
        ("2026-10-03T06:00:00Z", "sun 02:30", "Australia/Sydney", "2026-10-03T16:30:00Z"),
        # Chatham spring 2026-09-27 02:45 -> 03:45 (+12:45 -> +13:45, 14:00Z).
        ("2026-09-26T06:00:00Z", "*-*-* 03:00", "Pacific/Chatham", "2026-09-26T14:15:00Z"),  # -> 04:00
    ]
    cases = []
    for now, pattern, tz, at in hand:
        cases.append(case("spec-rule", {"now": now, "until": pattern, "tz": tz}, {"at": at}))
    # Arithmetic check of a few hand answers (wall clock -> instant with zoneinfo).
    assert fmt_instant(wall_to_instant(datetime(2026, 3, 29, 2, 30), P)) == "2026-03-29T01:30:00Z"
    assert fmt_instant(wall_to_instant(datetime(2026, 10, 25, 2, 30), P)) == "2026-10-25T00:30:00Z"
    assert fmt_instant(wall_to_instant(datetime(2026, 10, 26, 2, 30), P)) == "2026-10-26T01:30:00Z"
    assert fmt_instant(wall_to_instant(datetime(2026, 11, 1, 2, 0), NY)) == "2026-11-01T07:00:00Z"
    assert fmt_instant(wall_to_instant(datetime(2026, 11, 2, 1, 30), NY)) == "2026-11-02T06:30:00Z"
    assert fmt_instant(wall_to_instant(datetime(2026, 10, 4, 2, 15), LH)) == "2026-10-03T15:45:00Z"
    assert fmt_instant(wall_to_instant(datetime(2026, 4, 5, 1, 45), LH)) == "2026-04-04T14:45:00Z"
    assert fmt_instant(wall_to_instant(datetime(2026, 4, 6, 1, 45), LH)) == "2026-04-05T15:15:00Z"
    assert fmt_instant(wall_to_instant(datetime(2026, 9, 27, 3, 0), "Pacific/Chatham")) == "2026-09-26T14:15:00Z"
    assert fmt_instant(wall_to_instant(datetime(2026, 10, 4, 2, 30), "Australia/Sydney")) == "2026-10-03T16:30:00Z"
    return cases


# ---------------------------------------------------------------------------------------------
# Phones and zones through tzdata links

LINKS: dict[str, str] = {}


def load_links() -> None:
    """link -> target from tzdata's compiled `tzdata.zi` (the pinned tzdata package)."""
    text = (Path(tzdata.__file__).parent / "zoneinfo" / "tzdata.zi").read_text()
    for line in text.splitlines():
        if line.startswith("L "):
            _, target, link = line.split()
            LINKS[link] = target


def canonical(z: str) -> str:
    return LINKS.get(z, z)


def aliases_for(zones: list[str]) -> dict[str, list[str]]:
    """For each expected zone, the other tzdata names of the same zone (links either way)."""
    out = {}
    for z in zones:
        names = sorted(l for l, t in LINKS.items() if t == z)
        if names:
            out[z] = names
    return out


def phone_candidates(text: str) -> tuple[str, list[str]] | None:
    """(e164, canonical zones) or None when not a valid E.164 number."""
    if not text.startswith("+"):
        return None
    try:
        p = phonenumbers.parse(text, None)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(p):
        return None
    zones = [canonical(z) for z in phone_tz.time_zones_for_number(p) if z != "Etc/Unknown"]
    return phonenumbers.format_number(p, phonenumbers.PhoneNumberFormat.E164), sorted(set(zones))


PHONES = [
    "+13035551234", "+12125551234", "+14155552671", "+13125550123", "+17135550199", "+18085550100",
    "+19075550100", "+16045550100", "+14165550100", "+18005551234", "+18885550100",
    "+420601123456", "+420222123456", "+442079460000", "+447911123456", "+33612345678",
    "+4915112345678", "+34612345678", "+390612345678", "+31612345678", "+48601123456",
    "+61412345678", "+61212345678", "+61891234567", "+61712345678", "+79161234567", "+74951234567",
    "+73832123456", "+919876543210", "+977014412345", "+81312345678", "+819012345678",
    "+8613812345678", "+5511912345678", "+541112345678", "+525512345678", "+6421123456",
    "+80012345678", "+35315550100", "+27211234567", "+18765550100", "+61882345678",
    "+6591234567",
]


def gen_phones() -> list[dict]:
    cases = []
    for text in PHONES:
        got = phone_candidates(text)
        assert got is not None, text
        e164, zones = got
        c = case("phonenumbers", {"now": "2026-06-01T00:00:00Z", "phone": text},
                 {"e164": e164, "zones": zones})
        al = aliases_for(zones)
        if al:
            c["aliases"] = al
        cases.append(c)
    return cases


# ---------------------------------------------------------------------------------------------
# Windows: minute-by-minute brute force with zoneinfo.

DAY_NAMES = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
SMS_FROM, SMS_TO = time(8, 0), time(21, 0)
HORIZON = timedelta(days=31)


@functools.lru_cache(maxsize=None)
def day_interval(tz: str, d: date, t_from: time, t_to: time) -> tuple[datetime, datetime]:
    return (wall_to_instant(datetime.combine(d, t_from), tz), wall_to_instant(datetime.combine(d, t_to), tz))


def open_in(tz: str, t: datetime, t_from: time, t_to: time, days: set[int] | None, hol: set[date]) -> bool:
    """Is `t` inside [from, to) of some local day in tz that is listed and not a holiday?"""
    today = local_of(t, tz).date()
    for d in (today - timedelta(days=1), today, today + timedelta(days=1)):
        if days is not None and d.weekday() not in days:
            continue
        if d in hol:
            continue
        a, b = day_interval(tz, d, t_from, t_to)
        if a <= t < b:
            return True
    return False


def resolve_zones(window, channel, contact, sender_tz):
    """docs/timing.md, "Zones" + docs/timing.md, "Send windows": (window zone or None, SMS zones) — written here from the documented rule."""
    contact = contact or {}
    phone_zones: list[str] = []
    if contact.get("phone"):
        got = phone_candidates(contact["phone"])
        phone_zones = got[1] if got else []
    if contact.get("tz"):
        contact_zone = contact["tz"]
    elif channel == "sms" and len(phone_zones) == 1:
        contact_zone = phone_zones[0]
    else:
        contact_zone = None
    wz = None
    if window is not None:
        sel = window.get("tz", "contact")
        if sel == "contact":
            wz = contact_zone or sender_tz or "UTC"
        elif sel == "sender":
            wz = sender_tz or "UTC"
        else:
            wz = sel
    sms = []
    if channel == "sms":
        sms = [contact["tz"]] if contact.get("tz") else phone_zones
    return wz, sms


def brute_next_opening(now: datetime, window, channel, contact, sender_tz, holidays):
    wz, sms = resolve_zones(window, channel, contact, sender_tz)
    if channel == "sms" and not sms:
        return {"error": {"code": "ZONE_UNKNOWN"}}
    hol = {date.fromisoformat(h) for h in holidays}
    if window is not None:
        days = {DAY_NAMES.index(x.lower()) for x in window["days"]}
        wf = time.fromisoformat(window["from"])
        wt = time.fromisoformat(window["to"])

    def is_open(t):
        if window is not None and not open_in(wz, t, wf, wt, days, hol):
            return False
        return all(open_in(z, t, SMS_FROM, SMS_TO, None, set()) for z in sms)

    def scan(pred):
        """The first instant >= now where pred holds: now itself, then each whole minute (every
        opening is on a whole minute: window times are HH:MM and zone offsets whole minutes)."""
        if pred(now):
            return now
        t = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
        while t <= now + HORIZON:
            if pred(t):
                return t
            t += timedelta(minutes=1)
        return None

    found = scan(is_open)
    if found is None:
        # docs/timing.md, "Send windows": candidate SMS windows that never overlap each other -> ZONE_UNKNOWN; a send
        # window that never meets the SMS window -> NO_OPENING.
        sms_only = scan(lambda t: all(open_in(z, t, SMS_FROM, SMS_TO, None, set()) for z in sms))
        if channel == "sms" and sms_only is None:
            return {"error": {"code": "ZONE_UNKNOWN"}}
        return {"error": {"code": "NO_OPENING"}}
    # Each zone once (docs/service.md): a London window for a London number is one zone.
    zones = list(dict.fromkeys(([wz] if wz else []) + list(sms)))
    return {"at": fmt_instant(found), "zones": zones}


def gen_windows() -> list[dict]:
    wk = ["mon", "tue", "wed", "thu", "fri"]
    specs = [
        # (now, window, channel, contact, sender_tz, holidays)
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00", "tz": "contact"}, "email",
         {"tz": "America/New_York"}, "Europe/Prague", []),
        ("2026-03-02T15:00:00Z", {"days": wk, "from": "09:00", "to": "17:00", "tz": "contact"}, "email",
         {"tz": "America/New_York"}, "Europe/Prague", []),
        ("2026-03-02T15:00:00.250Z", {"days": wk, "from": "09:00", "to": "17:00"}, "email",
         {"tz": "America/New_York"}, "Europe/Prague", []),
        ("2026-03-02T21:59:30Z", {"days": wk, "from": "09:00", "to": "17:00"}, "email",
         {"tz": "America/New_York"}, "Europe/Prague", []),
        ("2026-03-02T22:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "email",
         {"tz": "America/New_York"}, "Europe/Prague", []),
        ("2026-03-06T23:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "email",
         {"tz": "America/New_York"}, "Europe/Prague", []),
        ("2026-03-06T23:00:00Z", {"days": wk, "from": "09:00", "to": "17:00", "tz": "sender"}, "email",
         {"tz": "America/New_York"}, "Europe/Prague", []),
        ("2026-03-06T23:00:00Z", {"days": wk, "from": "09:00", "to": "17:00", "tz": "Asia/Tokyo"}, "email",
         {"tz": "America/New_York"}, "Europe/Prague", []),
        ("2026-12-23T17:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "email",
         {"tz": "Europe/Prague"}, "Europe/Prague", ["2026-12-24", "2026-12-25"]),
        ("2026-12-23T17:00:00Z", {"days": ["MON", "Tue", "wed", "thu", "fri"], "from": "09:00", "to": "17:00"},
         "email", {"tz": "Europe/Prague"}, "Europe/Prague", ["2026-12-24", "2026-12-25", "2026-12-28"]),
        # Window null: any time, but the SMS window still applies.
        ("2026-03-02T03:00:00Z", None, "sms", {"tz": "America/New_York"}, "Europe/Prague", []),
        ("2026-03-02T15:00:00Z", None, "sms", {"tz": "America/New_York"}, "Europe/Prague", []),
        ("2026-03-02T03:00:00Z", None, "email", {"tz": "America/New_York"}, "Europe/Prague", []),
        ("2026-03-02T03:00:00Z", None, "sms", {"phone": "+13035551234"}, "Europe/Prague", []),
        ("2026-03-02T03:00:00Z", None, "sms", {"phone": "+18005551234"}, "Europe/Prague", []),
        ("2026-03-02T03:00:00Z", None, "sms", {"phone": "+61412345678"}, "Europe/Prague", []),
        ("2026-03-02T03:00:00Z", None, "sms", {"phone": "+79161234567"}, "Europe/Prague", []),
        ("2026-03-02T03:00:00Z", None, "sms", {"phone": "+447911123456"}, "Europe/Prague", []),
        # Window in New York, SMS recipient elsewhere.
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00", "tz": "America/New_York"}, "sms",
         {"tz": "Europe/London"}, "Europe/Prague", []),
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00", "tz": "America/New_York"}, "sms",
         {"tz": "America/Los_Angeles"}, "Europe/Prague", []),
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00", "tz": "America/New_York"}, "sms",
         {"tz": "Asia/Tokyo"}, "Europe/Prague", []),                     # NO_OPENING
        ("2026-07-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00", "tz": "America/New_York"}, "sms",
         {"tz": "Asia/Tokyo"}, "Europe/Prague", []),                     # NO_OPENING in summer too
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00", "tz": "America/New_York"}, "sms",
         {"phone": "+420601123456"}, "Europe/Prague", []),
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "sms",
         {"phone": "+420601123456"}, "America/New_York", []),            # inferred zone is the contact's
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "email",
         {"phone": "+420601123456"}, "America/New_York", []),            # email: sender's zone
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "sms",
         {"phone": "+18005551234"}, "America/Chicago", []),              # several zones: sender's
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "sms",
         {"phone": "+61412345678"}, "Australia/Sydney", []),
        # A UK mobile: libphonenumber names four zones, all one tzdata zone (links of London).
        ("2026-03-02T06:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "sms",
         {"phone": "+447911123456"}, "Europe/Prague", []),
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "sms",
         {"phone": "+79161234567"}, "Europe/Moscow", []),
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "sms",
         {"tz": "Asia/Kolkata", "phone": "+13035551234"}, "Europe/Prague", []),  # contact tz wins
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "sms",
         {"phone": "+80012345678"}, "Europe/Prague", []),                # ZONE_UNKNOWN
        ("2026-03-02T12:00:00Z", None, "sms", {"phone": "+80012345678"}, "Europe/Prague", []),
        ("2026-03-02T12:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "sms", {}, "Europe/Prague", []),
        # DST days: a from inside the gap opens at the normalized time (docs/timing.md, "Daylight-saving changes").
        ("2026-03-28T12:00:00Z", {"days": ["sun"], "from": "02:30", "to": "05:00", "tz": "Europe/Prague"},
         "email", {}, "Europe/Prague", []),
        ("2026-10-24T12:00:00Z", {"days": ["sun"], "from": "02:30", "to": "05:00", "tz": "Europe/Prague"},
         "email", {}, "Europe/Prague", []),
        ("2026-03-07T12:00:00Z", {"days": ["sun"], "from": "02:00", "to": "03:30", "tz": "America/New_York"},
         "email", {}, "Europe/Prague", []),
        ("2026-03-08T06:59:00Z", {"days": ["sun"], "from": "02:00", "to": "03:30", "tz": "America/New_York"},
         "email", {}, "Europe/Prague", []),
        ("2026-10-03T10:00:00Z", {"days": ["sun"], "from": "02:00", "to": "04:00", "tz": "Australia/Sydney"},
         "email", {}, "Europe/Prague", []),
        ("2026-10-03T10:00:00Z", {"days": ["sun"], "from": "02:00", "to": "02:45", "tz": "Australia/Lord_Howe"},
         "email", {}, "Europe/Prague", []),
        ("2026-03-28T20:00:00Z", None, "sms", {"tz": "Europe/Prague"}, "UTC", []),
        ("2026-10-24T20:00:00Z", None, "sms", {"tz": "Europe/Prague"}, "UTC", []),
        ("2026-03-07T20:00:00Z", {"days": wk + ["sat", "sun"], "from": "07:00", "to": "22:00"}, "sms",
         {"tz": "America/New_York"}, "UTC", []),
        # The holidays close the send window only; the SMS window ignores them.
        ("2026-12-24T06:00:00Z", None, "sms", {"tz": "Europe/Prague"}, "UTC", ["2026-12-24"]),
        ("2026-12-24T06:00:00Z", {"days": wk, "from": "08:00", "to": "12:00"}, "sms",
         {"tz": "Europe/Prague"}, "UTC", ["2026-12-24", "2026-12-25"]),
        # Odd offsets.
        ("2026-03-02T00:00:00Z", {"days": wk, "from": "09:00", "to": "17:00"}, "sms",
         {"tz": "Asia/Kathmandu"}, "UTC", []),
        ("2026-03-02T00:00:00Z", {"days": wk, "from": "09:00", "to": "17:00", "tz": "+05:45"}, "email",
         {}, "UTC", []),
        ("2026-03-02T00:00:00Z", {"days": wk, "from": "09:00", "to": "17:00", "tz": "America/St_Johns"}, "sms",
         {"tz": "Pacific/Chatham"}, "UTC", []),
    ]
    # Random windows.
    zones = ["Europe/Prague", "America/New_York", "America/Los_Angeles", "Asia/Tokyo", "Australia/Sydney",
             "Asia/Kolkata", "Asia/Kathmandu", "Europe/London", "America/Sao_Paulo", "UTC", "+05:45",
             "Pacific/Chatham", "America/St_Johns"]
    phones = ["+13035551234", "+12125551234", "+420601123456", "+447911123456", "+61412345678",
              "+919876543210", "+81312345678", "+18005551234", "+5511912345678", "+80012345678",
              "+6421123456", "+977014412345"]
    hols = [[], ["2026-12-24", "2026-12-25", "2026-12-31", "2027-01-01"], ["2026-04-03", "2026-04-06"],
            ["2026-11-26"]]
    for _ in range(130):
        now = random_instant("2026-01-01", "2027-01-31")
        if rng.random() < 0.25:
            window = None
        else:
            nd = rng.randrange(1, 8)
            days = sorted(rng.sample(range(7), nd))
            h1 = rng.randrange(0, 20)
            h2 = rng.randrange(h1 + 1, 24)
            window = {"days": [DAY_NAMES[d] if rng.random() < 0.8 else DAY_NAMES[d].upper() for d in days],
                      "from": f"{h1:02d}:{rng.choice([0, 30]):02d}", "to": f"{h2:02d}:{rng.choice([0, 15]):02d}"}
            sel = rng.choice(["contact", "contact", "sender", "explicit", None])
            if sel == "explicit":
                window["tz"] = rng.choice(zones)
            elif sel is not None:
                window["tz"] = sel
        channel = rng.choice(["sms", "sms", "email"])
        contact = {}
        r = rng.random()
        if r < 0.4:
            contact["tz"] = rng.choice(zones)
        elif r < 0.8:
            contact["phone"] = rng.choice(phones)
        elif r < 0.97:
            contact["tz"] = rng.choice(zones)
            contact["phone"] = rng.choice(phones)
        sender = rng.choice(zones)
        specs.append((now, window, channel, contact, sender, rng.choice(hols)))

    cases = []
    for now, window, channel, contact, sender, hol in specs:
        req = {"now": now, "window": window, "channel": channel}
        if contact:
            req["contact"] = contact
        if sender is not None:
            req["sender_tz"] = sender
        if hol:
            req["holidays"] = hol
        exp = brute_next_opening(parse_instant(now), window, channel, contact, sender, hol)
        c = case("zoneinfo-bruteforce", req, exp)
        if "zones" in exp:
            # Zones inferred from a phone number may come back under another tzdata name.
            got = phone_candidates(contact["phone"]) if contact.get("phone") else None
            inferred = set(got[1]) if got else set()
            al = aliases_for([z for z in dict.fromkeys(exp["zones"]) if z in inferred])
            if al:
                c["aliases"] = al
        cases.append(c)
    return cases


# ---------------------------------------------------------------------------------------------
# Refusals: codes only.


def gen_refusals() -> list[dict]:
    now = "2026-03-01T12:00:00Z"
    rows = [
        ({"duration": "1.5d"}, "BAD_DURATION"),
        ({"duration": "1.5bd"}, "BAD_DURATION"),
        ({"duration": "2H"}, "BAD_DURATION"),
        ({"duration": "3M"}, "BAD_DURATION"),
        ({"duration": "1D"}, "BAD_DURATION"),
        ({"duration": "-1h"}, "BAD_DURATION"),
        ({"duration": "1h1h"}, "BAD_DURATION"),
        ({"duration": "2h 30m 2h"}, "BAD_DURATION"),
        ({"duration": "1.5ms"}, "BAD_DURATION"),
        ({"duration": "abc"}, "BAD_DURATION"),
        ({"duration": "10x"}, "BAD_DURATION"),
        ({"duration": ""}, "BAD_DURATION"),
        ({"duration": "h"}, "BAD_DURATION"),
        ({"duration": "1 fortnight"}, "BAD_DURATION"),
        ({"duration": -5}, "BAD_DURATION"),
        ({"duration": 1.5}, "BAD_DURATION"),
        ({"duration": "30000"}, "QUOTED_NUMBER"),
        ({"duration": "0"}, "QUOTED_NUMBER"),
        ({"duration": " 250 "}, "QUOTED_NUMBER"),
        ({"duration": "1h", "tz": "EST"}, "BAD_TZ"),
        ({"duration": "1h", "tz": "Local"}, "BAD_TZ"),
        ({"duration": "1h", "tz": "CET"}, "BAD_TZ"),
        ({"duration": "1h", "tz": "PST"}, "BAD_TZ"),
        ({"duration": "1h", "tz": "EST5EDT"}, "BAD_TZ"),
        ({"duration": "1h", "tz": "GMT"}, "BAD_TZ"),
        ({"duration": "1h", "tz": "europe/prague"}, "BAD_TZ"),
        ({"duration": "1h", "tz": "Mars/Olympus_Mons"}, "BAD_TZ"),
        ({"duration": "1h", "tz": "+15:00"}, "BAD_TZ"),
        ({"until": "2026-09-01 08:00", "tz": "EST"}, "BAD_TZ"),
        ({"until": "next monday"}, "BAD_UNTIL"),
        ({"until": "tomorrow at 9am"}, "BAD_UNTIL"),
        ({"until": "in 2 days"}, "BAD_UNTIL"),
        ({"until": "mon 25:00"}, "BAD_PATTERN"),
        ({"until": "*-13-01 08:00"}, "BAD_PATTERN"),
        ({"until": "mon..fri 08:61"}, "BAD_PATTERN"),
        ({"until": "*-*-32 08:00"}, "BAD_PATTERN"),
        ({"until": "fri..mon 07:00"}, "BAD_PATTERN"),
        ({"until": "*-02-30 08:00"}, "NEVER_MATCHES"),
        ({"until": "*-04-31 08:00"}, "NEVER_MATCHES"),
        ({"until": "*-02-30 08:00", "tz": "Europe/Prague"}, "NEVER_MATCHES"),
        ({"phone": "13035551234"}, "BAD_PHONE"),
        ({"phone": "+1 555 555 5555"}, "BAD_PHONE"),
        ({"phone": "hello"}, "BAD_PHONE"),
        ({"phone": "+4416329600"}, "BAD_PHONE"),
        ({"window": {"days": ["mon"], "from": "09:00", "to": "17:00"}, "channel": "sms",
          "contact": {"phone": "13035551234"}, "sender_tz": "UTC"}, "BAD_PHONE"),
        ({"window": {"days": ["mon"], "from": "17:00", "to": "09:00"}, "channel": "email",
          "sender_tz": "UTC"}, "BAD_WINDOW"),
        ({"window": {"days": [], "from": "09:00", "to": "17:00"}, "channel": "email", "sender_tz": "UTC"},
         "BAD_WINDOW"),
        ({"window": {"days": ["mon"], "from": "9am", "to": "17:00"}, "channel": "email", "sender_tz": "UTC"},
         "BAD_WINDOW"),
        ({"window": {"days": ["mon"], "from": "09:00", "to": "17:00", "tz": "EST"}, "channel": "email",
          "sender_tz": "UTC"}, "BAD_TZ"),
        ({"window": None, "channel": "email", "sender_tz": "Local"}, "BAD_TZ"),
    ]
    cases = []
    for q, code in rows:
        req = {"now": now}
        req.update(q)
        # Sanity of the refusal inputs against the oracles that can judge them.
        if code == "BAD_PHONE" and "phone" in q:
            assert phone_candidates(q["phone"]) is None
        if code == "BAD_PATTERN":
            assert systemd_refuses(q["until"])
        if code == "NEVER_MATCHES":
            assert systemd_next(q["until"], q.get("tz", "UTC"), parse_instant(now)) is None
        cases.append(case("spec-refusal", req, {"error": {"code": code}}))
    return cases


# ---------------------------------------------------------------------------------------------


def main() -> None:
    check_versions()
    load_links()
    T = Temporal()
    dur_pending = gen_durations(T)
    until_cases, checks = gen_until(T)
    answers = T.run()
    for qid, ms, text, tz in checks:
        if answers[qid]["ms"] != ms:
            sys.exit(f"zoneinfo and Temporal disagree on {text!r} in {tz}: {ms} vs {answers[qid]['ms']}")
    cases = finish_durations(dur_pending, answers)
    cases += until_cases
    cases += gen_patterns()
    cases += gen_pattern_spec_rule()
    cases += gen_windows()
    cases += gen_phones()
    cases += gen_refusals()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8", newline="\n") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False, separators=(",", ":")) + "\n")
    counts: dict[str, int] = {}
    for c in cases:
        counts[c["oracle"]] = counts.get(c["oracle"], 0) + 1
    print(f"{len(cases)} cases -> {OUT.relative_to(REPO)}", file=sys.stderr)
    for k, v in sorted(counts.items()):
        print(f"  {k}: {v}", file=sys.stderr)


if __name__ == "__main__":
    main()
