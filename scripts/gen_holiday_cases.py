#!/usr/bin/env python3
"""Golden cases for holiday calendars and quiet-hours policies (docs/timing.md, "Holiday calendars and quiet hours"), from oracles nudge
does not share code with:

- the Python `holidays` package (the calendars), with `numpy.busday_offset` / `numpy.is_busday`
  for business days;
- Python `zoneinfo` and a minute-by-minute scan written here for windows (fold=0 wall clock ->
  instant; a minute is open when every rule that applies says so);
- `phonenumbers` for a number's zones (`timezone`), region and US state (English geocoding),
  and the rows of src/timing/us_states.json (the data under test is the table; the arithmetic is
  the scan's).

Writes fixtures/timing/holiday_cases.jsonl (one `nudge timing` request and its expected answer a
line; `expect.rule` is present exactly when the place rule made the answer later than the federal
rule alone) and fixtures/timing/busdays.tsv (`<calendar>\t<one 0/1 per day, 2020-01-01..2040-12-31>`,
numpy.is_busday with the package's holidays) for the property test.

Usage: scripts/refresh-phone-data.sh (or: pip install -r scripts/requirements.txt &&
python3 scripts/gen_holiday_cases.py)
"""

import datetime as dt
import json
import os
import sys
from zoneinfo import ZoneInfo

import holidays
import numpy as np
import phonenumbers
from phonenumbers import geocoder
from phonenumbers import timezone as pntz
from tzlinks import canonical_zones, load_links

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
OUT = os.path.join(ROOT, "fixtures", "timing", "holiday_cases.jsonl")
BUSDAYS = os.path.join(ROOT, "fixtures", "timing", "busdays.tsv")
PINNED = {"holidays": "0.109", "phonenumbers": "9.0.43", "numpy": "2.2.6"}
FIRST, LAST = 2020, 2040
UTC = dt.timezone.utc
LINKS = load_links()
WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
FEDERAL = {d: ("08:00", "21:00") for d in WEEKDAYS}
STATES = {k: v for k, v in {
    "Alabama": "AL", "Alaska": "AK", "Arizona": "AZ", "Arkansas": "AR", "California": "CA", "Colorado": "CO",
    "Connecticut": "CT", "Delaware": "DE", "Florida": "FL", "Georgia": "GA", "Hawaii": "HI", "Idaho": "ID",
    "Illinois": "IL", "Indiana": "IN", "Iowa": "IA", "Kansas": "KS", "Kentucky": "KY", "Louisiana": "LA",
    "Maine": "ME", "Maryland": "MD", "Massachusetts": "MA", "Michigan": "MI", "Minnesota": "MN",
    "Mississippi": "MS", "Missouri": "MO", "Montana": "MT", "Nebraska": "NE", "Nevada": "NV",
    "New Hampshire": "NH", "New Jersey": "NJ", "New Mexico": "NM", "New York": "NY", "North Carolina": "NC",
    "North Dakota": "ND", "Ohio": "OH", "Oklahoma": "OK", "Oregon": "OR", "Pennsylvania": "PA",
    "Rhode Island": "RI", "South Carolina": "SC", "South Dakota": "SD", "Tennessee": "TN", "Texas": "TX",
    "Utah": "UT", "Vermont": "VT", "Virginia": "VA", "Washington": "WA", "West Virginia": "WV",
    "Wisconsin": "WI", "Wyoming": "WY"}.items()}


def cal(code):
    country, _, sub = code.partition("-")
    cls = holidays.country_holidays(country).__class__
    language = "en_US" if "en_US" in (cls.supported_languages or ()) else None
    return holidays.country_holidays(country, subdiv=sub or None, years=range(FIRST, LAST + 1), language=language)


def iso(t):
    t = t.astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ("Z" if t.microsecond == 0 else f".{t.microsecond // 1000:03d}Z")


def local_instant(day, hhmm, zone):
    h, m = map(int, hhmm.split(":"))
    naive = dt.datetime(day.year, day.month, day.day, h, m)
    # fold=0 for a repeated time; a skipped time moves forward by the gap (docs/timing.md, "Daylight-saving changes").
    aware = naive.replace(tzinfo=zone, fold=0)
    back = aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
    if back != naive:  # in a gap: zoneinfo gives the pre-transition offset; move forward
        aware = (naive.replace(tzinfo=zone, fold=1).astimezone(UTC) + (naive - back))
        return aware.astimezone(UTC)
    return aware.astimezone(UTC)


# ---- business days ------------------------------------------------------------------------

def bd_case(code, zone_name, start_local, n, contact=None):
    """`duration: Nbd` from `start_local` in zone: numpy.busday_offset(roll='backward') is the
    documented stepping rule (from a weekend or holiday, 1bd is the next business day)."""
    zone = ZoneInfo(zone_name)
    country_for_cal = code
    hol = sorted(cal(country_for_cal).keys())
    start = dt.datetime.fromisoformat(start_local).replace(tzinfo=zone)
    d = np.datetime64(start.date().isoformat())
    target = np.busday_offset(d, n, roll="backward", holidays=[np.datetime64(h.isoformat()) for h in hol])
    td = dt.date.fromisoformat(str(target))
    at = local_instant(td, start.strftime("%H:%M"), zone)
    request = {"now": iso(start), "duration": f"{n}bd", "tz": zone_name,
               "holidays": ["contact"] if contact else [code]}
    if contact:
        request["contact"] = contact
    return {"oracle": "holidays+numpy", "request": request, "expect": {"at": iso(at)}}


# ---- windows ------------------------------------------------------------------------------

def phone_facts(e164):
    p = phonenumbers.parse(e164, None)
    assert phonenumbers.is_valid_number(p), e164
    zones = canonical_zones([z for z in pntz.time_zones_for_number(p) if z != "Etc/Unknown"], LINKS)
    state = None
    if p.country_code == 1 and phonenumbers.region_code_for_number(p) == "US":
        name = geocoder.description_for_number(p, "en")
        state = STATES.get(name) or (name.rsplit(", ", 1)[1] if ", " in name else None)
    return zones, state


def rule_hours(row):
    hours = {}
    for w in row["windows"]:
        for d in w["days"]:
            hours[d] = (w["from"], w["to"])
    return hours


def open_at(t, rules):
    """Whether minute `t` is inside every (zone, hours, closed dates) rule."""
    for zone_name, hours, closed in rules:
        zone = ZoneInfo(zone_name)
        local = t.astimezone(zone)
        day = local.date()
        span = hours.get(WEEKDAYS[day.weekday()])
        if span is None or day in closed:
            return False
        start, end = local_instant(day, span[0], zone), local_instant(day, span[1], zone)
        if not (start <= t < end):
            return False
    return True


def scan(now, rules, days=20):
    t = now
    end = now + dt.timedelta(days=days)
    while t < end:
        if open_at(t, rules):
            return t
        t += dt.timedelta(minutes=1)
    return None


def window_case(now_iso, window, channel, contact, holiday_codes=(), quiet=None, sender_tz="UTC"):
    now = dt.datetime.fromisoformat(now_iso.replace("Z", "+00:00"))
    closed = set()
    for code in holiday_codes:
        closed |= set(cal(code).keys())
    rules, zones_out = [], []
    if window is not None:
        wz = window["tz"] if window["tz"] not in ("contact", "sender") else (contact.get("tz") or sender_tz)
        rules.append((wz, {d: (window["from"], window["to"]) for d in window["days"]}, closed))
        zones_out.append(wz)
    place = None
    if channel in ("sms", "call"):
        if contact.get("tz"):
            qz = [contact["tz"]]
        else:
            qz, _ = phone_facts(contact["phone"])
        _, state = phone_facts(contact["phone"])
        table = {r["rule"]: r for r in json.load(open(os.path.join(ROOT, "src", "timing", "us_states.json")))}
        overrides = {r["rule"]: r for r in (quiet or {}).get("overrides", [])} if isinstance(quiet, dict) else {}
        policy = quiet if isinstance(quiet, str) else (quiet or {}).get("policy", "federal")
        if policy == "us_states" and state:
            place = overrides.get(f"US-{state}") or table.get(f"US-{state}")
        for z in qz:
            rules.append((z, FEDERAL, set()))
            if z not in zones_out:
                zones_out.append(z)
        federal_only = list(rules)
        if place:
            pc = set(cal(place["rule"]).keys()) if place.get("no_call_holidays") else set()
            for z in qz:
                rules.append((z, rule_hours(place), pc))
    at = scan(now, rules)
    assert at is not None, (now_iso, window, contact)
    expect = {"at": iso(at), "zones": zones_out}
    if place and scan(now, federal_only) < at:
        expect["rule"] = place["rule"]
    request = {"now": now_iso, "window": window, "channel": channel, "contact": contact, "sender_tz": sender_tz}
    if holiday_codes:
        request["holidays"] = list(holiday_codes)
    if quiet is not None:
        request["quiet_hours"] = quiet
    return {"oracle": "zoneinfo-scan+phonenumbers+holidays", "request": request, "expect": expect}


def main() -> int:
    got = {"holidays": holidays.__version__, "phonenumbers": phonenumbers.__version__, "numpy": np.__version__}
    if got != PINNED:
        print(f"need {PINNED}, found {got}", file=sys.stderr)
        return 1
    cases = []
    # Business days across observed US holidays (New York time), each day of a few weeks
    # around them, several lengths.
    for start in ["2020-07-01", "2021-06-16", "2021-12-22", "2021-12-29", "2022-12-21", "2026-06-30",
                  "2026-11-24", "2027-06-16", "2027-12-22", "2027-12-29", "2032-07-01", "2038-12-22"]:
        d0 = dt.date.fromisoformat(start)
        for k in range(7):
            d = d0 + dt.timedelta(days=k)
            for n in (1, 2, 3, 5):
                cases.append(bd_case("US", "America/New_York", f"{d.isoformat()}T10:30:00", n))
    # Bavarian holidays (Epiphany, Corpus Christi, Assumption, All Saints) and England's bank
    # holidays (Easter, May, August, Christmas with observed days).
    for code, zone, starts in [
        ("DE-BY", "Europe/Berlin", ["2026-01-02", "2026-06-02", "2026-08-13", "2026-10-29", "2027-05-24", "2027-12-23"]),
        ("GB-ENG", "Europe/London", ["2026-04-01", "2026-05-01", "2026-08-27", "2026-12-23", "2027-12-23", "2022-06-01"]),
    ]:
        for start in starts:
            d0 = dt.date.fromisoformat(start)
            for k in range(5):
                for n in (1, 2, 4):
                    cases.append(bd_case(code, zone, f"{(d0 + dt.timedelta(days=k)).isoformat()}T09:15:00", n))
    # `contact`: from a +49 number (Germany: 3 October, Christmas) and from `country` (France:
    # 14 July; the phone says US, the country wins).
    for start in ["2026-10-01", "2026-12-23", "2027-10-01"]:
        for n in (1, 2, 3):
            cases.append(bd_case("DE", "Europe/Berlin", f"{start}T11:00:00", n, contact={"phone": "+4915112345678"}))
    for start in ["2026-07-13", "2027-07-13", "2026-11-10"]:
        for n in (1, 2):
            cases.append(bd_case("FR", "Europe/Paris", f"{start}T11:00:00", n, contact={"phone": "+12125551234", "country": "FR"}))
    # Windows closed on a holiday.
    week = ["mon", "tue", "wed", "thu", "fri"]
    for now, code, tz in [("2026-07-02T21:30:00Z", "US", "America/New_York"),
                          ("2026-12-24T12:00:00Z", "US", "America/New_York"),
                          ("2026-11-26T13:00:00Z", "US", "America/Chicago"),
                          ("2027-05-26T20:00:00Z", "DE-BY", "Europe/Berlin"),
                          ("2026-08-28T17:00:00Z", "GB-ENG", "Europe/London"),
                          ("2026-12-24T18:00:00Z", "GB-ENG", "Europe/London")]:
        cases.append(window_case(now, {"days": week, "from": "09:00", "to": "17:00", "tz": tz}, "email", {}, [code]))
    # Florida vs New York under us_states, SMS and calls, at the edges of 20:00 and 21:00.
    for phone in ["+13055551234", "+12125551234"]:
        for channel in ["sms", "call"]:
            for now in ["2027-03-05T00:30:00Z", "2027-03-05T01:30:00Z", "2027-03-05T02:30:00Z",
                        "2027-03-05T12:59:00Z", "2027-07-10T23:59:00Z", "2027-07-11T00:00:00Z"]:
                for quiet in ["federal", "us_states"]:
                    cases.append(window_case(now, None, channel, {"phone": phone}, quiet=quiet))
    # Texas on Sunday morning (noon), Louisiana on Sunday and on a state holiday (closed),
    # with a send window too.
    cases.append(window_case("2027-03-07T15:00:00Z", None, "sms", {"phone": "+12145551234"}, quiet="us_states"))
    cases.append(window_case("2027-03-07T15:00:00Z", None, "call", {"phone": "+15045551234"}, quiet="us_states"))
    cases.append(window_case("2026-12-24T15:00:00Z", {"days": week, "from": "09:00", "to": "17:00", "tz": "contact"},
                             "call", {"phone": "+15045551234"}, quiet="us_states", sender_tz="America/Chicago"))
    # A multi-zone number (South Dakota: Mountain and Central): the stricter zone decides, under
    # the federal floor and under an account override for South Dakota.
    sd_override = {"policy": "us_states", "overrides": [
        {"rule": "US-SD", "windows": [{"days": WEEKDAYS, "from": "09:00", "to": "20:00"}], "source": "test"}]}
    for now in ["2027-03-05T13:30:00Z", "2027-03-05T14:30:00Z", "2027-03-06T02:30:00Z", "2027-03-06T03:30:00Z"]:
        for quiet in ["federal", sd_override]:
            cases.append(window_case(now, None, "sms", {"phone": "+16055551234"}, quiet=quiet))
    # Refusals.
    for request, code in [
        ({"now": "2026-01-01T00:00:00Z", "duration": "1bd", "holidays": ["XX"]}, "BAD_SCHEMA"),
        ({"now": "2026-01-01T00:00:00Z", "duration": "1bd", "holidays": ["DE-XX"]}, "BAD_SCHEMA"),
        ({"now": "2026-01-01T00:00:00Z", "duration": "1bd", "holidays": ["contact"], "contact": {"country": "Germany"}}, "BAD_SCHEMA"),
        ({"now": "2026-01-01T00:00:00Z", "window": None, "channel": "sms", "contact": {"phone": "+13055551234"}, "quiet_hours": "strict"}, "BAD_SCHEMA"),
    ]:
        cases.append({"oracle": "spec-refusal", "request": request, "expect": {"error": {"code": code}}})
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    # Business-day flags for the property test.
    start = np.datetime64(f"{FIRST}-01-01")
    days = np.arange(start, np.datetime64(f"{LAST + 1}-01-01"))
    with open(BUSDAYS, "w", encoding="utf-8", newline="\n") as f:
        f.write(f"# numpy.is_busday per day from {FIRST}-01-01 to {LAST}-12-31 with holidays=={PINNED['holidays']}; scripts/gen_holiday_cases.py\n")
        for code in ["US", "DE-BY", "GB-ENG", "GB-SCT", "FR", "JP", "BR", "IN", "US-LA", "AU-NSW"]:
            hol = [np.datetime64(h.isoformat()) for h in cal(code).keys()]
            flags = np.is_busday(days, holidays=hol)
            f.write(code + "\t" + "".join("1" if x else "0" for x in flags) + "\n")
    print(f"{OUT}: {len(cases)} cases; {BUSDAYS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
