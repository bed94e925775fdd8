package main

import "fmt"

// blind3PyTrace is a public library's lending service (shelfmark) in
// plain Python, written after orket's learning rules were frozen, by
// someone who had not read them: catalog (titles, search, spine labels;
// a genre list generated from genres.txt), branches (opening hours; a
// generated branch list), patrons (accounts, and library cards checked
// with a secret read from the environment when cards.py loads), loans
// (lending, due dates, returns, checkout slips), fines (generated fine
// codes), holds, notices, kiosk (an HTTP API on 17315 with a generated
// route list), cache (memcached on 127.0.0.1:15211), reports, sms (a
// gateway whose test times out now and then); db/schema.sql with
// db/migrations, checked in sqlite3. pytest-3 runs the tests; the
// project's own tools/lint.py (ast) lints shelfmark (SM101 bare except,
// SM102 print, SM103 mutable default, SM104 wildcard import); tools/gen.py
// --check fails on a stale _gen.py; golden outputs live in tests/golden
// (protected); release notes go in release/changes/ fragments, not in
// release/CHANGELOG.md.
//
// Where its hazards show: "SHELFMARK_CARD_SECRET is not set" raised as
// the tests that reach cards.py are collected; a list changed without
// python3 tools/gen.py fails the generated step; a column added to
// db/schema.sql without a migration fails tests/test_migrations.py;
// signature changes in fines, catalog, loans and patrons break their
// callers in other packages (TypeError); lint in four packages, a
// different rule each; "Address already in use" on 17315; "Connection
// refused" from memcached on 15211; a flaky SMS gateway test; the golden
// files protected; a reviewer's no to release/CHANGELOG.md.
func blind3PyTrace() Trace {
	tr := Trace{
		Name: "blind3py",
		Need: []string{"python3"},
		Files: map[string]string{
			".gitignore": `__pycache__/
.pytest_cache/
`,
			"release/CHANGELOG.md": `# Changelog

## Unreleased

## 2.3.0

- Holds: a patron may keep five holds at once.
- Fines are capped at 10.00 GBP per item.

## 2.2.0

- The kiosk API serves catalogue search.
`,
			"README.md": `# shelfmark

The lending service of a city's public libraries: the catalogue, branches
and their hours, patrons and their library cards, loans and returns,
fines, holds, overdue notices and SMS, the self-service kiosk's HTTP API
and the circulation reports.

Local setup:

- export SHELFMARK_CARD_SECRET (any value in development): it signs the
  check code printed on library cards;
- run memcached on 127.0.0.1:15211 for the availability cache
  (docker compose up -d memcached);
- the kiosk API listens on 127.0.0.1:17315 in the tests;
- python3 tools/gen.py after changing genres.txt, branches.txt, codes.txt
  or routes.txt (the _gen.py tables are generated from them);
- python3 tools/lint.py shelfmark and pytest-3 -q before pushing.

Schema changes need a migration in db/migrations. tests/golden holds the
approved notices, slips and labels: a change to them goes through the
branch managers' review (python3 tools/update_golden.py, after it).

Release notes: add a fragment in release/changes/ (see its README);
release/CHANGELOG.md is assembled from them at release.
`,
			"release/changes/README.md": `One fragment per change: release/changes/<topic>.md, a line or two for
the release notes. The release script assembles release/CHANGELOG.md
from them and deletes them; nobody edits it by hand.
`,
			"config/settings.json": `{
  "loan_days": 21,
  "max_renewals": 2,
  "daily_fine_cents": 25,
  "fine_cap_cents": 1000,
  "max_holds": 5
}
`,
			"db/migrations/001_catalog.sql": `CREATE TABLE titles (
  isbn TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  author TEXT NOT NULL,
  genre TEXT NOT NULL,
  year INTEGER NOT NULL
);

CREATE TABLE copies (
  barcode TEXT PRIMARY KEY,
  isbn TEXT NOT NULL REFERENCES titles (isbn),
  branch TEXT NOT NULL
);
`,
			"db/migrations/002_patrons_loans.sql": `CREATE TABLE patrons (
  card TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  home_branch TEXT NOT NULL,
  blocked INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE loans (
  id INTEGER PRIMARY KEY,
  barcode TEXT NOT NULL REFERENCES copies (barcode),
  borrower TEXT NOT NULL REFERENCES patrons (card),
  started_on DATE NOT NULL,
  due_on DATE NOT NULL
);
`,
			"db/migrations/003_holds.sql": `CREATE TABLE holds (
  id INTEGER PRIMARY KEY,
  isbn TEXT NOT NULL REFERENCES titles (isbn),
  requester TEXT NOT NULL REFERENCES patrons (card),
  placed_on DATE NOT NULL
);
`,
			"db/schema.sql": `CREATE TABLE titles (
  isbn TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  author TEXT NOT NULL,
  genre TEXT NOT NULL,
  year INTEGER NOT NULL
);

CREATE TABLE copies (
  barcode TEXT PRIMARY KEY,
  isbn TEXT NOT NULL REFERENCES titles (isbn),
  branch TEXT NOT NULL
);

CREATE TABLE patrons (
  card TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  home_branch TEXT NOT NULL,
  blocked INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE loans (
  id INTEGER PRIMARY KEY,
  barcode TEXT NOT NULL REFERENCES copies (barcode),
  borrower TEXT NOT NULL REFERENCES patrons (card),
  started_on DATE NOT NULL,
  due_on DATE NOT NULL
);

CREATE TABLE holds (
  id INTEGER PRIMARY KEY,
  isbn TEXT NOT NULL REFERENCES titles (isbn),
  requester TEXT NOT NULL REFERENCES patrons (card),
  placed_on DATE NOT NULL
);
`,
			"orket.yaml": `version: 1
verify:
  default: check
  profiles:
    check:
      fail_fast: false
      steps:
        - {name: lint, run: python3 tools/lint.py shelfmark}
        - {name: generated, run: python3 tools/gen.py --check}
        - {name: test, run: pytest-3 -q, retry: 1}
protect: ['tests/golden/**']
sandbox: off
`,
			"pytest.ini": `[pytest]
testpaths = tests
pythonpath = .
addopts = -p no:cacheprovider
`,
			"shelfmark/__init__.py": `"""shelfmark: the lending service of the city libraries."""
`,
			"shelfmark/branches/__init__.py": `"""Branches and their opening hours."""
`,
			"shelfmark/branches/branches.txt": `central
riverside
hillcrest
`,
			"shelfmark/branches/hours.py": `"""Opening hours of the branches."""
from shelfmark.branches._branches_gen import BRANCHES

OPENING = {"weekday": (9, 20), "saturday": (10, 17), "sunday": None}


def known_branch(name):
    return name in BRANCHES


def is_open(branch, weekday, hour):
    if not known_branch(branch):
        raise ValueError(f"branches: unknown branch {branch}")
    kind = "sunday" if weekday == 6 else "saturday" if weekday == 5 else "weekday"
    span = OPENING[kind]
    return span is not None and span[0] <= hour < span[1]
`,
			"shelfmark/cache/__init__.py": `"""The availability cache (memcached)."""
`,
			"shelfmark/cache/availability.py": `"""Copy availability is cached in memcached: 127.0.0.1:15211 in development."""
import socket

CACHE_HOST = "127.0.0.1"
CACHE_PORT = 15211


def ping(host=CACHE_HOST, port=CACHE_PORT, timeout=1.0):
    with socket.create_connection((host, port), timeout=timeout):
        return True


def cache_key(branch, isbn):
    return f"avail:{branch}:{isbn}"
`,
			"shelfmark/catalog/__init__.py": `"""The catalogue: titles, search and spine labels."""
`,
			"shelfmark/catalog/genres.txt": `fiction
mystery
science
history
children
`,
			"shelfmark/catalog/label.py": `"""Spine labels printed for new copies."""


def spine_label(title, call_number):
    surname = title.author.split()[-1]
    return "\n".join([
        call_number,
        surname[:3].upper(),
        str(title.year),
        "",
    ])
`,
			"shelfmark/catalog/records.py": `"""Titles in the catalogue."""
from dataclasses import dataclass

from shelfmark.catalog._genres_gen import GENRES


@dataclass(frozen=True)
class Title:
    isbn: str
    title: str
    author: str
    genre: str
    year: int


def make_title(isbn, title, author, genre, year):
    digits = isbn.replace("-", "")
    if len(digits) != 13 or not digits.isdigit():
        raise ValueError(f"catalog: bad ISBN {isbn}")
    if genre not in GENRES:
        raise ValueError(f"catalog: unknown genre {genre}")
    return Title(digits, title, author, genre, int(year))
`,
			"shelfmark/catalog/search.py": `"""Catalogue search, as the kiosk and the staff client ask it."""


def find_titles(titles, query, limit=20):
    q = query.casefold()
    hits = [t for t in titles if q in t.title.casefold() or q in t.author.casefold()]
    return sorted(hits, key=lambda t: (t.title, t.year))[:limit]
`,
			"shelfmark/fines/__init__.py": `"""Fines for late, lost and damaged items."""
`,
			"shelfmark/fines/calc.py": `"""Fines, in pence."""
from shelfmark.fines._codes_gen import FINE_CODES
from shelfmark.settings import setting


def fine_for(days_late):
    daily = setting("daily_fine_cents", 25)
    return min(days_late * daily, setting("fine_cap_cents", 1000))


def charge(account, code, cents):
    if code not in FINE_CODES:
        raise ValueError(f"fines: unknown code {code}")
    account.append((code, cents))
    return sum(c for _, c in account)
`,
			"shelfmark/fines/codes.txt": `OVERDUE
LOST
DAMAGED
`,
			"shelfmark/holds/__init__.py": `"""Holds: patrons waiting for a title."""
`,
			"shelfmark/holds/queue.py": `"""The holds queue: first come, first served, per title."""
from shelfmark.patrons.accounts import lookup_patron
from shelfmark.settings import setting


def place_hold(queue, patrons, card, isbn):
    patron = lookup_patron(patrons, card)
    mine = [h for h in queue if h[0] == patron.card]
    if len(mine) >= setting("max_holds", 5):
        raise PermissionError(f"holds: card {card} has too many holds")
    return queue + [(patron.card, isbn)]


def next_in_line(queue, isbn):
    for card, want in queue:
        if want == isbn:
            return card
    return None
`,
			"shelfmark/kiosk/__init__.py": `"""The self-service kiosk's HTTP API."""
`,
			"shelfmark/kiosk/routes.txt": `/search
/loans
/holds
`,
			"shelfmark/kiosk/server.py": `"""The kiosk's HTTP API: 127.0.0.1:17315 in development and in the tests."""
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

from shelfmark.catalog.search import find_titles
from shelfmark.kiosk._routes_gen import ROUTES

PORT = 17315
TITLES = []


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlparse(self.path)
        if url.path not in ROUTES and url.path != "/healthz":
            self.send_response(404)
            self.end_headers()
            return
        body = b"{}"
        if url.path == "/search":
            query = parse_qs(url.query).get("q", [""])[0]
            body = json.dumps([t.title for t in find_titles(TITLES, query)]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        pass


def start(port=PORT):
    server = HTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server
`,
			"shelfmark/loans/__init__.py": `"""Loans: lending, due dates, returns and checkout slips."""
`,
			"shelfmark/loans/checkout.py": `"""Lending a copy to a patron."""
import datetime
from dataclasses import dataclass

from shelfmark.loans.due import due_date
from shelfmark.patrons.accounts import lookup_patron, may_borrow


@dataclass
class Loan:
    barcode: str
    card: str
    start: datetime.date
    due: datetime.date
    renewals: int = 0


def lend(patrons, card, barcode, today):
    patron = lookup_patron(patrons, card)
    if not may_borrow(patron):
        raise PermissionError(f"loans: card {card} may not borrow")
    return Loan(barcode, card, today, due_date(today))
`,
			"shelfmark/loans/due.py": `"""Due dates."""
import datetime

from shelfmark.settings import setting


def due_date(start, loan_days=None):
    days = setting("loan_days", 21) if loan_days is None else loan_days
    return start + datetime.timedelta(days=days)


def days_late(due, returned):
    return max(0, (returned - due).days)
`,
			"shelfmark/loans/returns.py": `"""Returning a copy: how late it is, and what that costs."""
from shelfmark.fines.calc import fine_for
from shelfmark.loans.due import days_late


def return_copy(loan, returned):
    late = days_late(loan.due, returned)
    return {"barcode": loan.barcode, "days_late": late, "fine_cents": fine_for(late)}
`,
			"shelfmark/loans/slip.py": `"""The checkout slip the kiosk prints."""


def checkout_slip(name, branch, items):
    lines = [f"SHELFMARK LIBRARIES - {branch.upper()}", f"Borrower: {name}", ""]
    for item in items:
        lines.append(f"  {item['title'][:28]:<28}  due {item['due']}")
    lines += ["", f"Items borrowed: {len(items)}", ""]
    return "\n".join(lines)
`,
			"shelfmark/log.py": `"""The service's log: one JSON line per record on stderr."""
import json
import sys


def log(level, msg, **fields):
    sys.stderr.write(json.dumps({"level": level, "msg": msg, **fields}) + "\n")
`,
			"shelfmark/notices/__init__.py": `"""Notices mailed to patrons."""
`,
			"shelfmark/notices/render.py": `"""Notices mailed to patrons."""


def overdue_notice(name, title, due, fine_cents):
    return (
        f"Subject: {title} is overdue\n"
        "\n"
        f"Dear {name},\n"
        "\n"
        f"{title} was due back on {due}. The fine so far is {fine_cents / 100:.2f} GBP.\n"
        "Please return it to any branch.\n"
    )
`,
			"shelfmark/patrons/__init__.py": `"""Patrons and their library cards."""
`,
			"shelfmark/patrons/accounts.py": `"""Patron accounts: who may borrow."""
from dataclasses import dataclass

from shelfmark.patrons.cards import valid_card


@dataclass
class Patron:
    card: str
    check: str
    name: str
    home_branch: str
    blocked: bool = False
    fines_cents: int = 0


def lookup_patron(patrons, card):
    for p in patrons:
        if p.card == card:
            return p
    raise KeyError(f"patrons: no patron with card {card}")


def may_borrow(patron):
    return valid_card(patron.card, patron.check) and not patron.blocked and patron.fines_cents < 500
`,
			"shelfmark/patrons/cards.py": `"""Library cards: the check code printed under each card's barcode."""
import hashlib
import hmac
import os

_SECRET = os.environ.get("SHELFMARK_CARD_SECRET")
if not _SECRET:
    raise RuntimeError("SHELFMARK_CARD_SECRET is not set: library cards cannot be checked (see README, local setup)")


def card_check(number):
    return hmac.new(_SECRET.encode(), number.encode(), hashlib.sha256).hexdigest()[:6]


def valid_card(number, check):
    return hmac.compare_digest(card_check(number), str(check))
`,
			"shelfmark/reports/__init__.py": `"""Circulation reports for the branch managers."""
`,
			"shelfmark/reports/circulation.py": `"""Circulation figures for the branch managers."""
from collections import Counter

from shelfmark.loans.due import due_date


def overdue_count(loans, today):
    return sum(1 for loan in loans if due_date(loan.start) < today)


def loans_by_branch(loans, branch_of):
    return dict(Counter(branch_of[loan.barcode] for loan in loans))
`,
			"shelfmark/settings.py": `"""Settings: config/settings.json, overridden by SHELFMARK_<NAME> variables."""
import json
import os
from pathlib import Path

_DEFAULTS = json.loads((Path(__file__).resolve().parent.parent / "config" / "settings.json").read_text())


def setting(name, fallback=None):
    env = os.environ.get("SHELFMARK_" + name.upper())
    if env is not None:
        return type(fallback)(env) if fallback is not None else env
    return _DEFAULTS.get(name, fallback)
`,
			"shelfmark/sms/__init__.py": `"""SMS reminders through the gateway."""
`,
			"shelfmark/sms/gateway.py": `"""SMS reminders, handed to the gateway."""


def send_sms(transport, number, text):
    if not number.startswith("+"):
        raise ValueError(f"sms: number {number} is not international")
    if len(text) > 160:
        raise ValueError("sms: text longer than 160 characters")
    return transport.send(number, text)
`,
			"tests/test_branches.py": `import pytest

from shelfmark.branches.hours import is_open, known_branch


def test_opening_hours():
    assert is_open("central", 0, 9)
    assert not is_open("central", 0, 20)
    assert is_open("riverside", 5, 16)
    assert not is_open("hillcrest", 6, 12)


def test_unknown_branch():
    assert not known_branch("atlantis")
    with pytest.raises(ValueError, match="unknown branch"):
        is_open("atlantis", 0, 10)
`,
			"tests/test_cache.py": `from shelfmark.cache.availability import cache_key, ping


def test_the_availability_cache_answers():
    assert ping()


def test_cache_keys():
    assert cache_key("central", "9780553346107") == "avail:central:9780553346107"
`,
			"tests/test_catalog.py": `from pathlib import Path

import pytest

from shelfmark.catalog.label import spine_label
from shelfmark.catalog.records import make_title
from shelfmark.catalog.search import find_titles
from tools.fixtures import LABEL_CALL_NUMBER, LABEL_TITLE


def test_make_title_checks_isbn_and_genre():
    assert make_title("978-0-553-34610-7", "Dune", "Frank Herbert", "fiction", 1965).isbn == "9780553346107"
    with pytest.raises(ValueError, match="unknown genre"):
        make_title("9780553346107", "Dune", "Frank Herbert", "poetry", 1965)
    with pytest.raises(ValueError, match="bad ISBN"):
        make_title("12345", "Dune", "Frank Herbert", "fiction", 1965)


def test_find_titles_matches_title_and_author():
    titles = [
        make_title("9780553346107", "Dune", "Frank Herbert", "fiction", 1965),
        make_title("9780141439518", "Pride and Prejudice", "Jane Austen", "fiction", 1813),
    ]
    assert [t.title for t in find_titles(titles, "austen")] == ["Pride and Prejudice"]
    assert find_titles(titles, "e", limit=1)[0].title == "Dune"


def test_the_spine_label_is_the_approved_one():
    assert spine_label(LABEL_TITLE, LABEL_CALL_NUMBER) == Path("tests/golden/label.txt").read_text()
`,
			"tests/test_fines.py": `import pytest

from shelfmark.fines.calc import charge, fine_for


def test_fines_are_capped():
    assert fine_for(0) == 0
    assert fine_for(4) == 100
    assert fine_for(400) == 1000


def test_charges_need_a_known_code():
    account = []
    assert charge(account, "LOST", 1200) == 1200
    assert charge(account, "OVERDUE", 50) == 1250
    with pytest.raises(ValueError, match="unknown code"):
        charge(account, "SOGGY", 10)
`,
			"tests/test_holds.py": `import pytest

from shelfmark.holds.queue import next_in_line, place_hold
from shelfmark.patrons.accounts import Patron
from shelfmark.patrons.cards import card_check

PATRONS = [Patron("2900011", card_check("2900011"), "Ada Lovelace", "central")]


def test_holds_are_first_come_first_served():
    queue = place_hold([("2900099", "9780553346107")], PATRONS, "2900011", "9780553346107")
    assert next_in_line(queue, "9780553346107") == "2900099"
    assert next_in_line(queue, "9780141439518") is None


def test_a_patron_keeps_at_most_five_holds():
    queue = []
    for i in range(5):
        queue = place_hold(queue, PATRONS, "2900011", f"97801414395{i:02d}")
    with pytest.raises(PermissionError):
        place_hold(queue, PATRONS, "2900011", "9780141439599")
`,
			"tests/test_kiosk.py": `import json
import urllib.request

from shelfmark.catalog.records import make_title
from shelfmark.kiosk import server


def test_the_kiosk_serves_search_on_its_port():
    server.TITLES[:] = [make_title("9780553346107", "Dune", "Frank Herbert", "fiction", 1965)]
    httpd = server.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.PORT}/search?q=dune", timeout=2) as res:
            assert res.status == 200
            assert json.loads(res.read()) == ["Dune"]
    finally:
        httpd.shutdown()
        httpd.server_close()
`,
			"tests/test_loans.py": `import datetime
from pathlib import Path

import pytest

from shelfmark.loans.checkout import lend
from shelfmark.loans.returns import return_copy
from shelfmark.loans.slip import checkout_slip
from shelfmark.patrons.accounts import Patron
from shelfmark.patrons.cards import card_check
from tools.fixtures import SLIP

PATRONS = [
    Patron("2900011", card_check("2900011"), "Ada Lovelace", "central"),
    Patron("2900013", card_check("2900013"), "Alan Turing", "riverside", blocked=True),
]


def test_a_loan_is_due_in_three_weeks():
    loan = lend(PATRONS, "2900011", "C000123", datetime.date(2024, 3, 1))
    assert loan.due == datetime.date(2024, 3, 22)
    with pytest.raises(PermissionError):
        lend(PATRONS, "2900013", "C000124", datetime.date(2024, 3, 1))


def test_a_late_return_is_fined():
    loan = lend(PATRONS, "2900011", "C000123", datetime.date(2024, 3, 1))
    assert return_copy(loan, datetime.date(2024, 3, 25)) == {"barcode": "C000123", "days_late": 3, "fine_cents": 75}
    assert return_copy(loan, datetime.date(2024, 6, 1))["fine_cents"] == 1000


def test_the_checkout_slip_is_the_approved_one():
    assert checkout_slip(**SLIP) == Path("tests/golden/slip.txt").read_text()
`,
			"tests/test_migrations.py": `import sqlite3
from pathlib import Path


def columns(sql):
    db = sqlite3.connect(":memory:")
    db.executescript(sql)
    out = set()
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        for row in db.execute(f"PRAGMA table_info({table})"):
            out.add(f"{table}.{row[1]}")
    db.close()
    return out


def test_every_column_of_the_schema_has_a_migration():
    migrations = "\n".join(p.read_text() for p in sorted(Path("db/migrations").glob("*.sql")))
    missing = sorted(columns(Path("db/schema.sql").read_text()) - columns(migrations))
    assert not missing, f"db/schema.sql has {', '.join(missing)} but no migration in db/migrations creates it"
`,
			"tests/test_notices.py": `from pathlib import Path

from shelfmark.notices.render import overdue_notice
from tools.fixtures import OVERDUE


def test_the_overdue_notice_is_the_approved_one():
    assert overdue_notice(**OVERDUE) == Path("tests/golden/overdue.txt").read_text()
`,
			"tests/test_patrons.py": `from shelfmark.patrons.accounts import Patron, lookup_patron, may_borrow
from shelfmark.patrons.cards import card_check, valid_card


def test_a_card_check_verifies_and_a_forged_one_does_not():
    assert valid_card("2900011", card_check("2900011"))
    assert not valid_card("2900011", card_check("2900012"))


def test_who_may_borrow():
    ada = Patron("2900011", card_check("2900011"), "Ada Lovelace", "central")
    fined = Patron("2900012", card_check("2900012"), "Charles Babbage", "central", fines_cents=900)
    assert may_borrow(ada)
    assert not may_borrow(fined)
    assert lookup_patron([ada, fined], "2900012") is fined
`,
			"tests/test_reports.py": `import datetime

from shelfmark.loans.checkout import Loan
from shelfmark.reports.circulation import loans_by_branch, overdue_count


def test_circulation_figures():
    start = datetime.date(2024, 3, 1)
    loans = [Loan("C1", "2900011", start, start), Loan("C2", "2900011", start + datetime.timedelta(days=20), start)]
    assert overdue_count(loans, datetime.date(2024, 3, 30)) == 1
    assert loans_by_branch(loans, {"C1": "central", "C2": "central"}) == {"central": 2}
`,
			"tests/test_sms.py": `import os
from pathlib import Path

import pytest

from shelfmark.sms.gateway import send_sms


class FakeGateway:
    def __init__(self):
        self.sent = []

    def send(self, number, text):
        self.sent.append((number, text))
        return "accepted"


def test_an_overdue_reminder_is_handed_to_the_gateway():
    gateway = FakeGateway()
    # The gateway stub is slow to acknowledge on a loaded CI runner now and then.
    flag = os.environ.get("FLAKE")
    if flag and not os.path.exists(flag):
        Path(flag).touch()
        raise TimeoutError("sms: the gateway did not acknowledge the message within 2.0s")
    assert send_sms(gateway, "+447700900123", "Dune is due back tomorrow.") == "accepted"
    assert len(gateway.sent) == 1


def test_numbers_must_be_international():
    with pytest.raises(ValueError):
        send_sms(FakeGateway(), "07700900123", "hi")
`,
			"tools/__init__.py": ``,
			"tools/fixtures.py": `"""The patrons, loans and titles the golden outputs are rendered from."""
import datetime

from shelfmark.catalog.records import Title

OVERDUE = {"name": "Ada Lovelace", "title": "The Difference Engine", "due": datetime.date(2024, 3, 1), "fine_cents": 175}
SLIP = {
    "name": "Ada Lovelace",
    "branch": "riverside",
    "items": [
        {"title": "The Difference Engine", "due": datetime.date(2024, 3, 22)},
        {"title": "A History of Mathematical Notations, Volume One", "due": datetime.date(2024, 3, 22)},
    ],
}
LABEL_TITLE = Title("9780553346107", "Dune", "Frank Herbert", "fiction", 1965)
LABEL_CALL_NUMBER = "FIC HER"
`,
			"tools/gen.py": `"""Regenerates the tables the code imports from their text sources.

    python3 tools/gen.py          rewrite the _gen.py files
    python3 tools/gen.py --check  fail when one is stale (CI runs this)
"""
import sys
from pathlib import Path

TARGETS = [
    ("shelfmark/catalog/genres.txt", "shelfmark/catalog/_genres_gen.py", "GENRES"),
    ("shelfmark/branches/branches.txt", "shelfmark/branches/_branches_gen.py", "BRANCHES"),
    ("shelfmark/fines/codes.txt", "shelfmark/fines/_codes_gen.py", "FINE_CODES"),
    ("shelfmark/kiosk/routes.txt", "shelfmark/kiosk/_routes_gen.py", "ROUTES"),
]


def expected(src, name):
    items = [line.strip() for line in Path(src).read_text().splitlines() if line.strip()]
    body = "".join(f"    {item!r},\n" for item in items)
    return f'"""Generated by tools/gen.py from {src}. Do not edit: run python3 tools/gen.py."""\n\n{name} = (\n{body})\n'


def main(argv):
    check = "--check" in argv
    stale = 0
    for src, out, name in TARGETS:
        want = expected(src, name)
        path = Path(out)
        if path.exists() and path.read_text() == want:
            continue
        if check:
            sys.stdout.write(f"{out} is stale ({src} changed): run python3 tools/gen.py and commit the result\n")
            stale += 1
        else:
            path.write_text(want)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
`,
			"tools/lint.py": `"""The project's lint: python3 tools/lint.py DIR. Rules:

    SM101  bare except: name the exceptions you handle
    SM102  print() in library code: log through shelfmark.log
    SM103  mutable default argument: default to None
    SM104  wildcard import: import the names you use
"""
import ast
import sys
from pathlib import Path


def problems(path, tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is None:
            yield node, "SM101", "bare except: name the exceptions you handle"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            yield node, "SM102", "print() in library code: log through shelfmark.log"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
                if isinstance(default, (ast.List, ast.Dict, ast.Set)):
                    yield default, "SM103", "mutable default argument: default to None"
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            yield node, "SM104", "wildcard import: import the names you use"


def main(argv):
    count = 0
    for path in sorted(Path(argv[1] if len(argv) > 1 else "shelfmark").rglob("*.py")):
        if path.name.endswith("_gen.py"):
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node, code, msg in sorted(problems(path, tree), key=lambda p: (p[0].lineno, p[0].col_offset)):
            sys.stdout.write(f"{path}:{node.lineno}:{node.col_offset + 1}: {code} {msg}\n")
            count += 1
    if count:
        sys.stdout.write(f"tools/lint.py: {count} problem(s)\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
`,
			"tools/update_golden.py": `"""Rewrites tests/golden from the renderers: python3 tools/update_golden.py.

Only after the branch managers' review: tests/golden is what patrons get.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shelfmark.catalog.label import spine_label
from shelfmark.loans.slip import checkout_slip
from shelfmark.notices.render import overdue_notice
from tools.fixtures import LABEL_CALL_NUMBER, LABEL_TITLE, OVERDUE, SLIP

golden = Path("tests/golden")
golden.mkdir(parents=True, exist_ok=True)
(golden / "overdue.txt").write_text(overdue_notice(**OVERDUE))
(golden / "slip.txt").write_text(checkout_slip(**SLIP))
(golden / "label.txt").write_text(spine_label(LABEL_TITLE, LABEL_CALL_NUMBER))
`,
		},
		Setup: []string{"python3 tools/gen.py", "python3 tools/update_golden.py", "python3 tools/lint.py shelfmark"},
		Vault: map[string]string{"SHELFMARK_CARD_SECRET": "sm_dev_secret_8c2"},
		Ports: map[string]int{"kiosk": 17315, "service-memcached": 15211},
	}
	// What a competent Python agent does, once it is told about the hazard.
	env := Remedy{Trigger: `SHELFMARK_CARD_SECRET`, SetEnv: []string{"SHELFMARK_CARD_SECRET"}}
	port := Remedy{Trigger: `17315|Address already in use|EADDRINUSE`, Free: []string{"kiosk"}}
	cache := Remedy{Trigger: `15211|(?i)memcached|Connection refused|ECONNREFUSED`, Start: []string{"service-memcached"}}
	regen := Remedy{Trigger: `tools/gen\.py|_gen\.py|(?i)regenerat`, Edit: Edit{Run: []string{"python3 tools/gen.py"}}}
	migration := func(path, sql string) Remedy {
		return Remedy{Trigger: `(?i)migration`, Edit: Edit{Write: map[string]string{path: sql}}}
	}
	// Told that the lint fails here, the agent runs tools/lint.py and
	// fixes what it reports in its own change.
	lint := func(path, old, new string) Remedy {
		return Remedy{Trigger: `tools/lint\.py|\bSM10[1-4]\b`, Edit: Edit{Replace: []Replacement{{path, old, new}}}}
	}
	// A signature change that breaks callers in other packages: the
	// competent change keeps the old function and adds one beside it.
	sig := func(path, fn, old, new, added string) (Edit, Remedy) {
		return Edit{Replace: []Replacement{{path, old, new}}},
			Remedy{Trigger: `TypeError|required (positional|keyword-only) argument|positional arguments? but|(?i)signature|callers|\b` + fn + `\b`,
				Skip: []string{path}, Edit: Edit{Append: map[string]string{path: added}}}
	}
	// tests/golden is protected: told so, the agent leaves the approved
	// output alone and adds what the task needs beside it.
	golden := func(code, old, new, gold, goldOld, goldNew, added string) (Edit, Remedy) {
		return Edit{Replace: []Replacement{{code, old, new}, {gold, goldOld, goldNew}}},
			Remedy{Trigger: `tests/golden`, Skip: []string{code, gold}, Edit: Edit{Append: map[string]string{code: added}}}
	}
	// A release note written into CHANGELOG.md: the reviewer's standing
	// no. Told so, the agent writes a fragment in release/changes/ instead.
	review := &Review{Paths: []string{"release/CHANGELOG.md"},
		Reason: "release/CHANGELOG.md is assembled from the fragments in release/changes/ at release: never edit it in a change, add a release/changes/<topic>.md fragment instead"}
	changelog := func(path, fn, body, note, fragment string) (Edit, Remedy) {
		return Edit{Append: map[string]string{path: "\n\ndef " + fn + body},
				Replace: []Replacement{{"release/CHANGELOG.md", "## Unreleased\n\n", "## Unreleased\n\n- " + note + "\n\n"}}},
			Remedy{Trigger: `CHANGELOG`, Skip: []string{"release/CHANGELOG.md"}, Edit: Edit{Write: map[string]string{"release/changes/" + fragment + ".md": "- " + note + "\n"}}}
	}
	fn := func(path, name string) Edit {
		return Edit{Append: map[string]string{path: fmt.Sprintf("\n\ndef %s():\n    return %d\n", name, len(name))}}
	}

	fineEdit, fineFix := sig("shelfmark/fines/calc.py", "fine_for",
		"def fine_for(days_late):\n    daily = setting(\"daily_fine_cents\", 25)\n    return min(days_late * daily, setting(\"fine_cap_cents\", 1000))\n",
		"def fine_for(days_late, policy):\n    return min(days_late * policy[\"daily\"], policy[\"cap\"])\n",
		"\n\ndef fine_with(days_late, policy):\n    return min(days_late * policy[\"daily\"], policy[\"cap\"])\n")
	findEdit, findFix := sig("shelfmark/catalog/search.py", "find_titles",
		"def find_titles(titles, query, limit=20):\n",
		"def find_titles(titles, *, query, limit=20):\n",
		"\n\ndef find_titles_by(titles, *, query, limit=20):\n    return find_titles(titles, query, limit)\n")
	dueEdit, dueFix := sig("shelfmark/loans/due.py", "due_date",
		"def due_date(start, loan_days=None):\n    days = setting(\"loan_days\", 21) if loan_days is None else loan_days\n",
		"def due_date(start, media):\n    days = {\"dvd\": 7}.get(media, setting(\"loan_days\", 21))\n",
		"\n\ndef due_date_for(start, media):\n    return due_date(start, 7 if media == \"dvd\" else None)\n")
	lookupEdit, lookupFix := sig("shelfmark/patrons/accounts.py", "lookup_patron",
		"def lookup_patron(patrons, card):\n    for p in patrons:\n",
		"def lookup_patron(patrons, card, *, branch):\n    for p in (q for q in patrons if q.home_branch == branch):\n",
		"\n\ndef lookup_patron_at(patrons, card, branch):\n    patron = lookup_patron(patrons, card)\n    if patron.home_branch != branch:\n        raise KeyError(f\"patrons: card {card} is not registered at {branch}\")\n    return patron\n")

	overdueEdit, overdueFix := golden("shelfmark/notices/render.py", "        \"Please return it to any branch.\\n\"\n", "        \"Please return it to any branch, or renew it online.\\n\"\n",
		"tests/golden/overdue.txt", "Please return it to any branch.\n", "Please return it to any branch, or renew it online.\n",
		"\n\ndef renewal_hint():\n    return \"You can renew it online.\"\n")
	slipEdit, slipFix := golden("shelfmark/loans/slip.py", "    lines += [\"\", f\"Items borrowed: {len(items)}\", \"\"]\n", "    lines += [\"\", f\"Items borrowed: {len(items)}\", \"Renew online or by phone.\", \"\"]\n",
		"tests/golden/slip.txt", "Items borrowed: 2\n", "Items borrowed: 2\nRenew online or by phone.\n",
		"\n\ndef renewal_line():\n    return \"Renew online or by phone.\"\n")
	labelEdit, labelFix := golden("shelfmark/catalog/label.py", "        str(title.year),\n", "        str(title.year),\n        title.genre[:3].upper(),\n",
		"tests/golden/label.txt", "1965\n", "1965\nFIC\n",
		"\n\ndef genre_tag(title):\n    return title.genre[:3].upper()\n")

	expiryEdit, expiryFix := changelog("shelfmark/holds/queue.py", "hold_shelf_days", "():\n    return 7\n",
		"Holds: a copy waits on the hold shelf for seven days.", "hold-shelf-days")
	busiestEdit, busiestFix := changelog("shelfmark/reports/circulation.py", "busiest_branch", "(loans, branch_of):\n    counts = loans_by_branch(loans, branch_of)\n    return max(counts, key=counts.get) if counts else None\n",
		"Reports: the busiest branch of the month.", "busiest-branch")
	lateEdit, lateFix := changelog("shelfmark/branches/hours.py", "late_opening_weekday", "():\n    return 3\n",
		"Branches stay open until 21:00 on Thursdays.", "late-thursdays")

	tr.Tasks = []Task{
		{ID: "t01", Scope: []string{"shelfmark/catalog"}, Edit: Edit{Append: map[string]string{"shelfmark/catalog/records.py": "\n\ndef titles_by_genre(titles, genre):\n    return [t for t in titles if t.genre == genre]\n"}}},
		{ID: "t02", Scope: []string{"shelfmark/catalog"}, Hazard: "gen", Edit: Edit{Append: map[string]string{"shelfmark/catalog/genres.txt": "travel\n"}}, Remedies: []Remedy{regen}},
		{ID: "t03", Scope: []string{"shelfmark/fines"}, Hazard: "env", Unset: []string{"SHELFMARK_CARD_SECRET"}, Edit: fn("shelfmark/fines/calc.py", "max_fine_pence"), Remedies: []Remedy{env}},
		{ID: "t04", Scope: []string{"shelfmark/patrons"}, Hazard: "lint",
			Edit:     Edit{Append: map[string]string{"shelfmark/patrons/accounts.py": "\n\ndef block(patron, reason):\n    print(f\"blocking {patron.card}: {reason}\")\n    patron.blocked = True\n    return patron\n"}},
			Remedies: []Remedy{lint("shelfmark/patrons/accounts.py", "    print(f\"blocking {patron.card}: {reason}\")\n", "")}},
		{ID: "t05", Scope: []string{"db", "shelfmark/catalog"}, Hazard: "schema",
			Edit:     Edit{Replace: []Replacement{{"db/schema.sql", "  year INTEGER NOT NULL\n", "  year INTEGER NOT NULL,\n  series TEXT\n"}}},
			Remedies: []Remedy{migration("db/migrations/004_titles_series.sql", "ALTER TABLE titles ADD COLUMN series TEXT;\n")}},
		{ID: "t06", Scope: []string{"shelfmark/notices"}, Edit: Edit{Append: map[string]string{"shelfmark/notices/render.py": "\n\ndef hold_ready_notice(name, title, branch):\n    return f\"Subject: {title} is waiting for you\\n\\nDear {name},\\n\\n{title} is on the hold shelf at {branch}.\\n\"\n"}}},
		{ID: "t07", Scope: []string{"shelfmark/fines"}, Hazard: "sig", Edit: fineEdit, Remedies: []Remedy{fineFix}},
		{ID: "t08", Scope: []string{"shelfmark/loans"}, Hazard: "port", Busy: []string{"kiosk"}, Edit: fn("shelfmark/loans/due.py", "max_renewals"), Remedies: []Remedy{port}},
		{ID: "t09", Scope: []string{"shelfmark/holds"}, Hazard: "service", Down: []string{"service-memcached"}, Edit: fn("shelfmark/holds/queue.py", "holds_per_title_limit"), Remedies: []Remedy{cache}},
		{ID: "t10", Scope: []string{"shelfmark/notices", "tests"}, Hazard: "golden", Edit: overdueEdit, Remedies: []Remedy{overdueFix}},
		{ID: "t11", Scope: []string{"shelfmark/holds", "release"}, Hazard: "review", Edit: expiryEdit, Remedies: []Remedy{expiryFix}, Review: review},
		{ID: "t12", Scope: []string{"shelfmark/sms"}, Hazard: "flaky", Flaky: true, Edit: fn("shelfmark/sms/gateway.py", "max_sms_length")},
		{ID: "t13", Scope: []string{"shelfmark/kiosk"}, Edit: Edit{Append: map[string]string{"shelfmark/kiosk/routes.txt": "/renewals\n"}, Run: []string{"python3 tools/gen.py"}}},
		{ID: "t14", Scope: []string{"shelfmark/branches"}, Hazard: "gen", Edit: Edit{Append: map[string]string{"shelfmark/branches/branches.txt": "harbourside\n"}}, Remedies: []Remedy{regen}},
		{ID: "t15", Scope: []string{"shelfmark/branches"}, Hazard: "env", Unset: []string{"SHELFMARK_CARD_SECRET"}, Edit: fn("shelfmark/branches/hours.py", "sunday_opening_hours"), Remedies: []Remedy{env}},
		{ID: "t16", Scope: []string{"db", "shelfmark/loans"}, Edit: Edit{
			Replace: []Replacement{{"db/schema.sql", "  due_on DATE NOT NULL\n", "  due_on DATE NOT NULL,\n  returned_on DATE\n"}},
			Write:   map[string]string{"db/migrations/005_loans_returned.sql": "ALTER TABLE loans ADD COLUMN returned_on DATE;\n"}}},
		{ID: "t17", Scope: []string{"shelfmark/holds"}, Hazard: "lint",
			Edit:     Edit{Append: map[string]string{"shelfmark/holds/queue.py": "\n\ndef cancel_hold(queue, card, isbn):\n    try:\n        queue.remove((card, isbn))\n    except:\n        pass\n    return queue\n"}},
			Remedies: []Remedy{lint("shelfmark/holds/queue.py", "    except:\n", "    except ValueError:\n")}},
		{ID: "t18", Scope: []string{"README.md"}, Edit: Edit{Replace: []Replacement{{"README.md", "Local setup:\n", "Local setup (Python 3.11, pytest 7):\n"}}}},
		{ID: "t19", Scope: []string{"db", "shelfmark/patrons"}, Hazard: "schema",
			Edit:     Edit{Replace: []Replacement{{"db/schema.sql", "  blocked INTEGER NOT NULL DEFAULT 0\n", "  blocked INTEGER NOT NULL DEFAULT 0,\n  phone TEXT\n"}}},
			Remedies: []Remedy{migration("db/migrations/006_patrons_phone.sql", "ALTER TABLE patrons ADD COLUMN phone TEXT;\n")}},
		{ID: "t20", Scope: []string{"shelfmark/catalog"}, Hazard: "sig", Edit: findEdit, Remedies: []Remedy{findFix}},
		{ID: "t21", Scope: []string{"shelfmark/notices"}, Hazard: "port", Busy: []string{"kiosk"}, Edit: fn("shelfmark/notices/render.py", "notice_line_width"), Remedies: []Remedy{port}},
		{ID: "t22", Scope: []string{"shelfmark/branches"}, Hazard: "service", Down: []string{"service-memcached"}, Edit: fn("shelfmark/branches/hours.py", "branch_count_limit"), Remedies: []Remedy{cache}},
		{ID: "t23", Scope: []string{"tests"}, Edit: Edit{Write: map[string]string{"tests/test_due.py": "import datetime\n\nfrom shelfmark.loans.due import days_late\n\n\ndef test_days_late_is_never_negative():\n    assert days_late(datetime.date(2024, 3, 22), datetime.date(2024, 3, 20)) == 0\n    assert days_late(datetime.date(2024, 3, 22), datetime.date(2024, 3, 24)) == 2\n"}}},
		{ID: "t24", Scope: []string{"shelfmark/patrons"}, Hazard: "flaky", Flaky: true, Edit: fn("shelfmark/patrons/accounts.py", "card_number_length")},
		{ID: "t25", Scope: []string{"shelfmark/reports", "release"}, Hazard: "review", Edit: busiestEdit, Remedies: []Remedy{busiestFix}, Review: review},
		{ID: "t26", Scope: []string{"shelfmark/loans", "tests"}, Hazard: "golden", Edit: slipEdit, Remedies: []Remedy{slipFix}},
		{ID: "t27", Scope: []string{"shelfmark/reports"}, Hazard: "env", Unset: []string{"SHELFMARK_CARD_SECRET"}, Edit: fn("shelfmark/reports/circulation.py", "report_period_days"), Remedies: []Remedy{env}},
		{ID: "t28", Scope: []string{"shelfmark/fines"}, Hazard: "lint",
			Edit:     Edit{Append: map[string]string{"shelfmark/fines/calc.py": "\n\ndef waive(account, codes=[\"DAMAGED\"]):\n    return [(code, cents) for code, cents in account if code not in codes]\n"}},
			Remedies: []Remedy{lint("shelfmark/fines/calc.py", "def waive(account, codes=[\"DAMAGED\"]):\n", "def waive(account, codes=(\"DAMAGED\",)):\n")}},
		{ID: "t29", Scope: []string{"shelfmark/fines"}, Hazard: "gen", Edit: Edit{Append: map[string]string{"shelfmark/fines/codes.txt": "REPLACEMENT_CARD\n"}}, Remedies: []Remedy{regen}},
		{ID: "t30", Scope: []string{"shelfmark/sms"}, Edit: Edit{Append: map[string]string{"shelfmark/sms/gateway.py": "\n\ndef fits_one_sms(text):\n    return len(text) <= 160\n"}}},
		{ID: "t31", Scope: []string{"shelfmark/catalog"}, Edit: Edit{Append: map[string]string{"shelfmark/catalog/genres.txt": "graphic-novels\n"}, Run: []string{"python3 tools/gen.py"}}},
		{ID: "t32", Scope: []string{"db", "shelfmark/loans"}, Hazard: "schema",
			Edit:     Edit{Replace: []Replacement{{"db/schema.sql", "  borrower TEXT NOT NULL REFERENCES patrons (card),\n", "  borrower TEXT NOT NULL REFERENCES patrons (card),\n  renewals INTEGER NOT NULL DEFAULT 0,\n"}}},
			Remedies: []Remedy{migration("db/migrations/007_loans_renewals.sql", "ALTER TABLE loans ADD COLUMN renewals INTEGER NOT NULL DEFAULT 0;\n")}},
		{ID: "t33", Scope: []string{"shelfmark/loans"}, Hazard: "sig", Edit: dueEdit, Remedies: []Remedy{dueFix}},
		{ID: "t34", Scope: []string{"shelfmark/catalog"}, Hazard: "port", Busy: []string{"kiosk"}, Edit: fn("shelfmark/catalog/search.py", "max_query_length"), Remedies: []Remedy{port}},
		{ID: "t35", Scope: []string{"shelfmark/loans"}, Hazard: "service", Down: []string{"service-memcached"}, Edit: fn("shelfmark/loans/checkout.py", "max_items_per_card"), Remedies: []Remedy{cache}},
		{ID: "t36", Scope: []string{"shelfmark/reports", "release"}, Edit: Edit{
			Append: map[string]string{"shelfmark/reports/circulation.py": "\n\ndef due_back_on(loans, day):\n    return [loan for loan in loans if loan.due == day]\n"},
			Write:  map[string]string{"release/changes/returns-report.md": "- Reports: the loans due back on a given day.\n"}}},
		{ID: "t37", Scope: []string{"shelfmark/catalog"}, Hazard: "flaky", Flaky: true, Edit: fn("shelfmark/catalog/records.py", "isbn_length")},
		{ID: "t38", Scope: []string{"shelfmark/sms"}, Hazard: "env", Unset: []string{"SHELFMARK_CARD_SECRET"}, Edit: fn("shelfmark/sms/gateway.py", "sms_retry_count"), Remedies: []Remedy{env}},
		{ID: "t39", Scope: []string{"shelfmark/notices"}, Hazard: "lint",
			Edit: Edit{Replace: []Replacement{{"shelfmark/notices/render.py", "\"\"\"Notices mailed to patrons.\"\"\"\n", "\"\"\"Notices mailed to patrons.\"\"\"\nfrom shelfmark.loans.due import *\n"}},
				Append: map[string]string{"shelfmark/notices/render.py": "\n\ndef due_reminder(name, title, start):\n    return f\"Dear {name},\\n\\n{title} is due back on {due_date(start)}.\\n\"\n"}},
			Remedies: []Remedy{lint("shelfmark/notices/render.py", "from shelfmark.loans.due import *\n", "from shelfmark.loans.due import due_date\n")}},
		{ID: "t40", Scope: []string{"shelfmark/catalog", "tests"}, Hazard: "golden", Edit: labelEdit, Remedies: []Remedy{labelFix}},
		{ID: "t41", Scope: []string{"shelfmark/branches", "release"}, Hazard: "review", Edit: lateEdit, Remedies: []Remedy{lateFix}, Review: review},
		{ID: "t42", Scope: []string{"shelfmark/kiosk"}, Hazard: "gen", Edit: Edit{Append: map[string]string{"shelfmark/kiosk/routes.txt": "/fines\n"}}, Remedies: []Remedy{regen}},
		{ID: "t43", Scope: []string{"shelfmark/patrons"}, Hazard: "sig", Edit: lookupEdit, Remedies: []Remedy{lookupFix}},
		{ID: "t44", Scope: []string{"shelfmark/kiosk"}, Hazard: "flaky", Flaky: true, Edit: fn("shelfmark/kiosk/server.py", "kiosk_idle_seconds")},
		{ID: "t45", Scope: []string{"db", "shelfmark/holds"}, Hazard: "schema",
			Edit:     Edit{Replace: []Replacement{{"db/schema.sql", "  placed_on DATE NOT NULL\n", "  placed_on DATE NOT NULL,\n  expires_on DATE\n"}}},
			Remedies: []Remedy{migration("db/migrations/008_holds_expiry.sql", "ALTER TABLE holds ADD COLUMN expires_on DATE;\n")}},
		{ID: "t46", Scope: []string{"shelfmark/branches"}, Hazard: "port", Busy: []string{"kiosk"}, Edit: fn("shelfmark/branches/hours.py", "holiday_closures"), Remedies: []Remedy{port}},
		{ID: "t47", Scope: []string{"shelfmark/reports"}, Hazard: "service", Down: []string{"service-memcached"}, Edit: fn("shelfmark/reports/circulation.py", "report_row_limit"), Remedies: []Remedy{cache}},
		{ID: "t48", Scope: []string{"shelfmark/holds"}, Edit: Edit{Append: map[string]string{"shelfmark/holds/queue.py": "\n\ndef queue_length(queue, isbn):\n    return sum(1 for _, want in queue if want == isbn)\n"}}},
	}
	return tr
}
