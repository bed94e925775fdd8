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
# Sections: go python node rust java shell db ports neg fresh color twice baseline
#
# It installs what it needs when missing: Debian packages with apt-get
# (PostgreSQL, MariaDB, Redis, shellcheck, pytest, mypy, flake8, pylint,
# black, JUnit 4 and 5, the Python drivers), npm packages into $JSTOOLS
# (default /tmp/jstools), Go drivers into a throwaway module through the
# Go module proxy. Servers are started on 127.0.0.1 only, in a temporary
# directory, and stopped on exit. It needs root for apt-get and for
# running PostgreSQL as the postgres user.
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

# The same error printed twice in one step's output: a step that vets and
# then tests, both reporting one compile error; one signal, one annotation.
sec_twice() {
	ver go version
	fresh; gomod
	printf 'package m\n\nfunc Greeting(n string) string { return Prefix + n }\n' >m.go
	printf 'package m\n\nimport "testing"\n\nfunc TestGreeting(t *testing.T) {\n\tif Greeting("Ada") != "Hello, Ada" {\n\t\tt.Fail()\n\t}\n}\n' >m_test.go
	cap go-vet-then-test-undefined $TYPE "" sh -c 'go vet ./...; go test ./...'
}

sections=${*:-go python node rust java shell db ports neg fresh color twice baseline}
for s in $sections; do
	"sec_$s"
done
