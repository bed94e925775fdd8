#!/usr/bin/env bash
# capture.sh: the capture harness of the classifier's corpus.
#
# Every file in outputs/ is exactly what a real tool printed (stdout and
# stderr together) for a small failing case made here; nothing is written
# or edited by hand. Beside each NAME.txt, NAME.meta records how it was
# made and what it shows:
#
#   command: the command line, shell-quoted (run in a fresh temporary case
#            directory, or as the case's comment says)
#   version: the first line the tool printed about its own version
#   exit:    the command's exit status
#   tags:    the tags the output shows, comma-separated ("" for none),
#            written from the output, never from what the classifier says
#   checks:  the preflight checks the evidence names, as type:value,
#            comma-separated
#
# Which set (train or held-out) a capture belongs to is not recorded: it
# follows from its name (see corpus.go), so no one can move a capture.
#
# Usage: capture.sh [SECTION...]   with no section, every section runs.
# Sections: go python node rust java shell db ports neg fresh round2 round3 round4 round5 round6 round7 round8 round9 round10 families color twice baseline cause
#
# It installs what it needs when missing: Debian packages with apt-get
# (PostgreSQL, MariaDB, Redis, shellcheck, pytest, mypy, flake8, pylint,
# black, isort, yamllint, JUnit 4 and 5, Gradle, the JDBC drivers of
# PostgreSQL and MariaDB, Ruby with RSpec and its pg, mysql2 and redis
# gems, PHP with PHPUnit and PDO, shfmt, nginx, bats, the Python drivers),
# npm packages into $JSTOOLS (default /tmp/jstools; ESLint 8, for the cause
# section, into $ESLINT8, default /tmp/eslint8), Go modules into
# throwaway modules through the Go module proxy.
#
# The round2 to round10 sections are batches made after the rules
# they were first measured on; classify/scores_test.go reports each
# batch's scores, and docs/lessons.md keeps their blind scores. Round6 to
# round10 (the families issue) also install clang, clang-tidy, cmake,
# meson, cppcheck, GoogleTest, Catch2, cmocka, Check, CUnit, doctest,
# Django, gunicorn, psycopg 3, pydantic, poetry, Composer, Puma, Erlang,
# rustc and more from Debian, and pnpm, yarn (classic and 4), zod, esbuild,
# ava, xo and more from npm; Terraform is used when it is on PATH (it is
# not packaged in Debian). Registries and mirrors that must fail are
# pointed at 127.0.0.1:9, so nothing leaves the machine. A server that
# must find its port taken runs as "hold PORT CMD...": the harness holds
# the port, so scores_test.go drops "hold PORT" from the command line a
# step would have. sec_families holds outputs for rules written from the
# documentation that no batch reached; they measure nothing blind.
# Servers are started on 127.0.0.1 only, in a temporary directory, and
# stopped on exit. It needs root for apt-get and for running PostgreSQL as
# the postgres user.
set -u
export LC_ALL=C.UTF-8 NO_COLOR=1 FORCE_COLOR=0 TERM=dumb
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$HERE/outputs
mkdir -p "$OUT"
W=$(mktemp -d)
chmod 755 "$W"
PIDS=""
cleanup() {
	[ -n "${PGD:-}" ] && runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$PGD" -m immediate stop >/dev/null 2>&1
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

# The tags, short.
ENV=missing_env_var DEP=missing_dependency TYPE=type_error LINT=lint_error
TEST=test_assertion_failed CONF=build_config_error PORT=port_in_use DB=db_connection_failed

APT_UPDATED=
# need CMD PKG: install Debian package PKG unless CMD is on PATH (or is
# an existing file).
need() {
	if command -v "$1" >/dev/null 2>&1 || [ -e "$1" ]; then return 0; fi
	if [ -z "$APT_UPDATED" ]; then apt-get update -qq >/dev/null 2>&1; APT_UPDATED=1; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null 2>&1 ||
		echo "capture.sh: could not install $2" >&2
}

JSTOOLS=${JSTOOLS:-/tmp/jstools}
J=$JSTOOLS/node_modules/.bin
needjs() {
	[ -x "$J/tsc" ] && [ -x "$J/prettier" ] && [ -d "$JSTOOLS/node_modules/ioredis" ] && return 0
	mkdir -p "$JSTOOLS" && (cd "$JSTOOLS" && { [ -f package.json ] || npm init -y >/dev/null; } &&
		npm install --no-audit --no-fund typescript eslint@9 jest vitest@3 prettier pg ioredis mysql2 >/dev/null 2>&1) ||
		echo "capture.sh: could not install the npm tools" >&2
}

# ver CMD...: the version line recorded for the captures that follow.
ver() { VER=$("$@" 2>&1 | grep -v '^\s*$' | head -n 1); }

# cap NAME TAGS CHECKS CMD...: run CMD in $W/case, keep its output.
cap() {
	local name=$1 tags=$2 checks=$3
	shift 3
	(cd "$W/case" && "$@") >"$OUT/$name.txt" 2>&1 </dev/null
	local rc=$?
	{
		printf 'command: %s\n' "$(printf '%q ' "$@" | sed 's/ $//')"
		printf 'version: %s\n' "$VER"
		printf 'exit: %s\n' "$rc"
		printf 'tags: %s\n' "$tags"
		printf 'checks: %s\n' "$checks"
	} >"$OUT/$name.meta"
	echo "$name: exit $rc"
}
fresh() { rm -rf "$W/case"; mkdir -p "$W/case"; cd "$W/case" || exit 1; }
gomod() { printf 'module example.com/m\n\ngo 1.22\n' >go.mod; }

# silent PORT: a listener that completes the handshake and never says a
# word (a hung server: reads time out).
silent() {
	/usr/bin/python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64); time.sleep(120)' "$1" &
	PIDS="$PIDS $!"
	sleep 0.5
}
# blackhole PORT: a listener whose queue is full, so new connections are
# never answered (connects time out), on loopback only.
blackhole() {
	/usr/bin/python3 -c 'import socket,sys,time
p=int(sys.argv[1]); s=socket.socket(); s.bind(("127.0.0.1", p)); s.listen(0)
cs=[]
for i in range(3):
    c=socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", p))
    except BlockingIOError: pass
    cs.append(c)
time.sleep(120)' "$1" &
	PIDS="$PIDS $!"
	sleep 0.5
}

PY=/usr/bin/python3

# oomcg: a memory cgroup (v1) of 64 MiB in $CG, so that a case's process is
# killed by the kernel's OOM killer for real; false when there is none.
oomcg() {
	CG=/sys/fs/cgroup/memory/orket-capture-$$
	mkdir -p "$CG" 2>/dev/null && echo 64M >"$CG/memory.limit_in_bytes" 2>/dev/null
}

sec_go() {
	ver go version
	fresh; gomod
	printf 'package main\n\nimport "github.com/segmentio/kafka-go"\n\nfunc main() { _ = kafka.Writer{} }\n' >main.go
	cap go-missing-module $DEP "" env GOFLAGS=-mod=mod GOPROXY=off go build ./...
	cap go-no-required-module $DEP "" env GOFLAGS= GOPROXY=off go build ./...
	fresh; gomod
	printf 'package main\n\nfunc main() {\n\tvar n int = "three"\n\tfmt.Println(n)\n}\n' >main.go
	cap go-type-error $TYPE "" go build ./...
	fresh; gomod
	printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Printf("%%d\\n", "x")\n}\n' >main.go
	cap go-vet $LINT "" go vet ./...
	fresh; gomod
	printf 'package m\n\nfunc Add(a, b int) int { return a - b }\n' >m.go
	printf 'package m\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf("Add(2, 3) = %%d, want 5", got)\n\t}\n}\n' >m_test.go
	cap go-test-fail $TEST "" go test ./...
	cap go-test-fail-verbose $TEST "" go test -v -count=1 ./...
	fresh; gomod
	printf 'package m\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestDB(t *testing.T) {\n\tif os.Getenv("DATABASE_URL") == "" {\n\t\tt.Fatal("DATABASE_URL is not set")\n\t}\n}\n' >m_test.go
	cap go-env-not-set $ENV env_var_present:DATABASE_URL go test ./...
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\t"net"\n)\n\nfunc main() {\n\tif _, err := net.Dial("tcp", "127.0.0.1:5432"); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	cap go-dial-refused $DB tcp_reachable:127.0.0.1:5432 go run .
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\t"net"\n)\n\nfunc main() {\n\ta, _ := net.Listen("tcp", "127.0.0.1:18080")\n\tdefer a.Close()\n\tif _, err := net.Listen("tcp", "127.0.0.1:18080"); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	cap go-port-in-use $PORT port_free:18080 go run .
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\t"os"\n)\n\nfunc main() {\n\tif _, err := os.ReadFile("config/app.yaml"); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	cap go-open-missing-file $CONF file_exists:config/app.yaml go run .
	fresh
	cap go-no-module $CONF "" go build ./...
	fresh; gomod; printf 'package main\nfunc main(){}\n' >main.go
	cap gofmt-l $LINT "" sh -c 'out=$(gofmt -l .); if [ -n "$out" ]; then echo "gofmt: these files are not formatted:"; echo "$out"; exit 1; fi'
	cap gofmt-d $LINT "" sh -c 'gofmt -d . && test -z "$(gofmt -l .)"'
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\t"os/exec"\n)\n\nfunc main() {\n\tif err := exec.Command("protoc-missing", "--version").Run(); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	cap go-exec-not-found $DEP command_exists:protoc-missing go run .
	fresh; gomod
	printf 'package main\n\n//go:generate protoc-gen-missing --go_out=. api.proto\n\nfunc main() {}\n' >main.go
	cap go-generate-missing $DEP command_exists:protoc-gen-missing go generate ./...
	fresh; gomod
	printf 'package main\n\nimport (\n\t"fmt"\n\t"strings"\n)\n\nfunc main() {\n\tif strings.Index("abc", "b") != -1 {\n\t\tfmt.Println("has b")\n\t}\n}\n' >main.go
	command -v staticcheck >/dev/null 2>&1 || GOBIN=$(go env GOPATH)/bin go install honnef.co/go/tools/cmd/staticcheck@latest >/dev/null 2>&1
	SC=$(command -v staticcheck || echo "$(go env GOPATH)/bin/staticcheck")
	ver "$SC" -version
	cap staticcheck $LINT "" "$SC" ./...
	ver go version
	fresh; mkdir -p gp/src/app
	printf 'package main\n\nimport "github.com/nobody/missingpkg"\n\nfunc main() { missingpkg.Do() }\n' >gp/src/app/main.go
	cap go-gopath-missing $DEP "" env GO111MODULE=off GOPATH="$W/case/gp" sh -c 'cd gp/src/app && go build .'

	# go.mod and go.sum
	fresh; printf 'module example.com/m\n\ngo 1.99\n' >go.mod; printf 'package main\nfunc main() {}\n' >main.go
	cap go-toolchain-too-new $CONF "" env GOTOOLCHAIN=local go build ./...
	fresh; printf 'module example.com/m\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n' >go.mod
	printf 'package main\n\nimport "github.com/google/uuid"\n\nfunc main() { _ = uuid.New() }\n' >main.go
	cap go-sum-missing $CONF "" env GOFLAGS=-mod=readonly go build ./...
	fresh; printf 'module example.com/m\n\ngo 1.22\n\nrequire (\n\tgithub.com/google/uuid v1.6.0\n' >go.mod; printf 'package main\nfunc main() {}\n' >main.go
	cap go-mod-syntax $CONF "" go build ./...
	fresh; printf 'module example.com/m\n\ngo 1.22\n\nfrobnicate github.com/x/y\n' >go.mod; printf 'package main\nfunc main() {}\n' >main.go
	cap go-mod-unknown-directive $CONF "" go build ./...
	fresh; printf 'module example.com/m\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n' >go.mod; printf 'package main\nfunc main() {}\n' >main.go
	go mod download github.com/google/uuid >/dev/null 2>&1
	printf 'package main\n\nimport (\n\t"github.com/google/uuid"\n\t"golang.org/x/sync/errgroup"\n)\n\nfunc main() { _ = uuid.New(); _ = errgroup.Group{} }\n' >main.go
	cap go-mod-tidy-needed $DEP "" env GOFLAGS=-mod=readonly GOPROXY=off go build ./...
	fresh; printf 'module example.com/m\n\ngo 1.22\n' >go.mod
	printf 'package main\n\nimport "github.com/pkg/errors"\n\nfunc main() { _ = errors.New("x") }\n' >main.go
	cap go-proxy-unreachable $DEP "" env GOPROXY=http://127.0.0.1:9 GOFLAGS=-mod=mod GONOSUMDB=* GONOSUMCHECK=1 GOSUMDB=off GOMODCACHE="$W/modcache" go build ./...
	cap go-get-unreachable $DEP "" env GOPROXY=http://127.0.0.1:9 GOSUMDB=off GOMODCACHE="$W/modcache" go get github.com/pkg/errors@v0.9.1
	fresh; printf 'module example.com/m\n\ngo 1.22\n\nreplace example.com/lib => ../lib\n\nrequire example.com/lib v0.0.0\n' >go.mod
	printf 'package main\n\nimport "example.com/lib"\n\nfunc main() { lib.Do() }\n' >main.go
	cap go-replace-missing-dir $CONF "" go build ./...

	# compile and type errors
	fresh; gomod
	printf 'package main\n\nimport "fmt"\n\ntype User struct{ Name string }\n\nfunc main() {\n\tu := User{}\n\tfmt.Println(u.Email)\n\tvar s string = len(u.Name)\n\t_ = s\n}\n' >main.go
	cap go-build-no-field $TYPE "" go build ./...
	fresh; gomod
	printf 'package m\n\nfunc Add(a, b int) int { return a + b }\n' >m.go
	printf 'package m\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, "2") != 3 {\n\t\tt.Fatal("bad")\n\t}\n}\n' >m_test.go
	cap go-test-build-failed $TYPE "" go test ./...
	fresh; gomod
	printf 'package main\n\nfunc f() (int, error) { return 0, nil }\n\nfunc main() {\n\tx := f()\n\t_ = x\n\tundefinedThing()\n}\n' >main.go
	cap go-build-assign-mismatch $TYPE "" go build ./...

	# go test: failures of assertions and of the environment
	fresh; gomod
	printf 'package m\n\nimport (\n\t"reflect"\n\t"testing"\n)\n\nfunc Split(s string) []string { return []string{s} }\n\nfunc TestSplit(t *testing.T) {\n\tfor _, tc := range []struct{ in string; want []string }{{"a,b", []string{"a", "b"}}, {"", nil}} {\n\t\tt.Run(tc.in, func(t *testing.T) {\n\t\t\tif got := Split(tc.in); !reflect.DeepEqual(got, tc.want) {\n\t\t\t\tt.Fatalf("Split(%%q) = %%q, want %%q", tc.in, got, tc.want)\n\t\t\t}\n\t\t})\n\t}\n}\n' >m_test.go
	cap go-test-subtests $TEST "" go test ./...
	fresh; gomod
	printf 'package m\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestGolden(t *testing.T) {\n\tif _, err := os.ReadFile("testdata/golden.json"); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n' >m_test.go
	cap go-test-missing-golden $CONF file_exists:testdata/golden.json go test ./...
	fresh; gomod
	printf 'package m\n\nimport (\n\t"net/http"\n\t"testing"\n)\n\nfunc TestHealth(t *testing.T) {\n\tresp, err := http.Get("http://127.0.0.1:18099/health")\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\tresp.Body.Close()\n}\n' >m_test.go
	cap go-test-http-refused "" "" go test ./...
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\t"os"\n)\n\nfunc main() {\n\tkey := os.Getenv("STRIPE_SECRET_KEY")\n\tif key == "" {\n\t\tlog.Fatal("STRIPE_SECRET_KEY environment variable is required")\n\t}\n}\n' >main.go
	cap go-env-required $ENV env_var_present:STRIPE_SECRET_KEY go run .
	fresh; gomod
	printf 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tif os.Getenv("REDIS_ADDR") == "" {\n\t\tpanic(fmt.Sprintf("config: %%s must be set", "REDIS_ADDR"))\n\t}\n}\n' >main.go
	cap go-env-panic $ENV env_var_present:REDIS_ADDR go run .
}

sec_python() {
	need /usr/bin/python3 python3
	need pytest python3-pytest
	need mypy mypy
	need flake8 flake8
	need pylint pylint
	need black black
	$PY -c 'import pytest_timeout' 2>/dev/null || need /usr/lib/python3/dist-packages/pytest_timeout.py python3-pytest-timeout
	ver $PY --version
	fresh
	cap python-module-not-found $DEP "" $PY -c 'import requests_toolbelt_missing'
	cap python-env-keyerror $ENV env_var_present:DATABASE_URL $PY -c 'import os
url = os.environ["DATABASE_URL"]'
	cap python-file-not-found $CONF file_exists:config/app.yaml $PY -c 'open("config/app.yaml")'
	cap python-type-error $TYPE "" $PY -c 'len(5)'
	cap python-type-error-args $TYPE "" $PY -c 'def greet(name):
    return "hi " + name
greet("a", "b")'
	cap python-type-error-concat $TYPE "" $PY -c 'total = "count: " + 3'
	cap python-assert $TEST "" $PY -c 'assert 1 + 1 == 3, "math is broken"'
	cap python-port-in-use $PORT "" $PY -c 'import socket
a = socket.socket(); a.bind(("127.0.0.1", 18081)); a.listen()
b = socket.socket(); b.bind(("127.0.0.1", 18081))'
	cap python-conn-refused "" "" $PY -c 'import socket
socket.create_connection(("127.0.0.1", 6379))'
	cap python-env-getenv-required $ENV env_var_present:API_KEY $PY -c 'import os
key = os.getenv("API_KEY")
if not key:
    raise RuntimeError("API_KEY environment variable is required")'
	cap python-dict-keyerror "" "" $PY -c 'cfg = {"host": "x"}
port = cfg["port"]'
	cap python-subprocess-missing $DEP command_exists:protoc-missing $PY -c 'import subprocess
subprocess.run(["protoc-missing", "--version"], check=True)'
	cap python-zero-division "" "" $PY -c 'rate = 10 / 0'
	cap python-attribute-none "" "" $PY -c 'user = None
print(user.name)'
	cap python-syntax-error "" "" $PY -c 'def f(:
    pass'
	cap python-recursion "" "" $PY -c 'def f(n): return f(n + 1)
f(0)'
	cap python-memory-error "" "" sh -c 'ulimit -v 200000; exec "$0" -c "x = bytearray(1 << 30)"' $PY
	cap python-timeout-expired "" "" $PY -c 'import subprocess
subprocess.run(["sleep", "5"], timeout=1)'
	cap python-urlopen-refused "" "" $PY -c 'import urllib.request
urllib.request.urlopen("http://127.0.0.1:18099/health")'
	cap python-import-name "" "" $PY -c 'from json import loads_fast'

	ver $PY -m pytest --version
	fresh
	printf 'def add(a, b):\n    return a - b\n\n\ndef test_add():\n    assert add(2, 3) == 5\n' >test_add.py
	cap pytest-assert $TEST "" $PY -m pytest -q -p no:cacheprovider test_add.py
	cap pytest-assert-verbose $TEST "" $PY -m pytest -v -p no:cacheprovider test_add.py
	fresh
	printf 'import pytest\n\n\ndef parse(s):\n    return int(s)\n\n\ndef test_parse_rejects():\n    with pytest.raises(ValueError):\n        parse("12")\n\n\ndef test_dict():\n    assert {"a": 1, "b": 2} == {"a": 1, "b": 3}\n' >test_more.py
	cap pytest-raises-and-dict $TEST "" $PY -m pytest -q -p no:cacheprovider test_more.py
	fresh
	printf 'import os\n\n\ndef test_db():\n    url = os.environ["DATABASE_URL"]\n    assert url\n' >test_env.py
	cap pytest-env-keyerror $ENV env_var_present:DATABASE_URL env -i PATH=/usr/bin:/bin HOME=/nonexistent $PY -m pytest -q -p no:cacheprovider test_env.py
	fresh
	printf 'import requests_missing\n\n\ndef test_x():\n    assert requests_missing\n' >test_imp.py
	cap pytest-collect-import $DEP "" $PY -m pytest -q -p no:cacheprovider test_imp.py
	fresh
	printf 'import urllib.request\n\n\ndef test_health():\n    urllib.request.urlopen("http://127.0.0.1:18099/health", timeout=2)\n' >test_http.py
	cap pytest-http-refused "" "" $PY -m pytest -q -p no:cacheprovider test_http.py
	fresh
	printf 'def test_div():\n    assert 1 / 0 == 0\n' >test_zero.py
	cap pytest-zero-division "" "" $PY -m pytest -q -p no:cacheprovider test_zero.py
	fresh
	printf 'import time\n\n\ndef test_slow():\n    time.sleep(5)\n' >test_slow.py
	cap pytest-timeout "" "" $PY -m pytest -q -p no:cacheprovider --timeout=1 test_slow.py
	fresh
	printf '[pytest]\naddopts = --no-such-flag\n' >pytest.ini; printf 'def test_x():\n    pass\n' >test_x.py
	cap pytest-ini-bad-option $CONF "" $PY -m pytest -q -p no:cacheprovider
	fresh
	printf '[tool.pytest.ini_options\nminversion = "6.0"\n' >pyproject.toml; printf 'def test_x():\n    pass\n' >test_x.py
	cap pytest-pyproject-invalid $CONF "" $PY -m pytest -q -p no:cacheprovider
	fresh
	printf '[pytest]\naddopts = --strict-markers\n' >pytest.ini; printf 'import pytest\n\n\n@pytest.mark.slow\ndef test_x():\n    pass\n' >test_x.py
	cap pytest-unknown-marker $CONF "" $PY -m pytest -q -p no:cacheprovider
	fresh
	printf '[pytest]\nminversion = 99.0\n' >pytest.ini; printf 'def test_x():\n    pass\n' >test_x.py
	cap pytest-minversion $CONF "" $PY -m pytest -q -p no:cacheprovider
	fresh
	printf 'def test_x(database):\n    assert database\n' >test_fx.py
	cap pytest-fixture-missing "" "" $PY -m pytest -q -p no:cacheprovider test_fx.py
	fresh
	printf 'import unittest\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(2 + 2, 5)\n\n\nif __name__ == "__main__":\n    unittest.main()\n' >t.py
	cap unittest-fail $TEST "" $PY t.py
	fresh
	printf 'import unittest\n\n\nclass T(unittest.TestCase):\n    def test_cfg(self):\n        cfg = {}\n        self.assertTrue(cfg["debug"])\n\n\nif __name__ == "__main__":\n    unittest.main()\n' >t.py
	cap unittest-error "" "" $PY t.py

	ver mypy --version
	fresh
	printf 'def twice(n: int) -> int:\n    return n * 2\n\n\ntwice("x")\n' >typed.py
	cap mypy-arg-type $TYPE "" mypy --no-incremental --cache-dir=/dev/null typed.py
	printf 'import requests_missing\n\n\ndef f() -> str:\n    return 1\n\n\nclass A:\n    pass\n\n\nA().missing\n' >more.py
	cap mypy-import-and-return "$DEP, $TYPE" "" mypy --no-incremental --cache-dir=/dev/null more.py
	printf 'def f(x: int) -> str:\n    return x\n' >ret.py
	cap mypy-return-value $TYPE "" mypy --no-incremental --cache-dir=/dev/null ret.py
	printf '[mypy\nstrict = True\n' >mypy.ini
	cap mypy-config-invalid "$CONF, $TYPE" "" mypy --no-incremental --cache-dir=/dev/null ret.py

	ver flake8 --version
	fresh
	printf 'import os\nx=1\n' >lint.py
	cap flake8-errors $LINT "" flake8 lint.py
	printf 'def f( a ):\n  return a==None\n' >lint2.py
	cap flake8-more $LINT "" flake8 lint2.py
	ver pylint --version
	cap pylint-errors $LINT "" pylint --persistent=n lint2.py
	ver black --version
	cap black-check $LINT "" black --check --diff lint2.py
	cap black-check-quiet $LINT "" black --check lint2.py

	ver $PY -m pip --version
	fresh
	printf '[project\nname = "x"\n' >pyproject.toml
	cap pip-pyproject-invalid $CONF "" $PY -m pip install --no-build-isolation --no-index --break-system-packages --dry-run .
	fresh
	cap pip-index-unreachable $DEP "" $PY -m pip install --index-url http://127.0.0.1:9/simple --retries 0 --timeout 2 --break-system-packages requests-toolbelt-missing
}

sec_node() {
	need node nodejs
	needjs
	export NODE_PATH=$JSTOOLS/node_modules
	ver node --version
	fresh
	printf 'require("left-pad-missing")\n' >a.js
	cap node-cannot-find-module $DEP "" node a.js
	printf 'import pad from "left-pad-missing";\nconsole.log(pad);\n' >a.mjs
	cap node-esm-package-missing $DEP "" node a.mjs
	printf 'const net = require("net");\nconst a = net.createServer().listen(18082, () => { net.createServer().listen(18082); });\n' >b.js
	cap node-eaddrinuse $PORT port_free:18082 timeout 5 node b.js
	printf 'const net = require("net");\nnet.connect(5432, "127.0.0.1");\n' >c.js
	cap node-econnrefused $DB tcp_reachable:127.0.0.1:5432 node c.js
	printf 'const assert = require("assert");\nassert.strictEqual(1 + 1, 3);\n' >d.js
	cap node-assert $TEST "" node d.js
	printf 'if (!process.env.API_TOKEN) { throw new Error("Missing required environment variable: API_TOKEN"); }\n' >e.js
	cap node-env-missing $ENV env_var_present:API_TOKEN node e.js
	printf 'require("fs").readFileSync("config/app.json");\n' >r.js
	cap node-enoent $CONF file_exists:config/app.json node r.js
	printf 'if (!process.env.REDIS_URL) { console.error("error: environment variable REDIS_URL is not set"); process.exit(1); }\n' >e2.js
	cap node-env-var-not-set $ENV env_var_present:REDIS_URL node e2.js
	printf 'const url = process.env.DATABASE_URL;\nconsole.log(url.split(":")[0]);\n' >e3.js
	cap node-env-undefined-split "" "" node e3.js
	printf 'require("child_process").execFileSync("protoc-missing", ["--version"]);\n' >s.js
	cap node-spawn-enoent $DEP command_exists:protoc-missing node s.js
	printf 'fetch("http://127.0.0.1:18099/health").then(r => r.text()).then(console.log);\n' >f.js
	cap node-fetch-refused "" "" node f.js
	printf 'const o = {};\nconsole.log(o.user.name);\n' >u.js
	cap node-undefined-property "" "" node u.js
	printf 'function f() { return f(); }\nf();\n' >so.js
	cap node-stack-overflow "" "" node so.js
	printf 'const a = [];\nwhile (true) a.push(new Array(1e6).fill(1));\n' >oom.js
	cap node-heap-oom "" "" node --max-old-space-size=32 oom.js
	printf 'JSON.parse("{not json");\n' >j.js
	cap node-json-parse "" "" node j.js
	printf 'const test = require("node:test");\nconst assert = require("node:assert");\ntest("adds", () => { assert.strictEqual(2 + 2, 5); });\n' >t.test.js
	cap node-test-runner-fail $TEST "" node --test t.test.js

	# npm
	ver npm --version
	fresh
	printf '{"name":"x","version":"1.0.0","scripts":{"test":"true"}}\n' >package.json
	cap npm-missing-script $CONF "" npm run lint
	printf '{"name":"x","version":"1.0.0","scripts":{"build":"webpack-missing --mode production"}}\n' >package.json
	cap npm-script-command-missing $DEP command_exists:webpack-missing npm run build
	printf '{"name":"x","version":"1.0.0",\n"scripts": {"test": "true",}\n}\n' >package.json
	cap npm-package-json-invalid $CONF "" npm install --offline --no-audit --no-fund
	fresh
	printf '{"name":"x","version":"1.0.0"}\n' >package.json
	cap npm-registry-unreachable $DEP "" npm install --no-audit --no-fund --registry http://127.0.0.1:9/ --fetch-retries=0 left-pad
	cap npm-offline-missing $DEP "" npm install --no-audit --no-fund --offline --cache "$W/npmcache" left-pad-missing-pkg
	fresh
	cap npm-no-package-json $CONF "file_exists:$W/case/package.json" npm run build

	# TypeScript
	ver "$J/tsc" --version
	fresh
	printf 'let n: number = "three";\nexport {};\n' >a.ts
	cap tsc-type-error $TYPE "" "$J/tsc" --noEmit a.ts
	printf 'import pad from "left-pad-missing";\nconsole.log(pad("x", 3));\n' >m.ts
	cap tsc-cannot-find-module $DEP "" "$J/tsc" --noEmit m.ts
	printf 'interface User { name: string }\nconst u: User = { name: "a" };\nconsole.log(u.email);\nfunction f(x: number) { return x; }\nf("1");\nexport {};\n' >p.ts
	cap tsc-property-and-arg $TYPE "" "$J/tsc" --noEmit p.ts
	printf '{"compilerOptions": {"strict": true, "noSuchOption": true}, "include": ["p.ts"]}\n' >tsconfig.json
	cap tsc-unknown-option "$CONF, $TYPE" "" "$J/tsc" --noEmit -p .
	printf '{"compilerOptions": {"strict": true}, "include": ["src/**/*.ts"]}\n' >tsconfig.json
	cap tsc-no-inputs $CONF "" "$J/tsc" --noEmit -p .
	printf '{"compilerOptions": {"target": "es2099"}, "include": ["p.ts"]}\n' >tsconfig.json
	cap tsc-bad-target "$CONF, $TYPE" "" "$J/tsc" --noEmit -p .
	rm -f tsconfig.json
	cap tsc-missing-project $CONF "" "$J/tsc" --noEmit -p tsconfig.build.json

	# eslint, prettier
	ver "$J/eslint" --version
	fresh
	printf 'export default [{ rules: { "no-unused-vars": "error", "no-undef": "error" } }];\n' >eslint.config.js
	printf 'const unused = 1;\nconsole.log(missing);\n' >b.js
	cap eslint-errors $LINT "" "$J/eslint" b.js
	cap eslint-formatter-missing $DEP "" "$J/eslint" --format unix b.js
	printf 'export default [{ rules: { "no-unused-vars": "sometimes" } }];\n' >eslint.config.js
	cap eslint-bad-rule-config $CONF "" "$J/eslint" b.js
	rm eslint.config.js
	cap eslint-no-config $CONF "" "$J/eslint" b.js
	ver "$J/prettier" --version
	printf 'const a = {b:1,\n  c:2}\n' >c.js
	cap prettier-check $LINT "" "$J/prettier" --check c.js

	# jest, vitest
	ver "$J/jest" --version
	fresh
	printf '{"name":"x","version":"1.0.0"}\n' >package.json
	printf 'function add(a, b) { return a - b; }\ntest("adds", () => { expect(add(2, 3)).toBe(5); });\n' >add.test.js
	cap jest-fail $TEST "" "$J/jest" --ci --no-cache add.test.js
	printf 'test("deep", () => { expect({a: 1, b: [1, 2]}).toEqual({a: 1, b: [1, 3]}); });\n' >deep.test.js
	cap jest-toequal $TEST "" "$J/jest" --ci --no-cache deep.test.js
	printf 'test("slow", async () => { await new Promise(r => setTimeout(r, 2000)); }, 100);\n' >slow.test.js
	cap jest-timeout "" "" "$J/jest" --ci --no-cache slow.test.js
	printf 'test("user", () => { const o = {}; expect(o.user.name).toBe("a"); });\n' >npe.test.js
	cap jest-typeerror-thrown "" "" "$J/jest" --ci --no-cache npe.test.js
	printf 'const { Client } = require("pg");\ntest("db", async () => { const c = new Client("postgresql://app:secret@127.0.0.1:5432/app"); await c.connect(); await c.end(); });\n' >db.test.js
	cap jest-pg-refused $DB tcp_reachable:127.0.0.1:5432 "$J/jest" --ci --no-cache db.test.js
	printf 'module.exports = { testEnvironment: "jsdom-missing" };\n' >jest.config.js
	cap jest-env-missing $DEP "" "$J/jest" --ci --no-cache add.test.js
	ver "$J/vitest" --version
	fresh
	mkdir v; printf 'import { test, expect } from "vitest";\nfunction add(a, b) { return a - b; }\ntest("adds", () => { expect(add(2, 3)).toBe(5); });\n' >v/add.test.mjs
	cap vitest-fail $TEST "" sh -c 'cd v && NO_COLOR=1 "$0" run --no-color' "$J/vitest"
	mkdir w; printf 'import { test } from "vitest";\ntest("slow", async () => { await new Promise(r => setTimeout(r, 2000)); }, 100);\n' >w/slow.test.mjs
	cap vitest-timeout "" "" sh -c 'cd w && NO_COLOR=1 "$0" run --no-color' "$J/vitest"
}

sec_rust() {
	ver cargo --version
	fresh; printf '[package\nname = "x"\n' >Cargo.toml
	cap cargo-bad-manifest $CONF "" cargo build --offline -q
	fresh; cargo new -q --vcs none cl >/dev/null 2>&1
	printf 'fn main() {\n    let v = vec![1, 2, 3];\n    if v.len() == 0 { println!("empty"); }\n}\n' >cl/src/main.rs
	cap clippy-len-zero $LINT "" sh -c 'cd cl && cargo clippy --offline -q -- -D warnings'
	printf 'fn main() {\n    let x = 5;\n    let s = String::from("a");\n    let _t = s.clone().to_string();\n}\n' >cl/src/main.rs
	cap rust-unused-deny-warnings $LINT "" sh -c 'cd cl && RUSTFLAGS="-D warnings" cargo build --offline -q'
	printf 'fn main() {\n    let v: Vec<i32> = Vec::new();\n    let _n = v.iter().map(|x| x * 2).collect::<Vec<_>>().len();\n    let s = String::from("a");\n    println!("{}", s.to_string());\n}\n' >cl/src/main.rs
	cap clippy-warnings $LINT "" sh -c 'cd cl && cargo clippy --offline -q -- -D warnings'
	printf 'fn main(){let x=1;\nprintln!("{}",x);}\n' >cl/src/main.rs
	cap rustfmt-check $LINT "" sh -c 'cd cl && cargo fmt --check'
	fresh; cargo new -q --vcs none app >/dev/null 2>&1
	printf 'fn main() {\n    let n: i32 = "three";\n    println!("{}", n);\n}\n' >app/src/main.rs
	cap rust-mismatched-types $TYPE "" sh -c 'cd app && cargo build --offline -q'
	printf 'fn add(a: i32, b: i32) -> i32 { a - b }\nfn main() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 3), 5); }\n}\n' >app/src/main.rs
	cap rust-test-fail $TEST "" sh -c 'cd app && cargo test --offline -q'
	printf 'fn first(v: &[i32]) -> Option<i32> { v.first().copied() }\nfn main() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn firsts() { assert!(super::first(&[]).unwrap() > 0); }\n    #[test]\n    fn ok() { assert!(super::first(&[1]).is_some(), "first of [1] should be Some"); }\n}\n' >app/src/main.rs
	cap rust-test-unwrap-panic "" "" sh -c 'cd app && cargo test --offline -q'
	printf 'fn main() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn sorted() { let v = vec![3, 1]; assert!(v.windows(2).all(|w| w[0] <= w[1])); }\n}\n' >app/src/main.rs
	cap rust-test-assert $TEST "" sh -c 'cd app && cargo test --offline -q'
	printf 'use serde_missing::Serialize;\nfn main() {}\n' >app/src/main.rs
	cap rust-unresolved-crate $DEP "" sh -c 'cd app && cargo build --offline -q'
	printf 'fn main() {\n    let v = vec![1, 2, 3];\n    let i = v.len() + 2;\n    println!("{}", v[i]);\n}\n' >app/src/main.rs
	cap rust-panic-index "" "" sh -c 'cd app && cargo run --offline -q'
	printf 'fn main() {\n    let url = std::env::var("DATABASE_URL").expect("DATABASE_URL must be set");\n    println!("{}", url);\n}\n' >app/src/main.rs
	cap rust-env-expect $ENV env_var_present:DATABASE_URL sh -c 'cd app && cargo run --offline -q'
	printf 'fn main() {\n    let s = include_str!("../data/seed.json");\n    println!("{}", s);\n}\n' >app/src/main.rs
	cap rust-include-missing $CONF file_exists:src/../data/seed.json sh -c 'cd app && cargo build --offline -q'
	printf 'struct P { x: i32 }\nfn main() {\n    let p = P { x: 1 };\n    println!("{}", p.y);\n    let n: u8 = 300u32;\n}\n' >app/src/main.rs
	cap rust-no-field $TYPE "" sh -c 'cd app && cargo build --offline -q'
	printf 'fn main() {}\n' >app/src/main.rs
	printf 'serde = "1"\n' >>app/Cargo.toml
	cap cargo-offline-missing-dep $DEP "" sh -c 'cd app && cargo build --offline -q'
	mkdir -p app/.cargo; printf '[source.crates-io]\nreplace-with = "mirror"\n\n[source.mirror]\nregistry = "sparse+http://127.0.0.1:9/index/"\n\n[net]\nretry = 0\n' >app/.cargo/config.toml
	cap cargo-registry-unreachable $DEP "" sh -c 'cd app && CARGO_HOME="$0" cargo build -q' "$W/cargohome"
	fresh; cargo new -q --vcs none rv >/dev/null 2>&1
	sed -i 's/^edition = .*/&\nrust-version = "1.99"/' rv/Cargo.toml
	cap cargo-rust-version-too-new $CONF "" sh -c 'cd rv && cargo build --offline -q'
	fresh; cargo new -q --vcs none ed >/dev/null 2>&1
	sed -i 's/^edition = .*/edition = "2099"/' ed/Cargo.toml
	cap cargo-unknown-edition $CONF "" sh -c 'cd ed && cargo build --offline -q'
	fresh; mkdir empty
	cap cargo-no-manifest $CONF "" sh -c 'cd empty && cargo build --offline -q'
}

sec_java() {
	need javac default-jdk-headless
	need mvn maven
	need /usr/share/java/junit4.jar junit4
	need /usr/share/java/junit-platform-console-standalone.jar junit5
	ver javac -version
	fresh
	printf 'public class A {\n  public static void main(String[] a) {\n    int n = "three";\n  }\n}\n' >A.java
	cap javac-incompatible-types $TYPE "" javac A.java
	printf 'import com.google.gson.Gson;\npublic class B {\n  public static void main(String[] a) { new Gson(); }\n}\n' >B.java
	cap javac-package-missing "$DEP, $TYPE" "" javac B.java
	printf 'public class C {\n  public static void main(String[] a) {\n    String s = null;\n    s.length();\n  }\n}\n' >C.java
	ver java -version
	javac C.java 2>/dev/null
	cap java-npe "" "" java C
	printf 'import java.util.*;\npublic class O {\n  public static void main(String[] a) {\n    List<long[]> l = new ArrayList<>();\n    while (true) l.add(new long[1 << 20]);\n  }\n}\n' >O.java
	javac O.java 2>/dev/null
	cap java-oom "" "" java -Xmx32m O
	printf 'public class S {\n  static int f(int n) { return f(n + 1); }\n  public static void main(String[] a) { f(0); }\n}\n' >S.java
	javac S.java 2>/dev/null
	cap java-stack-overflow "" "" java -Xss256k S
	printf 'public class E {\n  public static void main(String[] a) {\n    String t = System.getenv("API_TOKEN");\n    if (t == null) throw new IllegalStateException("Environment variable API_TOKEN is not set");\n  }\n}\n' >E.java
	javac E.java 2>/dev/null
	cap java-env-not-set $ENV env_var_present:API_TOKEN java E
	printf 'public class P {\n  public static void main(String[] a) throws Exception {\n    new ProcessBuilder("protoc-missing", "--version").start();\n  }\n}\n' >P.java
	javac P.java 2>/dev/null
	cap java-process-missing $DEP command_exists:protoc-missing java P
	printf 'import java.nio.file.*;\npublic class F {\n  public static void main(String[] a) throws Exception {\n    Files.readString(Path.of("config/app.properties"));\n  }\n}\n' >F.java
	javac F.java 2>/dev/null
	cap java-file-missing $CONF file_exists:config/app.properties java F
	mkdir -p dep/lib; printf 'package lib;\npublic class Util { public static String hi() { return "hi"; } }\n' >dep/lib/Util.java
	printf 'public class U {\n  public static void main(String[] a) { System.out.println(lib.Util.hi()); }\n}\n' >U.java
	javac -d dep dep/lib/Util.java && javac -cp dep U.java
	cap java-noclassdef $DEP "" java -cp . U
	printf 'import java.net.*;\npublic class H {\n  public static void main(String[] a) throws Exception {\n    new URL("http://127.0.0.1:18099/health").openStream();\n  }\n}\n' >H.java
	javac H.java 2>/dev/null
	cap java-http-refused "" "" java H

	# JUnit 4 and 5, run by their own runners
	J4=/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar
	fresh
	printf 'import org.junit.Test;\nimport static org.junit.Assert.*;\npublic class CalcTest {\n  static int add(int a, int b) { return a - b; }\n  @Test public void adds() { assertEquals(5, add(2, 3)); }\n}\n' >CalcTest.java
	javac -cp $J4 CalcTest.java
	ver sh -c 'ls /usr/share/java/junit4-*.jar | sed "s|.*/||"'
	cap junit4-fail $TEST "" java -cp .:$J4 org.junit.runner.JUnitCore CalcTest
	printf 'import org.junit.Test;\npublic class NpeTest {\n  @Test public void user() { Object o = null; o.toString(); }\n}\n' >NpeTest.java
	javac -cp $J4 NpeTest.java
	cap junit4-error "" "" java -cp .:$J4 org.junit.runner.JUnitCore NpeTest
	printf 'import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.*;\nclass Calc5Test {\n  static int add(int a, int b) { return a - b; }\n  @Test void adds() { assertEquals(5, add(2, 3)); }\n  @Test void truthy() { assertTrue(add(1, 1) > 1, "sum should be positive"); }\n}\n' >Calc5Test.java
	J5=/usr/share/java/junit-platform-console-standalone.jar
	javac -cp $J5 Calc5Test.java
	ver sh -c 'ls /usr/share/java/junit-jupiter-api-*.jar | sed "s|.*/||"'
	cap junit5-fail $TEST "" java -jar $J5 --disable-banner --disable-ansi-colors -cp . --select-class Calc5Test
	printf 'import org.junit.jupiter.api.Test;\nimport java.net.*;\nclass Db5Test {\n  @Test void connects() throws Exception { new Socket("127.0.0.1", 18099).close(); }\n}\n' >Db5Test.java
	javac -cp $J5 Db5Test.java
	cap junit5-socket-refused "" "" java -jar $J5 --disable-banner --disable-ansi-colors -cp . --select-class Db5Test

	# Maven, offline
	ver mvn -v
	fresh
	cat >pom.xml <<-'EOF'
	<project xmlns="http://maven.apache.org/POM/4.0.0">
	  <modelVersion>4.0.0</modelVersion>
	  <groupId>x</groupId><artifactId>app</artifactId><version>1.0</version>
	  <dependencies>
	    <dependency><groupId>com.google.code.gson</groupId><artifactId>gson</artifactId><version>2.10.1</version></dependency>
	  </dependencies>
	</project>
	EOF
	cap mvn-offline-dependency $DEP "" mvn -B -o -Dmaven.repo.local="$W/m2" dependency:resolve
	cap mvn-offline-compile $DEP "" mvn -B -o -q -Dmaven.repo.local="$W/m2" compile
	printf '<project>\n  <modelVersion>4.0.0</modelVersion>\n  <groupId>x</groupId>\n  <artifactId>app\n</project>\n' >pom.xml
	cap mvn-pom-unparseable $CONF "" mvn -B -o -Dmaven.repo.local="$W/m2" compile
	printf '<project>\n  <modelVersion>4.0.0</modelVersion>\n  <groupId>x</groupId>\n  <artifactId>app</artifactId>\n</project>\n' >pom.xml
	cap mvn-pom-no-version $CONF "" mvn -B -o -Dmaven.repo.local="$W/m2" compile
	rm pom.xml
	cap mvn-no-pom $CONF "" mvn -B -o -Dmaven.repo.local="$W/m2" compile
	cap mvn-registry-unreachable $DEP "" sh -c 'printf "<settings><mirrors><mirror><id>m</id><mirrorOf>*</mirrorOf><url>http://127.0.0.1:9/maven2</url></mirror></mirrors></settings>" >"$0/settings.xml" && mvn -B -s "$0/settings.xml" -Dmaven.repo.local="$0/m2b" -Dmaven.wagon.http.retryHandler.count=0 dependency:resolve' "$W"
}

sec_shell() {
	need shellcheck shellcheck
	ver bash --version
	fresh
	cap sh-command-not-found $DEP command_exists:terraform-missing-cli sh -c 'terraform-missing-cli plan'
	cap bash-command-not-found $DEP command_exists:kubectl-missing bash -c 'kubectl-missing apply -f x.yaml'
	cap bash-unbound-variable $ENV env_var_present:DEPLOY_TARGET bash -c 'set -u; echo "$DEPLOY_TARGET"'
	cap bash-param-required $ENV env_var_present:DEPLOY_KEY bash -c ': "${DEPLOY_KEY:?must be set}"'
	cap sh-param-not-set $ENV env_var_present:AWS_REGION sh -c ': "${AWS_REGION?}"'
	cap bash-syntax-error "" "" bash -c 'if true; then echo x; fi fi'
	printf '#!/bin/sh\necho hi\n' >run.sh
	cap sh-permission-denied "" "" sh -c './run.sh'
	cap bash-segfault "" "" bash -c 'printf "int main(void){int *p=0; return *p;}\n" > s.c && cc -o s s.c && ./s; exit $?'
	if oomcg; then
		cap bash-oom-killed "" "" bash -c 'echo $$ >"$1/cgroup.procs"; /usr/bin/python3 -c "x = bytearray(512 << 20)"; exit $?' bash "$CG"
		rmdir "$CG" 2>/dev/null
	fi
	cap timeout-kill "" "" timeout 1 sh -c 'echo "waiting for server..."; sleep 5'
	cap curl-refused "" "" curl -sS --max-time 5 http://127.0.0.1:9/
	cap curl-refused-8080 "" "" curl -sS --fail --max-time 5 http://127.0.0.1:18099/health
	cap plain-fail "" "" sh -c 'echo "step 3 of 5: something went wrong"; echo "FAIL: HTTP JSON response was not OK"; exit 1'
	cap cat-missing-config $CONF file_exists:config/app.env cat config/app.env

	ver make --version
	fresh
	printf 'all:\n\ttrue\n' >Makefile
	cap make-no-rule $CONF "" make lint
	printf 'app: main.o util.o\n\tcc -o app main.o util.o\n' >Makefile
	cap make-no-rule-needed-by $CONF "" make
	rm Makefile
	cap make-no-makefile $CONF "" make
	printf 'all:\n    echo spaces\n' >Makefile
	cap make-missing-separator $CONF "" make
	printf 'test:\n\tfalse\n' >Makefile
	cap make-recipe-failed "" "" make test
	printf 'gen:\n\tprotoc-missing --go_out=. api.proto\n' >Makefile
	cap make-command-missing $DEP command_exists:protoc-missing make gen
	printf 'ifndef DEPLOY_ENV\n$(error DEPLOY_ENV is not set)\nendif\nall:\n\ttrue\n' >Makefile
	cap make-error-env $ENV env_var_present:DEPLOY_ENV make
	printf 'include config.mk\nall:\n\ttrue\n' >Makefile
	cap make-include-missing $CONF "" make

	ver shellcheck --version
	fresh
	printf '#!/bin/sh\nfiles=$(ls *.txt)\nfor f in $files; do\n  cat $f\ndone\ncd /tmp\necho $UNSET_THING\n' >check.sh
	cap shellcheck-tty $LINT "" shellcheck check.sh
	cap shellcheck-gcc $LINT "" shellcheck -f gcc check.sh
	printf '#!/bin/bash\nif [ $# == 1 ]\nthen echo "one"\nfi\nread name\necho "hello "$name\n' >two.sh
	cap shellcheck-bash $LINT "" shellcheck two.sh
}

# start_db: PostgreSQL on 127.0.0.1:15432, MariaDB on 127.0.0.1:13306,
# Redis on 127.0.0.1:16379, each with a user app, password secret.
start_db() {
	need /usr/lib/postgresql/15/bin/initdb postgresql
	need psql postgresql-client
	need mariadbd mariadb-server
	need mariadb mariadb-client
	need redis-server redis-server
	need redis-cli redis-tools
	$PY -c 'import psycopg2' 2>/dev/null || need /usr/lib/python3/dist-packages/psycopg2 python3-psycopg2
	$PY -c 'import redis' 2>/dev/null || need /usr/lib/python3/dist-packages/redis python3-redis
	$PY -c 'import pymysql' 2>/dev/null || need /usr/lib/python3/dist-packages/pymysql python3-pymysql
	PGD=$W/pg
	mkdir -p "$PGD" "$W/pgsock" && chown postgres "$PGD" "$W/pgsock"
	printf 'secret\n' >"$W/pgpw" && chmod 644 "$W/pgpw"
	runuser -u postgres -- /usr/lib/postgresql/15/bin/initdb -D "$PGD" -U postgres --pwfile="$W/pgpw" -A scram-sha-256 >/dev/null
	printf 'local all all trust\nhost all app 127.0.0.1/32 scram-sha-256\nhost all postgres 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 reject\n' >"$PGD/pg_hba.conf"
	runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$PGD" -w -l "$W/pgsock/pg.log" \
		-o "-p 15432 -k $W/pgsock -c listen_addresses=127.0.0.1" start >/dev/null
	psql -h "$W/pgsock" -p 15432 -U postgres -q -c "create role app login password 'secret'" -c "create database app owner app" >/dev/null

	mkdir -p "$W/my"
	mariadb-install-db --user=root --datadir="$W/my" --auth-root-authentication-method=socket >/dev/null 2>&1
	mariadbd --user=root --datadir="$W/my" --port=13306 --bind-address=127.0.0.1 --socket="$W/my.sock" \
		--pid-file="$W/my.pid" --skip-name-resolve --log-error="$W/my.err" &
	PIDS="$PIDS $!"
	for _ in $(seq 50); do [ -S "$W/my.sock" ] && break; sleep 0.2; done
	mariadb -S "$W/my.sock" -uroot -e "create user app@'%' identified by 'secret'; create database app; grant all on app.* to app@'%';"

	redis-server --port 16379 --bind 127.0.0.1 --requirepass secret --save '' --appendonly no \
		--dir "$W" --unixsocket "$W/redis.sock" >"$W/redis.log" 2>&1 &
	PIDS="$PIDS $!"
	sleep 0.5

	# The Go drivers, in a throwaway module through the Go module proxy.
	mkdir -p "$W/drv" && cp "$HERE/drivers.go.txt" "$W/drv/main.go" && printf 'module example.com/drv\n\ngo 1.22\n' >"$W/drv/go.mod"
	(cd "$W/drv" && go get github.com/jackc/pgx/v5 github.com/redis/go-redis/v9 github.com/go-sql-driver/mysql >/dev/null 2>&1 && go build -o drv .) ||
		echo "capture.sh: could not build the Go drivers" >&2
}

sec_db() {
	start_db
	export PGCONNECT_TIMEOUT=3
	silent 15499
	blackhole 15498
	fresh
	ver psql --version
	cap psql-refused $DB tcp_reachable:127.0.0.1:5432 psql -h 127.0.0.1 -p 5432 -U app -c 'select 1'
	cap psql-refused-port $DB tcp_reachable:127.0.0.1:15433 psql "postgresql://app:secret@127.0.0.1:15433/app" -c 'select 1'
	cap psql-auth-failed $DB "" psql "postgresql://app:wrong@127.0.0.1:15432/app" -c 'select 1'
	cap psql-unknown-db $DB "" psql "postgresql://app:secret@127.0.0.1:15432/nosuchdb" -c 'select 1'
	cap psql-hba-reject $DB "" psql "postgresql://nobody:x@127.0.0.1:15432/app" -c 'select 1'
	cap psql-unknown-role-socket $DB "" psql -h "$W/pgsock" -p 15432 -U nosuchrole app -c 'select 1'
	cap psql-missing-socket $DB file_exists:/tmp/nosuchdir/.s.PGSQL.5432 psql -h /tmp/nosuchdir -p 5432 -U app -c 'select 1'
	cap psql-timeout $DB tcp_reachable:127.0.0.1:15499 psql "host=127.0.0.1 port=15499 user=app dbname=app connect_timeout=2" -c 'select 1'
	cap psql-connect-timeout $DB tcp_reachable:127.0.0.1:15498 psql "host=127.0.0.1 port=15498 user=app dbname=app connect_timeout=2" -c 'select 1'
	cap psql-relation-missing "" "" psql "postgresql://app:secret@127.0.0.1:15432/app" -v ON_ERROR_STOP=1 -c 'select * from users'
	cap psql-syntax-error "" "" psql "postgresql://app:secret@127.0.0.1:15432/app" -v ON_ERROR_STOP=1 -c 'selec 1'
	cap psql-unique-violation "" "" psql "postgresql://app:secret@127.0.0.1:15432/app" -v ON_ERROR_STOP=1 -c 'create temp table t(id int primary key); insert into t values (1), (1)'
	ver pg_isready --version
	cap pg-isready-refused $DB tcp_reachable:127.0.0.1:5432 pg_isready -h 127.0.0.1 -p 5432
	cap pg-isready-timeout $DB tcp_reachable:127.0.0.1:15498 pg_isready -h 127.0.0.1 -p 15498 -t 2

	ver mariadb --version
	cap mysql-access-denied $DB "" mariadb -h 127.0.0.1 -P 13306 -u app -pwrong app -e 'select 1'
	cap mysql-unknown-db $DB "" mariadb -h 127.0.0.1 -P 13306 -u app -psecret nosuchdb -e 'select 1'
	cap mysql-refused $DB "" mariadb -h 127.0.0.1 -P 3306 -u app -psecret app -e 'select 1'
	cap mysql-missing-socket $DB file_exists:/tmp/nosuchdir/mysqld.sock mariadb -S /tmp/nosuchdir/mysqld.sock -u app -psecret app -e 'select 1'
	cap mysql-timeout $DB "" mariadb -h 127.0.0.1 -P 15499 --connect-timeout=2 -u app -psecret app -e 'select 1'
	cap mysql-table-missing "" "" mariadb -h 127.0.0.1 -P 13306 -u app -psecret app -e 'select * from users'
	cap mysql-syntax-error "" "" mariadb -h 127.0.0.1 -P 13306 -u app -psecret app -e 'selec 1'
	cap mysqladmin-refused $DB "" mariadb-admin -h 127.0.0.1 -P 3306 -u app -psecret ping

	ver redis-cli --version
	cap redis-cli-refused $DB tcp_reachable:127.0.0.1:6379 redis-cli -h 127.0.0.1 -p 6379 ping
	cap redis-cli-noauth $DB "" redis-cli -h 127.0.0.1 -p 16379 ping
	cap redis-cli-wrongpass $DB "" redis-cli -h 127.0.0.1 -p 16379 --no-auth-warning -a wrong ping
	cap redis-cli-missing-socket $DB file_exists:/tmp/nosuchdir/redis.sock redis-cli -s /tmp/nosuchdir/redis.sock ping
	cap redis-cli-wrongtype "" "" redis-cli -h 127.0.0.1 -p 16379 --no-auth-warning -a secret eval "redis.call('set','k','v'); return redis.call('lpush','k','x')" 0

	ver sh -c 'cd "$0" && go list -m github.com/jackc/pgx/v5' "$W/drv"
	cap go-pgx-refused $DB tcp_reachable:127.0.0.1:5432 "$W/drv/drv" pgx "postgres://app:secret@127.0.0.1:5432/app"
	cap go-pgx-auth $DB "" "$W/drv/drv" pgx "postgres://app:wrong@127.0.0.1:15432/app"
	cap go-pgx-unknown-db $DB "" "$W/drv/drv" pgx "postgres://app:secret@127.0.0.1:15432/nosuchdb"
	cap go-pgx-timeout $DB tcp_reachable:127.0.0.1:15498 "$W/drv/drv" pgx "postgres://app:secret@127.0.0.1:15498/app?connect_timeout=2"
	cap go-pgx-refused-port $DB tcp_reachable:127.0.0.1:15433 "$W/drv/drv" pgx "postgres://app:secret@127.0.0.1:15433/app"
	ver sh -c 'cd "$0" && go list -m github.com/go-sql-driver/mysql' "$W/drv"
	cap go-mysql-refused $DB tcp_reachable:127.0.0.1:3306 "$W/drv/drv" mysql "app:secret@tcp(127.0.0.1:3306)/app"
	cap go-mysql-access-denied $DB "" "$W/drv/drv" mysql "app:wrong@tcp(127.0.0.1:13306)/app"
	cap go-mysql-unknown-db $DB "" "$W/drv/drv" mysql "app:secret@tcp(127.0.0.1:13306)/nosuchdb"
	ver sh -c 'cd "$0" && go list -m github.com/redis/go-redis/v9' "$W/drv"
	cap go-redis-refused $DB tcp_reachable:127.0.0.1:6379 "$W/drv/drv" redis "redis://127.0.0.1:6379/0"
	cap go-redis-noauth $DB "" "$W/drv/drv" redis "redis://127.0.0.1:16379/0"
	cap go-redis-wrongpass $DB "" "$W/drv/drv" redis "redis://:wrong@127.0.0.1:16379/0"
	cap go-redis-timeout "" "" "$W/drv/drv" redis "redis://127.0.0.1:15499/0"

	ver $PY -c 'import psycopg2; print("psycopg2", psycopg2.__version__)'
	cap python-psycopg2-refused $DB tcp_reachable:127.0.0.1:5432 $PY -c 'import psycopg2
psycopg2.connect("host=127.0.0.1 port=5432 user=app password=secret dbname=app")'
	cap python-psycopg2-auth $DB "" $PY -c 'import psycopg2
psycopg2.connect("host=127.0.0.1 port=15432 user=app password=wrong dbname=app")'
	cap python-psycopg2-unknown-db $DB "" $PY -c 'import psycopg2
psycopg2.connect("host=127.0.0.1 port=15432 user=app password=secret dbname=nosuchdb")'
	cap python-psycopg2-missing-socket $DB file_exists:/tmp/nosuchdir/.s.PGSQL.5432 $PY -c 'import psycopg2
psycopg2.connect(host="/tmp/nosuchdir", dbname="app", user="app")'
	cap python-psycopg2-undefined-table "" "" $PY -c 'import psycopg2
c = psycopg2.connect("host=127.0.0.1 port=15432 user=app password=secret dbname=app")
c.cursor().execute("select * from users")'
	fresh
	printf 'import psycopg2\n\n\ndef test_db():\n    psycopg2.connect("host=127.0.0.1 port=5432 user=app password=secret dbname=app")\n' >test_db.py
	cap pytest-psycopg2-refused $DB tcp_reachable:127.0.0.1:5432 $PY -m pytest -q -p no:cacheprovider test_db.py
	ver $PY -c 'import redis; print("redis-py", redis.__version__)'
	cap python-redis-refused $DB tcp_reachable:127.0.0.1:6379 $PY -c 'import redis
redis.Redis(host="127.0.0.1", port=6379).ping()'
	cap python-redis-auth $DB "" $PY -c 'import redis
redis.Redis(host="127.0.0.1", port=16379, password="wrong").ping()'
	cap python-redis-noauth $DB "" $PY -c 'import redis
redis.Redis(host="127.0.0.1", port=16379).ping()'
	ver $PY -c 'import pymysql; print("PyMySQL", pymysql.__version__)'
	cap python-pymysql-refused $DB "" $PY -c 'import pymysql
pymysql.connect(host="127.0.0.1", port=3306, user="app", password="secret", database="app")'
	cap python-pymysql-access-denied $DB "" $PY -c 'import pymysql
pymysql.connect(host="127.0.0.1", port=13306, user="app", password="wrong", database="app")'

	needjs
	export NODE_PATH=$JSTOOLS/node_modules
	ver node -e 'console.log("pg " + require("pg/package.json").version)'
	fresh
	printf 'const { Client } = require("pg");\n(async () => { const c = new Client(process.argv[2]); await c.connect(); await c.query("select 1"); await c.end(); })();\n' >pg.js
	cap node-pg-refused $DB tcp_reachable:127.0.0.1:5432 node pg.js "postgresql://app:secret@127.0.0.1:5432/app"
	cap node-pg-auth $DB "" node pg.js "postgresql://app:wrong@127.0.0.1:15432/app"
	cap node-pg-unknown-db $DB "" node pg.js "postgresql://app:secret@127.0.0.1:15432/nosuchdb"
	ver node -e 'console.log("ioredis " + require("ioredis/package.json").version)'
	printf 'const Redis = require("ioredis");\nconst r = new Redis(process.argv[2], { maxRetriesPerRequest: 0, retryStrategy: () => null });\nr.ping().then(() => r.quit());\n' >redis.js
	cap node-ioredis-refused $DB tcp_reachable:127.0.0.1:6379 node redis.js "redis://127.0.0.1:6379"
	cap node-ioredis-noauth $DB "" node redis.js "redis://127.0.0.1:16379"
	ver node -e 'console.log("mysql2 " + require("mysql2/package.json").version)'
	printf 'const mysql = require("mysql2/promise");\n(async () => { const c = await mysql.createConnection(process.argv[2]); await c.end(); })();\n' >my.js
	cap node-mysql2-refused $DB tcp_reachable:127.0.0.1:3306 node my.js "mysql://app:secret@127.0.0.1:3306/app"
	cap node-mysql2-access-denied $DB "" node my.js "mysql://app:wrong@127.0.0.1:13306/app"

	# Servers that cannot start: their port is taken.
	ver /usr/lib/postgresql/15/bin/postgres --version
	mkdir -p "$W/pg2" && chown postgres "$W/pg2"
	runuser -u postgres -- /usr/lib/postgresql/15/bin/initdb -D "$W/pg2" -U postgres -A trust >/dev/null
	cap postgres-port-in-use $PORT port_free:15432 timeout 10 runuser -u postgres -- /usr/lib/postgresql/15/bin/postgres -D "$W/pg2" -p 15432 -k "$W/pg2" -c listen_addresses=127.0.0.1
	ver redis-server --version
	cap redis-server-port-in-use $PORT port_free:16379 timeout 5 redis-server --port 16379 --bind 127.0.0.1 --save '' --dir "$W"
	ver mariadbd --version
	mkdir -p "$W/my2" && mariadb-install-db --user=root --datadir="$W/my2" >/dev/null 2>&1
	cap mariadb-port-in-use $PORT port_free:13306 timeout 20 mariadbd --user=root --datadir="$W/my2" --port=13306 --bind-address=127.0.0.1 --socket="$W/my2.sock" --pid-file="$W/my2.pid" --skip-grant-tables
}

sec_ports() {
	ver go version
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\t"net"\n\t"net/http"\n)\n\nfunc main() {\n\tl, _ := net.Listen("tcp", ":18083")\n\tdefer l.Close()\n\tlog.Fatal(http.ListenAndServe(":18083", nil))\n}\n' >main.go
	cap go-http-port-in-use $PORT port_free:18083 go run .
	ver $PY --version
	cap python-http-server-in-use $PORT port_free:18084 sh -c '"$0" -m http.server 18084 --bind 127.0.0.1 >/dev/null 2>&1 & p=$!; sleep 1; "$0" -m http.server 18084 --bind 127.0.0.1; rc=$?; kill $p; exit $rc' $PY
	ver node --version
	printf 'const http = require("http");\nconst a = http.createServer().listen(18085, "127.0.0.1", () => {\n  http.createServer().listen(18085, "127.0.0.1");\n});\n' >srv.js
	cap node-http-eaddrinuse $PORT port_free:18085 timeout 5 node srv.js
}

sec_neg() {
	ver go version
	fresh; gomod
	printf 'package main\n\nfunc main() {\n\tvar m map[string]int\n\tm["a"] = 1\n}\n' >main.go
	cap go-panic-nil-map "" "" go run .
	printf 'package main\n\ntype T struct{ n int }\n\nfunc main() {\n\tvar t *T\n\tprintln(t.n)\n}\n' >main.go
	cap go-nil-deref "" "" go run .
	fresh; gomod
	printf 'package m\n\nimport "testing"\n\nfunc TestIndex(t *testing.T) {\n\ts := []int{1}\n\ti := 3\n\t_ = s[i]\n}\n' >m_test.go
	cap go-test-panic "" "" go test ./...
	fresh; gomod
	printf 'package m\n\nimport (\n\t"sync"\n\t"testing"\n)\n\nfunc TestRace(t *testing.T) {\n\tn := 0\n\tvar wg sync.WaitGroup\n\tfor i := 0; i < 2; i++ {\n\t\twg.Add(1)\n\t\tgo func() { defer wg.Done(); n++ }()\n\t}\n\twg.Wait()\n\t_ = n\n}\n' >m_test.go
	cap go-test-race "" "" go test -race -count=1 ./...
	fresh; gomod
	printf 'package m\n\nimport (\n\t"testing"\n\t"time"\n)\n\nfunc TestSlow(t *testing.T) { time.Sleep(10 * time.Second) }\n' >m_test.go
	cap go-test-timeout "" "" go test -count=1 -timeout 2s ./...
	fresh; gomod
	if oomcg; then
		printf 'package m\n\nimport "testing"\n\nfunc TestBig(t *testing.T) {\n\tvar b [][]byte\n\tfor i := 0; i < 64; i++ {\n\t\tb = append(b, make([]byte, 16<<20))\n\t\tfor j := range b[i] {\n\t\t\tb[i][j] = 1\n\t\t}\n\t}\n}\n' >m_test.go
		printf '#!/bin/sh\necho $$ >"%s/cgroup.procs"\nexec "$@"\n' "$CG" >"$W/incg" && chmod +x "$W/incg"
		cap go-test-oom-killed "" "" go test -count=1 -exec "$W/incg" ./...
		rmdir "$CG" 2>/dev/null
	fi
	fresh; gomod
	printf 'package main\n\nfunc main() {\n\tch := make(chan int)\n\t<-ch\n}\n' >main.go
	cap go-deadlock "" "" go run .
	printf 'package main\n\nimport (\n\t"log"\n\t"net/http"\n)\n\nfunc main() {\n\tif _, err := http.Get("http://127.0.0.1:18099/health"); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	cap go-http-refused "" "" go run .
	printf 'package main\n\nimport (\n\t"log"\n\t"net/http"\n\t"time"\n)\n\nfunc main() {\n\tc := http.Client{Timeout: 2 * time.Second}\n\tif _, err := c.Get("http://127.0.0.1:15497/health"); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	silent 15497
	cap go-http-timeout "" "" go run .
	printf 'package main\n\nimport "flag"\n\nfunc main() { flag.Parse() }\n' >main.go
	cap go-flag-undefined "" "" go run . -nosuchflag
	printf 'package main\n\nfunc main() {\n\tvar b [][]byte\n\tfor {\n\t\tb = append(b, make([]byte, 64<<20))\n\t}\n}\n' >main.go
	go build -o oom . 2>/dev/null
	cap go-out-of-memory "" "" sh -c 'ulimit -v 1000000; ./oom'
	ver curl --version
	cap curl-timeout "" "" curl -sS --max-time 2 http://127.0.0.1:15497/
	ver bash --version
	cap bash-exit-status "" "" bash -c 'echo "running migrations"; echo "migration 0042 failed: duplicate column name"; exit 3'
}

# sec_fresh: captured after the rules were written, to measure them on
# output no one had looked at (see the report of that batch).
sec_fresh() {
	need /usr/bin/python3 python3
	needjs
	export NODE_PATH=$JSTOOLS/node_modules
	ver go version
	fresh; gomod
	printf 'package m\n\nimport "testing"\n\nfunc TestJoin(t *testing.T) {\n\tgot, want := "a-b", "a,b"\n\tif got != want {\n\t\tt.Errorf("Join:\\n got: %%q\\nwant: %%q", got, want)\n\t}\n}\n' >m_test.go
	cap fresh-go-test-multiline $TEST "" go test ./...
	fresh; gomod
	printf 'package main\n\nimport "strings"\n\nfunc main() { _ = strings.Reverse("x") }\n' >main.go
	cap fresh-go-undefined-func $TYPE "" go build ./...
	fresh; gomod
	printf 'package main\n\nimport "sync"\n\ntype C struct {\n\tmu sync.Mutex\n\tn  int\n}\n\nfunc show(c C) int { return c.n }\n\nfunc main() { show(C{}) }\n' >main.go
	cap fresh-go-vet-copylocks $LINT "" go vet ./...
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\t"os"\n)\n\nfunc main() {\n\tif _, ok := os.LookupEnv("S3_BUCKET"); !ok {\n\t\tlog.Fatalf("required environment variable %%s is not set", "S3_BUCKET")\n\t}\n}\n' >main.go
	cap fresh-go-lookupenv $ENV env_var_present:S3_BUCKET go run .
	fresh; gomod
	printf 'package main\n\nimport (\n\t"database/sql"\n\t"log"\n)\n\nfunc main() {\n\tif _, err := sql.Open("postgres", "postgres://localhost/app"); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	cap fresh-go-sql-unknown-driver $DEP "" go run .
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\t"net"\n)\n\nfunc main() {\n\tif _, err := net.Dial("tcp", "127.0.0.1:27017"); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	cap fresh-go-dial-mongo $DB tcp_reachable:127.0.0.1:27017 go run .

	ver $PY --version
	fresh
	printf 'def test_sum():\n    assert 0.1 + 0.2 == 0.4\n' >test_f.py
	cap fresh-pytest-float $TEST "" $PY -m pytest -q -p no:cacheprovider test_f.py
	cap fresh-python-import-yaml-missing $DEP "" $PY -c 'import yaml_missing_pkg'
	cap fresh-python-env-systemexit $ENV env_var_present:SENTRY_DSN $PY -c 'import os, sys
if "SENTRY_DSN" not in os.environ:
    sys.exit("error: the SENTRY_DSN environment variable is not set")'
	cap fresh-python-json-decode "" "" $PY -c 'import json
json.loads("{oops")'
	cap fresh-python-import-name "" "" $PY -c 'from os.path import joinx'
	cap fresh-python-sys-exit "" "" $PY -c 'import sys
sys.exit("deployment aborted: 3 checks failed")'
	printf 'class A:\n    x: int = 0\n\n\nA().y = 1\n' >attr.py
	ver mypy --version
	cap fresh-mypy-attr $TYPE "" mypy --no-incremental --cache-dir=/dev/null attr.py

	ver node --version
	fresh
	printf 'const assert = require("assert");\nassert.deepStrictEqual({a: [1, 2]}, {a: [1, 3]});\n' >d.js
	cap fresh-node-deep-equal $TEST "" node d.js
	printf 'require("@acme/sdk-missing");\n' >s.js
	cap fresh-node-scoped-missing $DEP "" node s.js
	printf 'require("http").get("http://127.0.0.1:18098/", r => r.resume());\n' >h.js
	cap fresh-node-http-refused "" "" node h.js
	printf 'if (!process.env.DATABASE_URL) { console.error("DATABASE_URL is not defined"); process.exit(1); }\n' >e.js
	cap fresh-node-env-not-defined $ENV env_var_present:DATABASE_URL node e.js
	printf 'Promise.reject(new Error("boom: upstream returned 502"));\n' >p.js
	cap fresh-node-unhandled-rejection "" "" node p.js
	ver "$J/jest" --version
	printf '{"name":"x","version":"1.0.0"}\n' >package.json
	printf 'function parse(s) { return Number(s); }\ntest("rejects", () => { expect(() => parse("x")).toThrow(); });\n' >t.test.js
	cap fresh-jest-tothrow $TEST "" "$J/jest" --ci --no-cache t.test.js
	ver "$J/tsc" --version
	printf 'const n: number = 1;\nconst s: string = n;\nexport {};\n' >a.ts
	cap fresh-tsc-assign $TYPE "" "$J/tsc" --noEmit --strict a.ts

	ver cargo --version
	fresh; cargo new -q --vcs none app >/dev/null 2>&1
	printf 'fn main() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn differs() { assert_ne!(1 + 1, 2); }\n}\n' >app/src/main.rs
	cap fresh-rust-assert-ne $TEST "" sh -c 'cd app && cargo test --offline -q'
	printf '#[tokio::main]\nasync fn main() {}\n' >app/src/main.rs
	cap fresh-rust-undeclared-crate $DEP "" sh -c 'cd app && cargo build --offline -q'

	ver javac -version
	fresh
	printf 'public class M {\n  public static void main(String[] a) {\n    String s = "x";\n    s.reverse();\n  }\n}\n' >M.java
	cap fresh-javac-no-method $TYPE "" javac M.java
	printf 'public class I {\n  public static void main(String[] a) {\n    int[] x = new int[2];\n    System.out.println(x[3]);\n  }\n}\n' >I.java
	javac I.java 2>/dev/null
	cap fresh-java-index "" "" java I
	J4=/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar
	printf 'import org.junit.Test;\nimport static org.junit.Assert.*;\npublic class TTest {\n  @Test public void positive() { assertTrue("should be positive", -1 > 0); }\n}\n' >TTest.java
	javac -cp $J4 TTest.java
	ver sh -c 'ls /usr/share/java/junit4-*.jar | sed "s|.*/||"'
	cap fresh-junit4-asserttrue $TEST "" java -cp .:$J4 org.junit.runner.JUnitCore TTest

	ver bash --version
	fresh
	printf '#!/bin/bash\nset -e\necho "deploying"\ndocker-compose-missing up -d\n' >deploy.sh; chmod +x deploy.sh
	cap fresh-bash-script-command-missing $DEP command_exists:docker-compose-missing ./deploy.sh
	ver make --version
	mkdir sub; printf 'all:\n\t$(MAKE) -C sub build\n' >Makefile; printf 'test:\n\ttrue\n' >sub/Makefile
	cap fresh-make-submake-no-rule $CONF "" make
	ver shellcheck --version
	printf 'echo "no shebang"\nrm -rf $DIR/*\n' >x.sh
	cap fresh-shellcheck-no-shebang $LINT "" shellcheck -f gcc x.sh
	ver curl --version
	cap fresh-curl-404 "" "" sh -c '"$0" -m http.server 18097 --bind 127.0.0.1 >/dev/null 2>&1 & p=$!; sleep 1; curl -sS --fail http://127.0.0.1:18097/missing; rc=$?; kill $p; exit $rc' $PY

	ver psql --version
	cap fresh-psycopg2-refused-port $DB tcp_reachable:127.0.0.1:15433 $PY -c 'import psycopg2
psycopg2.connect("host=127.0.0.1 port=15433 user=app dbname=app connect_timeout=3")'
	ver redis-cli --version
	cap fresh-redis-cli-refused-port $DB tcp_reachable:127.0.0.1:16390 redis-cli -p 16390 ping
	ver mariadb --version
	cap fresh-mysql-default-socket $DB file_exists:/run/mysqld/mysqld.sock mariadb -u app app -e 'select 1'
	ver pg_isready --version
	cap fresh-pg-isready-port $DB tcp_reachable:127.0.0.1:15433 pg_isready -h 127.0.0.1 -p 15433
}

# sec_round2: a second batch written and captured after every rule above,
# with the expected tags written before the classifier saw the output, to
# measure the rules on shapes they were not written from.
sec_round2() {
	start_db
	need gradle gradle
	need /usr/share/java/postgresql.jar libpostgresql-jdbc-java
	need /usr/share/java/mariadb-java-client.jar libmariadb-java
	$PY -c 'import requests' 2>/dev/null || need /usr/lib/python3/dist-packages/requests python3-requests
	$PY -c 'import sqlalchemy' 2>/dev/null || need /usr/lib/python3/dist-packages/sqlalchemy python3-sqlalchemy
	$PY -c 'import pyflakes' 2>/dev/null || need /usr/lib/python3/dist-packages/pyflakes python3-pyflakes
	needjs
	[ -x "$J/mocha" ] && [ -d "$JSTOOLS/node_modules/redis" ] ||
		(cd "$JSTOOLS" && npm install --no-audit --no-fund mocha redis >/dev/null 2>&1) ||
		echo "capture.sh: could not install mocha and redis" >&2
	export NODE_PATH=$JSTOOLS/node_modules
	silent 15499
	blackhole 15498

	ver go version
	fresh; gomod
	printf 'package m\n\nimport (\n\t"testing"\n\n\t"github.com/stretchr/testify/assert"\n)\n\nfunc TestTotal(t *testing.T) {\n\tassert.Equal(t, 42, 6*7+1, "total of the order")\n}\n' >m_test.go
	go get github.com/stretchr/testify@v1.9.0 >/dev/null 2>&1 && go mod tidy >/dev/null 2>&1
	cap round2-go-testify-equal $TEST "" go test ./...
	fresh; gomod
	printf 'package main\n\nfunc main() {\n\tcount := 3\n}\n' >main.go
	cap round2-go-declared-not-used $TYPE "" go build ./...
	fresh; gomod
	printf 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tfmt.Printf("%%d files\\n", os.Args[0])\n}\n' >main.go
	cap round2-go-vet-printf $LINT "" go vet ./...
	fresh; gomod
	printf 'package main\n\nimport "github.com/google/uuid"\n\nfunc main() { _ = uuid.New() }\n' >main.go
	cap round2-go-goproxy-off $DEP "" env GOPROXY=off GOFLAGS=-mod=mod go build ./...
	go get github.com/google/uuid@v1.6.0 >/dev/null 2>&1
	sed -i 's/h1:[A-Za-z0-9+\/]*=/h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=/' go.sum
	cap round2-go-checksum-mismatch $CONF "" env GOFLAGS=-mod=mod GOPATH="$W/gopath2" go build ./...
	fresh; gomod
	printf 'package main\n\nimport (\n\t"database/sql"\n\t"log"\n\n\t_ "github.com/lib/pq"\n)\n\nfunc main() {\n\tdb, err := sql.Open("postgres", "host=127.0.0.1 port=15433 user=app password=secret dbname=app sslmode=disable")\n\tif err != nil {\n\t\tlog.Fatal(err)\n\t}\n\tif err := db.Ping(); err != nil {\n\t\tlog.Fatalf("ping: %%v", err)\n\t}\n}\n' >main.go
	go get github.com/lib/pq@v1.10.9 >/dev/null 2>&1
	go build -o pq . >/dev/null 2>&1
	# This, round2-go-mysql-timeout and round2-node-redis-refused print an
	# address and a refusal or a timeout and name no database, as a plain
	# HTTP service would: no tag. A timeout that names no address, no check.
	cap round2-go-lib-pq-refused "" "" ./pq
	cap round2-go-mysql-timeout "" "" "$W/drv/drv" mysql "app:secret@tcp(127.0.0.1:15498)/app?timeout=2s"
	fresh; gomod
	printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tb := []byte("abc")\n\tn := len(b) + 2\n\tfmt.Println(string(b[:n]))\n}\n' >main.go
	cap round2-go-slice-bounds "" "" go run .
	fresh; gomod
	printf 'package m\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestCharge(t *testing.T) {\n\tkey := os.Getenv("PAYMENTS_API_KEY")\n\tif key == "" {\n\t\tt.Fatal("PAYMENTS_API_KEY must be set to run the payment tests")\n\t}\n}\n' >m_test.go
	cap round2-go-test-env-fatal $ENV env_var_present:PAYMENTS_API_KEY go test ./...

	ver $PY --version
	fresh
	cap round2-python-requests-refused "" "" $PY -c 'import requests
requests.get("http://127.0.0.1:18099/status", timeout=3)'
	cap round2-python-sqlalchemy-refused $DB tcp_reachable:127.0.0.1:15433 $PY -c 'import sqlalchemy
sqlalchemy.create_engine("postgresql+psycopg2://app:secret@127.0.0.1:15433/app").connect()'
	cap round2-python-redis-timeout $DB "" $PY -c 'import redis
redis.Redis(host="127.0.0.1", port=15498, socket_connect_timeout=2).ping()'
	cap round2-python-sqlite-no-table "" "" $PY -c 'import sqlite3
sqlite3.connect(":memory:").execute("select * from orders")'
	cap round2-python-asyncio-timeout "" "" $PY -c 'import asyncio
async def main():
    await asyncio.wait_for(asyncio.sleep(5), 1)
asyncio.run(main())'
	printf 'import unittest\n\n\nclass PriceTest(unittest.TestCase):\n    def test_discount(self):\n        self.assertEqual(round(100 * 0.85), 80)\n' >test_price.py
	ver $PY -m pytest --version
	cap round2-pytest-unittest-assertequal $TEST "" $PY -m pytest -q -p no:cacheprovider test_price.py
	printf 'import os\nimport sys\n\n\ndef main():\n    return undefined_name\n' >lint_me.py
	ver $PY -m pyflakes --version
	cap round2-python-pyflakes $LINT "" $PY -m pyflakes lint_me.py
	printf '[MASTER]\nno-such-option=yes\n' >pylintrc
	ver pylint --version
	cap round2-pylint-bad-option "$CONF, $LINT" "" pylint --rcfile=pylintrc lint_me.py
	printf 'import yaml\n\nprint(yaml.safe_load("a: 1"))\n' >y.py
	ver mypy --version
	cap round2-mypy-missing-stubs $DEP "" mypy --no-incremental --cache-dir=/dev/null y.py

	ver node --version
	fresh
	printf '{"name":"x","version":"1.0.0"}\n' >package.json
	printf 'const assert = require("assert");\ndescribe("cart", () => {\n  it("sums prices", () => {\n    assert.strictEqual([1, 2, 3].reduce((a, b) => a + b), 7);\n  });\n});\n' >cart.test.js
	ver "$J/mocha" --version
	cap round2-mocha-fail $TEST "" "$J/mocha" cart.test.js
	printf 'const { createClient } = require("redis");\nconst c = createClient({ url: "redis://127.0.0.1:16390", socket: { reconnectStrategy: false } });\nc.on("error", () => {});\nc.connect().then(() => c.ping()).catch(e => { console.error(e); process.exit(1); });\n' >r.js
	ver node --version
	cap round2-node-redis-refused "" "" node r.js
	printf 'const mysql = require("mysql2/promise");\nmysql.createConnection({ host: "127.0.0.1", port: 13306, user: "app", password: "secret", database: "reports" })\n  .then(c => c.end()).catch(e => { console.error(e); process.exit(1); });\n' >m.js
	cap round2-node-mysql2-unknown-db $DB "" node m.js
	printf 'fetch("http://127.0.0.1:15499/", { signal: AbortSignal.timeout(1000) }).catch(e => { console.error(e); process.exit(1); });\n' >t.js
	cap round2-node-abort-timeout "" "" node t.js
	printf 'const sizes = new Array(-1);\n' >a.js
	cap round2-node-range-error "" "" node a.js
	ver "$J/tsc" --version
	printf 'export const x = 1;\n' >index.ts
	printf '{\n  "compilerOptions": { "strict": true },\n  "include": ["*.ts"]\n' >tsconfig.json
	cap round2-tsc-tsconfig-syntax $CONF "" "$J/tsc" --noEmit -p tsconfig.json
	printf '{\n  "compilerOptions": { "strict": true },\n  "files": ["src/main.ts"]\n}\n' >tsconfig.json
	cap round2-tsc-file-not-found $CONF "" "$J/tsc" --noEmit -p tsconfig.json
	ver npm --version
	cap round2-npm-ci-no-lock $CONF "" npm ci --offline --no-audit --no-fund

	ver cargo --version
	fresh; cargo new -q --vcs none app >/dev/null 2>&1
	printf 'fn main() {\n    println!("{}", total);\n}\n' >app/src/main.rs
	cap round2-rust-cannot-find-value $TYPE "" sh -c 'cd app && cargo build --offline -q'
	printf 'pub fn check(n: i32) -> i32 { n }\nfn main() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    #[should_panic]\n    fn rejects_negative() { super::check(-1); }\n}\n' >app/src/main.rs
	cap round2-rust-should-panic $TEST "" sh -c 'cd app && cargo test --offline -q'
	printf 'fn depth(n: u64) -> u64 { if n == 0 { 0 } else { 1 + depth(n + 1) } }\nfn main() { println!("{}", depth(1)); }\n' >app/src/main.rs
	cap round2-rust-stack-overflow "" "" sh -c 'cd app && cargo run --offline -q'

	ver javac -version
	fresh
	printf 'public class Q {\n  public static void main(String[] a) {\n    System.out.println(total);\n  }\n}\n' >Q.java
	cap round2-javac-cannot-find-symbol $TYPE "" javac Q.java
	printf 'import java.sql.*;\npublic class Pg {\n  public static void main(String[] a) throws Exception {\n    DriverManager.getConnection("jdbc:postgresql://127.0.0.1:15433/app", "app", "secret");\n  }\n}\n' >Pg.java
	ver java -version
	cap round2-jdbc-pg-refused $DB tcp_reachable:127.0.0.1:15433 java -cp /usr/share/java/postgresql.jar Pg.java
	printf 'import java.sql.*;\npublic class My {\n  public static void main(String[] a) throws Exception {\n    DriverManager.getConnection("jdbc:mariadb://127.0.0.1:13306/app", "app", "wrong");\n  }\n}\n' >My.java
	cap round2-jdbc-mariadb-auth $DB "" java -cp /usr/share/java/mariadb-java-client.jar My.java
	printf 'import java.net.URI;\nimport java.net.http.*;\nimport java.time.Duration;\npublic class T {\n  public static void main(String[] a) throws Exception {\n    HttpClient c = HttpClient.newHttpClient();\n    c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:15499/")).timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());\n  }\n}\n' >T.java
	cap round2-java-http-timeout "" "" java T.java

	ver sh -c 'gradle --version 2>/dev/null | grep "^Gradle"'
	fresh
	mkdir -p src/main/java src/test/java
	printf 'public class App { public static void main(String[] a) { new com.google.gson.Gson(); } }\n' >src/main/java/App.java
	printf "apply plugin: 'java'\nrepositories { mavenCentral() }\ndependencies { compile 'com.google.code.gson:gson:2.10.1' }\n" >build.gradle
	cap round2-gradle-offline-dependency $DEP "" gradle --offline -q --project-cache-dir "$W/gpc" -g "$W/gh" compileJava
	printf "apply plugin: 'java'\ndependencies {\n  compile 'com.google.code.gson:gson:2.10.1'\n" >build.gradle
	cap round2-gradle-script-error $CONF "" gradle --offline -q --project-cache-dir "$W/gpc" -g "$W/gh" compileJava
	printf "apply plugin: 'java'\n" >build.gradle
	cap round2-gradle-task-missing $CONF "" gradle --offline -q --project-cache-dir "$W/gpc" -g "$W/gh" integrationTest
	rm src/main/java/App.java
	printf 'import org.junit.Test;\nimport static org.junit.Assert.*;\npublic class CartTest {\n  @Test public void total() { assertEquals(7, 1 + 2 + 3); }\n}\n' >src/test/java/CartTest.java
	printf "apply plugin: 'java'\ndependencies { testCompile files('/usr/share/java/junit4.jar', '/usr/share/java/hamcrest-core.jar') }\n" >build.gradle
	cap round2-gradle-test-fail $TEST "" gradle --offline --project-cache-dir "$W/gpc" -g "$W/gh" test

	ver bash --version
	fresh
	printf '#!/usr/bin/env python4\nprint("hi")\n' >gen.py; chmod +x gen.py
	cap round2-env-interpreter-missing $DEP command_exists:python4 ./gen.py
	ver make --version
	printf '\techo building\nall:\n\techo done\n' >Makefile
	cap round2-make-recipe-before-target $CONF "" make
	printf 'ifndef API_URL\n$(error API_URL must be defined)\nendif\nall:\n\techo $(API_URL)\n' >Makefile
	cap round2-make-env-undefined $ENV env_var_present:API_URL make
	ver shellcheck --version
	printf '#!/bin/sh\nfor f in $(ls *.txt); do\n  cat $f | grep -c x\ndone\n' >count.sh
	cap round2-shellcheck-sc2045 $LINT "" shellcheck count.sh
	ver wget --version
	cap round2-wget-refused "" "" wget -O- -t 1 http://127.0.0.1:18099/health

	ver psql --version
	cap round2-pg-dump-refused $DB tcp_reachable:127.0.0.1:15433 pg_dump -h 127.0.0.1 -p 15433 -U app app
	ver mariadb --version
	cap round2-mariadb-handshake-timeout $DB "" mariadb -h 127.0.0.1 -P 15499 --connect-timeout=2 -u app app -e 'select 1'
	cap round2-mysqldump-access-denied $DB "" mariadb-dump -h 127.0.0.1 -P 13306 -u app -pwrong app
}

# sec_round3: a third batch, captured before the rules written from
# round2 were: other tools, other phrasings of the same causes.
sec_round3() {
	start_db
	need bats bats
	need yamllint yamllint
	need isort isort
	need nginx nginx-light
	$PY -m pip --version >/dev/null 2>&1 || need /usr/lib/python3/dist-packages/pip python3-pip
	$PY -c 'import pymongo' 2>/dev/null || need /usr/lib/python3/dist-packages/pymongo python3-pymongo
	needjs
	[ -x "$J/markdownlint" ] && [ -d "$JSTOOLS/node_modules/pg" ] ||
		(cd "$JSTOOLS" && npm install --no-audit --no-fund markdownlint-cli pg >/dev/null 2>&1) ||
		echo "capture.sh: could not install markdownlint-cli" >&2
	export NODE_PATH=$JSTOOLS/node_modules
	silent 15499
	blackhole 15498

	ver go version
	fresh; gomod
	printf 'package main\n\nimport "nosuchstdpkg"\n\nfunc main() { nosuchstdpkg.Run() }\n' >main.go
	cap round3-go-not-in-std $DEP "" go build ./...
	cap round3-go-unknown-version $DEP "" go get github.com/google/uuid@v9.9.9
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\n\t"github.com/kelseyhightower/envconfig"\n)\n\ntype Config struct {\n\tDatabaseURL string `envconfig:"DATABASE_URL" required:"true"`\n}\n\nfunc main() {\n\tvar c Config\n\tif err := envconfig.Process("", &c); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	go get github.com/kelseyhightower/envconfig@v1.4.0 >/dev/null 2>&1
	cap round3-go-envconfig-required $ENV env_var_present:DATABASE_URL go run .
	fresh; gomod
	printf 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tfmt.Println("hi")\n}\n' >main.go
	cap round3-go-imported-not-used $TYPE "" go build ./...
	printf 'package main\n\nfunc half(n int) int {\n\treturn n / 2, nil\n}\n\nfunc main() { half(2) }\n' >main.go
	cap round3-go-too-many-return $TYPE "" go build ./...
	printf 'package main\n\ntype User struct {\n\tName string `json:name`\n}\n\nfunc main() { _ = User{} }\n' >main.go
	cap round3-go-vet-structtag $LINT "" go vet ./...
	fresh; gomod
	printf '//go:build windows\n\npackage main\n\nfunc main() {}\n' >main.go
	cap round3-go-build-constraints $CONF "" go build .
	fresh; gomod
	printf 'package main\n\nimport "github.com/google/uuid"\n\nfunc main() { _ = uuid.New() }\n' >main.go
	go get github.com/google/uuid@v1.6.0 >/dev/null 2>&1 && go mod vendor >/dev/null 2>&1
	printf 'module example.com/m\n\ngo 1.22\n\nrequire github.com/google/uuid v1.5.0\n' >go.mod
	cap round3-go-inconsistent-vendoring $CONF "" go build ./...
	fresh; gomod
	printf 'package main\n\nfunc main() {\n\tpanic("unreachable: order state machine")\n}\n' >main.go
	cap round3-go-panic-custom "" "" go run .
	printf 'package main\n\nimport (\n\t"log"\n\t"net/http"\n)\n\nfunc main() {\n\tr, err := http.Get("http://127.0.0.1:18096/")\n\tif err != nil {\n\t\tlog.Fatal(err)\n\t}\n\tif r.StatusCode != 200 {\n\t\tlog.Fatalf("unexpected status %%s", r.Status)\n\t}\n}\n' >main.go
	cap round3-go-http-503 "" "" sh -c '"$0" -c "import http.server as h
class H(h.BaseHTTPRequestHandler):
    def do_GET(self): self.send_error(503)
    def log_message(self, *a): pass
h.HTTPServer((\"127.0.0.1\", 18096), H).serve_forever()" & p=$!; sleep 1; go run .; rc=$?; kill $p; exit $rc' $PY
	ver "$W/drv/drv" 2>/dev/null; VER=$(go version)
	cap round3-go-pgx-unknown-host $DB "" "$W/drv/drv" pgx "postgres://app:secret@nosuchhost.invalid:5432/app"

	ver gcc --version
	fresh
	printf 'const char *greet(void) { return "hi"; }\n' >greet.c
	printf '#include <stdio.h>\nconst char *greet(void);\nint main(void) { puts(greet()); return 0; }\n' >main.c
	gcc -shared -fPIC -o libgreet.so greet.c && gcc -o app main.c -L. -lgreet && rm libgreet.so
	cap round3-shared-library-missing $DEP "" ./app

	ver $PY --version
	fresh
	cap round3-python-distribution-not-found $DEP "" $PY -c 'import pkg_resources
pkg_resources.require("acme-billing-sdk")'
	cap round3-python-package-not-found $DEP "" $PY -c 'from importlib.metadata import version
print(version("acme-billing-sdk"))'
	cap round3-python-please-set-env $ENV env_var_present:OPENAI_API_KEY $PY -c 'import os
if not os.environ.get("OPENAI_API_KEY"):
    raise RuntimeError("Please set the OPENAI_API_KEY environment variable")'
	cap round3-python-value-error "" "" $PY -c 'int("12a")'
	cap round3-python-permission-denied "" "" $PY -c 'open("/proc/1/mem", "rb").read(1)'
	cap round3-python-bind-in-use $PORT port_free:18086 $PY -c 'import asyncio, socket
s = socket.socket(); s.bind(("127.0.0.1", 18086)); s.listen()
async def main():
    await asyncio.start_server(lambda r, w: None, "127.0.0.1", 18086)
asyncio.run(main())'
	cap round3-pymongo-refused $DB tcp_reachable:127.0.0.1:27017 $PY -c 'import pymongo
pymongo.MongoClient("mongodb://127.0.0.1:27017", serverSelectionTimeoutMS=1500).admin.command("ping")'
	ver $PY -m pytest --version
	cap round3-pytest-path-missing $CONF file_exists:tests/unit $PY -m pytest -q -p no:cacheprovider tests/unit
	printf 'from typing import List\n\nxs: List[int] = [1, "two"]\n' >l.py
	ver mypy --version
	cap round3-mypy-list-item $TYPE "" mypy --no-incremental --cache-dir=/dev/null l.py
	printf 'import sys\nimport os\n\nprint(os.sep, sys.argv)\n' >unsorted.py
	ver isort --version-number
	cap round3-isort-check $LINT "" isort --check-only --diff unsorted.py
	printf 'key: value\nlist:\n- a\n-   b\nkey: again\n' >c.yaml
	ver yamllint --version
	cap round3-yamllint $LINT "" yamllint c.yaml
	ver $PY -m pip --version
	cap round3-pip-externally-managed $CONF "" $PY -m pip install --no-index --no-build-isolation .
	cap round3-pip-not-a-project $CONF "" $PY -m pip install --no-index --break-system-packages .

	ver node --version
	fresh
	printf '{"name":"x","version":"1.0.0"}\n' >package.json
	printf 'const { Client } = require("pg");\nnew Client({ host: "127.0.0.1", port: 15498, user: "app", database: "app", connectionTimeoutMillis: 1500 }).connect().catch(e => { console.error(e); process.exit(1); });\n' >pg.js
	cap round3-node-pg-timeout $DB "" node pg.js
	printf 'const o = undefined;\nconsole.log(o.total);\n' >u.js
	cap round3-node-undefined-read "" "" node u.js
	printf 'test("sum", () => { expect(1 + 1).toBe(2); });\n' >s.test.js
	ver "$J/jest" --version
	cap round3-jest-config-invalid $CONF "" "$J/jest" --ci --no-cache --config '{"testMatch": 5}'
	printf '# Title\nSome text\n## Skipped level\n' >README.md
	ver "$J/markdownlint" --version
	cap round3-markdownlint $LINT "" "$J/markdownlint" README.md
	ver "$J/tsc" --version
	printf 'export function f(a: number) {\n  const unused = 1;\n  return a;\n}\n' >f.ts
	cap round3-tsc-unused-local $TYPE "" "$J/tsc" --noEmit --noUnusedLocals f.ts
	ver npm --version
	fresh
	printf '{"name":"x","version":"1.0.0","dependencies":{"left-pad":"^1.3.0"}}\n' >package.json
	printf '{"name":"x","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"x","version":"1.0.0"}}}\n' >package-lock.json
	cap round3-npm-ci-out-of-sync $CONF "" npm ci --no-audit --no-fund
	rm package-lock.json
	cap round3-npm-no-matching-version $DEP "" npm install --no-audit --no-fund --no-save left-pad@99.0.0

	ver cargo --version
	fresh; cargo new -q --vcs none app >/dev/null 2>&1
	printf 'fn main() {\n    let s = String::from("a");\n    let t = s;\n    println!("{} {}", s, t);\n}\n' >app/src/main.rs
	cap round3-rust-borrow-moved $TYPE "" sh -c 'cd app && cargo build --offline -q'
	printf 'fn main() {\n    println!("{}", env!("BUILD_SHA"));\n}\n' >app/src/main.rs
	cap round3-rust-env-compile-time $ENV env_var_present:BUILD_SHA sh -c 'cd app && cargo build --offline -q'
	printf 'fn main() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn in_range() { let n = 12; assert!(n < 10, "n = {} is out of range", n); }\n}\n' >app/src/main.rs
	# assert!(cond, msg) prints only msg: the output cannot tell it from a
	# panic, so it gets no tag (as rust-test-unwrap-panic).
	cap round3-rust-assert-message "" "" sh -c 'cd app && cargo test --offline -q'
	printf 'fn main() {\n    let l = std::net::TcpListener::bind("127.0.0.1:18088").unwrap();\n    let _m = std::net::TcpListener::bind("127.0.0.1:18088").unwrap();\n    drop(l);\n}\n' >app/src/main.rs
	cap round3-rust-bind-in-use $PORT "" sh -c 'cd app && cargo run --offline -q'
	printf 'fn main() {\n    let v: Vec<u8> = vec![200, 100];\n    let s: u8 = v.iter().sum();\n    println!("{}", s);\n}\n' >app/src/main.rs
	cap round3-rust-overflow-panic "" "" sh -c 'cd app && cargo run --offline -q'
	cap round3-cargo-locked-stale $CONF "" sh -c 'cd app && cargo generate-lockfile --offline -q && sed -i "s/^version = \"0.1.0\"/version = \"0.2.0\"/" Cargo.toml && cargo build --offline --locked -q'

	ver javac -version
	fresh
	printf 'public class R {\n  static int f(int n) {\n    if (n > 0) return 1;\n  }\n  public static void main(String[] a) {}\n}\n' >R.java
	cap round3-javac-missing-return $TYPE "" javac R.java
	ver java -version
	printf 'public class D {\n  public static void main(String[] a) throws Exception {\n    Class.forName("org.postgresql.Driver");\n  }\n}\n' >D.java
	cap round3-java-driver-class-missing $DEP "" java D.java
	printf 'import java.sql.*;\npublic class N {\n  public static void main(String[] a) throws Exception {\n    DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/app", "app", "secret");\n  }\n}\n' >N.java
	cap round3-java-no-suitable-driver $DEP "" java N.java
	printf 'import java.sql.*;\npublic class Mr {\n  public static void main(String[] a) throws Exception {\n    DriverManager.getConnection("jdbc:mariadb://127.0.0.1:13399/app", "app", "secret");\n  }\n}\n' >Mr.java
	cap round3-jdbc-mariadb-refused $DB tcp_reachable:127.0.0.1:13399 java -cp /usr/share/java/mariadb-java-client.jar Mr.java
	printf 'import java.net.*;\npublic class B {\n  public static void main(String[] a) throws Exception {\n    ServerSocket s = new ServerSocket(18089);\n    new ServerSocket(18089);\n  }\n}\n' >B.java
	cap round3-java-bind-in-use $PORT "" java B.java
	printf 'public class Z {\n  public static void main(String[] a) {\n    int n = 0;\n    System.out.println(10 / n);\n  }\n}\n' >Z.java
	cap round3-java-arithmetic "" "" java Z.java
	ver mvn -v
	printf '<project>\n  <modelVersion>4.0.0</modelVersion>\n  <groupId>x</groupId>\n  <artifactId>app</artifactId>\n  <version>1.0</version>\n</project>\n' >pom.xml
	cap round3-mvn-unknown-phase $CONF "" mvn -B -o -Dmaven.repo.local="$W/m2" verifyy

	ver bats --version
	fresh
	printf '@test "adds" {\n  result="$((2 + 2))"\n  [ "$result" -eq 5 ]\n}\n' >add.bats
	cap round3-bats-fail $TEST "" bats add.bats
	ver bash --version
	cap round3-bash-param-required $ENV env_var_present:DEPLOY_KEY bash -c ': "${DEPLOY_KEY:?DEPLOY_KEY is required to deploy}"'
	cap round3-bash-deploy-failed "" "" bash -c 'echo "uploading artifact"; echo "ERROR: deploy failed after 3 attempts" >&2; exit 1'
	cap round3-timeout-silent "" "" timeout 1 sleep 5
	ver nginx -v
	mkdir -p ng && printf 'pid %s/ng/pid;\nerror_log stderr;\nevents {}\nhttp {\n  access_log off;\n  server { listen 127.0.0.1:18087; }\n}\n' "$W/case" >ng/nginx.conf
	cap round3-nginx-bind-in-use $PORT port_free:18087 sh -c '"$0" -m http.server 18087 --bind 127.0.0.1 >/dev/null 2>&1 & p=$!; sleep 1; nginx -p "$PWD/ng" -c "$PWD/ng/nginx.conf" -g "daemon off;"; rc=$?; kill $p; exit $rc' $PY

	ver psql --version
	cap round3-psql-unknown-host $DB "" psql -h nosuchhost.invalid -U app app -c 'select 1'
	ver mariadb --version
	cap round3-mariadb-unknown-host $DB "" mariadb -h nosuchhost.invalid -u app app -e 'select 1'
	ver redis-cli --version
	cap round3-redis-cli-unknown-host $DB "" redis-cli -h nosuchhost.invalid ping
}

# sec_round4: a fourth batch, captured before any rule was written from
# it: Ruby, PHP, pyright, more drivers, and more phrasings.
sec_round4() {
	start_db
	need ruby ruby
	need rspec ruby-rspec
	need bundle bundler
	need php php-cli
	need phpunit phpunit
	need /usr/share/php/PDO php-mysql
	need shfmt shfmt
	need /usr/lib/ruby/vendor_ruby/pg.rb ruby-pg
	need /usr/lib/ruby/vendor_ruby/mysql2.rb ruby-mysql2
	need /usr/lib/ruby/vendor_ruby/redis.rb ruby-redis
	$PY -c 'import hypothesis' 2>/dev/null || need /usr/lib/python3/dist-packages/hypothesis python3-hypothesis
	$PY -c 'import asyncpg' 2>/dev/null || need /usr/lib/python3/dist-packages/asyncpg python3-asyncpg
	needjs
	[ -x "$J/pyright" ] && [ -d "$JSTOOLS/node_modules/mongodb" ] && [ -d "$JSTOOLS/node_modules/dotenv-safe" ] && [ -d "$JSTOOLS/node_modules/eslint-formatter-compact" ] ||
		(cd "$JSTOOLS" && npm install --no-audit --no-fund pyright mongodb dotenv-safe eslint-formatter-compact >/dev/null 2>&1) ||
		echo "capture.sh: could not install pyright, mongodb, dotenv-safe" >&2
	export NODE_PATH=$JSTOOLS/node_modules

	ver ruby --version
	fresh
	cap round4-ruby-load-error $DEP "" ruby -e 'require "nokogiri_missing"'
	cap round4-ruby-env-fetch $ENV env_var_present:STRIPE_API_KEY ruby -e 'ENV.fetch("STRIPE_API_KEY")'
	cap round4-ruby-zero-division "" "" ruby -e 'puts 10 / 0'
	cap round4-ruby-nomethod-nil "" "" ruby -e 'user = nil; puts user.name'
	cap round4-ruby-pg-refused $DB tcp_reachable:127.0.0.1:15433 ruby -e 'require "pg"; PG.connect(host: "127.0.0.1", port: 15433, user: "app", dbname: "app")'
	cap round4-ruby-mysql2-auth $DB "" ruby -e 'require "mysql2"; Mysql2::Client.new(host: "127.0.0.1", port: 13306, username: "app", password: "wrong")'
	cap round4-ruby-redis-refused $DB tcp_reachable:127.0.0.1:16390 ruby -e 'require "redis"; Redis.new(host: "127.0.0.1", port: 16390).ping'
	cap round4-ruby-bind-in-use $PORT port_free:18090 ruby -e 'require "socket"; a = TCPServer.new("127.0.0.1", 18090); TCPServer.new("127.0.0.1", 18090)'
	printf 'RSpec.describe "cart" do\n  it "sums" do\n    expect([1, 2, 3].sum).to eq(7)\n  end\nend\n' >cart_spec.rb
	ver rspec --version
	cap round4-rspec-fail $TEST "" rspec --no-color cart_spec.rb
	printf 'require "minitest/autorun"\nclass CartTest < Minitest::Test\n  def test_sum\n    assert_equal 7, [1, 2, 3].sum\n  end\nend\n' >cart_test.rb
	ver ruby --version
	cap round4-minitest-fail $TEST "" ruby cart_test.rb
	printf 'source "https://rubygems.org"\ngem "rails_missing_gem", "9.9.9"\n' >Gemfile
	ver bundle --version
	cap round4-bundler-gem-missing $DEP "" bundle exec ruby -e 1

	ver php --version
	fresh
	printf '<?php\nuse PHPUnit\\Framework\\TestCase;\nfinal class CartTest extends TestCase {\n  public function testSum(): void { $this->assertSame(7, array_sum([1, 2, 3])); }\n}\n' >CartTest.php
	ver phpunit --version
	cap round4-phpunit-fail $TEST "" phpunit CartTest.php
	ver php --version
	cap round4-php-pdo-refused $DB "" php -r 'new PDO("mysql:host=127.0.0.1;port=13399;dbname=app", "app", "secret");'
	cap round4-php-division-by-zero "" "" php -r 'echo intdiv(1, 0);'

	ver $PY --version
	fresh
	printf 'def add(a, b):\n    """\n    >>> add(2, 2)\n    5\n    """\n    return a + b\n' >calc.py
	cap round4-python-doctest $TEST "" $PY -m doctest calc.py
	printf 'from hypothesis import given, strategies as st\n\n\n@given(st.integers())\ndef test_abs(n):\n    assert abs(n) == n\n' >test_h.py
	ver $PY -m pytest --version
	cap round4-pytest-hypothesis $TEST "" $PY -m pytest -q -p no:cacheprovider test_h.py
	ver $PY --version
	cap round4-asyncpg-refused $DB tcp_reachable:127.0.0.1:5432 $PY -c 'import asyncio, asyncpg
asyncio.run(asyncpg.connect(host="127.0.0.1", port=5432, user="app"))'
	cap round4-python-not-provided $ENV env_var_present:SLACK_WEBHOOK_URL $PY -c 'import os, sys
url = os.environ.get("SLACK_WEBHOOK_URL")
if not url:
    print("fatal: SLACK_WEBHOOK_URL not provided", file=sys.stderr)
    sys.exit(2)'
	printf 'def greet(name: str) -> str:\n    return name\n\n\ngreet(42)\n' >g.py
	ver "$J/pyright" --version
	cap round4-pyright-arg-type $TYPE "" "$J/pyright" g.py

	ver node --version
	fresh
	printf '{"name":"x","version":"1.0.0"}\n' >package.json
	printf 'const { MongoClient } = require("mongodb");\nnew MongoClient("mongodb://127.0.0.1:27017", { serverSelectionTimeoutMS: 1500 }).connect().catch(e => { console.error(e); process.exit(1); });\n' >mongo.js
	cap round4-node-mongodb-refused $DB tcp_reachable:127.0.0.1:27017 node mongo.js
	printf 'API_URL=\nSESSION_SECRET=\n' >.env.example
	printf 'API_URL=http://localhost\n' >.env
	printf 'require("dotenv-safe").config();\n' >env.js
	cap round4-node-dotenv-safe $ENV env_var_present:SESSION_SECRET node env.js
	printf 'if (!process.env.SENTRY_DSN) throw new Error("process.env.SENTRY_DSN is undefined");\n' >dsn.js
	cap round4-node-process-env-undefined $ENV env_var_present:SENTRY_DSN node dsn.js
	printf 'export default [{ rules: { "no-unused-vars": "error" } }];\n' >eslint.config.mjs
	printf 'const unused = 1;\n' >u.js
	ver "$J/eslint" --version
	cap round4-eslint-compact $LINT "" "$J/eslint" --format compact u.js
	printf '{"compilerOptions":{"types":["node_missing"],"noEmit":true},"files":["u.ts"]}\n' >tsconfig.json
	printf 'export const n = 1;\n' >u.ts
	ver "$J/tsc" --version
	cap round4-tsc-types-missing $DEP "" "$J/tsc" -p tsconfig.json

	ver go version
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\t"os"\n)\n\nfunc main() {\n\tif os.Getenv("DATABASE_URL") == "" {\n\t\tlog.Fatal("DATABASE_URL not provided")\n\t}\n}\n' >main.go
	cap round4-go-env-not-provided $ENV env_var_present:DATABASE_URL go run .
	printf 'package main\n\nimport _ "embed"\n\n//go:embed templates/index.html\nvar index string\n\nfunc main() { println(index) }\n' >main.go
	cap round4-go-embed-missing $CONF "" go build ./...
	fresh; gomod
	printf 'package m\n\nimport "testing"\n\nfunc TestSum(t *testing.T) {\n\tassert.Equal(t, 7, 1+2+3)\n}\n' >m_test.go
	cap round4-go-test-undefined $TYPE "" go test ./...
	fresh; gomod
	printf 'package main\n\nimport (\n\t"context"\n\t"log"\n\t"time"\n\n\t"go.mongodb.org/mongo-driver/mongo"\n\t"go.mongodb.org/mongo-driver/mongo/options"\n)\n\nfunc main() {\n\tctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)\n\tdefer cancel()\n\tc, err := mongo.Connect(ctx, options.Client().ApplyURI("mongodb://127.0.0.1:27017").SetServerSelectionTimeout(1500*time.Millisecond))\n\tif err != nil {\n\t\tlog.Fatal(err)\n\t}\n\tif err := c.Ping(ctx, nil); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	go get go.mongodb.org/mongo-driver@v1.17.1 >/dev/null 2>&1 && go mod tidy >/dev/null 2>&1
	cap round4-go-mongo-refused $DB tcp_reachable:127.0.0.1:27017 go run .
	fresh; gomod
	printf 'package main\n\nimport (\n\t"database/sql"\n\t"log"\n\n\t_ "github.com/lib/pq"\n)\n\nfunc main() {\n\tdb, _ := sql.Open("postgres", "host=127.0.0.1 port=15432 user=app password=secret dbname=app sslmode=require")\n\tif err := db.Ping(); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	go get github.com/lib/pq@v1.10.9 >/dev/null 2>&1
	cap round4-go-pq-ssl $DB "" go run .
	fresh; gomod
	printf 'package main\n\nimport (\n\t"context"\n\t"log"\n)\n\nfunc main() {\n\tctx, cancel := context.WithCancel(context.Background())\n\tcancel()\n\tif err := ctx.Err(); err != nil {\n\t\tlog.Fatalf("sync aborted: %%v", err)\n\t}\n}\n' >main.go
	cap round4-go-context-canceled "" "" go run .

	ver cargo --version
	fresh; cargo new -q --vcs none app >/dev/null 2>&1
	cap round4-cargo-no-bin $CONF "" sh -c 'cd app && cargo run --offline -q --bin server'
	cap round4-rust-linker-missing $DEP command_exists:cc-missing sh -c 'cd app && RUSTFLAGS="-C linker=cc-missing" cargo build --offline -q'

	ver java -version
	fresh
	cap round4-java-jarfile-missing $CONF file_exists:build/libs/app.jar java -jar build/libs/app.jar
	printf 'public class P {\n  public static void main(String[] a) { Integer.parseInt("12a"); }\n}\n' >P.java
	cap round4-java-number-format "" "" java P.java

	ver shfmt --version
	printf 'if [ -f x ]; then\necho hi\nfi\n' >f.sh
	cap round4-shfmt-diff $LINT "" shfmt -d f.sh
	ver createdb --version
	cap round4-createdb-denied "" "" env PGPASSWORD=secret createdb -h 127.0.0.1 -p 15432 -U app app
	ver curl --version
	cap round4-curl-502 "" "" sh -c '"$0" -c "import http.server as h
class H(h.BaseHTTPRequestHandler):
    def do_GET(self): self.send_error(502)
    def log_message(self, *a): pass
h.HTTPServer((\"127.0.0.1\", 18095), H).serve_forever()" & p=$!; sleep 1; curl -sS --fail http://127.0.0.1:18095/api; rc=$?; kill $p; exit $rc' $PY
}

# sec_round5: a fifth batch, captured before any rule was written from it:
# for each tag, causes from several ecosystems, some the rules
# were written for from the tools' documentation and some not (Perl,
# PHP_CodeSniffer, perlcritic, configparser, pip check).
sec_round5() {
	start_db
	need perlcritic libperl-critic-perl
	need phpcs php-codesniffer
	need rubocop rubocop
	need /usr/share/php/PDO php-pgsql
	need /usr/lib/ruby/vendor_ruby/dotenv.rb ruby-dotenv
	need /usr/lib/ruby/vendor_ruby/active_record.rb ruby-activerecord
	$PY -c 'import decouple' 2>/dev/null || need /usr/lib/python3/dist-packages/decouple.py python3-decouple
	needjs
	[ -d "$JSTOOLS/node_modules/envalid" ] && [ -d "$JSTOOLS/node_modules/env-var" ] && [ -x "$J/jasmine" ] && [ -x "$J/tape" ] ||
		(cd "$JSTOOLS" && npm install --no-audit --no-fund envalid env-var jasmine tape >/dev/null 2>&1) ||
		echo "capture.sh: could not install envalid, env-var, jasmine, tape" >&2
	export NODE_PATH=$JSTOOLS/node_modules

	# missing_env_var
	ver $PY --version
	fresh
	cap round5-python-decouple $ENV env_var_present:SECRET_KEY $PY -c 'from decouple import config
config("SECRET_KEY")'
	ver node --version
	printf 'const { cleanEnv, str } = require("envalid");\ncleanEnv(process.env, { API_KEY: str() });\n' >a.js
	cap round5-node-envalid $ENV env_var_present:API_KEY node a.js
	printf 'const env = require("env-var");\nenv.get("REDIS_URL").required().asString();\n' >b.js
	cap round5-node-env-var $ENV env_var_present:REDIS_URL node b.js
	ver ruby --version
	# Debian's dotenv has no require_keys: a plain NoMethodError, no tag.
	cap round5-ruby-undefined-method "" "" ruby -e 'require "dotenv"; Dotenv.require_keys("MAILER_HOST")'
	ver bash --version
	cap round5-bash-missing-token $ENV env_var_present:GITHUB_TOKEN bash -c 'if [ -z "${GITHUB_TOKEN:-}" ]; then echo "error: missing GITHUB_TOKEN" >&2; exit 1; fi'
	ver go version
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\n\t"github.com/caarlos0/env/v11"\n)\n\ntype Config struct {\n\tToken string `env:"SLACK_TOKEN,required"`\n}\n\nfunc main() {\n\tvar c Config\n\tif err := env.Parse(&c); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	go get github.com/caarlos0/env/v11@v11.3.1 >/dev/null 2>&1
	cap round5-go-caarlos0-env $ENV env_var_present:SLACK_TOKEN go run .

	# missing_dependency
	ver php --version
	fresh
	cap round5-php-composer-autoload $DEP "" php -r 'require __DIR__ . "/vendor/autoload.php";'
	cap round5-php-class-not-found $DEP "" php -r 'new GuzzleHttp\Client();'
	ver perl --version
	cap round5-perl-module-missing $DEP "" perl -e 'use JSON::XS_Missing;'
	ver $PY -m pip --version
	cap round5-pip-check $DEP "" $PY -m pip check
	ver npm --version
	cap round5-npx-missing $DEP "" npx --no-install tsx-missing-cli index.ts

	# type_error
	ver ruby --version
	cap round5-ruby-type-error $TYPE "" ruby -e 'puts "total: " + 42'
	ver php --version
	cap round5-php-type-error $TYPE "" php -r 'declare(strict_types=1); function f(int $n) { return $n; } f("4");'
	ver go version
	fresh; gomod
	printf 'package main\n\ntype Number interface{ ~int | ~float64 }\n\nfunc Sum[T Number](xs []T) T {\n\tvar s T\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s\n}\n\nfunc main() { _ = Sum([]string{"a"}) }\n' >main.go
	cap round5-go-generic-constraint $TYPE "" go build ./...
	ver javac -version
	fresh
	printf 'import java.util.*;\npublic class G {\n  public static void main(String[] a) {\n    List<String> l = new ArrayList<>();\n    l.add(3);\n  }\n}\n' >G.java
	cap round5-javac-generic $TYPE "" javac G.java

	# lint_error
	ver rubocop --version
	fresh
	printf 'def Total(a,b)\n  return a+b\nend\n' >t.rb
	cap round5-rubocop $LINT "" rubocop --no-color --cache false t.rb
	ver perlcritic --version
	printf 'open(FH, "<x.txt");\nprint <FH>;\n' >x.pl
	cap round5-perlcritic $LINT "" perlcritic --gentle x.pl
	ver phpcs --version
	printf '<?php\nfunction f($a){return $a;}\n' >f.php
	cap round5-phpcs $LINT "" phpcs --standard=PSR12 --no-colors f.php
	ver staticcheck -version
	fresh; gomod
	printf 'package main\n\nimport "strings"\n\nfunc main() {\n\tif strings.Index("abc", "b") != -1 {\n\t\tprintln("found")\n\t}\n}\n' >main.go
	cap round5-staticcheck-simple $LINT "" staticcheck ./...

	# test_assertion_failed
	ver sh -c 'grep "\"version\"" "$0/node_modules/jasmine/package.json"' "$JSTOOLS"
	fresh
	printf '{"name":"x","version":"1.0.0"}\n' >package.json
	mkdir -p spec && printf 'describe("cart", () => {\n  it("sums", () => { expect(1 + 2 + 3).toBe(7); });\n});\n' >spec/cart.spec.js
	cap round5-jasmine-fail $TEST "" "$J/jasmine" spec/cart.spec.js
	printf 'const test = require("tape");\ntest("sums", t => { t.equal(1 + 2 + 3, 7); t.end(); });\n' >t.js
	ver sh -c 'cat "$0"/node_modules/tape/package.json | grep "\"version\""' "$JSTOOLS"
	cap round5-tape-fail $TEST "" node t.js
	ver perl --version
	printf 'use Test::More tests => 1;\nis(1 + 2 + 3, 7, "sums");\n' >t.t
	cap round5-perl-test-more $TEST "" prove t.t
	ver go version
	fresh; gomod
	printf 'package m\n\nimport (\n\t"errors"\n\t"testing"\n\n\t"github.com/stretchr/testify/require"\n)\n\nfunc TestSave(t *testing.T) {\n\terr := errors.New("disk quota exceeded")\n\trequire.NoError(t, err)\n}\n' >m_test.go
	go get github.com/stretchr/testify@v1.9.0 >/dev/null 2>&1 && go mod tidy >/dev/null 2>&1
	cap round5-go-require-noerror $TEST "" go test ./...

	# build_config_error
	ver ruby --version
	fresh
	cap round5-ruby-file-missing $CONF file_exists:config/database.yml ruby -e 'File.read("config/database.yml")'
	ver php --version
	cap round5-php-file-missing $CONF file_exists:config/app.ini php -r 'if (file_get_contents("config/app.ini") === false) exit(1);'
	ver $PY --version
	printf '[server]\nport = 8080\n' >app.ini
	cap round5-python-configparser-section $CONF "" $PY -c 'import configparser
c = configparser.ConfigParser(); c.read("app.ini"); c.get("database", "url")'
	ver perl --version
	cap round5-perl-file-missing $CONF file_exists:etc/app.conf perl -e 'open(my $f, "<", "etc/app.conf") or die "Cannot open etc/app.conf: $!\n";'

	# port_in_use
	ver php --version
	cap round5-php-server-in-use $PORT port_free:18091 sh -c '"$0" -m http.server 18091 --bind 127.0.0.1 >/dev/null 2>&1 & p=$!; sleep 1; timeout 5 php -S 127.0.0.1:18091; rc=$?; kill $p; exit $rc' $PY
	ver perl --version
	cap round5-perl-bind-in-use $PORT "" perl -MIO::Socket::INET -e 'my $a = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 18092, Listen => 1, ReuseAddr => 1) or die; IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 18092, Listen => 1) or die "bind: $!\n";'

	# db_connection_failed
	ver $PY --version
	cap round5-python-sqlite-cannot-open $DB "" $PY -c 'import sqlite3
sqlite3.connect("/nonexistent-dir/app.db")'
	ver php --version
	cap round5-php-pdo-pgsql-refused $DB tcp_reachable:127.0.0.1:15433 php -r 'new PDO("pgsql:host=127.0.0.1;port=15433;dbname=app", "app", "secret");'
	ver ruby --version
	cap round5-activerecord-refused $DB tcp_reachable:127.0.0.1:15433 ruby -e 'require "active_record"; ActiveRecord::Base.establish_connection(adapter: "postgresql", host: "127.0.0.1", port: 15433, database: "app", username: "app"); ActiveRecord::Base.connection.execute("select 1")'
	ver node --version
	printf 'const mysql = require("mysql2/promise");\nmysql.createConnection({ host: "127.0.0.1", port: 3306, user: "app" }).catch(e => { console.error(e); process.exit(1); });\n' >my.js
	cap round5-node-mysql2-default-port $DB tcp_reachable:127.0.0.1:3306 node my.js

	# no tag
	ver perl --version
	cap round5-perl-die "" "" perl -e 'die "invalid manifest: expected 3 entries, got 2\n"'
	ver ruby --version
	cap round5-ruby-raise "" "" ruby -e 'raise ArgumentError, "quantity must be positive"'
	ver php --version
	cap round5-php-exception "" "" php -r 'throw new RuntimeException("payment gateway declined the charge");'
	ver node --version
	cap round5-node-build-failed "" "" node -e 'console.error("build failed: 2 bundles exceeded the size budget"); process.exit(1)'
	ver go version
	fresh; gomod
	printf 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tfmt.Fprintln(os.Stderr, "migrate: dirty database version 42. Fix and force version.")\n\tos.Exit(1)\n}\n' >main.go
	cap round5-go-migrate-dirty "" "" go run .
}

# sec_round6: a sixth batch, captured and labelled before any rule was
# written from it (the families issue): C and C++ toolchains (gcc, g++,
# clang, clang++, ld, make, pkg-config, CMake, Meson, ctest, cppcheck,
# clang-tidy), package managers beyond npm, pip and cargo (pnpm, yarn,
# poetry, esbuild, Terraform), other wordings of ports and refused
# connections (Django, gunicorn, psycopg 3, go-redis, "Address already in
# use" without the port), variables named only inside structured errors
# (zod, pydantic, os.getenv, os.environ in pytest), and tools a new user
# tries (ava, xo, JUnit 4, Python's SyntaxError). Registries that must be
# unreachable are pointed at 127.0.0.1:9, so nothing leaves the machine.
needr6() {
	need clang clang
	need clang-tidy clang-tidy
	need cmake cmake
	need meson meson
	need ninja ninja-build
	need cppcheck cppcheck
	need pkg-config pkg-config
	need gunicorn gunicorn
	need poetry python3-poetry
	need /usr/share/java/junit4.jar junit4
	need /usr/share/java/hamcrest-core.jar libhamcrest-java
	$PY -c 'import django' 2>/dev/null || need /usr/lib/python3/dist-packages/django python3-django
	$PY -c 'import psycopg' 2>/dev/null || need /usr/lib/python3/dist-packages/psycopg python3-psycopg
	$PY -c 'import psycopg2' 2>/dev/null || need /usr/lib/python3/dist-packages/psycopg2 python3-psycopg2
	$PY -c 'import pydantic' 2>/dev/null || need /usr/lib/python3/dist-packages/pydantic python3-pydantic
	$PY -c 'import pytest' 2>/dev/null || need /usr/lib/python3/dist-packages/pytest python3-pytest
	needjs
	for m in pnpm yarn zod esbuild ava xo; do
		[ -d "$JSTOOLS/node_modules/$m" ] && continue
		(cd "$JSTOOLS" && npm install --no-audit --no-fund pnpm yarn zod esbuild ava xo >/dev/null 2>&1) ||
			echo "capture.sh: could not install pnpm, yarn, zod, esbuild, ava, xo" >&2
		break
	done
	command -v terraform >/dev/null 2>&1 || echo "capture.sh: terraform is not installed (not in Debian): its cases are skipped" >&2
}
# jsver PKG: the version of an npm package in $JSTOOLS.
jsver() { VER="$1 $(node -p "require('$JSTOOLS/node_modules/$1/package.json').version")"; }
# hold PORT CMD...: run CMD while a Python HTTP server holds PORT on 127.0.0.1.
hold() {
	local port=$1
	shift
	$PY -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1 &
	local p=$!
	sleep 1
	"$@"
	local rc=$?
	kill $p 2>/dev/null
	wait $p 2>/dev/null
	return $rc
}
# An unreachable registry or index: nothing listens on the discard port.
DEAD=http://127.0.0.1:9

sec_round6() {
	needr6
	export NODE_PATH=$JSTOOLS/node_modules

	# C and C++: gcc, g++, clang, clang++, ld, make
	ver gcc --version
	fresh
	printf '#include <curl/curl.h>\n\nint main(void) { return curl_global_init(0); }\n' >net.c
	cap round6-gcc-missing-header $DEP "" gcc -c net.c
	printf '#include "config.h"\n\nint main(void) { return VERSION_MAJOR; }\n' >main.c
	cap round6-gcc-missing-local-header $CONF "" gcc -c main.c
	printf 'int main(void) { return 0; }\n' >ok.c
	cap round6-gcc-ld-cannot-find $DEP "" gcc ok.c -o ok -lcurlmissing
	printf '#include <math.h>\n\nint main(int argc, char **argv) { return (int)cos((double)argc); }\n' >m.c
	cap round6-gcc-undefined-libm $CONF "" gcc m.c -o m
	printf 'int helper(int);\n\nint main(void) { return helper(2); }\n' >h.c
	cap round6-gcc-undefined-own $CONF "" gcc h.c -o h
	printf '#include <stdio.h>\n\nint main(void) {\n\tint unused = 3;\n\tprintf("hi\\n");\n\treturn 0;\n}\n' >w.c
	cap round6-gcc-werror-unused $LINT "" gcc -Wall -Werror -c w.c
	printf 'struct point { int x, y; };\n\nint main(void) {\n\tstruct point p = 5;\n\treturn p.x;\n}\n' >s.c
	cap round6-gcc-incompatible-init $TYPE "" gcc -c s.c
	printf 'static int add(int a, int b) { return a + b; }\n\nint main(void) { return add(1); }\n' >a.c
	cap round6-gcc-too-few-args $TYPE "" gcc -c a.c
	ver g++ --version
	printf '#include <iostream>\n\nint main() {\n\tint n = "three";\n\tstd::cout << n << "\\n";\n}\n' >conv.cpp
	cap round6-gxx-invalid-conversion $TYPE "" g++ -c conv.cpp
	printf '#include <string>\n\nint twice(int n) { return 2 * n; }\n\nint main() {\n\tstd::string s = "4";\n\treturn twice(s);\n}\n' >call.cpp
	cap round6-gxx-cannot-convert $TYPE "" g++ -c call.cpp
	printf 'int main() {\n\treturn compute_total(3);\n}\n' >decl.cpp
	cap round6-gxx-not-declared $TYPE "" g++ -c decl.cpp
	ver clang --version
	cap round6-clang-missing-header $DEP "" clang -c net.c
	cap round6-clang-werror-unused $LINT "" clang -Wall -Werror -c w.c
	cap round6-clang-undefined-own $CONF "" clang h.c -o h
	ver clang++ --version
	cap round6-clangxx-conversion $TYPE "" clang++ -c conv.cpp
	ver make --version
	printf 'net.o: net.c\n\tgcc -c net.c -o net.o\n' >Makefile
	cap round6-make-gcc-missing-header $DEP "" make
	printf 'all:\n\t@echo "checking the bundle size"\n\t@false\n' >Makefile
	cap round6-make-recipe-false "" "" make
	ver pkg-config --version
	cap round6-pkg-config-missing $DEP "" pkg-config --cflags libmissingthing

	# C programs that fail at run time: a test's assert, a crash, a message
	ver gcc --version
	printf '#include <assert.h>\n\nstatic int add(int a, int b) { return a - b; }\n\nint main(void) {\n\tassert(add(2, 3) == 5);\n\treturn 0;\n}\n' >t.c
	gcc t.c -o t_add 2>/dev/null
	cap round6-c-assert $TEST "" ./t_add
	printf '#include <stddef.h>\n\nint main(void) {\n\tint *p = NULL;\n\treturn *p;\n}\n' >seg.c
	gcc seg.c -o seg 2>/dev/null
	cap round6-c-segfault "" "" sh -c './seg'
	printf '#include <stdio.h>\n\nint main(void) {\n\tfprintf(stderr, "fatal: manifest checksum mismatch (want 9f2c, got 11ab)\\n");\n\treturn 1;\n}\n' >msg.c
	gcc msg.c -o msg 2>/dev/null
	cap round6-c-fatal-message "" "" ./msg

	# cppcheck and clang-tidy
	ver cppcheck --version
	fresh
	printf 'int main(void) {\n\tint a[4];\n\ta[4] = 1;\n\treturn a[0];\n}\n' >bounds.c
	cap round6-cppcheck-bounds $LINT "" cppcheck --error-exitcode=1 --enable=warning bounds.c
	ver clang-tidy --version
	printf '#include <string.h>\n\nvoid copy(char *dst, const char *src) { strcpy(dst, src); }\n' >cp.c
	cap round6-clang-tidy-insecure $LINT "" clang-tidy --checks=-*,clang-analyzer-security.insecureAPI.strcpy --warnings-as-errors=* cp.c --

	# CMake, Meson, ctest
	ver cmake --version
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(fetcher C)\nfind_package(CURL REQUIRED)\nadd_executable(fetcher main.c)\n' >CMakeLists.txt
	printf 'int main(void) { return 0; }\n' >main.c
	cap round6-cmake-could-not-find $DEP "" cmake -S . -B build
	fresh
	cap round6-cmake-no-cmakelists $CONF "" cmake -S . -B build
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app C)\nadd_executable(app main.c\n' >CMakeLists.txt
	cap round6-cmake-parse-error $CONF "" cmake -S . -B build
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app C)\nadd_executable(app main.c)\n' >CMakeLists.txt
	printf '#include <zlib_missing.h>\n\nint main(void) { return 0; }\n' >main.c
	cmake -S . -B build >/dev/null 2>&1
	cap round6-cmake-build-missing-header $DEP "" cmake --build build
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(calc C)\nenable_testing()\nadd_executable(t_add t.c)\nadd_test(NAME add COMMAND t_add)\n' >CMakeLists.txt
	printf '#include <assert.h>\n\nstatic int add(int a, int b) { return a - b; }\n\nint main(void) {\n\tassert(add(2, 3) == 5);\n\treturn 0;\n}\n' >t.c
	cmake -S . -B build >/dev/null 2>&1 && cmake --build build >/dev/null 2>&1
	ver ctest --version
	cap round6-ctest-assert $TEST "" ctest --test-dir build --output-on-failure
	ver meson --version
	fresh
	printf "project('fetcher', 'c')\ncurl = dependency('libcurl')\nexecutable('fetcher', 'main.c', dependencies: curl)\n" >meson.build
	printf 'int main(void) { return 0; }\n' >main.c
	cap round6-meson-dependency $DEP "" meson setup build
	fresh
	printf "project('app', 'c')\nexecutable('app', 'main.c'\n" >meson.build
	printf 'int main(void) { return 0; }\n' >main.c
	cap round6-meson-syntax $CONF "" meson setup build

	# pnpm, yarn, esbuild
	jsver pnpm
	fresh
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	cap round6-pnpm-no-matching-version $DEP "" "$J/pnpm" add --store-dir "$W/pnpm-store" is-number@99.0.0
	cap round6-pnpm-missing-script $CONF "" "$J/pnpm" run build
	fresh
	printf '{"name":"app","version":"1.0.0","dependencies":{"is-number":"7.0.0"}}\n' >package.json
	"$J/pnpm" install --store-dir "$W/pnpm-store" >/dev/null 2>&1
	printf '{"name":"app","version":"1.0.0","dependencies":{"is-number":"7.0.0","is-odd":"3.0.1"}}\n' >package.json
	cap round6-pnpm-outdated-lockfile $CONF "" "$J/pnpm" install --frozen-lockfile --store-dir "$W/pnpm-store"
	fresh
	printf '{"name":"app","version":"1.0.0","dependencies":{"is-number":"7.0.0"}}\n' >package.json
	cap round6-pnpm-registry-unreachable $DEP "" timeout 120 "$J/pnpm" install --store-dir "$W/pnpm-store2" --registry "$DEAD/"
	jsver yarn
	fresh
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	cap round6-yarn-no-version $DEP "" "$J/yarn" add --cache-folder "$W/yarn-cache" is-number@99.0.0
	printf '{"name":"app","version":"1.0.0","engines":{"node":">=99"},"dependencies":{}}\n' >package.json
	cap round6-yarn-engine $CONF "" "$J/yarn" install --cache-folder "$W/yarn-cache"
	jsver esbuild
	fresh
	printf 'import mitt from "mitt";\nexport const bus = mitt();\n' >app.js
	cap round6-esbuild-could-not-resolve $DEP "" "$J/esbuild" app.js --bundle --outfile=out.js

	# poetry
	ver poetry --version
	fresh
	printf '[tool.poetry]\nname = "app"\nversion = "0.1.0"\ndescription = ""\nauthors = ["A <a@example.com>"]\n\n[tool.poetry.dependencies]\npython = "^3.11"\nrequests = "^2.31"\n\n[[tool.poetry.source]]\nname = "internal"\nurl = "http://127.0.0.1:9/simple/"\ndefault = true\n\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' >pyproject.toml
	cap round6-poetry-index-unreachable $DEP "" env POETRY_CACHE_DIR="$W/poetry-cache" poetry lock --no-interaction
	fresh
	printf '[tool.poetry]\nname = "app"\nversion = "0.1.0"\ndescription = ""\nauthors = ["A <a@example.com>"]\npackges = [{include = "app"}]\n\n[tool.poetry.dependencies]\npython = "^3.11"\n\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' >pyproject.toml
	cap round6-poetry-invalid-config $CONF "" env POETRY_CACHE_DIR="$W/poetry-cache" poetry lock --no-interaction
	fresh
	mkdir lib && printf '[tool.poetry]\nname = "lib"\nversion = "1.0.0"\ndescription = ""\nauthors = ["A <a@example.com>"]\n\n[tool.poetry.dependencies]\npython = ">=3.12"\n\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' >lib/pyproject.toml
	printf '[tool.poetry]\nname = "app"\nversion = "0.1.0"\ndescription = ""\nauthors = ["A <a@example.com>"]\n\n[tool.poetry.dependencies]\npython = "^3.11"\nlib = {path = "lib"}\n\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' >pyproject.toml
	cap round6-poetry-solving-failed $DEP "" env POETRY_CACHE_DIR="$W/poetry-cache" poetry lock --no-interaction

	# Terraform: providers from an unreachable mirror, validate, fmt
	if command -v terraform >/dev/null 2>&1; then
		ver terraform version
		fresh
		printf 'provider_installation {\n  network_mirror {\n    url = "https://127.0.0.1:9/providers/"\n  }\n}\n' >"$W/tf.rc"
		printf 'terraform {\n  required_providers {\n    random = {\n      source  = "hashicorp/random"\n      version = "~> 3.6"\n    }\n  }\n}\n\nresource "random_id" "suffix" {\n  byte_length = 4\n}\n' >main.tf
		cap round6-terraform-init-unreachable $DEP "" env TF_CLI_CONFIG_FILE="$W/tf.rc" terraform init -input=false -no-color
		fresh
		printf 'variable "region" {\n  type = string\n}\n\noutput "bucket" {\n  value = "${var.regoin}-assets"\n}\n' >main.tf
		env TF_CLI_CONFIG_FILE="$W/tf.rc" terraform init -input=false -no-color >/dev/null 2>&1
		cap round6-terraform-validate-undeclared $CONF "" env TF_CLI_CONFIG_FILE="$W/tf.rc" terraform validate -no-color
		fresh
		printf 'variable "region" {\ntype = string\n  default="eu-west-1"\n}\n' >main.tf
		cap round6-terraform-fmt-check $LINT "" env TF_CLI_CONFIG_FILE="$W/tf.rc" terraform fmt -check -diff -no-color
		fresh
		printf 'module "network" {\n  source = "./modules/network"\n}\n' >main.tf
		mkdir -p modules/network && printf 'output "id" {\n  value = "n-1"\n}\n' >modules/network/main.tf
		cap round6-terraform-module-not-installed $CONF "" env TF_CLI_CONFIG_FILE="$W/tf.rc" terraform validate -no-color
	fi

	# Ports: Django, gunicorn, a Python bind, http.server
	ver $PY -c 'import django; print("Django", django.get_version())'
	fresh
	django-admin startproject mysite . >/dev/null 2>&1 || $PY -m django startproject mysite . >/dev/null 2>&1
	cap round6-django-port-in-use $PORT port_free:18101 hold 18101 timeout 20 $PY manage.py runserver --noreload 127.0.0.1:18101
	ver gunicorn --version
	printf 'def app(environ, start_response):\n    start_response("200 OK", [])\n    return [b"ok"]\n' >wsgi_app.py
	cap round6-gunicorn-in-use $PORT port_free:18102 hold 18102 timeout 30 gunicorn --bind 127.0.0.1:18102 wsgi_app:app
	ver $PY --version
	printf 'import socket\n\ns = socket.socket()\ns.bind(("127.0.0.1", 18103))\ns.listen()\n' >bind.py
	cap round6-python-bind-in-use $PORT port_free:18103 hold 18103 $PY bind.py
	cap round6-http-server-in-use $PORT port_free:18104 hold 18104 timeout 10 $PY -m http.server 18104 --bind 127.0.0.1

	# Refused connections: psycopg 3, Django on PostgreSQL, go-redis
	ver $PY -c 'import psycopg; print("psycopg", psycopg.__version__)'
	cap round6-psycopg-refused $DB "" $PY -c 'import psycopg
psycopg.connect("host=127.0.0.1 port=15433 dbname=app user=app connect_timeout=3")'
	cap round6-psycopg-default-port $DB "" $PY -c 'import psycopg
psycopg.connect("host=127.0.0.1 dbname=app user=app connect_timeout=3")'
	ver $PY -c 'import django; print("Django", django.get_version())'
	fresh
	django-admin startproject mysite . >/dev/null 2>&1 || $PY -m django startproject mysite . >/dev/null 2>&1
	$PY - <<'EOF'
import re
p = "mysite/settings.py"
s = open(p).read()
s = re.sub(r"DATABASES = \{.*?\n\}\n", "DATABASES = {\"default\": {\"ENGINE\": \"django.db.backends.postgresql\", \"HOST\": \"127.0.0.1\", \"PORT\": \"15433\", \"NAME\": \"app\", \"USER\": \"app\"}}\n", s, flags=re.S)
open(p, "w").write(s)
EOF
	cap round6-django-migrate-refused $DB tcp_reachable:127.0.0.1:15433 $PY manage.py migrate --noinput
	ver go version
	fresh; gomod
	printf 'package main\n\nimport (\n\t"context"\n\t"log"\n\n\t"github.com/redis/go-redis/v9"\n)\n\nfunc main() {\n\trdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:16380"})\n\tif err := rdb.Ping(context.Background()).Err(); err != nil {\n\t\tlog.Fatalf("redis: %%v", err)\n\t}\n}\n' >main.go
	go get github.com/redis/go-redis/v9@v9.7.0 >/dev/null 2>&1
	cap round6-go-redis-refused $DB tcp_reachable:127.0.0.1:16380 go run .

	# Variables named inside structured errors: zod, pydantic, os.getenv, os.environ
	jsver zod
	fresh
	printf 'const { z } = require("zod");\nconst Env = z.object({\n  DATABASE_URL: z.string(),\n  STRIPE_WEBHOOK_SECRET: z.string().min(1),\n});\nEnv.parse(process.env);\n' >env.js
	cap round6-zod-env $ENV env_var_present:STRIPE_WEBHOOK_SECRET env DATABASE_URL=postgres://x node env.js
	printf 'const { z } = require("zod");\nconst Order = z.object({ id: z.number(), qty: z.number().int().positive() });\nOrder.parse({ id: 7, qty: -2 });\n' >order.js
	cap round6-zod-data-invalid "" "" node order.js
	ver $PY -c 'import pydantic; print("pydantic", pydantic.VERSION)'
	printf 'from pydantic import BaseSettings\n\n\nclass Settings(BaseSettings):\n    database_url: str\n    debug: bool = False\n\n\nsettings = Settings()\n' >settings.py
	cap round6-pydantic-settings $ENV env_var_present:DATABASE_URL $PY settings.py
	printf 'from pydantic import BaseModel\n\n\nclass Order(BaseModel):\n    id: int\n    qty: int\n\n\nOrder(id=7, qty="many")\n' >order.py
	cap round6-pydantic-model-invalid "" "" $PY order.py
	ver $PY --version
	printf 'import os\n\nconcurrency = int(os.getenv("WORKER_CONCURRENCY"))\nprint(concurrency)\n' >worker.py
	cap round6-python-getenv-int $ENV env_var_present:WORKER_CONCURRENCY $PY worker.py
	ver $PY -m pytest --version
	printf 'import os\n\n\ndef test_charge():\n    key = os.environ["PAYMENTS_API_KEY"]\n    assert key.startswith("sk_")\n' >test_pay.py
	cap round6-pytest-environ-keyerror $ENV env_var_present:PAYMENTS_API_KEY $PY -m pytest -q -p no:cacheprovider test_pay.py
	cap round6-pytest-environ-keyerror-short $ENV env_var_present:PAYMENTS_API_KEY $PY -m pytest -q --tb=short -p no:cacheprovider test_pay.py
	cap round6-pytest-environ-keyerror-line $ENV env_var_present:PAYMENTS_API_KEY $PY -m pytest -q --tb=line -p no:cacheprovider test_pay.py

	# What a new user tries: SyntaxError, ava, xo, JUnit 4, Jest's missing module
	ver $PY --version
	printf 'def total(items):\n    return sum(i.price for i in items\n\nprint(total([]))\n' >broken.py
	cap round6-python-syntax-error "" "" $PY broken.py
	printf 'def f():\n    x = 1\n      return x\n' >indent.py
	cap round6-python-indentation-error "" "" $PY indent.py
	jsver ava
	fresh
	ln -s "$JSTOOLS/node_modules" node_modules
	printf '{"name":"app","version":"1.0.0","type":"module"}\n' >package.json
	printf 'import test from "ava";\n\nconst add = (a, b) => a - b;\n\ntest("adds", t => {\n\tt.is(add(2, 3), 5);\n});\n' >test.js
	cap round6-ava-fail $TEST "" "$J/ava" test.js
	jsver xo
	printf 'var unused = 1\nexport const add = (a, b) => { return a+b }\n' >src.js
	cap round6-xo $LINT "" "$J/xo" src.js
	jsver jest
	fresh
	ln -s "$JSTOOLS/node_modules" node_modules
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	printf 'const chunk = require("lodash-missing/chunk");\ntest("chunks", () => { expect(chunk([1, 2, 3], 2)).toHaveLength(2); });\n' >chunk.test.js
	cap round6-jest-cannot-find-module $DEP "" "$J/jest" --ci chunk.test.js
	ver javac -version
	fresh
	printf 'import org.junit.Test;\nimport static org.junit.Assert.assertEquals;\n\npublic class AddTest {\n  static int add(int a, int b) { return a - b; }\n\n  @Test\n  public void adds() {\n    assertEquals(5, add(2, 3));\n  }\n}\n' >AddTest.java
	javac -cp /usr/share/java/junit4.jar AddTest.java 2>/dev/null
	cap round6-junit4-fail $TEST "" java -cp /usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar:. org.junit.runner.JUnitCore AddTest
}

# sec_round7: a seventh batch, captured and labelled before any rule was
# written from it; the rules it is measured with were written from round6
# and from the tools' documentation. The same families as round6 through
# other tools, flags and wordings: other compiler errors and linkers
# (gold, multiple definitions, a missing source), GoogleTest, Catch2,
# cmocka, clang-format, CMake's config mode and pkg_check_modules, Meson's
# find_program and options, autoconf; pnpm's, yarn's (classic and berry)
# and npm's engine, lockfile and resolution errors, poetry's lockfile,
# vite and webpack; Terraform's variables, arguments and syntax; Flask,
# Java, netcat, socat and Puma on a taken port; psycopg 3's async
# connection and pool, ioredis, node-redis, Sequelize, knex; zod 3,
# t3-env, zod's prettified errors, Joi, pydantic with an env prefix,
# os.getenv in pytest; uvu, standard, stylelint; and failures no tag fits.
sec_round7() {
	needr6
	need clang-format clang-format
	need /usr/include/gtest/gtest.h libgtest-dev
	need /usr/include/catch2/catch.hpp catch2
	need /usr/include/cmocka.h libcmocka-dev
	need autoconf autoconf
	need nc netcat-openbsd
	need socat socat
	need puma puma
	need rackup ruby-rack
	$PY -c 'import flask' 2>/dev/null || need /usr/lib/python3/dist-packages/flask python3-flask
	$PY -c 'import psycopg_pool' 2>/dev/null || need /usr/lib/python3/dist-packages/psycopg_pool python3-psycopg-pool
	for m in zod3 @t3-oss/env-core joi uvu standard stylelint stylelint-config-standard vite webpack webpack-cli redis sequelize knex pg ioredis @yarnpkg/cli-dist; do
		[ -d "$JSTOOLS/node_modules/$m" ] && continue
		(cd "$JSTOOLS" && npm install --no-audit --no-fund zod3@npm:zod@3 @t3-oss/env-core joi uvu standard stylelint stylelint-config-standard vite webpack webpack-cli redis sequelize knex pg ioredis @yarnpkg/cli-dist >/dev/null 2>&1) ||
			echo "capture.sh: could not install the npm packages of round7" >&2
		break
	done
	export NODE_PATH=$JSTOOLS/node_modules

	# C and C++ compilers: other errors, syntax errors, warnings made errors
	ver gcc --version
	fresh
	printf 'int main(void) {\n\treturn compute(3);\n}\n' >impl.c
	cap round7-gcc-implicit-then-undefined $CONF "" gcc impl.c -o impl
	printf 'int main(void) {\n\tint x = 1\n\treturn x;\n}\n' >semi.c
	cap round7-gcc-syntax-semicolon "" "" gcc -c semi.c
	printf '#include <stdio.h>\n\nint main(void) {\n\tprintf("%%d\\n", "total");\n\treturn 0;\n}\n' >fmt.c
	cap round7-gcc-werror-format $LINT "" gcc -Wall -Werror=format -c fmt.c
	printf 'struct buf {\n\tint len;\n\tchar data[0];\n};\n\nint main(void) { return 0; }\n' >ped.c
	cap round7-gcc-pedantic-errors $LINT "" gcc -std=c99 -pedantic-errors -c ped.c
	printf 'int helper(void) { return 1; }\n' >one.c
	printf 'int helper(void) { return 2; }\nint main(void) { return helper(); }\n' >two.c
	cap round7-ld-multiple-definition $CONF "" gcc one.c two.c -o dup
	printf 'int util(void);\n\nint main(void) { return util(); }\n' >main.c
	cap round7-gcc-missing-source $CONF file_exists:util.c gcc main.c util.c -o app
	printf 'int main(void) { return 0; }\n' >ok.c
	cap round7-ld-gold-cannot-find $DEP "" gcc -fuse-ld=gold ok.c -o ok -lssl_missing
	ver g++ --version
	printf 'void notify(int user, int level) {}\n\nint main() {\n\tnotify("ada", 2, true);\n}\n' >over.cpp
	cap round7-gxx-no-matching-function $TYPE "" g++ -c over.cpp
	printf '#include <string>\n\nint main() {\n\tstd::string label = 5;\n\treturn label.size();\n}\n' >str.cpp
	cap round7-gxx-non-scalar-conversion $TYPE "" g++ -c str.cpp
	printf 'struct point { int x, y; };\n\nint main() {\n\tpoint p{1, 2};\n\treturn p.z;\n}\n' >mem.cpp
	cap round7-gxx-no-member $TYPE "" g++ -c mem.cpp
	printf '#include <boost/optional.hpp>\n\nint main() { boost::optional<int> n; return n ? 1 : 0; }\n' >bo.cpp
	cap round7-gxx-missing-boost $DEP "" g++ -c bo.cpp
	printf 'class Cache {\npublic:\n\tint size() const;\n};\n\nint main() { Cache c; return c.size(); }\n' >vt.cpp
	cap round7-gxx-undefined-method $CONF "" g++ vt.cpp -o vt
	ver clang --version
	printf 'int main(void) {\n\treturn count + 1;\n}\n' >und.c
	cap round7-clang-undeclared $TYPE "" clang -c und.c
	cap round7-clang-syntax-semicolon "" "" clang -c semi.c
	cap round7-clang-missing-source $CONF file_exists:app.c clang app.c -o app
	ver clang++ --version
	cap round7-clangxx-no-viable-conversion $TYPE "" clang++ -c str.cpp
	printf '#include <nlohmann/json.hpp>\n\nint main() { return nlohmann::json::parse("1").get<int>(); }\n' >js.cpp
	cap round7-clangxx-missing-json-header $DEP "" clang++ -c js.cpp
	ver clang-format --version
	printf 'int main(void){int a=1;return a;}\n' >fmt2.c
	cap round7-clang-format-check $LINT "" clang-format --dry-run -Werror fmt2.c

	# cppcheck, clang-tidy
	ver cppcheck --version
	fresh
	printf '#include <stddef.h>\n\nint first(void) {\n\tint *p = NULL;\n\treturn *p;\n}\n' >np.c
	cap round7-cppcheck-null-pointer $LINT "" cppcheck --error-exitcode=1 np.c
	printf 'int f(int n) {\n\tint unused = n * 2;\n\tunused = 3;\n\treturn n;\n}\n' >st.cpp
	cap round7-cppcheck-style $LINT "" cppcheck --error-exitcode=1 --enable=style st.cpp
	ver clang-tidy --version
	printf 'int *make() {\n\tint *p = 0;\n\treturn p;\n}\n' >np.cpp
	cap round7-clang-tidy-nullptr $LINT "" clang-tidy --checks=-*,modernize-use-nullptr --warnings-as-errors=* np.cpp -- -std=c++17

	# C and C++ test frameworks
	ver sh -c 'dpkg-query -W -f "googletest ${Version}\n" libgtest-dev'
	fresh
	printf '#include <gtest/gtest.h>\n\nstatic int add(int a, int b) { return a - b; }\n\nTEST(Calc, Adds) { EXPECT_EQ(add(2, 3), 5); }\n' >t.cc
	g++ t.cc -o t_gtest -lgtest -lgtest_main -pthread 2>/dev/null
	cap round7-gtest-fail $TEST "" ./t_gtest
	ver sh -c 'dpkg-query -W -f "catch2 ${Version}\n" catch2'
	printf '#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n\nstatic int add(int a, int b) { return a - b; }\n\nTEST_CASE("adds") { REQUIRE(add(2, 3) == 5); }\n' >c2.cpp
	g++ c2.cpp -o t_catch 2>/dev/null
	cap round7-catch2-fail $TEST "" ./t_catch
	ver sh -c 'dpkg-query -W -f "cmocka ${Version}\n" libcmocka-dev'
	printf '#include <stdarg.h>\n#include <stddef.h>\n#include <setjmp.h>\n#include <stdint.h>\n#include <cmocka.h>\n\nstatic int add(int a, int b) { return a - b; }\n\nstatic void adds(void **state) { (void)state; assert_int_equal(add(2, 3), 5); }\n\nint main(void) {\n\tconst struct CMUnitTest tests[] = { cmocka_unit_test(adds) };\n\treturn cmocka_run_group_tests(tests, NULL, NULL);\n}\n' >cm.c
	gcc cm.c -o t_cmocka -lcmocka 2>/dev/null
	cap round7-cmocka-fail $TEST "" ./t_cmocka

	# CMake, ctest, Meson, autoconf
	ver cmake --version
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app CXX)\nfind_package(fmt REQUIRED)\nadd_executable(app main.cpp)\ntarget_link_libraries(app fmt::fmt)\n' >CMakeLists.txt
	printf 'int main() { return 0; }\n' >main.cpp
	cap round7-cmake-config-package $DEP "" cmake -S . -B build
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app CXX)\nadd_executable(app main.cpp)\n' >CMakeLists.txt
	printf 'int main() { return 0; }\n' >main.cpp
	cap round7-cmake-compiler-missing $DEP command_exists:g++-missing env CXX=g++-missing cmake -S . -B build
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app C)\nfind_package(PkgConfig REQUIRED)\npkg_check_modules(CURL REQUIRED libcurl)\nadd_executable(app main.c)\n' >CMakeLists.txt
	printf 'int main(void) { return 0; }\n' >main.c
	cap round7-cmake-pkg-check-modules $DEP "" cmake -S . -B build
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app C)\nadd_exectuable(app main.c)\n' >CMakeLists.txt
	printf 'int main(void) { return 0; }\n' >main.c
	cap round7-cmake-unknown-command $CONF "" cmake -S . -B build
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app C)\nadd_executable(app main.c util.c)\n' >CMakeLists.txt
	printf 'int main(void) { return 0; }\n' >main.c
	cap round7-cmake-missing-source $CONF file_exists:util.c cmake -S . -B build
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(calc CXX)\nenable_testing()\nfind_package(GTest REQUIRED)\nadd_executable(t_calc t.cc)\ntarget_link_libraries(t_calc GTest::gtest_main)\nadd_test(NAME calc COMMAND t_calc)\n' >CMakeLists.txt
	printf '#include <gtest/gtest.h>\n\nstatic int mul(int a, int b) { return a + b; }\n\nTEST(Calc, Multiplies) { ASSERT_EQ(mul(2, 3), 6) << "2 * 3"; }\n' >t.cc
	cmake -S . -B build >/dev/null 2>&1 && cmake --build build >/dev/null 2>&1
	ver ctest --version
	cap round7-ctest-gtest $TEST "" ctest --test-dir build --output-on-failure
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(crash C)\nenable_testing()\nadd_executable(t_crash t.c)\nadd_test(NAME crash COMMAND t_crash)\n' >CMakeLists.txt
	printf '#include <stddef.h>\n\nint main(void) {\n\tint *p = NULL;\n\treturn *p;\n}\n' >t.c
	cmake -S . -B build >/dev/null 2>&1 && cmake --build build >/dev/null 2>&1
	cap round7-ctest-segfault "" "" ctest --test-dir build --output-on-failure
	ver meson --version
	fresh
	printf "project('api', 'c')\nprotoc = find_program('protoc-missing')\nexecutable('api', 'main.c')\n" >meson.build
	printf 'int main(void) { return 0; }\n' >main.c
	cap round7-meson-find-program $DEP command_exists:protoc-missing meson setup build
	fresh
	printf "project('app', 'c')\nexecutable('app', 'main.c')\n" >meson.build
	printf 'int main(void) { return 0; }\n' >main.c
	cap round7-meson-unknown-option $CONF "" meson setup build -Dfrobnicate=true
	fresh
	printf "project('app', 'c')\nt = executable('t_check', 't.c')\ntest('check', t)\n" >meson.build
	printf '#include <stdio.h>\n\nint main(void) {\n\tfputs("checking the fixtures\\n", stderr);\n\treturn 1;\n}\n' >t.c
	meson setup build >/dev/null 2>&1
	cap round7-meson-test-fail "" "" meson test -C build
	ver autoconf --version
	fresh
	printf 'AC_INIT([fetcher], [1.0])\nAC_PROG_CC\nAC_CHECK_LIB([curl], [curl_easy_init], [], [AC_MSG_ERROR([libcurl is required but was not found])])\nAC_OUTPUT\n' >configure.ac
	autoconf >/dev/null 2>&1
	cap round7-configure-libcurl $DEP "" ./configure

	# pnpm, yarn, npm
	jsver pnpm
	fresh
	printf '{"name":"app","version":"1.0.0","engines":{"node":">=99"}}\n' >package.json
	cap round7-pnpm-unsupported-engine $CONF "" "$J/pnpm" install --engine-strict --store-dir "$W/pnpm-store"
	fresh
	printf '{"name":"app","version":"1.0.0","dependencies":{"is-number":"7.0.0"}}\n' >package.json
	cap round7-pnpm-frozen-no-lockfile $CONF "" "$J/pnpm" install --frozen-lockfile --store-dir "$W/pnpm-store"
	fresh
	printf '{"name":"app","version":"1.0.0","scripts":{"build":"node build.js"}}\n' >package.json
	printf 'console.error("bundle too large: 812 kB > 500 kB");\nprocess.exit(1);\n' >build.js
	cap round7-pnpm-run-fails "" "" "$J/pnpm" run build
	fresh
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	cap round7-pnpm-404 $DEP "" "$J/pnpm" add --store-dir "$W/pnpm-store" orket-capture-no-such-package-7f3a
	# Yarn classic by its own script: @yarnpkg/cli-dist (Yarn 4, below)
	# installs a yarn of its own into node_modules/.bin.
	YC="$JSTOOLS/node_modules/yarn/bin/yarn.js"
	ver node "$YC" --version
	fresh
	printf '{"name":"app","version":"1.0.0","license":"MIT","dependencies":{"is-number":"7.0.0"}}\n' >package.json
	node "$YC" install --cache-folder "$W/yarn-cache" >/dev/null 2>&1
	printf '{"name":"app","version":"1.0.0","license":"MIT","dependencies":{"is-number":"7.0.0","is-odd":"3.0.1"}}\n' >package.json
	cap round7-yarn-frozen-lockfile $CONF "" node "$YC" install --frozen-lockfile --cache-folder "$W/yarn-cache"
	cap round7-yarn-missing-script $CONF "" node "$YC" run build
	fresh
	printf '{"name":"app","version":"1.0.0","license":"MIT"}\n' >package.json
	cap round7-yarn-registry-unreachable $DEP "" node "$YC" add is-number --registry "$DEAD/" --network-timeout 3000 --cache-folder "$W/yarn-cache2"
	printf '{"name":"app","version":"1.0.0","license":"MIT","scripts":{"test":"node -e \\"process.exit(3)\\""}}\n' >package.json
	cap round7-yarn-script-fails "" "" node "$YC" test
	YB="$JSTOOLS/node_modules/@yarnpkg/cli-dist/bin/yarn.js"
	ver node "$YB" --version
	fresh
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	printf 'npmRegistryServer: "https://registry.npmjs.org"\nenableTelemetry: false\nnodeLinker: node-modules\ncacheFolder: "%s/berry-cache"\n' "$W" >.yarnrc.yml
	touch yarn.lock
	cap round7-yarn-berry-no-candidates $DEP "" node "$YB" add is-number@99.0.0
	printf '{"name":"app","version":"1.0.0","dependencies":{"is-number":"7.0.0"}}\n' >package.json
	node "$YB" install >/dev/null 2>&1
	printf '{"name":"app","version":"1.0.0","dependencies":{"is-number":"7.0.0","is-odd":"3.0.1"}}\n' >package.json
	cap round7-yarn-berry-immutable $CONF "" node "$YB" install --immutable
	ver npm --version
	fresh
	printf '{"name":"app","version":"1.0.0","engines":{"node":">=99"}}\n' >package.json
	cap round7-npm-ebadengine $CONF "" npm install --engine-strict --no-audit --no-fund
	fresh
	printf '{"name":"app","version":"1.0.0","dependencies":{"react":"17.0.2","react-dom":"18.2.0"}}\n' >package.json
	cap round7-npm-eresolve $DEP "" npm install --package-lock-only --no-audit --no-fund

	# poetry
	ver poetry --version
	fresh
	printf '[tool.poetry]\nname = "app"\nversion = "0.1.0"\ndescription = ""\nauthors = ["A <a@example.com>"]\n\n[tool.poetry.dependencies]\npython = "^3.11"\n\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' >pyproject.toml
	env POETRY_CACHE_DIR="$W/poetry-cache" poetry lock --no-interaction >/dev/null 2>&1
	mkdir lib && printf '[tool.poetry]\nname = "lib"\nversion = "1.0.0"\ndescription = ""\nauthors = ["A <a@example.com>"]\n\n[tool.poetry.dependencies]\npython = "^3.11"\n\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' >lib/pyproject.toml
	sed -i 's/^python = "^3.11"$/python = "^3.11"\nlib = {path = "lib"}/' pyproject.toml
	cap round7-poetry-lock-outdated $CONF "" env POETRY_CACHE_DIR="$W/poetry-cache" poetry lock --check --no-interaction
	fresh
	printf '[tool.poetry]\nname = "app"\nversion = "0.1.0"\ndescription = ""\nauthors = ["A <a@example.com>"]\n\n[tool.poetry.dependencies]\npython = "^3.11"\n\n[[tool.poetry.source]]\nname = "internal"\nurl = "http://127.0.0.1:9/simple/"\nsecondary = true\n\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' >pyproject.toml
	cap round7-poetry-add-unreachable $DEP "" env POETRY_CACHE_DIR="$W/poetry-cache" poetry add --no-interaction --source internal httpx
	fresh
	cap round7-poetry-no-pyproject $CONF "" env POETRY_CACHE_DIR="$W/poetry-cache" poetry install --no-interaction

	# vite, webpack
	jsver vite
	fresh
	ln -s "$JSTOOLS/node_modules" node_modules
	printf '{"name":"app","version":"1.0.0","type":"module"}\n' >package.json
	printf '<!doctype html>\n<script type="module" src="/src/main.js"></script>\n' >index.html
	mkdir src && printf 'import mitt from "mitt";\nexport const bus = mitt();\nconsole.log(bus);\n' >src/main.js
	cap round7-vite-unresolved $DEP "" "$J/vite" build
	jsver webpack
	rm -rf dist
	cap round7-webpack-cant-resolve $DEP "" "$J/webpack" --mode production --entry ./src/main.js

	# Terraform
	if command -v terraform >/dev/null 2>&1; then
		ver terraform version
		printf 'provider_installation {\n  network_mirror {\n    url = "https://127.0.0.1:9/providers/"\n  }\n}\n' >"$W/tf.rc"
		TF="env TF_CLI_CONFIG_FILE=$W/tf.rc TF_IN_AUTOMATION=1"
		fresh
		printf 'variable "environment" {\n  type = string\n}\n\noutput "name" {\n  value = "app-${var.environment}"\n}\n' >main.tf
		$TF terraform init -input=false -no-color >/dev/null 2>&1
		cap round7-terraform-missing-variable $CONF "" $TF terraform plan -input=false -no-color
		fresh
		printf 'output "replicas" {\n  valeu = 3\n}\n' >main.tf
		cap round7-terraform-unsupported-argument $CONF "" $TF terraform validate -no-color
		fresh
		printf 'variable "region" {\n  type = string\n\noutput "region" {\n  value = var.region\n}\n' >main.tf
		cap round7-terraform-unclosed-block $CONF "" $TF terraform validate -no-color
		fresh
		printf 'terraform {\n  required_providers {\n    random = {\n      source = "hashicorp/random"\n    }\n  }\n}\n\nresource "random_pet" "name" {}\n' >main.tf
		cap round7-terraform-provider-not-installed $CONF "" $TF terraform plan -input=false -no-color
		fresh
		printf 'output "a" {\nvalue = 1\n}\n' >main.tf
		cap round7-terraform-fmt-list $LINT "" $TF terraform fmt -check
	fi

	# Ports: Flask, Java, netcat, socat, Puma
	ver $PY -c 'import flask; print("Flask", flask.__version__)'
	fresh
	printf 'from flask import Flask\n\napp = Flask(__name__)\n' >app.py
	cap round7-flask-port-in-use $PORT port_free:18111 hold 18111 timeout 10 $PY -m flask --app app run --port 18111
	ver java -version
	printf 'import java.net.ServerSocket;\n\npublic class Srv {\n  public static void main(String[] a) throws Exception {\n    try (ServerSocket s = new ServerSocket(18112)) {\n      s.accept();\n    }\n  }\n}\n' >Srv.java
	cap round7-java-bind-in-use $PORT "" hold 18112 timeout 20 java Srv.java
	ver sh -c 'dpkg-query -W -f "netcat-openbsd ${Version}\n" netcat-openbsd'
	cap round7-nc-in-use $PORT port_free:18114 hold 18114 timeout 5 nc -l 127.0.0.1 18114
	ver socat -V
	cap round7-socat-in-use $PORT port_free:18115 hold 18115 timeout 5 socat TCP-LISTEN:18115,bind=127.0.0.1 -
	ver puma --version
	printf 'run ->(env) { [200, {}, ["ok"]] }\n' >config.ru
	cap round7-puma-in-use $PORT port_free:18116 hold 18116 timeout 15 puma -b tcp://127.0.0.1:18116 config.ru

	# Refused connections: psycopg 3 async and pool, ioredis, node-redis, Sequelize, knex
	ver $PY -c 'import psycopg; print("psycopg", psycopg.__version__)'
	fresh
	cap round7-psycopg-async-refused $DB "" $PY -c 'import asyncio, psycopg
async def main():
    await psycopg.AsyncConnection.connect("host=127.0.0.1 port=15436 dbname=app user=app connect_timeout=3")
asyncio.run(main())'
	cap round7-psycopg-pool-timeout $DB "" $PY -c 'from psycopg_pool import ConnectionPool
pool = ConnectionPool("host=127.0.0.1 port=15437 dbname=app user=app", min_size=1, timeout=2, open=True)
with pool.connection() as conn:
    conn.execute("select 1")'
	jsver ioredis
	printf 'const Redis = require("ioredis");\nconst r = new Redis({ host: "127.0.0.1", port: 16381, maxRetriesPerRequest: 0, retryStrategy: () => null });\nr.ping().catch(e => { console.error("cache:", e.message); process.exit(1); });\n' >io.js
	cap round7-ioredis-refused $DB tcp_reachable:127.0.0.1:16381 node io.js
	jsver redis
	printf 'const { createClient } = require("redis");\nconst c = createClient({ url: "redis://127.0.0.1:16382", socket: { reconnectStrategy: false } });\nc.connect().catch(e => { console.error(e); process.exit(1); });\n' >nr.js
	# Neither the message nor the stack names Redis (nor a database): as
	# round2-node-redis-refused, no tag.
	cap round7-node-redis-refused "" "" node nr.js
	jsver sequelize
	printf 'const { Sequelize } = require("sequelize");\nnew Sequelize("postgres://app:secret@127.0.0.1:15434/app", { logging: false }).authenticate().catch(e => { console.error(e); process.exit(1); });\n' >sq.js
	cap round7-sequelize-refused $DB tcp_reachable:127.0.0.1:15434 node sq.js
	jsver knex
	printf 'const knex = require("knex")({ client: "pg", connection: "postgres://app:secret@127.0.0.1:15435/app" });\nknex.raw("select 1").then(() => knex.destroy()).catch(e => { console.error(e); process.exit(1); });\n' >kx.js
	# "Acquire connection error" and a refused port: nothing says database.
	cap round7-knex-refused "" "" node kx.js

	# Variables inside structured errors
	jsver zod3
	fresh
	printf 'const { z } = require("zod3");\nz.object({ SENDGRID_API_KEY: z.string(), PORT: z.coerce.number().default(3000) }).parse(process.env);\n' >env3.js
	cap round7-zod3-env $ENV env_var_present:SENDGRID_API_KEY node env3.js
	jsver @t3-oss/env-core
	ln -s "$JSTOOLS/node_modules" node_modules
	printf 'import { createEnv } from "@t3-oss/env-core";\nimport { z } from "zod";\n\nexport const env = createEnv({\n  server: { OPENAI_API_KEY: z.string().min(1) },\n  runtimeEnv: process.env,\n});\n' >t3.mjs
	cap round7-t3-env $ENV env_var_present:OPENAI_API_KEY node t3.mjs
	jsver zod
	printf 'const { z } = require("zod");\nconst r = z.object({ SENTRY_DSN: z.string().url() }).safeParse(process.env);\nif (!r.success) {\n  console.error("invalid environment:\\n" + z.prettifyError(r.error));\n  process.exit(1);\n}\n' >pe.js
	cap round7-zod-prettify-env $ENV env_var_present:SENTRY_DSN node pe.js
	jsver joi
	printf 'const Joi = require("joi");\nconst { error } = Joi.object({ SMTP_HOST: Joi.string().required() }).unknown().validate(process.env);\nif (error) throw error;\n' >joi.js
	# Joi prints the object it validated: the environment, kept to PATH.
	cap round7-joi-env $ENV env_var_present:SMTP_HOST env -i PATH="$PATH" NODE_PATH="$NODE_PATH" node joi.js
	ver $PY -c 'import pydantic; print("pydantic", pydantic.VERSION)'
	printf 'from pydantic import BaseSettings\n\n\nclass Settings(BaseSettings):\n    redis_url: str\n\n    class Config:\n        env_prefix = "APP_"\n\n\nsettings = Settings()\n' >prefixed.py
	cap round7-pydantic-settings-prefix $ENV "" $PY prefixed.py
	ver $PY --version
	printf 'import os\n\nhosts = os.getenv("ALLOWED_HOSTS").split(",")\nprint(hosts)\n' >hosts.py
	cap round7-python-getenv-split $ENV env_var_present:ALLOWED_HOSTS $PY hosts.py
	printf 'import os\n\nport = int(os.getenv("PORT", "eighty"))\n' >badport.py
	cap round7-python-getenv-invalid "" "" $PY badport.py
	ver $PY -m pytest --version
	printf 'import os\n\n\ndef test_retries():\n    retries = int(os.getenv("MAX_RETRIES"))\n    assert retries > 0\n' >test_retry.py
	cap round7-pytest-getenv-int $ENV env_var_present:MAX_RETRIES $PY -m pytest -q -p no:cacheprovider test_retry.py

	# Tests and linters: ava, uvu, JUnit 4, standard, stylelint, a syntax error
	jsver ava
	fresh
	ln -s "$JSTOOLS/node_modules" node_modules
	printf '{"name":"app","version":"1.0.0","type":"module"}\n' >package.json
	printf 'import test from "ava";\n\nconst isEven = n => n %% 2 === 1;\n\ntest("four is even", t => {\n\tt.true(isEven(4));\n});\n' >even.test.js
	cap round7-ava-true $TEST "" "$J/ava" even.test.js
	printf 'import test from "ava";\n\nconst load = () => { throw new Error("fixture orders.json is empty"); };\n\ntest("loads", t => {\n\tt.is(load().length, 3);\n});\n' >load.test.js
	cap round7-ava-thrown "" "" "$J/ava" load.test.js
	jsver uvu
	printf 'import { test } from "uvu";\nimport * as assert from "uvu/assert";\n\nconst add = (a, b) => a - b;\n\ntest("adds", () => {\n\tassert.is(add(2, 3), 5);\n});\n\ntest.run();\n' >uvu.test.js
	cap round7-uvu-fail $TEST "" node uvu.test.js
	jsver standard
	printf 'const unused = 1;\nexport function add (a, b) { return a+b }\n' >lib.js
	cap round7-standard $LINT "" "$J/standard" lib.js
	jsver stylelint
	printf '{"extends":"stylelint-config-standard"}\n' >.stylelintrc.json
	printf 'a { color: #FFF; }\n.b {}\n' >a.css
	cap round7-stylelint $LINT "" "$J/stylelint" a.css
	ver node --version
	printf 'const total = (items) => {\n  return items.reduce((a, b) => a + b, 0)\n\nconsole.log(total([1, 2]));\n' >syn.js
	cap round7-node-syntax-error "" "" node syn.js
	ver javac -version
	fresh
	printf 'import org.junit.Test;\nimport static org.junit.Assert.assertTrue;\n\npublic class EvenTest {\n  static boolean isEven(int n) { return n %% 2 == 1; }\n\n  @Test\n  public void fourIsEven() {\n    assertTrue(isEven(4));\n  }\n}\n' >EvenTest.java
	printf 'import org.junit.Test;\n\npublic class LoadTest {\n  static String name() { return null; }\n\n  @Test\n  public void loads() {\n    name().length();\n  }\n}\n' >LoadTest.java
	javac -cp /usr/share/java/junit4.jar EvenTest.java LoadTest.java 2>/dev/null
	cap round7-junit4-asserttrue $TEST "" java -cp /usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar:. org.junit.runner.JUnitCore EvenTest
	cap round7-junit4-npe "" "" java -cp /usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar:. org.junit.runner.JUnitCore LoadTest
}

# sec_round8: an eighth batch, captured and labelled before any rule was
# written from it; its rules were written from round6, round7 and the
# tools' documentation. The same families through tools and wordings
# neither batch had: lld and mold, other C++ errors and warnings made
# errors, ninja, cpplint, Check, CUnit, doctest, shunit2, node-tap, CMake's
# find_library, find_program, version and include errors, Meson's subdir
# and compiler, pnpm offline and without a manifest, yarn offline and
# Yarn 4's scripts and registry, npm without a package.json, Composer,
# Terraform references and validations, WEBrick, ncat, aiohttp, Java's
# HttpServer, vite's dev server, PyMySQL, the mysql and mongodb drivers of
# Node, a cache behind go-redis, env-schema, pydantic with two fields,
# os.environ.get, process.env through URL and fs, zod's flattened errors,
# biome, oxlint, commitlint, Django's test runner; and failures no tag
# fits.
sec_round8() {
	needr6
	for p in lld:lld mold:mold ncat:ncat composer:composer cpplint:cpplint shunit2:shunit2 ninja:ninja-build \
		/usr/include/CUnit/CUnit.h:libcunit1-dev /usr/include/doctest/doctest.h:doctest-dev /usr/include/check.h:check \
		/usr/lib/ruby/vendor_ruby/webrick.rb:ruby-webrick; do
		need "${p%%:*}" "${p#*:}"
	done
	$PY -c 'import pymysql' 2>/dev/null || need /usr/lib/python3/dist-packages/pymysql python3-pymysql
	$PY -c 'import aiohttp' 2>/dev/null || need /usr/lib/python3/dist-packages/aiohttp python3-aiohttp
	for m in env-schema mysql mongodb @biomejs/biome oxlint @commitlint/cli @commitlint/config-conventional tap @yarnpkg/cli-dist vite; do
		[ -d "$JSTOOLS/node_modules/$m" ] && continue
		(cd "$JSTOOLS" && npm install --no-audit --no-fund env-schema mysql mongodb @biomejs/biome oxlint @commitlint/cli @commitlint/config-conventional tap @yarnpkg/cli-dist vite >/dev/null 2>&1) ||
			echo "capture.sh: could not install the npm packages of round8" >&2
		break
	done
	export NODE_PATH=$JSTOOLS/node_modules

	# Linkers: lld, mold
	ver ld.lld --version
	fresh
	printf 'int helper(int);\n\nint main(void) { return helper(2); }\n' >h.c
	printf 'int main(void) { return 0; }\n' >ok.c
	cap round8-lld-undefined $CONF "" clang -fuse-ld=lld h.c -o h
	cap round8-lld-cannot-find $DEP "" clang -fuse-ld=lld ok.c -o ok -lzstd_missing
	ver mold --version
	cap round8-mold-undefined $CONF "" gcc -fuse-ld=mold h.c -o h

	# C and C++ compilers
	ver g++ --version
	printf 'int main() {\n\tstd::vector<int> v{1, 2};\n\treturn v.size();\n}\n' >vec.cpp
	cap round8-gxx-not-member-of-std $TYPE "" g++ -c vec.cpp
	printf 'int main() {\n\tconst int limit = 3;\n\tlimit = 4;\n\treturn limit;\n}\n' >ro.cpp
	cap round8-gxx-read-only $TYPE "" g++ -c ro.cpp
	printf 'int count(const char *s) {\n\treturn s;\n}\n' >ret.cpp
	ver clang++ --version
	cap round8-clangxx-return-type $TYPE "" clang++ -c ret.cpp
	ver gcc --version
	printf 'int scale(int value, int factor) {\n\treturn value * 2;\n}\n' >par.c
	cap round8-gcc-werror-unused-parameter $LINT "" gcc -Wall -Wextra -Werror -c par.c
	ver clang --version
	printf 'int find(const int *xs, int n, unsigned want) {\n\tfor (int i = 0; i < n; i++)\n\t\tif (xs[i] == want)\n\t\t\treturn i;\n\treturn -1;\n}\n' >sc.c
	cap round8-clang-werror-sign-compare $LINT "" clang -Wsign-compare -Werror -c sc.c
	ver gcc --version
	printf 'int main(void) {\n\tif (1) {\n\t\treturn 0;\n}\n' >brace.c
	cap round8-gcc-syntax-brace "" "" gcc -c brace.c
	ver g++ --version
	printf '#include <stdexcept>\n\nint main() {\n\tthrow std::runtime_error("config.toml: unknown key \\"replicas\\"");\n}\n' >thr.cpp
	g++ thr.cpp -o thr 2>/dev/null
	cap round8-cxx-uncaught-exception "" "" ./thr
	printf '#include <stdio.h>\n#include <stdlib.h>\n\nint main(void) {\n\tfprintf(stderr, "fatal: connection pool exhausted (32/32)\\n");\n\tabort();\n}\n' >ab.c
	gcc ab.c -o ab 2>/dev/null
	cap round8-c-abort "" "" sh -c './ab'
	ver make --version
	printf '#include <fmt/core.h>\n\nint main() { fmt::print("hi\\n"); }\n' >f.cpp
	printf 'f: f.cpp\n\t$(CXX) -o f f.cpp -lfmt\n' >Makefile
	cap round8-make-gxx-missing-fmt $DEP "" make

	# ninja
	ver ninja --version
	fresh
	printf "project('z', 'c')\nexecutable('z', 'z.c')\n" >meson.build
	printf '#include <zstd.h>\n\nint main(void) { return ZSTD_versionNumber() > 0 ? 0 : 1; }\n' >z.c
	meson setup build >/dev/null 2>&1
	cap round8-ninja-missing-header $DEP "" ninja -C build
	printf 'int main(void) {\n\treturn 0\n}\n' >z.c
	cap round8-ninja-syntax-error "" "" ninja -C build
	fresh
	mkdir build
	cap round8-ninja-no-build-file $CONF "" ninja -C build

	# Static analysis: cpplint, clang-tidy, cppcheck
	ver cpplint --version
	fresh
	printf '#include <stdio.h>\nint main(){printf("x");return 0;}\n' >main.cc
	cap round8-cpplint $LINT "" cpplint main.cc
	ver clang-tidy --version
	printf 'int sign(int n) {\n\tif (n < 0) return -1;\n\treturn 1;\n}\n' >br.cpp
	cap round8-clang-tidy-braces $LINT "" clang-tidy --checks=-*,readability-braces-around-statements --warnings-as-errors=* br.cpp --
	ver cppcheck --version
	printf '#include <stdlib.h>\n\nint make(void) {\n\tchar *p = malloc(16);\n\tif (!p)\n\t\treturn 1;\n\tp[0] = 1;\n\treturn 0;\n}\n' >ml.c
	cap round8-cppcheck-memleak $LINT "" cppcheck --error-exitcode=1 ml.c

	# C and C++ tests, a shell test
	ver sh -c 'dpkg-query -W -f "check ${Version}\n" check'
	fresh
	printf '#include <check.h>\n#include <stdlib.h>\n\nstatic int add(int a, int b) { return a - b; }\n\nSTART_TEST(test_add) { ck_assert_int_eq(add(2, 3), 5); }\nEND_TEST\n\nint main(void) {\n\tSuite *s = suite_create("calc");\n\tTCase *tc = tcase_create("core");\n\ttcase_add_test(tc, test_add);\n\tsuite_add_tcase(s, tc);\n\tSRunner *r = srunner_create(s);\n\tsrunner_set_fork_status(r, CK_NOFORK);\n\tsrunner_run_all(r, CK_NORMAL);\n\tint failed = srunner_ntests_failed(r);\n\tsrunner_free(r);\n\treturn failed ? EXIT_FAILURE : EXIT_SUCCESS;\n}\n' >ck.c
	gcc ck.c -o t_check $(pkg-config --cflags --libs check 2>/dev/null || echo -lcheck) 2>/dev/null
	cap round8-check-fail $TEST "" ./t_check
	ver sh -c 'dpkg-query -W -f "cunit ${Version}\n" libcunit1-dev'
	printf '#include <CUnit/Basic.h>\n\nstatic int add(int a, int b) { return a - b; }\n\nstatic void test_add(void) { CU_ASSERT_EQUAL(add(2, 3), 5); }\n\nint main(void) {\n\tCU_initialize_registry();\n\tCU_pSuite s = CU_add_suite("calc", NULL, NULL);\n\tCU_add_test(s, "adds", test_add);\n\tCU_basic_set_mode(CU_BRM_VERBOSE);\n\tCU_basic_run_tests();\n\tint failed = CU_get_number_of_failures();\n\tCU_cleanup_registry();\n\treturn failed ? 1 : 0;\n}\n' >cu.c
	gcc cu.c -o t_cunit -lcunit 2>/dev/null
	cap round8-cunit-fail $TEST "" ./t_cunit
	ver sh -c 'dpkg-query -W -f "doctest ${Version}\n" doctest-dev'
	printf '#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n#include <doctest/doctest.h>\n\nstatic int add(int a, int b) { return a - b; }\n\nTEST_CASE("adds") { CHECK(add(2, 3) == 5); }\n' >dt.cpp
	g++ dt.cpp -o t_doctest 2>/dev/null
	cap round8-doctest-fail $TEST "" ./t_doctest
	ver sh -c 'dpkg-query -W -f "shunit2 ${Version}\n" shunit2'
	printf '#!/bin/sh\nadd() { echo $(($1 - $2)); }\ntestAdd() { assertEquals "adds" 5 "$(add 2 3)"; }\n. shunit2\n' >t_add.sh
	cap round8-shunit2-fail $TEST "" sh t_add.sh
	ver cmake --version
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(calc CXX)\nenable_testing()\nadd_executable(t_calc t.cpp)\nadd_test(NAME calc COMMAND t_calc)\n' >CMakeLists.txt
	printf '#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n\nstatic int mul(int a, int b) { return a + b; }\n\nTEST_CASE("multiplies") { CHECK(mul(2, 3) == 6); }\n' >t.cpp
	cmake -S . -B build >/dev/null 2>&1 && cmake --build build >/dev/null 2>&1
	ver ctest --version
	cap round8-ctest-catch2 $TEST "" ctest --test-dir build --output-on-failure

	# CMake and Meson
	ver cmake --version
	fresh
	printf 'int main(void) { return 0; }\n' >main.c
	printf 'cmake_minimum_required(VERSION 3.18)\nproject(app C)\nfind_library(ZSTD_LIB zstd_missing REQUIRED)\nadd_executable(app main.c)\n' >CMakeLists.txt
	cap round8-cmake-find-library $DEP "" cmake -S . -B build
	fresh
	printf 'int main(void) { return 0; }\n' >main.c
	printf 'cmake_minimum_required(VERSION 3.18)\nproject(app C)\nfind_program(PROTOC protoc-missing REQUIRED)\nadd_executable(app main.c)\n' >CMakeLists.txt
	cap round8-cmake-find-program $DEP command_exists:protoc-missing cmake -S . -B build
	fresh
	printf 'cmake_minimum_required(VERSION 3.99)\nproject(app C)\n' >CMakeLists.txt
	cap round8-cmake-min-version $CONF "" cmake -S . -B build
	fresh
	printf 'int main(void) { return 0; }\n' >main.c
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app C)\ninclude(Dependencies)\nadd_executable(app main.c)\n' >CMakeLists.txt
	cap round8-cmake-include-missing $CONF "" cmake -S . -B build
	ver meson --version
	fresh
	printf "project('app', 'c')\nsubdir('src')\n" >meson.build
	cap round8-meson-subdir-missing $CONF "" meson setup build
	fresh
	printf "project('app', 'c')\nexecutable('app', 'main.c')\n" >meson.build
	printf 'int main(void) { return 0; }\n' >main.c
	cap round8-meson-compiler-missing $DEP command_exists:cc-missing env CC=cc-missing meson setup build

	# pnpm, yarn, npm, Composer
	jsver pnpm
	fresh
	cap round8-pnpm-no-manifest $CONF "" "$J/pnpm" install --store-dir "$W/pnpm-store"
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	cap round8-pnpm-exec-missing $DEP command_exists:tsx-missing "$J/pnpm" exec tsx-missing src/index.ts
	printf '{"name":"app","version":"1.0.0","dependencies":{"left-pad":"1.3.0"}}\n' >package.json
	cap round8-pnpm-offline $DEP "" "$J/pnpm" install --offline --store-dir "$W/pnpm-empty-store"
	YC="$JSTOOLS/node_modules/yarn/bin/yarn.js"
	ver node "$YC" --version
	fresh
	printf '{"name":"app","version":"1.0.0","license":"MIT","dependencies":{"left-pad":"1.3.0"}}\n' >package.json
	cap round8-yarn-offline $DEP "" node "$YC" install --offline --cache-folder "$W/yarn-empty-cache"
	YB="$JSTOOLS/node_modules/@yarnpkg/cli-dist/bin/yarn.js"
	ver node "$YB" --version
	fresh
	printf '{"name":"app","version":"1.0.0","scripts":{"test":"node check.js"}}\n' >package.json
	printf 'console.error("3 snapshots are obsolete");\nprocess.exit(1);\n' >check.js
	printf 'enableTelemetry: false\nnodeLinker: node-modules\ncacheFolder: "%s/berry-cache"\nnpmRegistryServer: "http://127.0.0.1:9"\nunsafeHttpWhitelist: ["127.0.0.1"]\n' "$W" >.yarnrc.yml
	touch yarn.lock
	node "$YB" install >/dev/null 2>&1
	cap round8-yarn-berry-missing-script $CONF "" node "$YB" run build
	cap round8-yarn-berry-script-fails "" "" node "$YB" run test
	cap round8-yarn-berry-unreachable $DEP "" node "$YB" add left-pad
	ver npm --version
	fresh
	cap round8-npm-no-package-json $CONF "" npm run build
	ver composer --version
	fresh
	cap round8-composer-no-json $CONF "" env COMPOSER_HOME="$W/composer" composer install --no-interaction
	printf '{"name":"acme/app","require":{"monolog/monolog":"^99.0"},"repositories":[{"packagist.org":false}]}\n' >composer.json
	cap round8-composer-unresolvable $DEP "" env COMPOSER_HOME="$W/composer" composer install --no-interaction
	printf '{"name":"acme/app","require":{"monolog/monolog":"^3.0"},"repositories":[{"packagist.org":false},{"type":"composer","url":"http://127.0.0.1:9"}],"config":{"secure-http":false}}\n' >composer.json
	cap round8-composer-unreachable $DEP "" env COMPOSER_HOME="$W/composer" composer install --no-interaction

	# Terraform
	if command -v terraform >/dev/null 2>&1; then
		ver terraform version
		printf 'provider_installation {\n  network_mirror {\n    url = "https://127.0.0.1:9/providers/"\n  }\n}\n' >"$W/tf.rc"
		TF="env TF_CLI_CONFIG_FILE=$W/tf.rc TF_IN_AUTOMATION=1"
		fresh
		printf 'output "bucket_id" {\n  value = aws_s3_bucket.assets.id\n}\n' >main.tf
		cap round8-terraform-undeclared-resource $CONF "" $TF terraform validate -no-color
		fresh
		printf 'variable "replicas" {\n  type = number\n  validation {\n    condition     = var.replicas >= 1 && var.replicas <= 5\n    error_message = "replicas must be between 1 and 5."\n  }\n}\n\noutput "replicas" {\n  value = var.replicas\n}\n' >main.tf
		$TF terraform init -input=false -no-color >/dev/null 2>&1
		cap round8-terraform-variable-validation $CONF "" $TF terraform plan -input=false -no-color -var replicas=9
		fresh
		mkdir -p modules/net && printf 'output "id" {\nvalue = "n-1"\n}\n' >modules/net/main.tf
		printf 'module "net" {\n  source = "./modules/net"\n}\n' >main.tf
		cap round8-terraform-fmt-recursive $LINT "" $TF terraform fmt -check -recursive
	fi

	# Ports: WEBrick, ncat, aiohttp, Java's HttpServer, vite's dev server
	ver ruby --version
	fresh
	cap round8-webrick-in-use $PORT port_free:18122 hold 18122 timeout 10 ruby -run -e httpd -- --bind-address=127.0.0.1 --port=18122 .
	ver ncat --version
	cap round8-ncat-in-use $PORT port_free:18124 hold 18124 timeout 5 ncat -l 127.0.0.1 18124
	ver $PY -c 'import aiohttp; print("aiohttp", aiohttp.__version__)'
	printf 'from aiohttp import web\n\napp = web.Application()\nweb.run_app(app, host="127.0.0.1", port=18125)\n' >srv.py
	cap round8-aiohttp-in-use $PORT port_free:18125 hold 18125 timeout 10 $PY srv.py
	ver java -version
	printf 'import com.sun.net.httpserver.HttpServer;\nimport java.net.InetSocketAddress;\n\npublic class Api {\n  public static void main(String[] a) throws Exception {\n    HttpServer s = HttpServer.create(new InetSocketAddress(18126), 0);\n    s.start();\n  }\n}\n' >Api.java
	cap round8-java-httpserver-in-use $PORT "" hold 18126 timeout 20 java Api.java
	jsver vite
	fresh
	ln -s "$JSTOOLS/node_modules" node_modules
	printf '{"name":"app","version":"1.0.0","type":"module"}\n' >package.json
	printf '<!doctype html>\n<p>hi</p>\n' >index.html
	cap round8-vite-dev-in-use $PORT port_free:18128 hold 18128 timeout 15 "$J/vite" --port 18128 --strictPort --host 127.0.0.1

	# Refused connections: PyMySQL, Node's mysql and mongodb, a cache behind go-redis
	ver $PY -c 'import pymysql; print("PyMySQL", pymysql.__version__)'
	fresh
	cap round8-pymysql-refused $DB "" $PY -c 'import pymysql
pymysql.connect(host="127.0.0.1", port=13307, user="app", password="secret", connect_timeout=3)'
	jsver mysql
	printf 'const mysql = require("mysql");\nconst c = mysql.createConnection({ host: "127.0.0.1", port: 13308, user: "app" });\nc.connect(err => { if (err) { console.error(err); process.exit(1); } });\n' >my.js
	cap round8-node-mysql-refused $DB tcp_reachable:127.0.0.1:13308 node my.js
	jsver mongodb
	printf 'const { MongoClient } = require("mongodb");\nnew MongoClient("mongodb://127.0.0.1:27018", { serverSelectionTimeoutMS: 1500 }).connect().catch(e => { console.error(e); process.exit(1); });\n' >mg.js
	cap round8-node-mongodb-refused $DB tcp_reachable:127.0.0.1:27018 node mg.js
	ver go version
	fresh; gomod
	printf 'package main\n\nimport (\n\t"context"\n\t"log"\n\n\t"github.com/redis/go-redis/v9"\n)\n\nfunc main() {\n\topt, _ := redis.ParseURL("redis://127.0.0.1:16391/0")\n\tif err := redis.NewClient(opt).Ping(context.Background()).Err(); err != nil {\n\t\tlog.Fatalf("cache: %%v", err)\n\t}\n}\n' >main.go
	go get github.com/redis/go-redis/v9@v9.7.0 >/dev/null 2>&1
	cap round8-go-cache-refused $DB tcp_reachable:127.0.0.1:16391 go run .

	# Variables: env-schema, pydantic, os.environ.get, process.env, zod
	jsver env-schema
	fresh
	printf 'const envSchema = require("env-schema");\nenvSchema({ schema: { type: "object", required: ["JWT_SECRET"], properties: { JWT_SECRET: { type: "string" } } } });\n' >es.js
	cap round8-env-schema $ENV env_var_present:JWT_SECRET env -i PATH="$PATH" NODE_PATH="$NODE_PATH" node es.js
	ver $PY -c 'import pydantic; print("pydantic", pydantic.VERSION)'
	printf 'from pydantic import BaseSettings\n\n\nclass AppSettings(BaseSettings):\n    stripe_key: str\n    database_url: str\n\n\nAppSettings()\n' >two.py
	cap round8-pydantic-two-fields $ENV env_var_present:STRIPE_KEY,env_var_present:DATABASE_URL $PY two.py
	ver $PY --version
	printf 'import os\n\nmode = os.environ.get("DEPLOY_MODE").lower()\nprint(mode)\n' >mode.py
	cap round8-python-environ-get-lower $ENV env_var_present:DEPLOY_MODE $PY mode.py
	ver node --version
	printf 'const api = new URL(process.env.API_URL);\nconsole.log(api.host);\n' >url.js
	# Node's stack stops in its own URL parser: the output does not name
	# the variable (as node-env-undefined-split), so no tag.
	cap round8-node-env-url "" "" node url.js
	printf 'const fs = require("fs");\nconst cert = fs.readFileSync(process.env.TLS_CERT_PATH);\nconsole.log(cert.length);\n' >cert.js
	cap round8-node-env-fs-path "" "" node cert.js
	jsver zod
	printf 'const { z } = require("zod");\nconst r = z.object({ REDIS_URL: z.string() }).safeParse(process.env);\nif (!r.success) {\n  console.error("bad environment:", z.flattenError(r.error).fieldErrors);\n  process.exit(1);\n}\n' >fl.js
	cap round8-zod-flatten-env $ENV env_var_present:REDIS_URL node fl.js

	# Tests: node-tap, ava, Django's test runner; linters: biome, oxlint, commitlint
	jsver tap
	fresh
	ln -s "$JSTOOLS/node_modules" node_modules
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	printf 'const t = require("tap");\nconst add = (a, b) => a - b;\nt.equal(add(2, 3), 5, "adds");\n' >add.test.js
	cap round8-tap-fail $TEST "" node add.test.js
	jsver ava
	printf '{"name":"app","version":"1.0.0","type":"module"}\n' >package.json
	printf 'import test from "ava";\n\ntest("totals", t => {\n\tt.deepEqual({ total: 3, items: 2 }, { total: 4, items: 2 });\n});\n' >tot.test.js
	cap round8-ava-deep-equal $TEST "" "$J/ava" tot.test.js
	printf 'process.on("exit", c => {});\nPromise.reject(new Error("upstream returned 503 for /v1/rates"));\n' >rej.js
	ver node --version
	cap round8-node-unhandled-rejection "" "" node rej.js
	jsver @biomejs/biome
	printf 'if (a == 1) { console.log("one"); }\n' >b.js
	cap round8-biome-lint $LINT "" "$J/biome" lint b.js
	jsver oxlint
	printf 'function f() {\n  debugger;\n  return 1;\n}\nf();\n' >o.js
	cap round8-oxlint $LINT "" "$J/oxlint" -D no-debugger o.js
	jsver @commitlint/cli
	fresh
	ln -s "$JSTOOLS/node_modules" node_modules
	printf 'module.exports = { extends: ["@commitlint/config-conventional"] };\n' >commitlint.config.js
	cap round8-commitlint $LINT "" sh -c 'echo "Fixed the thing" | "$0" --extends @commitlint/config-conventional' "$J/commitlint"
	ver $PY -m pytest --version
	fresh
	printf 'CONFIG = {"region": "eu-west-1"}\n\n\ndef test_bucket():\n    assert CONFIG["bucket"].startswith("assets-")\n' >test_cfg.py
	cap round8-pytest-dict-keyerror "" "" $PY -m pytest -q -p no:cacheprovider test_cfg.py
	ver $PY -c 'import django; print("Django", django.get_version())'
	django-admin startproject mysite . >/dev/null 2>&1
	mkdir -p mysite/tests && touch mysite/tests/__init__.py
	printf 'from django.test import SimpleTestCase\n\n\ndef slug(s):\n    return s.lower()\n\n\nclass SlugTest(SimpleTestCase):\n    def test_spaces(self):\n        self.assertEqual(slug("Hello World"), "hello-world")\n' >mysite/tests/test_slug.py
	cap round8-django-test-fail $TEST "" $PY manage.py test mysite.tests
}

# sec_round9: a ninth batch, captured and labelled before any rule was
# written from it; its rules were written from round6 to round8 and the
# tools' documentation. Tools and wordings none of them had: other
# missing headers and libraries, C and C++ errors and warnings made
# errors, CMake's OpenSSL, Python3 version and missing targets, Meson's
# versioned dependency and combo option, a hand-written ninja file,
# autoconf's headers, pnpm's peer dependencies, yarn's 404, npm
# workspaces, poetry's packages, pip's requirements file, Composer's
# validation, Bundler without a Gemfile, Terraform's file() and module
# directories; a Rust, an Erlang, a memcached and a Django server on a
# taken port, a port given as a bare argument; SQLAlchemy, Sequel,
# pymemcache, Celery and phpredis refused; pydantic with an env alias,
# JSON.parse of process.env, zod with two variables, Django's settings,
# Node's assert on process.env; ava's throws, GoogleTest's ASSERT_TRUE,
# test-unit; biome's formatter, htmlhint; and failures no tag fits.
sec_round9() {
	needr6
	for p in rustc:rustc erl:erlang-base memcached:memcached \
		/usr/lib/ruby/vendor_ruby/sequel.rb:ruby-sequel /usr/lib/x86_64-linux-gnu/ruby/vendor_ruby/3.1.0/pg_ext.so:ruby-pg \
		/usr/lib/ruby/vendor_ruby/test/unit.rb:ruby-test-unit /usr/include/gtest/gtest.h:libgtest-dev; do
		need "${p%%:*}" "${p#*:}"
	done
	for m in sqlalchemy:python3-sqlalchemy MySQLdb:python3-mysqldb pymemcache:python3-pymemcache celery:python3-celery redis:python3-redis; do
		$PY -c "import ${m%%:*}" 2>/dev/null || need "/usr/lib/python3/dist-packages/${m%%:*}" "${m#*:}"
	done
	php -m 2>/dev/null | grep -qx redis || need /usr/lib/php/20220829/redis.so php-redis
	[ -d "$JSTOOLS/node_modules/htmlhint" ] || (cd "$JSTOOLS" && npm install --no-audit --no-fund htmlhint >/dev/null 2>&1) ||
		echo "capture.sh: could not install htmlhint" >&2
	export NODE_PATH=$JSTOOLS/node_modules

	# C and C++
	ver gcc --version
	fresh
	printf '#include <sodium.h>\n\nint main(void) { return sodium_init(); }\n' >na.c
	cap round9-gcc-missing-sodium-header $DEP "" gcc -c na.c
	printf '#include "version.h"\n\nconst char *version(void) { return APP_VERSION; }\n' >ver.c
	cap round9-gcc-generated-header-missing $CONF "" gcc -c ver.c
	printf 'int main(void) {\n\tint n = 2;\n\treturn total * n;\n}\n' >tot.c
	cap round9-gcc-undeclared $TYPE "" gcc -c tot.c
	printf 'int sign(int n) {\n\tif (n > 0)\n\t\treturn 1;\n}\n' >rt.c
	cap round9-gcc-werror-return-type $LINT "" gcc -Werror=return-type -c rt.c
	printf '#include <math.h>\n\nint main(int argc, char **argv) { return (int)sqrt((double)argc); }\n' >sq.c
	cap round9-gcc-undefined-sqrt $CONF "" gcc sq.c -o sq
	printf 'int main(void) { return 0; }\n' >ok.c
	ver g++ --version
	cap round9-gxx-cannot-find-lpq $DEP "" g++ -x c++ ok.c -o ok -lpq_missing
	printf '#include <map>\n\nint main() {\n\tstd::map<int, int> m;\n\tm.push_back(1);\n\treturn 0;\n}\n' >map.cpp
	cap round9-gxx-no-member-push-back $TYPE "" g++ -c map.cpp
	printf 'int lib();\n\nint main() { return lib(); }\n' >app.cpp
	cap round9-gxx-missing-input $CONF file_exists:lib.cpp g++ app.cpp lib.cpp -o app
	printf 'class Config {\n\tint port;\n}\n\nint main() { return 0; }\n' >cls.cpp
	cap round9-gxx-syntax-class "" "" g++ -c cls.cpp
	ver clang --version
	printf '#include <uv.h>\n\nint main(void) { return uv_run(uv_default_loop(), UV_RUN_DEFAULT); }\n' >uv.c
	cap round9-clang-missing-uv-header $DEP "" clang -c uv.c
	printf 'int main(void) {\n\tint *p = 2.5;\n\treturn *p;\n}\n' >ptr.c
	cap round9-clang-incompatible-init $TYPE "" clang -c ptr.c
	printf 'static int helper(void) { return 1; }\n\nint main(void) { return 0; }\n' >uf.c
	cap round9-clang-werror-unused-function $LINT "" clang -Wunused-function -Werror -c uf.c
	printf '#include <stdio.h>\n\nint main(void) {\n\tfprintf(stderr, "error: config.toml: line 3: expected \\x27=\\x27 after key \\"replicas\\"\\n");\n\treturn 2;\n}\n' >cfg.c
	gcc cfg.c -o cfg 2>/dev/null
	cap round9-c-config-parse-message "" "" ./cfg
	ver clang-tidy --version
	printf 'double half(int n) {\n\treturn n / 2;\n}\n\ndouble use(int n) { double d = n / 2; return d; }\n' >div.cpp
	cap round9-clang-tidy-bugprone $LINT "" clang-tidy --checks=-*,bugprone-integer-division --warnings-as-errors=* div.cpp --
	ver cppcheck --version
	printf 'int f(int c) {\n\tint x;\n\tif (c)\n\t\tx = 1;\n\treturn x;\n}\n\nint main(void) { return f(0); }\n' >un.c
	cap round9-cppcheck-uninitvar $LINT "" cppcheck --error-exitcode=1 un.c

	# GoogleTest's ASSERT_TRUE
	ver sh -c 'dpkg-query -W -f "googletest ${Version}\n" libgtest-dev'
	printf '#include <gtest/gtest.h>\n\nstatic bool is_even(int n) { return n %% 2 == 1; }\n\nTEST(Parity, Four) { ASSERT_TRUE(is_even(4)); }\n' >p.cc
	g++ p.cc -o t_parity -lgtest -lgtest_main -pthread 2>/dev/null
	cap round9-gtest-assert-true $TEST "" ./t_parity

	# CMake, Meson, ninja, autoconf
	ver cmake --version
	fresh
	printf 'int main(void) { return 0; }\n' >main.c
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app C)\nfind_package(LibArchive REQUIRED)\nadd_executable(app main.c)\n' >CMakeLists.txt
	cap round9-cmake-libarchive $DEP "" cmake -S . -B build
	fresh
	printf 'int main(void) { return 0; }\n' >main.c
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app C)\nfind_package(Python3 3.99 REQUIRED COMPONENTS Interpreter)\nadd_executable(app main.c)\n' >CMakeLists.txt
	cap round9-cmake-python-version $DEP "" cmake -S . -B build
	fresh
	printf 'int main(void) { return 0; }\n' >main.c
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app C)\nadd_executable(app main.c)\ntarget_link_libraries(app PRIVATE Acme::metrics)\n' >CMakeLists.txt
	cap round9-cmake-target-not-found $CONF "" cmake -S . -B build
	ver meson --version
	fresh
	printf 'int main(void) { return 0; }\n' >main.c
	printf "project('app', 'c')\nz = dependency('zlib', version: '>=99')\nexecutable('app', 'main.c', dependencies: z)\n" >meson.build
	cap round9-meson-dependency-version $DEP "" meson setup build
	fresh
	printf 'int main(void) { return 0; }\n' >main.c
	printf "project('app', 'c')\nexecutable('app', 'main.c')\n" >meson.build
	cap round9-meson-combo-option $CONF "" meson setup build -Dbuildtype=fastest
	ver ninja --version
	fresh
	printf 'rule cc\n  command = gcc -c $in -o $out\n\nbuild out.o: cc main.c | gen/schema.h\n' >build.ninja
	printf 'int main(void) { return 0; }\n' >main.c
	cap round9-ninja-missing-input $CONF file_exists:gen/schema.h ninja
	printf 'rule check\n  command = sh -c "echo schema drift detected: 2 columns differ >&2; exit 1"\n\nbuild check: check\n' >build.ninja
	cap round9-ninja-custom-command-fails "" "" ninja check
	ver autoconf --version
	fresh
	printf 'AC_INIT([packer], [1.0])\nAC_PROG_CC\nAC_CHECK_HEADERS([zstd.h], [], [AC_MSG_ERROR([zstd headers not found: install libzstd-dev])])\nAC_OUTPUT\n' >configure.ac
	autoconf >/dev/null 2>&1
	cap round9-configure-header $DEP "" ./configure

	# Package managers
	jsver pnpm
	fresh
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	cap round9-pnpm-peer-deps $DEP "" "$J/pnpm" add --store-dir "$W/pnpm-store" --config.strict-peer-dependencies=true react-dom@18.2.0 react@17.0.2
	YC="$JSTOOLS/node_modules/yarn/bin/yarn.js"
	ver node "$YC" --version
	fresh
	printf '{"name":"app","version":"1.0.0","license":"MIT"}\n' >package.json
	cap round9-yarn-404 $DEP "" node "$YC" add @orket-capture/no-such-package --registry https://registry.npmjs.org --cache-folder "$W/yarn-cache"
	ver npm --version
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	cap round9-npm-no-workspaces $CONF "" npm run build --workspace=api
	ver poetry --version
	fresh
	printf '[tool.poetry]\nname = "app"\nversion = "0.1.0"\ndescription = ""\nauthors = ["A <a@example.com>"]\npackages = [{include = "app"}]\n\n[tool.poetry.dependencies]\npython = "^3.11"\n\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' >pyproject.toml
	env POETRY_CACHE_DIR="$W/poetry-cache" poetry lock --no-interaction >/dev/null 2>&1
	cap round9-poetry-package-missing $CONF "" env POETRY_CACHE_DIR="$W/poetry-cache" poetry build --no-interaction
	ver $PY -m pip --version
	fresh
	cap round9-pip-requirements-missing $CONF file_exists:requirements.txt $PY -m pip download --no-deps -d wheels -r requirements.txt
	ver composer --version
	printf '{"name":"Acme App","require":{"php":">=8.1"}}\n' >composer.json
	cap round9-composer-validate $CONF "" env COMPOSER_HOME="$W/composer" composer validate --no-interaction
	need bundle ruby-bundler
	ver bundle --version
	fresh
	cap round9-bundler-no-gemfile $CONF "" bundle install --local

	# Terraform
	if command -v terraform >/dev/null 2>&1; then
		ver terraform version
		printf 'provider_installation {\n  network_mirror {\n    url = "https://127.0.0.1:9/providers/"\n  }\n}\n' >"$W/tf.rc"
		TF="env TF_CLI_CONFIG_FILE=$W/tf.rc TF_IN_AUTOMATION=1"
		fresh
		printf 'output "policy" {\n  value = file("policies/readonly.json")\n}\n' >main.tf
		$TF terraform init -input=false -no-color >/dev/null 2>&1
		cap round9-terraform-file-missing $CONF file_exists:policies/readonly.json $TF terraform plan -input=false -no-color
		fresh
		printf 'module "dns" {\n  source = "./modules/dns"\n}\n' >main.tf
		cap round9-terraform-module-dir-missing $CONF "" $TF terraform init -input=false -no-color
	fi

	# Ports: Rust, Erlang, memcached, Django, a bare argument
	ver rustc --version
	fresh
	printf 'use std::net::TcpListener;\n\nfn main() {\n    let l = TcpListener::bind("127.0.0.1:18130").unwrap();\n    drop(l);\n}\n' >srv.rs
	rustc -o srv srv.rs 2>/dev/null
	cap round9-rust-bind-in-use $PORT "" hold 18130 ./srv
	printf 'fn main() {\n    let v = vec![1, 2, 3];\n    let i = v.len() + 2;\n    println!("{}", v[i]);\n}\n' >idx.rs
	rustc -o idx idx.rs 2>/dev/null
	cap round9-rust-index-panic "" "" ./idx
	ver sh -c 'erl -noshell -eval "io:format(\"Erlang/OTP ~s~n\", [erlang:system_info(otp_release)]), halt()."'
	cap round9-erlang-eaddrinuse $PORT port_free:18131 hold 18131 erl -noshell -eval '{ok, _} = gen_tcp:listen(18131, [{ip, {127,0,0,1}}]), halt().'
	cap round9-erlang-badarith "" "" erl -noshell -eval 'X = list_to_integer("0"), io:format("~p~n", [10 div X]), halt().'
	ver memcached -V
	cap round9-memcached-in-use $PORT port_free:18132 hold 18132 timeout 5 memcached -u nobody -l 127.0.0.1 -p 18132 -U 0
	ver $PY -c 'import django; print("Django", django.get_version())'
	fresh
	django-admin startproject mysite . >/dev/null 2>&1
	cap round9-django-port-only $PORT port_free:18134 hold 18134 timeout 20 $PY manage.py runserver --noreload 18134
	ver $PY --version
	printf 'import socketserver\nimport sys\nfrom http.server import SimpleHTTPRequestHandler\n\nwith socketserver.TCPServer(("127.0.0.1", int(sys.argv[1])), SimpleHTTPRequestHandler) as httpd:\n    httpd.serve_forever()\n' >serve.py
	cap round9-python-port-argument $PORT port_free:18136 hold 18136 timeout 5 $PY serve.py 18136

	# Refused connections: SQLAlchemy, Sequel, pymemcache, Celery, phpredis
	ver $PY -c 'import sqlalchemy; print("SQLAlchemy", sqlalchemy.__version__)'
	fresh
	cap round9-sqlalchemy-psycopg2-refused $DB tcp_reachable:127.0.0.1:15438 $PY -c 'import sqlalchemy
sqlalchemy.create_engine("postgresql+psycopg2://app:secret@127.0.0.1:15438/app").connect()'
	cap round9-sqlalchemy-mysqldb-refused $DB "" $PY -c 'import sqlalchemy
sqlalchemy.create_engine("mysql+mysqldb://app:secret@127.0.0.1:13309/app").connect()'
	ver ruby --version
	cap round9-sequel-refused $DB tcp_reachable:127.0.0.1:15439 ruby -e 'require "sequel"; Sequel.connect("postgres://app:secret@127.0.0.1:15439/app").test_connection'
	ver $PY -c 'import pymemcache; print("pymemcache", pymemcache.__version__)'
	cap round9-pymemcache-refused $DB "" $PY -c 'from pymemcache.client.base import Client
Client(("127.0.0.1", 18133), connect_timeout=2).get("session:42")'
	ver $PY -c 'import celery; print("celery", celery.__version__)'
	printf 'from celery import Celery\n\napp = Celery("tasks", broker="redis://127.0.0.1:16393/0")\napp.conf.broker_connection_retry_on_startup = False\napp.conf.broker_connection_max_retries = 0\n\n\n@app.task\ndef add(a, b):\n    return a + b\n' >tasks.py
	cap round9-celery-broker-refused $DB tcp_reachable:127.0.0.1:16393 timeout 60 $PY -c 'from tasks import add
add.apply_async((2, 3), retry=False)'
	ver php --version
	cap round9-phpredis-refused $DB "" php -r '$r = new Redis(); $r->connect("127.0.0.1", 16394);'

	# Variables: pydantic's env alias, JSON.parse, zod, Django's settings, Node's assert
	ver $PY -c 'import pydantic; print("pydantic", pydantic.VERSION)'
	fresh
	printf 'from pydantic import BaseSettings, Field\n\n\nclass Settings(BaseSettings):\n    token: str = Field(..., env="SERVICE_TOKEN")\n\n\nSettings()\n' >alias.py
	cap round9-pydantic-env-alias $ENV "" $PY alias.py
	ver node --version
	printf 'const flags = JSON.parse(process.env.FEATURE_FLAGS);\nconsole.log(flags);\n' >flags.js
	# Node shows the JSON parser's input, not the line that read the
	# variable: the output names no variable, so no tag.
	cap round9-node-json-parse-env "" "" node flags.js
	printf 'const assert = require("assert");\nassert.ok(process.env.API_TOKEN, "API_TOKEN is required");\n' >as.js
	cap round9-node-assert-env $ENV env_var_present:API_TOKEN node as.js
	jsver zod
	printf 'const { z } = require("zod");\nz.object({ AWS_REGION: z.string(), S3_BUCKET: z.string() }).parse(process.env);\n' >two.js
	cap round9-zod-two-vars $ENV env_var_present:AWS_REGION,env_var_present:S3_BUCKET env -u AWS_REGION node two.js
	ver $PY -c 'import django; print("Django", django.get_version())'
	fresh
	django-admin startproject mysite . >/dev/null 2>&1
	sed -i 's/^SECRET_KEY = .*/SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]/; s/^from pathlib import Path$/import os\nfrom pathlib import Path/' mysite/settings.py
	cap round9-django-secret-key $ENV env_var_present:DJANGO_SECRET_KEY $PY manage.py check

	# Tests: ava's throws, test-unit
	jsver ava
	fresh
	ln -s "$JSTOOLS/node_modules" node_modules
	printf '{"name":"app","version":"1.0.0","type":"module"}\n' >package.json
	printf 'import test from "ava";\n\nconst parse = s => Number(s);\n\ntest("rejects words", t => {\n\tt.throws(() => parse("ten"));\n});\n' >parse.test.js
	cap round9-ava-throws $TEST "" "$J/ava" parse.test.js
	ver ruby --version
	printf 'require "test/unit"\n\nclass TestCalc < Test::Unit::TestCase\n  def test_add\n    assert_equal(5, 2 - 3)\n  end\nend\n' >calc_test.rb
	cap round9-test-unit-fail $TEST "" ruby calc_test.rb

	# Linters: biome's formatter, htmlhint
	jsver @biomejs/biome
	printf 'const  a = {b:1}\n' >f.js
	cap round9-biome-format $LINT "" "$J/biome" format f.js
	jsver htmlhint
	printf '<div><p>hi</div>\n' >i.html
	cap round9-htmlhint $LINT "" "$J/htmlhint" i.html

	# More of the same families
	ver g++ --version
	fresh
	printf 'int scale(int n) {\n\tint factor = 2;\n\t{\n\t\tint factor = 3;\n\t\tn *= factor;\n\t}\n\treturn n * factor;\n}\n' >sh.cpp
	cap round9-gxx-werror-shadow $LINT "" g++ -Wshadow -Werror -c sh.cpp
	ver clang++ --version
	printf '#include <iostream>\n\nint main() {\n\tcout << "hi";\n}\n' >co.cpp
	cap round9-clangxx-undeclared-cout $TYPE "" clang++ -c co.cpp
	jsver pnpm
	fresh
	printf '{"name":"app","version":"1.0.0","dependencies":{"is-number":"7.0.0"}}\n' >package.json
	printf 'lockfileVersion: [9.0\nimporters: {\n' >pnpm-lock.yaml
	cap round9-pnpm-lockfile-broken $CONF "" "$J/pnpm" install --frozen-lockfile --store-dir "$W/pnpm-store"
	YB="$JSTOOLS/node_modules/@yarnpkg/cli-dist/bin/yarn.js"
	ver node "$YB" --version
	fresh
	printf '{"name":"app","version":"1.0.0","scripts":{"build":"node -v"}}\n' >package.json
	printf 'enableTelemetry: false\n' >.yarnrc.yml
	cap round9-yarn-berry-not-in-lockfile $CONF "" node "$YB" run build
	ver go version
	fresh; gomod
	printf 'package main\n\nimport (\n\t"context"\n\t"log"\n\n\t"github.com/redis/go-redis/v9"\n)\n\nfunc main() {\n\tif err := redis.NewClient(&redis.Options{Addr: "127.0.0.1:16395"}).Ping(context.Background()).Err(); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' >main.go
	go get github.com/redis/go-redis/v9@v9.7.0 >/dev/null 2>&1
	# The bare error names no database: no tag (as go-http-refused).
	cap round9-go-redis-bare-refused "" "" go run .
	ver $PY -c 'import pydantic; print("pydantic", pydantic.VERSION)'
	fresh
	printf 'from pydantic import BaseModel\n\n\nclass Invoice(BaseModel):\n    number: str\n    total: float\n\n\nInvoice(total=12.5)\n' >inv.py
	cap round9-pydantic-model-missing-field "" "" $PY inv.py
	ver $PY -m pytest --version
	printf 'import os\n\n\ndef test_region():\n    region = os.environ.get("AWS_REGION").upper()\n    assert region.startswith("EU")\n' >test_region.py
	cap round9-pytest-environ-get-none $ENV env_var_present:AWS_REGION env -u AWS_REGION $PY -m pytest -q -p no:cacheprovider test_region.py

	# No tag: a refused API call from Node and from Go, a bad value
	ver node --version
	printf 'fetch("http://127.0.0.1:18140/v1/rates").then(r => r.json()).catch(e => { console.error(e); process.exit(1); });\n' >api.js
	cap round9-node-fetch-refused "" "" node api.js
	ver go version
	fresh; gomod
	printf 'package main\n\nimport (\n\t"log"\n\t"net/http"\n)\n\nfunc main() {\n\tif _, err := http.Get("http://127.0.0.1:18141/v1/rates"); err != nil {\n\t\tlog.Fatalf("api: %%v", err)\n\t}\n}\n' >main.go
	cap round9-go-api-refused "" "" go run .
	ver $PY --version
	printf 'import json\n\ncfg = json.loads(\x27{"replicas": "three"}\x27)\nreplicas = int(cfg["replicas"])\n' >rep.py
	cap round9-python-value-error "" "" $PY rep.py
}

# sec_round10: a tenth batch, captured and labelled before any rule was
# written from it; its rules were written from round6 to round9 and the
# tools' documentation. It goes through the families of the issue again,
# each with instances no batch had: other missing headers and libraries,
# undefined references, warnings made errors, g++ and clang++ conversion
# errors, clang-tidy and cppcheck checks, CMake's Protobuf and Boost,
# Meson's dependencies and compile step, ctest; pnpm's versions,
# lockfiles and workspace root, yarn's versions and engines, poetry's
# configuration, index and solver, esbuild, Terraform's init, validate
# and fmt; Django, gunicorn, psycopg 3, Jest and go-redis; zod, pydantic,
# os.getenv and os.environ in pytest and unittest; Python's syntax
# errors, ava, xo and JUnit 4; address in use without the port; and
# failures no tag fits.
sec_round10() {
	needr6
	need rustc rustc
	need nc netcat-openbsd
	need /usr/include/doctest/doctest.h doctest-dev
	export NODE_PATH=$JSTOOLS/node_modules

	# C and C++: headers and libraries
	ver gcc --version
	fresh
	printf '#include <zmq.h>\n\nint main(void) { void *c = zmq_ctx_new(); return c ? 0 : 1; }\n' >q.c
	cap round10-gcc-missing-zmq-header $DEP "" gcc -c q.c
	printf 'int main(void) { return 0; }\n' >ok.c
	cap round10-gcc-cannot-find-lzmq $DEP "" gcc ok.c -o ok -lzmq
	printf 'void uuid_generate(unsigned char *out);\n\nint main(void) { unsigned char u[16]; uuid_generate(u); return u[0]; }\n' >uu.c
	ver clang --version
	printf '#include <event2/event.h>\n\nint main(void) { return event_base_new() ? 0 : 1; }\n' >ev.c
	cap round10-clang-missing-event-header $DEP "" clang -c ev.c
	cap round10-clang-undefined-uuid $CONF "" clang uu.c -o uu
	ver g++ --version
	printf '#include <grpcpp/grpcpp.h>\n\nint main() { return 0; }\n' >rpc.cpp
	cap round10-gxx-missing-grpc-header $DEP "" g++ -c rpc.cpp
	printf '#include <string>\n\nnamespace util { std::string slugify(const std::string &s); }\n\nint main() { return util::slugify("Hello World").size(); }\n' >sl.cpp
	cap round10-gxx-undefined-namespaced $CONF "" g++ sl.cpp -o sl
	ver clang++ --version
	printf 'int main() { return 0; }\n' >ok.cpp
	cap round10-clangxx-cannot-find-lgrpc $DEP "" clang++ ok.cpp -o ok -lgrpc++

	# C and C++: warnings made errors, conversions, syntax
	ver gcc --version
	printf 'int level(int n) {\n\tint r = 0;\n\tswitch (n) {\n\tcase 1:\n\t\tr = 1;\n\tcase 2:\n\t\tr += 2;\n\t\tbreak;\n\t}\n\treturn r;\n}\n' >ft.c
	cap round10-gcc-werror-fallthrough $LINT "" gcc -Wimplicit-fallthrough -Werror -c ft.c
	ver g++ --version
	printf 'struct Job {\n\tint b;\n\tint a;\n\tJob() : a(1), b(a) {}\n};\n\nint main() { Job j; return j.b; }\n' >ro.cpp
	cap round10-gxx-werror-reorder $LINT "" g++ -Wall -Werror -c ro.cpp
	printf 'int main() {\n\tint n{3.5};\n\treturn n;\n}\n' >nar.cpp
	cap round10-gxx-narrowing $TYPE "" g++ -c nar.cpp
	printf 'double half(double x) { return x / 2; }\n\nint main() {\n\tconst char *s = "4";\n\treturn (int)half(s);\n}\n' >cv.cpp
	cap round10-gxx-cannot-convert-arg $TYPE "" g++ -c cv.cpp
	printf '#pragma once\nstruct Config {\n\tint port\n};\n' >config.h
	printf '#include "config.h"\n\nint main() { Config c{8080}; return c.port; }\n' >usecfg.cpp
	cap round10-gxx-syntax-in-header "" "" g++ -c usecfg.cpp
	ver clang++ --version
	printf 'class Cache {\n\tint hits = 0;\n\tint misses = 0;\n\npublic:\n\tint get() { return hits; }\n};\n\nint main() { Cache c; return c.get(); }\n' >pf.cpp
	cap round10-clangxx-werror-unused-field $LINT "" clang++ -Wall -Werror -c pf.cpp
	printf '#include <string>\n\nint main() {\n\tint *p = std::string("x");\n\treturn *p;\n}\n' >sp.cpp
	cap round10-clangxx-init-from-string $TYPE "" clang++ -c sp.cpp

	# clang-tidy, cppcheck
	ver clang-tidy --version
	fresh
	printf '#include <string>\n\nint count(std::string s) { return s.size(); }\n' >pv.cpp
	cap round10-clang-tidy-value-param $LINT "" clang-tidy --checks=-*,performance-unnecessary-value-param --warnings-as-errors=* pv.cpp -- -std=c++17
	printf 'Checks: "-*,misc-unused-parameters"\nWarningsAsErrors: "*"\n' >.clang-tidy
	printf 'int area(int w, int h) { return w * w; }\n' >up.cpp
	cap round10-clang-tidy-config-file $LINT "" clang-tidy up.cpp -- -std=c++17
	ver cppcheck --version
	printf 'int ratio(int total) {\n\tint parts = 0;\n\treturn total / parts;\n}\n' >zd.c
	cap round10-cppcheck-zerodiv $LINT "" cppcheck --error-exitcode=1 zd.c

	# CMake, Meson, ctest
	ver cmake --version
	fresh
	printf 'int main(void) { return 0; }\n' >main.c
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app C)\nfind_package(Protobuf REQUIRED)\nadd_executable(app main.c)\n' >CMakeLists.txt
	cap round10-cmake-protobuf $DEP "" cmake -S . -B build
	fresh
	printf 'int main() { return 0; }\n' >main.cpp
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(app CXX)\nfind_package(Boost 1.80 REQUIRED COMPONENTS filesystem)\nadd_executable(app main.cpp)\n' >CMakeLists.txt
	cap round10-cmake-boost $DEP "" cmake -S . -B build
	ver meson --version
	fresh
	printf 'int main(void) { return 0; }\n' >main.c
	printf "project('viewer', 'c')\ngtk = dependency('gtk4')\nexecutable('viewer', 'main.c', dependencies: gtk)\n" >meson.build
	cap round10-meson-gtk4 $DEP "" meson setup build
	fresh
	printf '#include <archive.h>\n\nint main(void) { return archive_version_number() > 0 ? 0 : 1; }\n' >main.c
	printf "project('unpack', 'c')\nexecutable('unpack', 'main.c')\n" >meson.build
	meson setup build >/dev/null 2>&1
	cap round10-meson-compile-missing-header $DEP "" meson compile -C build
	ver cmake --version
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(calc CXX)\nenable_testing()\nadd_executable(t_calc t.cpp)\nadd_test(NAME calc COMMAND t_calc)\n' >CMakeLists.txt
	printf '#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n#include <doctest/doctest.h>\n\nstatic int sub(int a, int b) { return a + b; }\n\nTEST_CASE("subtracts") { CHECK(sub(5, 3) == 2); }\n' >t.cpp
	cmake -S . -B build >/dev/null 2>&1 && cmake --build build >/dev/null 2>&1
	ver ctest --version
	cap round10-ctest-doctest $TEST "" ctest --test-dir build --output-on-failure
	fresh
	printf 'cmake_minimum_required(VERSION 3.16)\nproject(smoke C)\nenable_testing()\nadd_executable(t_smoke t.c)\nadd_test(NAME smoke COMMAND t_smoke)\n' >CMakeLists.txt
	printf 'int main(void) { return 3; }\n' >t.c
	cmake -S . -B build >/dev/null 2>&1 && cmake --build build >/dev/null 2>&1
	cap round10-ctest-exit-code "" "" ctest --test-dir build --output-on-failure

	# pnpm, yarn, poetry, esbuild
	jsver pnpm
	fresh
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	cap round10-pnpm-scoped-no-version $DEP "" "$J/pnpm" add --store-dir "$W/pnpm-store" @types/node@^99.0.0
	fresh
	printf '{"name":"app","version":"1.0.0","dependencies":{"is-number":"7.0.0","is-odd":"3.0.1"}}\n' >package.json
	"$J/pnpm" install --store-dir "$W/pnpm-store" >/dev/null 2>&1
	printf '{"name":"app","version":"1.0.0","dependencies":{"is-number":"7.0.0"}}\n' >package.json
	cap round10-pnpm-lockfile-extra $CONF "" "$J/pnpm" install --frozen-lockfile --store-dir "$W/pnpm-store"
	YC="$JSTOOLS/node_modules/yarn/bin/yarn.js"
	ver node "$YC" --version
	fresh
	printf '{"name":"app","version":"1.0.0","license":"MIT"}\n' >package.json
	cap round10-yarn-no-version $DEP "" node "$YC" add typescript@99 --registry https://registry.npmjs.org --cache-folder "$W/yarn-cache"
	printf '{"name":"app","version":"1.0.0","license":"MIT","engines":{"yarn":">=99"}}\n' >package.json
	cap round10-yarn-engine-yarn $CONF "" node "$YC" install --cache-folder "$W/yarn-cache"
	ver poetry --version
	fresh
	printf '[tool.poetry]\nname = "app"\ndescription = ""\nauthors = ["A <a@example.com>"]\n\n[tool.poetry.dependencies]\npython = "^3.11"\n\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' >pyproject.toml
	cap round10-poetry-no-version $CONF "" env POETRY_CACHE_DIR="$W/poetry-cache" poetry lock --no-interaction
	fresh
	printf '[tool.poetry]\nname = "app"\nversion = "0.1.0"\ndescription = ""\nauthors = ["A <a@example.com>"]\n\n[tool.poetry.dependencies]\npython = "^3.11"\nfastapi = "^0.110"\n\n[[tool.poetry.source]]\nname = "mirror"\nurl = "http://127.0.0.1:9/pypi/simple/"\ndefault = true\n\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' >pyproject.toml
	cap round10-poetry-mirror-unreachable $DEP "" env POETRY_CACHE_DIR="$W/poetry-cache2" poetry lock --no-interaction
	fresh
	for d in lib:1.0.0 plugin:1.0.0; do
		n=${d%%:*}; mkdir -p $n
		printf '[tool.poetry]\nname = "%s"\nversion = "%s"\ndescription = ""\nauthors = ["A <a@example.com>"]\n\n[tool.poetry.dependencies]\npython = "^3.11"\n%s\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' "$n" "${d#*:}" "$([ $n = plugin ] && echo 'lib = ">=2.0"')" >$n/pyproject.toml
	done
	printf '[tool.poetry]\nname = "app"\nversion = "0.1.0"\ndescription = ""\nauthors = ["A <a@example.com>"]\n\n[tool.poetry.dependencies]\npython = "^3.11"\nlib = {path = "lib"}\nplugin = {path = "plugin"}\n\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' >pyproject.toml
	cap round10-poetry-conflict $DEP "" env POETRY_CACHE_DIR="$W/poetry-cache" poetry lock --no-interaction
	jsver esbuild
	fresh
	printf 'import { Button } from "@acme/ui";\nexport const b = Button;\n' >app.js
	cap round10-esbuild-scoped $DEP "" "$J/esbuild" app.js --bundle --outfile=out.js

	# Terraform
	if command -v terraform >/dev/null 2>&1; then
		ver terraform version
		printf 'provider_installation {\n  network_mirror {\n    url = "https://127.0.0.1:9/providers/"\n  }\n}\n' >"$W/tf.rc"
		TF="env TF_CLI_CONFIG_FILE=$W/tf.rc TF_IN_AUTOMATION=1"
		fresh
		printf 'terraform {\n  required_providers {\n    null = {\n      source  = "hashicorp/null"\n      version = ">= 3.2"\n    }\n  }\n}\n' >main.tf
		cap round10-terraform-init-null $DEP "" $TF terraform init -upgrade -input=false -no-color
		fresh
		printf 'output "name" {\n  value = "a"\n}\n\noutput "name" {\n  value = "b"\n}\n' >main.tf
		cap round10-terraform-duplicate-output $CONF "" $TF terraform validate -no-color
		fresh
		printf 'locals {\n  tags = { env = "prod", }\n  name = "app-" +\n}\n' >main.tf
		cap round10-terraform-invalid-expression $CONF "" $TF terraform validate -no-color
		fresh
		printf 'region="eu-west-1"\nreplicas  =  3\n' >prod.tfvars
		cap round10-terraform-fmt-tfvars $LINT "" $TF terraform fmt -check -diff -no-color
	fi

	# Django, gunicorn, psycopg 3, Jest, go-redis
	ver $PY -c 'import django; print("Django", django.get_version())'
	fresh
	django-admin startproject mysite . >/dev/null 2>&1
	cap round10-django-all-interfaces $PORT port_free:18150 hold 18150 timeout 20 $PY manage.py runserver --noreload 0.0.0.0:18150
	ver gunicorn --version
	printf 'def app(environ, start_response):\n    start_response("200 OK", [])\n    return [b"ok"]\n' >wsgi.py
	cap round10-gunicorn-workers $PORT port_free:18151 hold 18151 timeout 30 gunicorn --workers 2 --bind 0.0.0.0:18151 wsgi:app
	ver $PY -c 'import psycopg; print("psycopg", psycopg.__version__)'
	cap round10-psycopg-url $DB "" $PY -c 'import psycopg
with psycopg.connect("postgresql://app:secret@127.0.0.1:15440/app", connect_timeout=3) as conn:
    conn.execute("select 1")'
	jsver jest
	fresh
	ln -s "$JSTOOLS/node_modules" node_modules
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	printf 'const dayjs = require("dayjs");\ntest("formats", () => { expect(dayjs("2024-01-02").format("YYYY")).toBe("2024"); });\n' >date.test.js
	cap round10-jest-missing-dayjs $DEP "" "$J/jest" --ci date.test.js
	ver go version
	fresh; gomod
	printf 'package main\n\nimport (\n\t"context"\n\t"log"\n\t"time"\n\n\t"github.com/redis/go-redis/v9"\n)\n\nfunc main() {\n\trdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:16396"})\n\tif err := rdb.Set(context.Background(), "session:42", "x", time.Minute).Err(); err != nil {\n\t\tlog.Fatalf("redis set: %%v", err)\n\t}\n}\n' >main.go
	go get github.com/redis/go-redis/v9@v9.7.0 >/dev/null 2>&1
	cap round10-go-redis-set-refused $DB tcp_reachable:127.0.0.1:16396 go run .

	# Variables: zod, pydantic, os.getenv, os.environ
	jsver zod
	fresh
	printf 'const { z } = require("zod");\nz.object({ JWT_SECRET: z.string().min(32), SESSION_KEY: z.string().min(32) }).parse(process.env);\n' >jwt.js
	cap round10-zod-missing-and-short $ENV env_var_present:JWT_SECRET env SESSION_KEY=short node jwt.js
	jsver zod3
	printf 'const { z } = require("zod3");\nconst r = z.object({ DATABASE_URL: z.string().url() }).safeParse(process.env);\nif (!r.success) {\n  console.error("Invalid environment:", r.error.format());\n  process.exit(1);\n}\n' >fmt.js
	cap round10-zod3-format $ENV env_var_present:DATABASE_URL node fmt.js
	ver $PY -c 'import pydantic; print("pydantic", pydantic.VERSION)'
	printf 'from pydantic import BaseSettings\n\n\nclass WorkerConfig(BaseSettings):\n    broker_url: str\n    concurrency: int = 4\n\n\nconfig = WorkerConfig()\n' >wc.py
	cap round10-pydantic-worker-config $ENV "" $PY wc.py
	ver $PY --version
	mkdir -p worker && touch worker/__init__.py
	printf 'import os\n\nWORKERS = int(os.getenv("WORKER_COUNT"))\n' >worker/settings.py
	printf 'from worker.settings import WORKERS\n\nprint(WORKERS)\n' >run.py
	cap round10-python-getenv-module $ENV env_var_present:WORKER_COUNT $PY run.py
	printf 'import os\n\nrate = float(os.getenv("SAMPLE_RATE"))\n' >rate.py
	cap round10-python-getenv-float $ENV env_var_present:SAMPLE_RATE $PY rate.py
	ver $PY -m pytest --version
	printf 'import os\n\nimport pytest\n\n\n@pytest.fixture\ndef db_password():\n    return os.environ["DB_PASSWORD"]\n\n\ndef test_connect(db_password):\n    assert db_password\n' >test_fix.py
	cap round10-pytest-environ-fixture $ENV env_var_present:DB_PASSWORD $PY -m pytest -q -p no:cacheprovider test_fix.py
	printf 'import os\n\n\ndef test_token():\n    assert os.environ["SLACK_BOT_TOKEN"].startswith("xoxb-")\n' >test_tok.py
	cap round10-pytest-environ-native $ENV env_var_present:SLACK_BOT_TOKEN $PY -m pytest -q --tb=native -p no:cacheprovider test_tok.py
	printf 'import os\nimport unittest\n\n\nclass T(unittest.TestCase):\n    def test_url(self):\n        self.assertTrue(os.environ["WEBHOOK_URL"].startswith("https://"))\n\n\nunittest.main()\n' >ut.py
	ver $PY --version
	cap round10-unittest-environ $ENV env_var_present:WEBHOOK_URL $PY ut.py

	# What a new user tries: syntax errors, ava, xo, JUnit 4
	ver $PY --version
	fresh
	printf 'def total(items)\n    return sum(items)\n' >t1.py
	cap round10-python-missing-colon "" "" $PY t1.py
	mkdir -p pkg && touch pkg/__init__.py && printf 'def f():\n    return [1, 2\n' >pkg/util.py
	printf 'from pkg.util import f\n\nprint(f())\n' >main.py
	cap round10-python-syntax-in-import "" "" $PY main.py
	jsver ava
	fresh
	ln -s "$JSTOOLS/node_modules" node_modules
	printf '{"name":"app","version":"1.0.0","type":"module"}\n' >package.json
	printf 'import test from "ava";\n\ntest("slug", t => {\n\tt.regex("Hello World", /^[a-z-]+$/);\n});\n' >slug.test.js
	cap round10-ava-regex $TEST "" "$J/ava" slug.test.js
	printf 'import test from "ava";\n\ntest("user", t => {\n\tt.like({ name: "ada", role: "user" }, { role: "admin" });\n});\n' >like.test.js
	cap round10-ava-like $TEST "" "$J/ava" like.test.js
	jsver xo
	printf 'export function parse(input) {\n  if (input == null) return undefined\n  return JSON.parse(input)\n}\n' >parse.js
	cap round10-xo-parse $LINT "" "$J/xo" parse.js
	printf 'const list = [1, 2, 3];\nfor (var i = 0; i < list.length; i++) {\n    console.log(list[i]);\n}\n' >loop.js
	cap round10-xo-space $LINT "" "$J/xo" --space loop.js
	ver javac -version
	fresh
	printf 'import org.junit.Test;\nimport static org.junit.Assert.assertEquals;\nimport static org.junit.Assert.assertThat;\nimport static org.hamcrest.CoreMatchers.is;\n\npublic class CartTest {\n  static int total(int a, int b) { return a - b; }\n\n  @Test public void totalWithMessage() { assertEquals("total", 5, total(2, 3)); }\n  @Test(expected = IllegalArgumentException.class) public void rejectsNegative() { total(-1, 2); }\n  @Test public void totalWithMatcher() { assertThat(total(2, 3), is(5)); }\n}\n' >CartTest.java
	javac -cp /usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar CartTest.java 2>/dev/null
	cap round10-junit4-three-failures $TEST "" java -cp /usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar:. org.junit.runner.JUnitCore CartTest

	# Address in use without the port
	ver $PY --version
	fresh
	printf 'import os\nimport socket\n\nsrv = socket.create_server(("127.0.0.1", int(os.environ["PORT"])))\n' >cs.py
	cap round10-python-port-from-env $PORT port_free:18152 hold 18152 env PORT=18152 $PY cs.py
	ver java -version
	printf 'import java.net.ServerSocket;\n\npublic class Srv {\n  public static void main(String[] a) throws Exception {\n    new ServerSocket(Integer.parseInt(a[0])).accept();\n  }\n}\n' >Srv.java
	cap round10-java-port-argument $PORT port_free:18154 hold 18154 timeout 20 java Srv.java 18154
	ver rustc --version
	printf 'use std::net::TcpListener;\n\nfn main() {\n    let port = std::env::args().nth(2).unwrap();\n    TcpListener::bind(format!("127.0.0.1:{}", port)).expect("bind");\n}\n' >srv.rs
	rustc -o srv srv.rs 2>/dev/null
	cap round10-rust-port-flag $PORT port_free:18156 hold 18156 ./srv --port 18156
	ver sh -c 'dpkg-query -W -f "netcat-openbsd ${Version}\n" netcat-openbsd'
	cap round10-nc-port-only $PORT port_free:18157 hold 18157 timeout 5 nc -l 18157
	ver php --version
	cap round10-php-localhost $PORT port_free:18158 hold 18158 timeout 5 php -S 127.0.0.1:18158

	# No tag: failures none of the tags fits
	ver node --version
	fresh
	printf 'class QuotaError extends Error {}\nthrow new QuotaError("monthly quota exceeded for tenant acme");\n' >q.js
	cap round10-node-custom-error "" "" node q.js
	ver make --version
	printf 'check:\n\t@echo "3 migrations are pending"; exit 1\n' >Makefile
	cap round10-make-check-fails "" "" make check
	jsver pnpm
	printf '{"name":"app","version":"1.0.0","scripts":{"lint:size":"node -e \\"process.exit(2)\\""}}\n' >package.json
	cap round10-pnpm-script-exit "" "" "$J/pnpm" run lint:size
	ver go version
	fresh; gomod
	printf 'package main\n\nfunc main() {\n\tvar m map[string][]int\n\tm["a"] = append(m["a"], 1)\n}\n' >main.go
	cap round10-go-nil-map "" "" go run .
	ver $PY --version
	printf '{"replicas": 3,}\n' >deploy.json
	cap round10-python-json-config "" "" $PY -c 'import json
json.load(open("deploy.json"))'
	ver g++ --version
	printf '#include <vector>\n\nint main() {\n\tstd::vector<int> v(2);\n\treturn v.at(5);\n}\n' >oor.cpp
	g++ oor.cpp -o oor 2>/dev/null
	cap round10-cxx-out-of-range "" "" ./oor
	ver $PY -m pytest --version
	printf 'def ratio(a, b):\n    return a / b\n\n\ndef test_ratio():\n    assert ratio(1, 0) == 0\n' >test_ratio.py
	cap round10-pytest-zero-division "" "" $PY -m pytest -q -p no:cacheprovider test_ratio.py
}

# sec_families: outputs that exercise rules written from the tools'
# documentation which no blind batch happened to reach. Not a batch:
# captured after the rule, so they measure nothing blind.
sec_families() {
	ver javac -version
	fresh
	printf 'public class Env {\n  public static void main(String[] a) {\n    System.out.println(System.getenv("AWS_REGION").toUpperCase());\n  }\n}\n' >Env.java
	cap java-getenv-null $ENV "" env -u AWS_REGION java Env.java

	# A team's own linters (linter.findings), written from the learning
	# benchmark's traces: known by their command line alone.
	ver go version
	fresh; gomod
	mkdir -p tools/teamlint pkg/stock
	cat >tools/teamlint/main.go <<'GO'
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
)

func main() {
	fset := token.NewFileSet()
	n := 0
	files, _ := filepath.Glob("pkg/*/*.go")
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.IsExported() && fn.Doc == nil {
				fmt.Printf("%s: TL001 exported function %s has no doc comment\n", fset.Position(fn.Pos()), fn.Name.Name)
				n++
			}
		}
	}
	if n > 0 {
		fmt.Printf("teamlint: %d problem(s)\n", n)
		os.Exit(1)
	}
}
GO
	printf 'package stock\n\n// Level is what is on hand.\nfunc Level() int { return 3 }\n\nfunc Reserved() int { return 1 }\n' >pkg/stock/stock.go
	cap team-go-linter $LINT "" go run ./tools/teamlint
	ver node --version
	fresh
	mkdir -p scripts src/checkout
	cat >scripts/lint.mjs <<'JS'
import { readFileSync } from 'node:fs';
const rules = [{ id: 'no-console', re: /console\.log\(/, msg: 'Unexpected console statement' }];
let n = 0;
for (const file of process.argv.slice(2)) {
  readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
    for (const r of rules) {
      if (r.re.test(line)) {
        console.log(`${file}:${i + 1}: error  ${r.msg}  ${r.id}`);
        n++;
      }
    }
  });
}
if (n > 0) {
  console.log(`\n${n} problem(s)`);
  process.exit(1);
}
JS
	printf "export function quote(face) {\n  console.log('quote', face);\n  return face + 1;\n}\n" >src/checkout/index.js
	cap team-node-linter $LINT "" node scripts/lint.mjs src/checkout/index.js
	ver python3 --version
	fresh
	mkdir -p tools app
	cat >tools/lint.py <<'PY'
import ast, sys
n = 0
for path in sys.argv[1:]:
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is None:
            print(f"{path}:{node.lineno}:{node.col_offset + 1}: HL201 bare except hides errors")
            n += 1
sys.exit(1 if n else 0)
PY
	printf 'def load(p):\n    try:\n        return open(p).read()\n    except:\n        return ""\n' >app/io.py
	cap team-python-linter $LINT "" python3 tools/lint.py app/io.py

	# go vet on a package whose test file no longer type-checks (a
	# changed signature): vet names the package twice ("# pkg", "# [pkg]").
	ver go version
	fresh; gomod
	mkdir -p pkg/billing
	printf 'package billing\n\n// Charge charges amount once per key.\nfunc Charge(amount int, key string) int { return amount }\n' >pkg/billing/billing.go
	printf 'package billing\n\nimport "testing"\n\nfunc TestCharge(t *testing.T) {\n\tif Charge(100) != 100 {\n\t\tt.Fatal("charge")\n\t}\n}\n' >pkg/billing/billing_test.go
	cap go-vet-test-callers $TYPE "" go vet ./...

	# JavaScript's API-shape errors (js.type-error): a function that is not
	# one any more, and an export gone, met by their callers' tests, as
	# node --test prints them to a pipe (TAP) and to a terminal.
	ver node --version
	for shape in not-a-function missing-export; do
		fresh
		printf '{"type":"module"}\n' >package.json
		mkdir -p src/pricing src/checkout test
		if [ $shape = not-a-function ]; then
			printf 'export const serviceFee = 150;\n' >src/pricing/index.js
		else
			printf 'export function fee(face) {\n  return 150;\n}\n' >src/pricing/index.js
		fi
		printf "import { serviceFee } from '../pricing/index.js';\nexport function quote(face) {\n  return face + serviceFee(face);\n}\n" >src/checkout/index.js
		printf "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { quote } from '../src/checkout/index.js';\ntest('quote adds the fee', () => {\n  assert.equal(quote(1000), 1150);\n});\n" >test/checkout.test.js
		cap node-test-$shape $TYPE "" node --test
		cap node-test-$shape-spec $TYPE "" node --test --test-reporter=spec
	done
}

# sec_baseline: pairs of one step's output, passing then failing, for the
# evidence-first classification (baselines/NAME.pass.txt, NAME.fail.txt).
sec_baseline() {
	B=$HERE/baselines
	mkdir -p "$B"
	fresh; gomod
	printf 'package m\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc Add(a, b int) int {\n\tif os.Getenv("BREAK") != "" {\n\t\treturn a - b\n\t}\n\treturn a + b\n}\n\nfunc TestCache(t *testing.T) {\n\tif os.Getenv("CACHE_URL") == "" {\n\t\tt.Log("CACHE_URL is not set, caching disabled")\n\t}\n}\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf("Add(2, 3) = %%d, want 5", got)\n\t}\n}\n' >m_test.go
	go test -v -count=1 ./... >"$B/go-test-env-warning.pass.txt" 2>&1
	env BREAK=1 go test -v -count=1 ./... >"$B/go-test-env-warning.fail.txt" 2>&1
	echo "go-test-env-warning: captured"
	fresh; gomod
	printf 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tif os.Getenv("CACHE_URL") == "" {\n\t\tfmt.Println("warning: CACHE_URL is not set")\n\t}\n\tif os.Getenv("BREAK") != "" {\n\t\tfmt.Println("migration 7 did not apply")\n\t\tos.Exit(1)\n\t}\n}\n' >main.go
	go run . >"$B/go-run-no-new-evidence.pass.txt" 2>&1
	env BREAK=1 go run . >"$B/go-run-no-new-evidence.fail.txt" 2>&1
	echo "go-run-no-new-evidence: captured"
}

# Coloured output, as tools print it on a terminal or with FORCE_COLOR in
# CI: the header's NO_COLOR=1 FORCE_COLOR=0 TERM=dumb is undone for each
# command (env -u NO_COLOR FORCE_COLOR=1 TERM=xterm-256color, or the tool's
# own --color=always). "pty" captures run the tool on a pseudo-terminal
# with script(1), which also turns every "\n" into "\r\n" as a terminal
# does; they are kept as script wrote them.
COLOR="env -u NO_COLOR FORCE_COLOR=1 TERM=xterm-256color"
pty() { script -qec "$(printf '%q ' "$@")" /dev/null; }
sec_color() {
	need script bsdutils
	needjs
	export NODE_PATH=$JSTOOLS/node_modules
	ver "$J/jest" --version
	fresh
	printf '{"name":"x","version":"1.0.0"}\n' >package.json
	printf 'function add(a, b) { return a - b; }\ntest("adds", () => { expect(add(2, 3)).toBe(5); });\n' >add.test.js
	cap color-jest-fail $TEST "" $COLOR "$J/jest" --ci --no-cache add.test.js
	printf 'test("slow", async () => { await new Promise(r => setTimeout(r, 2000)); }, 100);\n' >slow.test.js
	cap color-jest-timeout "" "" $COLOR "$J/jest" --ci --no-cache slow.test.js
	cap color-pty-jest-fail $TEST "" pty env -u NO_COLOR TERM=xterm-256color "$J/jest" --ci --no-cache add.test.js
	ver "$J/vitest" --version
	fresh
	mkdir v; printf 'import { test, expect } from "vitest";\nfunction add(a, b) { return a - b; }\ntest("adds", () => { expect(add(2, 3)).toBe(5); });\n' >v/add.test.mjs
	cap color-vitest-fail $TEST "" sh -c 'cd v && exec "$@" run' sh $COLOR "$J/vitest"
	ver "$J/tsc" --version
	fresh
	printf 'const n: number = 1;\nconst s: string = n;\nexport {};\n' >a.ts
	cap color-tsc-pretty $TYPE "" $COLOR "$J/tsc" --noEmit --strict --pretty a.ts
	ver $PY -m pytest --version
	fresh
	printf 'def add(a, b):\n    return a - b\n\n\ndef test_add():\n    assert add(2, 3) == 5\n' >test_add.py
	cap color-pytest-fail $TEST "" $COLOR $PY -m pytest -q -p no:cacheprovider --color=yes test_add.py
	ver cargo --version
	fresh; cargo new -q --vcs none app >/dev/null 2>&1
	printf 'fn main() {\n    let n: i32 = "three";\n    println!("{}", n);\n}\n' >app/src/main.rs
	cap color-rust-mismatched-types $TYPE "" sh -c 'cd app && cargo build --offline -q --color=always'
	printf 'fn add(a: i32, b: i32) -> i32 { a - b }\nfn main() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 3), 5); }\n}\n' >app/src/main.rs
	cap color-rust-test-fail $TEST "" sh -c 'cd app && cargo test --offline -q --color=always'
	ver bash --version
	fresh
	cap color-pty-bash-command-not-found $DEP command_exists:protoc-missing pty bash -c 'protoc-missing --version'
	cap color-pty-bash-unbound-variable $ENV env_var_present:DEPLOY_TARGET pty bash -uc 'echo "deploying to $DEPLOY_TARGET"'
}

# sec_cause: outputs of shapes the corpus lacks for classify/cause.go's
# extractors (a subtest's t.Errorf under go test -v, TestMain, a panic in
# a package's code, unittest and pytest TypeErrors in a package, flake8
# over a package, ESLint 8's stylish format, node --test's TAP and spec
# reporters, Jest's describe blocks, a Rust library's panic under
# RUST_BACKTRACE=1, rustc's E0061). They go to causes/, not outputs/: the
# corpus's scores (docs/lessons.md) are measured on outputs/ alone.
sec_cause() {
	local OUT=$HERE/causes
	mkdir -p "$OUT"
	need /usr/bin/python3 python3
	needjs
	ESLINT8=${ESLINT8:-/tmp/eslint8}
	[ -x "$ESLINT8/node_modules/.bin/eslint" ] || (mkdir -p "$ESLINT8" && cd "$ESLINT8" &&
		{ [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund eslint@8 >/dev/null 2>&1) ||
		echo "capture.sh: could not install eslint@8" >&2

	ver go version
	fresh; printf 'module example.com/shop\n\ngo 1.22\n' >go.mod; mkdir -p pkg/billing pkg/api pkg/cart
	printf 'package billing\n\n// Charge returns the amount charged in cents.\nfunc Charge(cents int, key string) int {\n\tif cents < 0 {\n\t\treturn 0\n\t}\n\treturn cents\n}\n' >pkg/billing/billing.go
	printf 'package billing\n\nimport "testing"\n\nfunc TestCharge(t *testing.T) {\n\tfor _, tc := range []struct {\n\t\tname  string\n\t\tcents int\n\t\twant  int\n\t}{{"zero", 0, 0}, {"negative", -5, -5}, {"refund", -1, -1}} {\n\t\tt.Run(tc.name, func(t *testing.T) {\n\t\t\tif got := Charge(tc.cents, "k"); got != tc.want {\n\t\t\t\tt.Errorf("Charge(%%d) = %%d, want %%d", tc.cents, got, tc.want)\n\t\t\t}\n\t\t})\n\t}\n}\n' >pkg/billing/billing_test.go
	printf 'package api\n\nfunc Ping() string { return "pong" }\n' >pkg/api/api.go
	printf 'package api\n\nimport "testing"\n\nfunc TestPing(t *testing.T) {\n\tif Ping() != "pong" {\n\t\tt.Fatal("no pong")\n\t}\n}\n' >pkg/api/api_test.go
	cap cause-go-subtest-verbose $TEST "" go test -v -count=1 ./...
	printf 'package billing\n\nimport (\n\t"fmt"\n\t"os"\n\t"testing"\n)\n\nfunc TestMain(m *testing.M) {\n\tif os.Getenv("BILLING_KEY") == "" {\n\t\tfmt.Println("BILLING_KEY is not set")\n\t\tos.Exit(1)\n\t}\n\tos.Exit(m.Run())\n}\n' >pkg/billing/main_test.go
	cap cause-go-testmain $ENV env_var_present:BILLING_KEY env -u BILLING_KEY go test -count=1 ./...
	rm pkg/billing/main_test.go
	sed -i 's/"negative", -5, -5}, {"refund", -1, -1}/"negative", -5, 0}, {"refund", -1, 0}/' pkg/billing/billing_test.go
	printf 'package cart\n\n// Cart counts items by SKU.\ntype Cart struct{ items map[string]int }\n\n// Add adds n of sku.\nfunc (c *Cart) Add(sku string, n int) { c.items[sku] += n }\n' >pkg/cart/cart.go
	printf 'package cart\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tvar c Cart\n\tc.Add("A1", 2)\n}\n' >pkg/cart/cart_test.go
	cap cause-go-test-panic-pkg "" "" go test -count=1 ./...
	rm -r pkg/cart
	printf 'package api\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestRoutesGenerated(t *testing.T) {\n\tif _, err := os.Stat("routes_gen.go"); err != nil {\n\t\tt.Fatalf("pkg/api/routes_gen.go is out of date: run go generate ./pkg/api")\n\t}\n}\n' >pkg/api/gen_test.go
	cap cause-go-generate-stale $TEST "" go test -count=1 ./pkg/api
	rm pkg/api/gen_test.go
	printf 'package api\n\nimport "example.com/shop/pkg/billing"\n\n// Checkout charges an order.\nfunc Checkout(cents int) int {\n\treturn billing.Charge(cents)\n}\n' >pkg/api/checkout.go
	cap cause-go-build-args $TYPE "" go build ./...

	ver $PY --version
	fresh; mkdir tests; : >tests/__init__.py
	printf 'def charge(amount, key):\n    """Charges amount with the API key."""\n    return amount\n' >billing.py
	printf 'import unittest\n\nfrom billing import charge\n\n\nclass BillingTest(unittest.TestCase):\n    def test_charge(self):\n        self.assertEqual(charge(100), 100)\n\n\nif __name__ == "__main__":\n    unittest.main()\n' >tests/test_billing.py
	cap cause-unittest-missing-arg $TYPE "" $PY -m unittest tests.test_billing
	printf 'from billing import charge\n\n\ndef test_charge():\n    assert charge(100) == 100\n' >tests/test_billing.py
	ver $PY -m pytest --version
	cap cause-pytest-missing-arg $TYPE "" $PY -m pytest -q -p no:cacheprovider tests
	printf 'def total(prices):\n    """The total of prices, for the receipt."""\n    return sum(prices) + " EUR"\n' >billing.py
	printf 'from billing import total\n\n\ndef test_total():\n    assert total([1, 2]) == "3 EUR"\n' >tests/test_billing.py
	cap cause-pytest-short-module $TYPE "" $PY -m pytest -q --tb=short -p no:cacheprovider tests
	printf 'from billing import refund\n\n\ndef test_refund():\n    assert refund(3) == -3\n' >tests/test_refund.py
	cap cause-pytest-collect-importerror "" "" $PY -m pytest -q -p no:cacheprovider tests/test_refund.py
	fresh; mkdir shop
	printf 'import os\nimport sys\n\n\ndef total(prices):\n    return sum(prices)+tax\n' >shop/billing.py
	printf 'def ok():\n    return 1\n' >shop/api.py
	ver $PY -m flake8 --version
	cap cause-flake8-package $LINT "" $PY -m flake8 shop

	fresh; mkdir src
	printf '{\n  "root": true,\n  "env": {"es2022": true, "node": true},\n  "parserOptions": {"ecmaVersion": 2022, "sourceType": "module"},\n  "extends": "eslint:recommended",\n  "rules": {"no-console": "warn"}\n}\n' >.eslintrc.json
	printf 'export function total(prices) {\n  const unused = 1;\n  console.log(prices);\n  return prices.reduce((a, b) => a + b, taxRate);\n}\n' >src/cart.js
	printf 'export const ok = () => 1;\n' >src/api.js
	jsver_dir() { VER="$1 $(node -p "require('$2/node_modules/$1/package.json').version")"; }
	jsver_dir eslint "$ESLINT8"
	cap cause-eslint8-stylish $LINT "" "$ESLINT8/node_modules/.bin/eslint" src

	ver node --version
	fresh; mkdir test
	printf 'exports.total = (prices) => prices.reduce((a, b) => a + b, 1);\n' >cart.js
	printf 'const { describe, it } = require("node:test");\nconst assert = require("node:assert");\nconst { total } = require("../cart");\n\ndescribe("cart", () => {\n  it("sums prices", () => {\n    assert.strictEqual(total([3, 4]), 7);\n  });\n  it("is zero when empty", () => {\n    assert.strictEqual(total([]), 0);\n  });\n});\n' >test/cart.test.js
	cap cause-node-test-tap $TEST "" node --test test/
	cap cause-node-test-spec $TEST "" node --test --test-reporter=spec test/

	jsver jest
	fresh; mkdir src test
	printf '{\n  "name": "shop",\n  "private": true\n}\n' >package.json
	printf 'function total(items) {\n  return items.reduce((sum, item) => sum + item.price.amount, 0);\n}\nmodule.exports = { total };\n' >src/cart.js
	printf 'const { total } = require("../src/cart");\n\ndescribe("cart", () => {\n  describe("total", () => {\n    test("sums prices", () => {\n      expect(total([{ price: { amount: 2 } }, { price: null }])).toBe(2);\n    });\n  });\n});\n' >test/cart.test.js
	cap cause-jest-describe-thrown "" "" "$J/jest" --ci --no-cache test/cart.test.js

	ver cargo --version
	fresh; cargo new -q --vcs none --lib qty >/dev/null 2>&1; mkdir -p qty/tests
	printf '/// Parses a quantity.\npub fn parse_qty(s: &str) -> u32 {\n    s.trim().parse().unwrap()\n}\n' >qty/src/lib.rs
	printf 'use qty::parse_qty;\n\n#[test]\nfn parses_quantities() {\n    assert_eq!(parse_qty("3"), 3);\n    assert_eq!(parse_qty("three"), 3);\n}\n' >qty/tests/parse.rs
	cap cause-rust-lib-panic-backtrace "" "" sh -c 'cd qty && RUST_BACKTRACE=1 cargo test --offline -q'
	printf '/// Parses a quantity.\npub fn parse_qty(s: &str, max: u32) -> u32 {\n    s.trim().parse::<u32>().unwrap().min(max)\n}\n\npub fn one() -> u32 {\n    parse_qty("1")\n}\n' >qty/src/lib.rs
	cap cause-rustc-e0061 $TYPE "" sh -c 'cd qty && cargo build --offline -q'
}

# The same error printed twice in one step's output: a step that vets and
# then tests, both reporting one compile error; one signal, one annotation.
sec_twice() {
	ver go version
	fresh; gomod
	printf 'package m\n\nfunc Greeting(n string) string { return Prefix + n }\n' >m.go
	printf 'package m\n\nimport "testing"\n\nfunc TestGreeting(t *testing.T) {\n\tif Greeting("Ada") != "Hello, Ada" {\n\t\tt.Fail()\n\t}\n}\n' >m_test.go
	cap go-vet-then-test-undefined $TYPE "" sh -c 'go vet ./...; go test ./...'
}

sections=${*:-go python node rust java shell db ports neg fresh round2 round3 round4 round5 round6 round7 round8 round9 round10 families color twice baseline cause}
for s in $sections; do
	"sec_$s"
done
