package main

import "fmt"

// blindPyTrace is a nightly ETL in Python, written after orket's learning
// rules were frozen and not tuned to them: extract (the shop's CSV exports
// and a partner feed authenticated with a token), transform (cleaning
// rules), load (SQL for the warehouse, dialed on 127.0.0.1:16432; the
// warehouse schema as CSV files with SQL migrations), schedule (the job
// runner, its crontab), api (a status API on http.server). Three modules
// are generated from JSON tables by scripts/regen.py, and a test checks
// them. flake8 lints, then pytest (Debian's) tests, stopping at the first
// failing step.
//
// Where its hazards show: ETL_PARTNER_TOKEN unset as os.environ's KeyError
// while pytest collects two test modules (etl/config.py reads it at
// import); the warehouse down as "WarehouseUnavailable: warehouse
// 127.0.0.1:16432 unreachable: [Errno 111] Connection refused"; the status
// API's port held as "OSError: [Errno 98] Address already in use" in a
// test that binds 18765; a stale generated module ("... is stale: run
// python3 scripts/regen.py"); a schema column no migration creates;
// signature changes in extract, transform, load and schedule whose callers
// fail with a TypeError (a missing positional or keyword-only argument, an
// unexpected keyword); flake8's E711, F541, E741 and W605 in four
// packages; a flaky scheduler test; protected requirements files and CI
// script; a reviewer's no to etl/schedule/crontab.
func blindPyTrace() Trace {
	tr := Trace{
		Name: "blindpy",
		// Debian's python3 has pytest and flake8; the python3 on PATH may
		// be another one without them.
		Need: []string{"/usr/bin/python3", "flake8"},
		Files: map[string]string{
			".gitignore": `__pycache__/
.pytest_cache/
*.egg-info/
`,
			"README.md": `# etl

Nightly jobs that extract orders and customers from the shop's CSV
exports and the partner feed, clean them, and load them into the
warehouse.

    etl/extract    readers: CSV exports, the partner feed (HTTP, token auth)
    etl/transform  cleaning rules (generated from rules.json)
    etl/load       the warehouse: schema (load/schema/*.csv) and migrations
    etl/schedule   the job runner and the crontab
    etl/api        a small status API (http.server)

Development: export ETL_PARTNER_TOKEN (any value offline), start the
warehouse (docker compose up warehouse: 127.0.0.1:16432), then run
ci/check.sh. After editing a *.json table, run python3 scripts/regen.py.
`,
			"ci/check.sh": `#!/bin/sh
# What CI runs on every pull request.
set -eu
flake8 etl scripts
python3 -m pytest -q
`,
			"etl/__init__.py": ``,
			"etl/api/__init__.py": `"""A small status API over http.server."""
`,
			"etl/api/server.py": `"""The status API: GET /health, GET /jobs."""
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from etl import config
from etl.schedule._jobs import JOBS


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            body = {"ok": True, "batch_size": config.BATCH_SIZE}
        elif self.path == "/jobs":
            body = sorted(JOBS)
        else:
            self.send_error(404)
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def make_server(host, port):
    """The status API's server, bound to host:port."""
    return ThreadingHTTPServer((host, port), Handler)
`,
			"etl/config.py": `"""Settings, read from the environment once, when etl is imported."""
import os

PARTNER_URL = os.environ.get("ETL_PARTNER_URL", "https://partner.example.com/feed")
PARTNER_TOKEN = os.environ["ETL_PARTNER_TOKEN"]
BATCH_SIZE = int(os.environ.get("ETL_BATCH_SIZE", "500"))
`,
			"etl/extract/__init__.py": `"""Extract: read rows from the sources."""
`,
			"etl/extract/csv_reader.py": `"""Reading the shop's CSV exports."""
import csv


def read_rows(path):
    """The rows of a CSV export, as dicts keyed by its header."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def header(path):
    """The columns of a CSV export."""
    with open(path, newline="", encoding="utf-8") as f:
        return next(csv.reader(f))
`,
			"etl/extract/partner.py": `"""The partner feed: an authenticated HTTP source (offline in tests)."""
import hashlib
import urllib.request

from etl import config
from etl.extract._sources import SOURCES


def request(feed):
    """The request for one of the partner's feeds."""
    if feed not in SOURCES:
        raise KeyError(f"partner: unknown feed {feed!r}")
    req = urllib.request.Request(f"{config.PARTNER_URL}/{feed}")
    req.add_header("Authorization", f"Bearer {config.PARTNER_TOKEN}")
    return req


def fingerprint(feed):
    """A stable id of a feed's request, for the run log."""
    return hashlib.sha1(request(feed).full_url.encode()).hexdigest()[:10]
`,
			"etl/extract/sources.json": `["orders", "customers", "refunds"]
`,
			"etl/load/__init__.py": `"""Load: write cleaned rows to the warehouse."""
`,
			"etl/load/migrations/0001_orders.sql": `CREATE TABLE orders (
    id integer PRIMARY KEY,
    customer_id integer NOT NULL,
    total integer NOT NULL,
    created timestamp NOT NULL
);
`,
			"etl/load/migrations/0002_customers.sql": `CREATE TABLE customers (
    id integer PRIMARY KEY,
    name text NOT NULL,
    email text
);
`,
			"etl/load/migrations/0003_refunds.sql": `CREATE TABLE refunds (
    id integer PRIMARY KEY,
    order_id integer NOT NULL REFERENCES orders (id),
    amount integer NOT NULL
);
`,
			"etl/load/schema/customers.csv": `column,type
id,integer
name,text
email,text
`,
			"etl/load/schema/orders.csv": `column,type
id,integer
customer_id,integer
total,integer
created,timestamp
`,
			"etl/load/schema/refunds.csv": `column,type
id,integer
order_id,integer
amount,integer
`,
			"etl/load/warehouse.py": `"""The warehouse connection (a Postgres in development, on 127.0.0.1:16432)."""
import socket

HOST = "127.0.0.1"
PORT = 16432


class WarehouseUnavailable(ConnectionError):
    """The warehouse cannot be reached."""


def connect(timeout=2.0):
    """Open a connection to the warehouse."""
    try:
        return socket.create_connection((HOST, PORT), timeout=timeout)
    except OSError as e:
        raise WarehouseUnavailable(f"warehouse {HOST}:{PORT} unreachable: {e}") from e


def ping():
    """Whether the warehouse answers."""
    with connect():
        return True
`,
			"etl/load/writer.py": `"""Writing rows as SQL."""


def quote(value):
    """A SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def insert_sql(table, rows):
    """The INSERT statement of rows (dicts with the same keys) into table."""
    if not rows:
        return ""
    cols = list(rows[0])
    values = ",\n".join("(" + ", ".join(quote(r[c]) for c in cols) + ")" for r in rows)
    return f"INSERT INTO {table} ({', '.join(cols)}) VALUES\n{values};\n"
`,
			"etl/schedule/__init__.py": `"""Schedule: the job runner; cron starts it (etl/schedule/crontab)."""
`,
			"etl/schedule/crontab": `# m h dom mon dow  command
15 2 * * *  etl run orders
45 2 * * *  etl run customers
`,
			"etl/schedule/jobs.json": `{"orders": {"source": "orders", "table": "orders"}, "customers": {"source": "customers", "table": "customers"}}
`,
			"etl/schedule/runner.py": `"""Running jobs: extract, transform, load."""
import time

from etl.extract import csv_reader
from etl.load import writer
from etl.schedule._jobs import JOBS
from etl.transform import clean


def run_job(name, path, retries=3):
    """Run job name on the export at path; return the SQL it loads."""
    job = JOBS[name]
    last = None
    for attempt in range(retries):
        try:
            rows = [clean.normalize(r) for r in csv_reader.read_rows(path)]
            return writer.insert_sql(job["table"], rows)
        except OSError as e:
            last = e
            time.sleep(0.01 * attempt)
    raise RuntimeError(f"job {name}: {last}")


def next_tick(now, every=60.0):
    """The next time a job runs at, after now."""
    return (now // every + 1) * every
`,
			"etl/transform/__init__.py": `"""Transform: clean and normalize extracted rows."""
`,
			"etl/transform/clean.py": `"""Cleaning rows."""
from datetime import datetime, timezone

from etl.transform._rules import RULES


def normalize(row):
    """A row with its fields cleaned by the rules and its timestamp in UTC."""
    out = {}
    for key, value in row.items():
        rule = RULES.get(key, "strip")
        if rule == "strip":
            out[key] = value.strip()
        elif rule == "lower":
            out[key] = value.strip().lower()
        elif rule == "cents":
            out[key] = int(round(float(value) * 100))
    if "created" in out:
        out["created"] = datetime.fromisoformat(out["created"]).astimezone(timezone.utc).isoformat()
    return out
`,
			"etl/transform/rules.json": `{"email": "lower", "name": "strip", "total": "cents", "created": "strip"}
`,
			"orket.yaml": `version: 1
verify:
  default: pr
  profiles:
    pr:
      - {name: flake8, run: flake8 etl scripts}
      - {name: pytest, run: /usr/bin/python3 -m pytest -q -p no:cacheprovider, retry: 1, env: {PYTHONDONTWRITEBYTECODE: "1"}}
protect: ['requirements*.txt', 'ci/**']
sandbox: off
`,
			"requirements-dev.txt": `-r requirements.txt
pytest==7.2.1
flake8==5.0.4
`,
			"requirements.txt": `# Runtime: the standard library only, for now.
`,
			"scripts/regen.py": `"""Regenerate etl's generated modules from their JSON tables.

    python3 scripts/regen.py          rewrite them
    python3 scripts/regen.py --check  exit 1 if one is stale
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# TARGETS: (the JSON table, the generated module, its variable).
TARGETS = [
    ("etl/extract/sources.json", "etl/extract/_sources.py", "SOURCES"),
    ("etl/transform/rules.json", "etl/transform/_rules.py", "RULES"),
    ("etl/schedule/jobs.json", "etl/schedule/_jobs.py", "JOBS"),
]


def render(table, name):
    """The generated module of a JSON table."""
    with open(os.path.join(ROOT, table)) as f:
        data = json.load(f)
    return (f"# Generated by scripts/regen.py from {table}: do not edit.\n"
            f"{name} = {json.dumps(data, indent=4, sort_keys=True)}\n")


def main(argv):
    stale = []
    for table, module, name in TARGETS:
        want = render(table, name)
        path = os.path.join(ROOT, module)
        have = open(path).read() if os.path.exists(path) else None
        if have != want:
            if "--check" in argv:
                stale.append(module)
            else:
                with open(path, "w") as f:
                    f.write(want)
    for module in stale:
        print(f"{module} is stale", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
`,
			"setup.cfg": `[metadata]
name = etl
version = 0.4.0

[options]
packages = find:
python_requires = >=3.9

[flake8]
max-line-length = 110
exclude = .git,__pycache__,build

[tool:pytest]
testpaths = tests
`,
			"tests/data/orders.csv": `id,customer_id,total,created,email
1,7,12.50,2024-03-01T10:00:00+01:00,Ada@Example.com
2,8,3.99,2024-03-01T11:30:00+01:00,bob@example.com
`,
			"tests/test_api.py": `import json
import threading
import urllib.request

from etl.api import server


def test_health():
    httpd = server.make_server("127.0.0.1", 18765)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        with urllib.request.urlopen("http://127.0.0.1:18765/health", timeout=5) as res:
            assert json.load(res)["ok"] is True
        with urllib.request.urlopen("http://127.0.0.1:18765/jobs", timeout=5) as res:
            assert "orders" in json.load(res)
    finally:
        httpd.shutdown()
        httpd.server_close()
`,
			"tests/test_extract.py": `from etl.extract import csv_reader, partner

ORDERS = "tests/data/orders.csv"


def test_read_rows():
    rows = csv_reader.read_rows(ORDERS)
    assert [r["id"] for r in rows] == ["1", "2"]


def test_header():
    assert csv_reader.header(ORDERS)[:3] == ["id", "customer_id", "total"]


def test_partner_request_is_authenticated():
    req = partner.request("orders")
    assert req.get_header("Authorization").startswith("Bearer ")
    assert len(partner.fingerprint("orders")) == 10
`,
			"tests/test_generated.py": `import os
import sys

import pytest

sys.path.insert(0, "scripts")
import regen  # noqa: E402


@pytest.mark.parametrize("table,module,name", regen.TARGETS, ids=[t[1] for t in regen.TARGETS])
def test_generated_module_is_current(table, module, name):
    with open(os.path.join(regen.ROOT, module)) as f:
        have = f.read()
    assert have == regen.render(table, name), f"{module} is stale: run python3 scripts/regen.py"
`,
			"tests/test_load.py": `from etl.load import warehouse, writer


def test_insert_sql():
    sql = writer.insert_sql("orders", [{"id": 1, "note": "it's"}])
    assert sql == "INSERT INTO orders (id, note) VALUES\n(1, 'it''s');\n"


def test_warehouse_ping():
    assert warehouse.ping()
`,
			"tests/test_schedule.py": `import os

from etl.schedule import runner


def test_run_job():
    sql = runner.run_job("orders", "tests/data/orders.csv", retries=1)
    assert sql.startswith("INSERT INTO orders (id, customer_id, total, created, email) VALUES")
    assert "1250" in sql


def test_next_tick():
    assert runner.next_tick(125.0) == 180.0


def test_tick_on_time():
    """The scheduler's tick fires within its budget (it has not, now and
    then, on a loaded CI machine)."""
    flag = os.environ.get("FLAKE")
    if flag and not os.path.exists(flag):
        open(flag, "w").close()
        raise AssertionError("tick fired 41ms late (budget 25ms)")
`,
			"tests/test_schema.py": `"""Every column of the warehouse schema (etl/load/schema/*.csv) is created
by a migration (etl/load/migrations/*.sql)."""
import csv
import glob
import os
import re

import pytest

SCHEMA = "etl/load/schema"
MIGRATIONS = "etl/load/migrations"


def migrated():
    cols = set()
    for path in sorted(glob.glob(os.path.join(MIGRATIONS, "*.sql"))):
        with open(path) as f:
            sql = f.read()
        for table, body in re.findall(r"CREATE TABLE (\w+) \((.*?)\);", sql, re.S):
            for line in body.split(","):
                words = line.split()
                if words and words[0].upper() not in ("PRIMARY", "FOREIGN", "UNIQUE"):
                    cols.add((table, words[0], words[1]))
        for table, col, typ in re.findall(r"ALTER TABLE (\w+) ADD COLUMN (\w+) (\w+)", sql):
            cols.add((table, col, typ))
    return cols


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(SCHEMA, "*.csv"))), ids=os.path.basename)
def test_schema_is_migrated(path):
    table = os.path.basename(path)[:-4]
    have = migrated()
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            assert (table, row["column"], row["type"]) in have, (
                f"{path}: column {row['column']} ({row['type']}) is not created by any migration in {MIGRATIONS}/")
`,
			"tests/test_transform.py": `from etl.transform import clean


def test_normalize():
    row = clean.normalize({"email": " Ada@Example.com ", "total": "12.50", "created": "2024-03-01T10:00:00+01:00"})
    assert row == {"email": "ada@example.com", "total": 1250, "created": "2024-03-01T09:00:00+00:00"}
`,
		},
		Setup: []string{"/usr/bin/python3 scripts/regen.py", "flake8 etl scripts"},
		Vault: map[string]string{"ETL_PARTNER_TOKEN": "ptk_dev_0c91"},
		Ports: map[string]int{"api": 18765, "service-warehouse": 16432},
	}
	// The remedies a competent Python agent knows, by what it is told.
	env := Remedy{Trigger: `ETL_PARTNER_TOKEN`, SetEnv: []string{"ETL_PARTNER_TOKEN"}}
	port := Remedy{Trigger: `18765|(?i)address already in use`, Free: []string{"api"}}
	warehouse := Remedy{Trigger: `16432|unreachable`, Start: []string{"service-warehouse"}}
	regen := Remedy{Trigger: `regen\.py|is stale`, Edit: Edit{Run: []string{"/usr/bin/python3 scripts/regen.py"}}}
	migrate := func(file, sql string) Remedy {
		return Remedy{Trigger: `not created by any migration|etl/load/migrations`, Edit: Edit{Write: map[string]string{"etl/load/migrations/" + file: sql}}}
	}
	// Told that flake8 fails here, the agent runs it and fixes what it
	// reports in its own change.
	lint := func(path, old, new string) Remedy {
		return Remedy{Trigger: `flake8|E711|F541|E741|W605|comparison to None|missing placeholders|ambiguous variable name|invalid escape sequence`,
			Edit: Edit{Replace: []Replacement{{path, old, new}}}}
	}
	protected := func(trigger, path string) Remedy { return Remedy{Trigger: trigger, Skip: []string{path}} }
	crontab := Remedy{Trigger: `crontab`, Skip: []string{"etl/schedule/crontab"}}
	review := &Review{Paths: []string{"etl/schedule/crontab"}, Reason: "don't edit etl/schedule/crontab here: infra deploys the crontab from the ops repo, ask them to schedule the job"}
	// A signature change that breaks callers outside the task's scope:
	// the competent fix keeps the old function and adds one.
	sig := func(e Edit, path, added string) (Edit, Remedy) {
		return e, Remedy{Trigger: `required positional argument|required keyword-only argument|unexpected keyword argument|positional arguments? but|callers`, Skip: []string{path},
			Edit: Edit{Append: map[string]string{path: added}}}
	}
	addFunc := func(path, name string) Edit {
		return Edit{Append: map[string]string{path: fmt.Sprintf("\n\ndef %s():\n    \"\"\"%s is a helper.\"\"\"\n    return %d\n", name, name, len(name))}}
	}
	withCron := func(path, name, line string) Edit {
		e := addFunc(path, name)
		e.Append["etl/schedule/crontab"] = line
		return e
	}
	withFile := func(path, name, file, text string) Edit {
		e := addFunc(path, name)
		e.Append[file] = text
		return e
	}
	replace := func(path string, pairs ...string) Edit {
		var e Edit
		for i := 0; i+1 < len(pairs); i += 2 {
			e.Replace = append(e.Replace, Replacement{path, pairs[i], pairs[i+1]})
		}
		return e
	}
	readEdit, readFix := sig(replace("etl/extract/csv_reader.py", "def read_rows(path):", "def read_rows(path, dialect):",
		"        return list(csv.DictReader(f))", "        return list(csv.DictReader(f, dialect=dialect))"),
		"etl/extract/csv_reader.py",
		"\n\ndef read_rows_as(path, dialect):\n    \"\"\"The rows of a CSV export in a dialect.\"\"\"\n    with open(path, newline=\"\", encoding=\"utf-8\") as f:\n        return list(csv.DictReader(f, dialect=dialect))\n")
	normEdit, normFix := sig(replace("etl/transform/clean.py", "def normalize(row):", "def normalize(row, *, tz):",
		".astimezone(timezone.utc)", ".astimezone(tz or timezone.utc)"),
		"etl/transform/clean.py",
		"\n\ndef normalize_in(row, tz):\n    \"\"\"A row cleaned, its timestamp in tz.\"\"\"\n    out = normalize(row)\n    if \"created\" in out:\n        out[\"created\"] = datetime.fromisoformat(out[\"created\"]).astimezone(tz).isoformat()\n    return out\n")
	insertEdit, insertFix := sig(replace("etl/load/writer.py", "def insert_sql(table, rows):", "def insert_sql(table, rows, on_conflict):",
		"    return f\"INSERT INTO {table} ({', '.join(cols)}) VALUES\\n{values};\\n\"",
		"    conflict = f\"\\nON CONFLICT {on_conflict}\" if on_conflict else \"\"\n    return f\"INSERT INTO {table} ({', '.join(cols)}) VALUES\\n{values}{conflict};\\n\""),
		"etl/load/writer.py",
		"\n\ndef upsert_sql(table, rows, key):\n    \"\"\"The INSERT of rows into table, updating the rows whose key exists.\"\"\"\n    sql = insert_sql(table, rows)\n    return sql[:-2] + f\"\\nON CONFLICT ({key}) DO NOTHING;\\n\" if sql else sql\n")
	jobEdit, jobFix := sig(replace("etl/schedule/runner.py", "def run_job(name, path, retries=3):", "def run_job(name, path, attempts=3):",
		"    for attempt in range(retries):", "    for attempt in range(attempts):"),
		"etl/schedule/runner.py",
		"\n\ndef run_job_attempts(name, path, attempts=3):\n    \"\"\"Run job name, trying at most attempts times.\"\"\"\n    return run_job(name, path, retries=attempts)\n")
	noneLint := "\n\ndef column(path, name):\n    \"\"\"The values of a column of an export, skipping missing ones.\"\"\"\n    return [r[name] for r in read_rows(path) if r.get(name) != None]\n"
	fLint := "\n\ndef require(row, key):\n    \"\"\"The row's value of key, with a clear error when it is missing.\"\"\"\n    if key not in row:\n        raise KeyError(f\"clean: row has no such field\")\n    return row[key]\n"
	lLint := "\n\ndef statements(sql):\n    \"\"\"The statements of a SQL script.\"\"\"\n    return [l.strip() for l in sql.split(\";\") if l.strip()]\n"
	escLint := "\n\ndef parse_every(text):\n    \"\"\"Seconds of an interval written as 30s, 5m or 2h.\"\"\"\n    import re\n    m = re.fullmatch(\"(\\d+)([smh])\", text)\n    if not m:\n        raise ValueError(f\"schedule: bad interval {text!r}\")\n    return int(m.group(1)) * {\"s\": 1, \"m\": 60, \"h\": 3600}[m.group(2)]\n"
	tr.Tasks = []Task{
		{ID: "t01", Scope: []string{"etl/extract"}, Edit: addFunc("etl/extract/csv_reader.py", "row_count")},
		{ID: "t02", Scope: []string{"etl/transform"}, Hazard: "env", Unset: []string{"ETL_PARTNER_TOKEN"}, Edit: addFunc("etl/transform/clean.py", "strip_all"), Remedies: []Remedy{env}},
		{ID: "t03", Scope: []string{"etl/extract"}, Hazard: "gen", Edit: replace("etl/extract/sources.json", `"refunds"]`, `"refunds", "returns"]`), Remedies: []Remedy{regen}},
		{ID: "t04", Scope: []string{"etl/load"}, Edit: addFunc("etl/load/writer.py", "batch_size")},
		{ID: "t05", Scope: []string{"etl/load"}, Hazard: "schema", Edit: Edit{Append: map[string]string{"etl/load/schema/orders.csv": "discount,integer\n"}},
			Remedies: []Remedy{migrate("0004_orders_discount.sql", "ALTER TABLE orders ADD COLUMN discount integer NOT NULL DEFAULT 0;\n")}},
		{ID: "t06", Scope: []string{"etl/extract"}, Hazard: "lint", Edit: Edit{Append: map[string]string{"etl/extract/csv_reader.py": noneLint}},
			Remedies: []Remedy{lint("etl/extract/csv_reader.py", "if r.get(name) != None]", "if r.get(name) is not None]")}},
		{ID: "t07", Scope: []string{"etl/schedule"}, Hazard: "service", Down: []string{"service-warehouse"}, Edit: addFunc("etl/schedule/runner.py", "jitter"), Remedies: []Remedy{warehouse}},
		{ID: "t08", Scope: []string{"etl/extract"}, Hazard: "sig", Edit: readEdit, Remedies: []Remedy{readFix}},
		{ID: "t09", Scope: []string{"etl/transform"}, Hazard: "port", Busy: []string{"api"}, Edit: addFunc("etl/transform/clean.py", "title_case"), Remedies: []Remedy{port}},
		{ID: "t10", Scope: []string{"etl/extract", "*.txt"}, Hazard: "protect", Edit: withFile("etl/extract/partner.py", "retry_after", "requirements.txt", "urllib3==1.26.12\n"),
			Remedies: []Remedy{protected(`requirements`, "requirements.txt")}},
		{ID: "t11", Scope: []string{"etl/schedule"}, Hazard: "review", Edit: withCron("etl/schedule/runner.py", "refunds_window", "30 3 * * *  etl run refunds\n"), Remedies: []Remedy{crontab}, Review: review},
		{ID: "t12", Scope: []string{"etl/schedule"}, Hazard: "flaky", Flaky: true, Edit: addFunc("etl/schedule/runner.py", "drift_budget")},
		{ID: "t13", Scope: []string{"etl/api"}, Edit: addFunc("etl/api/server.py", "version")},
		{ID: "t14", Scope: []string{"etl/load"}, Hazard: "env", Unset: []string{"ETL_PARTNER_TOKEN"}, Edit: addFunc("etl/load/writer.py", "max_rows"), Remedies: []Remedy{env}},
		{ID: "t15", Scope: []string{"etl/transform"}, Hazard: "gen", Edit: replace("etl/transform/rules.json", `"created": "strip"}`, `"created": "strip", "phone": "strip"}`), Remedies: []Remedy{regen}},
		{ID: "t16", Scope: []string{"etl/load"}, Hazard: "schema", Edit: Edit{Append: map[string]string{"etl/load/schema/customers.csv": "phone,text\n"}},
			Remedies: []Remedy{migrate("0005_customers_phone.sql", "ALTER TABLE customers ADD COLUMN phone text;\n")}},
		{ID: "t17", Scope: []string{"etl/transform"}, Hazard: "lint", Edit: Edit{Append: map[string]string{"etl/transform/clean.py": fLint}},
			Remedies: []Remedy{lint("etl/transform/clean.py", `f"clean: row has no such field"`, `f"clean: row has no field {key!r}"`)}},
		{ID: "t18", Scope: []string{"etl/extract"}, Hazard: "service", Down: []string{"service-warehouse"}, Edit: addFunc("etl/extract/partner.py", "page_size"), Remedies: []Remedy{warehouse}},
		{ID: "t19", Scope: []string{"etl/transform"}, Hazard: "sig", Edit: normEdit, Remedies: []Remedy{normFix}},
		{ID: "t20", Scope: []string{"etl/schedule", "ci"}, Hazard: "protect", Edit: withFile("etl/schedule/runner.py", "slow_jobs", "ci/check.sh", "python3 scripts/regen.py --check\n"),
			Remedies: []Remedy{protected(`ci/check\.sh|ci/\*\*`, "ci/check.sh")}},
		{ID: "t21", Scope: []string{"etl/schedule"}, Edit: addFunc("etl/schedule/runner.py", "last_run")},
		{ID: "t22", Scope: []string{"etl/load"}, Hazard: "port", Busy: []string{"api"}, Edit: addFunc("etl/load/warehouse.py", "pool_size"), Remedies: []Remedy{port}},
		{ID: "t23", Scope: []string{"etl/load", "etl/schedule"}, Hazard: "review", Edit: withCron("etl/load/writer.py", "vacuum_sql", "0 4 * * 0  etl vacuum\n"), Remedies: []Remedy{crontab}, Review: review},
		{ID: "t24", Scope: []string{"etl/api"}, Hazard: "flaky", Flaky: true, Edit: addFunc("etl/api/server.py", "max_body")},
		{ID: "t25", Scope: []string{"etl/extract"}, Hazard: "env", Unset: []string{"ETL_PARTNER_TOKEN"}, Edit: addFunc("etl/extract/csv_reader.py", "sniff"), Remedies: []Remedy{env}},
		{ID: "t26", Scope: []string{"etl/schedule"}, Hazard: "gen", Edit: replace("etl/schedule/jobs.json", `"table": "customers"}`, `"table": "customers"}, "refunds": {"source": "refunds", "table": "refunds"}`), Remedies: []Remedy{regen}},
		{ID: "t27", Scope: []string{"etl/transform"}, Edit: addFunc("etl/transform/clean.py", "dedupe")},
		{ID: "t28", Scope: []string{"etl/load"}, Hazard: "lint", Edit: Edit{Append: map[string]string{"etl/load/writer.py": lLint}},
			Remedies: []Remedy{lint("etl/load/writer.py", `[l.strip() for l in sql.split(";") if l.strip()]`, `[s.strip() for s in sql.split(";") if s.strip()]`)}},
		{ID: "t29", Scope: []string{"etl/api"}, Hazard: "service", Down: []string{"service-warehouse"}, Edit: addFunc("etl/api/server.py", "cors_origin"), Remedies: []Remedy{warehouse}},
		{ID: "t30", Scope: []string{"etl/load"}, Hazard: "sig", Edit: insertEdit, Remedies: []Remedy{insertFix}},
		{ID: "t31", Scope: []string{"etl/schedule"}, Hazard: "port", Busy: []string{"api"}, Edit: addFunc("etl/schedule/runner.py", "lease"), Remedies: []Remedy{port}},
		{ID: "t32", Scope: []string{"etl/api", "*.txt"}, Hazard: "protect", Edit: withFile("etl/api/server.py", "timeout", "requirements-dev.txt", "pytest-timeout==2.1.0\n"),
			Remedies: []Remedy{protected(`requirements`, "requirements-dev.txt")}},
		{ID: "t33", Scope: []string{"etl/api", "etl/schedule"}, Hazard: "review", Edit: withCron("etl/api/server.py", "report_path", "0 6 * * 1  etl report weekly\n"), Remedies: []Remedy{crontab}, Review: review},
		{ID: "t34", Scope: []string{"etl/load"}, Edit: addFunc("etl/load/warehouse.py", "retry_delay")},
		{ID: "t35", Scope: []string{"etl/api"}, Hazard: "env", Unset: []string{"ETL_PARTNER_TOKEN"}, Edit: addFunc("etl/api/server.py", "realm"), Remedies: []Remedy{env}},
		{ID: "t36", Scope: []string{"etl/load"}, Hazard: "schema", Edit: Edit{Append: map[string]string{"etl/load/schema/refunds.csv": "reason,text\n"}},
			Remedies: []Remedy{migrate("0006_refunds_reason.sql", "ALTER TABLE refunds ADD COLUMN reason text;\n")}},
		{ID: "t37", Scope: []string{"etl/schedule"}, Hazard: "lint", Edit: Edit{Append: map[string]string{"etl/schedule/runner.py": escLint}},
			Remedies: []Remedy{lint("etl/schedule/runner.py", `re.fullmatch("(\d+)([smh])", text)`, `re.fullmatch(r"(\d+)([smh])", text)`)}},
		{ID: "t38", Scope: []string{"etl/transform"}, Hazard: "service", Down: []string{"service-warehouse"}, Edit: addFunc("etl/transform/clean.py", "currency"), Remedies: []Remedy{warehouse}},
		{ID: "t39", Scope: []string{"etl/schedule"}, Hazard: "sig", Edit: jobEdit, Remedies: []Remedy{jobFix}},
		{ID: "t40", Scope: []string{"etl/extract"}, Hazard: "flaky", Flaky: true, Edit: addFunc("etl/extract/partner.py", "backoff")},
		{ID: "t41", Scope: []string{"etl/api"}, Edit: addFunc("etl/api/server.py", "banner")},
		{ID: "t42", Scope: []string{"etl/load", "*.txt"}, Hazard: "protect", Edit: withFile("etl/load/warehouse.py", "ssl_mode", "requirements.txt", "psycopg2-binary==2.9.5\n"),
			Remedies: []Remedy{protected(`requirements`, "requirements.txt")}},
		{ID: "t43", Scope: []string{"etl/extract", "etl/schedule"}, Hazard: "review", Edit: withCron("etl/extract/partner.py", "feed_lag", "*/30 * * * *  etl run partner\n"), Remedies: []Remedy{crontab}, Review: review},
		{ID: "t44", Scope: []string{"etl/extract"}, Hazard: "gen", Edit: replace("etl/extract/sources.json", `["orders", `, `["orders", "payouts", `), Remedies: []Remedy{regen}},
		{ID: "t45", Scope: []string{"etl/transform"}, Edit: addFunc("etl/transform/clean.py", "squash")},
		{ID: "t46", Scope: []string{"etl/schedule"}, Edit: addFunc("etl/schedule/runner.py", "catch_up")},
		{ID: "t47", Scope: []string{"etl/load"}, Edit: addFunc("etl/load/writer.py", "chunk")},
	}
	return tr
}
