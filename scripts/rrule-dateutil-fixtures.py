#!/usr/bin/env python3
"""Writes test/fixtures/rrule-yearly-dateutil.json: FREQ=YEARLY rules and python-dateutil's answers.

rrule-temporal gets some FREQ=YEARLY shapes wrong (see recurrence.engine.ts); these are the
independent expected values test/recurrence.engine.test.ts holds the engine to. python-dateutil
is the oracle (Debian: python3-dateutil). Re-run after changing the cases:

    python3 scripts/rrule-dateutil-fixtures.py

Left out, on purpose: BYWEEKNO (rrule-temporal and dateutil disagree on BYWEEKNO without BYDAY;
not corrected here), BYSETPOS (refused in the corrected shapes), and ordinals above 5 with
BYMONTH (dateutil raises IndexError on them).
"""
import json
import random
from datetime import date, datetime
from pathlib import Path

from dateutil.rrule import rrulestr

WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
HORIZON_YEARS = 120  # occurrences looked for after DTSTART
TAKE = 10  # occurrences kept per case

# The cases named in the bug reports, then a seeded random sample of the shapes concerned.
NAMED = [
    ("FREQ=YEARLY;BYDAY=53WE", "2020-12-30"),
    ("FREQ=YEARLY;BYDAY=-53WE", "2020-01-01"),
    ("FREQ=YEARLY;BYDAY=53MO", "2018-12-31"),
    ("FREQ=YEARLY;BYDAY=-53MO", "2018-01-01"),
    ("FREQ=YEARLY;BYDAY=53TH;COUNT=4", "2020-12-31"),
    ("FREQ=YEARLY;BYDAY=53WE,1WE", "2020-12-30"),
    ("FREQ=YEARLY;BYDAY=1SA,1TU,53TU", "2024-01-02"),
    ("FREQ=YEARLY;INTERVAL=2;BYDAY=53FR,1FR", "2020-01-03"),
    ("FREQ=YEARLY;BYDAY=1SA,1SA", "2026-01-03"),
    ("FREQ=MONTHLY;BYDAY=1SA,1SA", "2026-01-03"),
    ("FREQ=YEARLY;BYDAY=TU;BYYEARDAY=-159,71", "2030-03-12"),
    ("FREQ=YEARLY;BYDAY=41FR;BYMONTHDAY=-14", "2025-03-13"),
    ("FREQ=YEARLY;BYMONTHDAY=29;BYYEARDAY=-263", "2027-01-19"),
    ("FREQ=YEARLY;BYDAY=-1FR", "2026-12-25"),
    ("FREQ=YEARLY;BYDAY=20MO", "2026-05-18"),
]


def random_case(rng: random.Random) -> tuple[str, str]:
    parts = ["FREQ=YEARLY"]
    if rng.random() < 0.3:
        parts.append(f"INTERVAL={rng.randint(2, 4)}")
    shape = rng.choice(["ordinals", "ordinals", "yearday", "monthday"])
    ordinal = shape == "ordinals" or rng.random() < 0.4
    by_month = shape != "ordinals" and not ordinal and rng.random() < 0.3
    if ordinal:
        toks = []
        for _ in range(rng.randint(1, 3)):
            n = rng.choice([53, -53, 52, -52, 1, -1, rng.randint(1, 53), -rng.randint(1, 53)])
            toks.append(f"{n}{rng.choice(WEEKDAYS)}")
        parts.append("BYDAY=" + ",".join(toks))
    elif rng.random() < 0.6:
        parts.append("BYDAY=" + ",".join(rng.sample(WEEKDAYS, rng.randint(1, 3))))
    if by_month:
        parts.append("BYMONTH=" + ",".join(str(m) for m in sorted(rng.sample(range(1, 13), rng.randint(1, 4)))))
    if shape == "yearday" or (shape == "monthday" and rng.random() < 0.3):
        vals = [rng.choice([rng.randint(1, 366), -rng.randint(1, 366)]) for _ in range(rng.randint(1, 4))]
        parts.append("BYYEARDAY=" + ",".join(str(v) for v in vals))
    if shape == "monthday" or (shape == "yearday" and rng.random() < 0.3):
        vals = [rng.choice([rng.randint(1, 31), -rng.randint(1, 31)]) for _ in range(rng.randint(1, 3))]
        parts.append("BYMONTHDAY=" + ",".join(str(v) for v in vals))
    if rng.random() < 0.3:
        parts.append(f"COUNT={rng.randint(1, 8)}")
    start = date(rng.randint(1990, 2040), rng.randint(1, 12), rng.randint(1, 28))
    return ";".join(parts), start.isoformat()


def occurrences(rule: str, start: str) -> list[str]:
    dtstart = datetime.fromisoformat(start)
    out = []
    for d in rrulestr(rule, dtstart=dtstart):
        if d.year > dtstart.year + HORIZON_YEARS or len(out) >= TAKE + 1:
            break
        out.append(d.date().isoformat())
    return out


def main() -> None:
    rng = random.Random(20261126)
    cases = []
    candidates = list(NAMED) + [random_case(rng) for _ in range(400)]
    for rule, start in candidates:
        try:
            occ = occurrences(rule, start)
        except (IndexError, ValueError):
            continue
        if "COUNT=" in rule:
            # COUNT counts DTSTART as the first occurrence (RFC 5545); dateutil only when DTSTART
            # matches the rule, so COUNT cases start on their first occurrence.
            if not occ:
                continue
            start = occ[0]
            occ = occurrences(rule, start)
            cases.append({"rule": rule, "dtstart": start, "count": True, "after": occ[1:]})
        else:
            cases.append({"rule": rule, "dtstart": start, "count": False, "after": [d for d in occ if d > start][:TAKE]})
    out = Path(__file__).resolve().parent.parent / "test" / "fixtures" / "rrule-yearly-dateutil.json"
    import dateutil

    doc = {
        "generator": "scripts/rrule-dateutil-fixtures.py",
        "oracle": f"python-dateutil {dateutil.__version__}",
        "horizon_years": HORIZON_YEARS,
        "take": TAKE,
        "cases": cases,
    }
    # One case a line: readable in a diff, small on disk.
    head = json.dumps({k: v for k, v in doc.items() if k != "cases"})[:-1]
    body = ",\n".join("  " + json.dumps(c, separators=(",", ":")) for c in cases)
    out.write_text(f'{head}, "cases": [\n{body}\n]}}\n')
    print(f"{len(cases)} cases -> {out}")


if __name__ == "__main__":
    main()
