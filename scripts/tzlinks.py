"""tz links -> their target zone, read from the pinned `tzdata` package's `tzdata.zi`.

libphonenumber names zones as it found them years ago: `Asia/Calcutta`, and `Europe/Guernsey`,
`Europe/Jersey`, `Europe/Isle_of_Man` beside `Europe/London`. Since tzdata 2022b those are links
to one zone, so a UK mobile has ONE candidate zone, not four. Both phone generators map names
through this table so the shipped data and the oracle cases speak of zones, not names.
"""

from pathlib import Path

import tzdata

PINNED_TZDATA = "2025.2"


def load_links() -> dict[str, str]:
    if tzdata.__version__ != PINNED_TZDATA:
        raise SystemExit(f"need tzdata=={PINNED_TZDATA}, found {tzdata.__version__}")
    links = {}
    text = (Path(tzdata.__file__).parent / "zoneinfo" / "tzdata.zi").read_text()
    for line in text.splitlines():
        if line.startswith("L "):
            _, target, link = line.split()
            links[link] = target
    return links


def canonical_zones(zones, links) -> list[str]:
    """The distinct target zones of `zones`, in their first-seen order."""
    out = []
    for z in zones:
        c = links.get(z, z)
        if c not in out:
            out.append(c)
    return out
