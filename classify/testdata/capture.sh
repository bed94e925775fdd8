#!/bin/sh
# capture.sh: regenerate the real tool outputs the classifier's tests use.
# Each file in outputs/ is exactly what a tool printed (stdout and stderr)
# for a small failing case, made here; nothing is written by hand.
# Needs: go, python3, node, cargo, javac, psql, make, bash; pytest, mypy and
# flake8 from Debian; typescript, eslint, jest and vitest from npm in
# $JSTOOLS/node_modules (default /tmp/jstools).
set -u
OUT=$(cd "$(dirname "$0")" && pwd)/outputs
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cap() { name=$1; shift; (cd "$W/case" && "$@") > "$OUT/$name.txt" 2>&1; echo "$name: exit $?"; }
fresh() { rm -rf "$W/case"; mkdir -p "$W/case"; }

# Go
fresh; cd "$W/case"; printf 'module example.com/m\n\ngo 1.22\n' > go.mod
printf 'package main\n\nimport "github.com/segmentio/kafka-go"\n\nfunc main() { _ = kafka.Writer{} }\n' > main.go
cap go-missing-module env GOFLAGS=-mod=mod GOPROXY=off go build ./...
cap go-no-required-module env GOFLAGS= GOPROXY=off go build ./...
fresh; cd "$W/case"; printf 'module example.com/m\n\ngo 1.22\n' > go.mod
printf 'package main\n\nfunc main() {\n\tvar n int = "three"\n\tfmt.Println(n)\n}\n' > main.go
cap go-type-error go build ./...
fresh; cd "$W/case"; printf 'module example.com/m\n\ngo 1.22\n' > go.mod
printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Printf("%%d\\n", "x")\n}\n' > main.go
cap go-vet go vet ./...
fresh; cd "$W/case"; printf 'module example.com/m\n\ngo 1.22\n' > go.mod
printf 'package m\n\nfunc Add(a, b int) int { return a - b }\n' > m.go
printf 'package m\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf("Add(2, 3) = %%d, want 5", got)\n\t}\n}\n' > m_test.go
cap go-test-fail go test ./...
fresh; cd "$W/case"; printf 'module example.com/m\n\ngo 1.22\n' > go.mod
printf 'package m\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestDB(t *testing.T) {\n\tif os.Getenv("DATABASE_URL") == "" {\n\t\tt.Fatal("DATABASE_URL is not set")\n\t}\n}\n' > m_test.go
cap go-env-not-set go test ./...
fresh; cd "$W/case"; printf 'module example.com/m\n\ngo 1.22\n' > go.mod
printf 'package main\n\nimport (\n\t"log"\n\t"net"\n)\n\nfunc main() {\n\tif _, err := net.Dial("tcp", "127.0.0.1:5432"); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' > main.go
cap go-dial-refused go run .
fresh; cd "$W/case"; printf 'module example.com/m\n\ngo 1.22\n' > go.mod
printf 'package main\n\nimport (\n\t"log"\n\t"net"\n)\n\nfunc main() {\n\ta, _ := net.Listen("tcp", "127.0.0.1:18080")\n\tdefer a.Close()\n\tif _, err := net.Listen("tcp", "127.0.0.1:18080"); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' > main.go
cap go-port-in-use go run .
fresh; cd "$W/case"; printf 'module example.com/m\n\ngo 1.22\n' > go.mod
printf 'package main\n\nimport (\n\t"log"\n\t"os"\n)\n\nfunc main() {\n\tif _, err := os.ReadFile("config/app.yaml"); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' > main.go
cap go-open-missing-file go run .
fresh; cd "$W/case"
cap go-no-module go build ./...
fresh; cd "$W/case"; printf 'module example.com/m\n\ngo 1.22\n' > go.mod; printf 'package main\nfunc main(){}\n' > main.go
cap gofmt-l sh -c 'out=$(gofmt -l .); if [ -n "$out" ]; then echo "gofmt: these files are not formatted:"; echo "$out"; exit 1; fi'

# Python
fresh; cd "$W/case"
cap python-module-not-found python3 -c 'import requests_toolbelt_missing'
cap python-env-keyerror python3 -c 'import os
url = os.environ["DATABASE_URL"]'
cap python-file-not-found python3 -c 'open("config/app.yaml")'
cap python-type-error python3 -c 'len(5)'
cap python-assert python3 -c 'assert 1 + 1 == 3, "math is broken"'
cap python-port-in-use python3 -c 'import socket
a = socket.socket(); a.bind(("127.0.0.1", 18081)); a.listen()
b = socket.socket(); b.bind(("127.0.0.1", 18081))'
cap python-conn-refused python3 -c 'import socket
socket.create_connection(("127.0.0.1", 6379))'

# pytest, mypy, flake8 (Debian's python3-pytest, mypy, flake8)
fresh; cd "$W/case"
printf 'def add(a, b):\n    return a - b\n\n\ndef test_add():\n    assert add(2, 3) == 5\n' > test_add.py
cap pytest-assert /usr/bin/python3 -m pytest -q -p no:cacheprovider test_add.py
printf 'def twice(n: int) -> int:\n    return n * 2\n\n\ntwice("x")\n' > typed.py
cap mypy-arg-type mypy --no-incremental --cache-dir=/dev/null typed.py
printf 'import os\nx=1\n' > lint.py
cap flake8-errors flake8 lint.py

# Node
fresh; cd "$W/case"
printf 'require("left-pad-missing")\n' > a.js
cap node-cannot-find-module node a.js
printf 'const net = require("net");\nconst a = net.createServer().listen(18082, () => { net.createServer().listen(18082); });\n' > b.js
cap node-eaddrinuse timeout 5 node b.js
printf 'const net = require("net");\nnet.connect(5432, "127.0.0.1");\n' > c.js
cap node-econnrefused node c.js
printf 'const assert = require("assert");\nassert.strictEqual(1 + 1, 3);\n' > d.js
cap node-assert node d.js
printf 'if (!process.env.API_TOKEN) { throw new Error("Missing required environment variable: API_TOKEN"); }\n' > e.js
cap node-env-missing node e.js

# TypeScript, eslint, jest, vitest (npm packages in $JSTOOLS)
J=${JSTOOLS:-/tmp/jstools}/node_modules/.bin
fresh; cd "$W/case"
printf 'let n: number = "three";\nexport {};\n' > a.ts
cap tsc-type-error "$J/tsc" --noEmit a.ts
printf 'export default [{ rules: { "no-unused-vars": "error", "no-undef": "error" } }];\n' > eslint.config.js
printf 'const unused = 1;\nconsole.log(missing);\n' > b.js
cap eslint-errors "$J/eslint" b.js
printf '{"name":"x","version":"1.0.0"}\n' > package.json
printf 'function add(a, b) { return a - b; }\ntest("adds", () => { expect(add(2, 3)).toBe(5); });\n' > add.test.js
cap jest-fail "$J/jest" --ci --no-cache add.test.js
mkdir v; printf 'import { test, expect } from "vitest";\nfunction add(a, b) { return a - b; }\ntest("adds", () => { expect(add(2, 3)).toBe(5); });\n' > v/add.test.mjs
cap vitest-fail sh -c 'cd v && NO_COLOR=1 "$0" run --no-color' "$J/vitest"

# More build configuration and environment failures.
fresh; cd "$W/case"
printf '{"name":"x","version":"1.0.0","scripts":{"test":"true"}}\n' > package.json
cap npm-missing-script npm run lint
printf 'require("fs").readFileSync("config/app.json");\n' > r.js
cap node-enoent node r.js
printf 'if (!process.env.REDIS_URL) { console.error("error: environment variable REDIS_URL is not set"); process.exit(1); }\n' > e2.js
cap node-env-var-not-set node e2.js
fresh; cd "$W/case"; printf 'module example.com/m\n\ngo 1.22\n' > go.mod
printf 'package main\n\nimport (\n\t"log"\n\t"os/exec"\n)\n\nfunc main() {\n\tif err := exec.Command("protoc-missing", "--version").Run(); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n' > main.go
cap go-exec-not-found go run .
fresh; mkdir -p "$W/case/gp/src/app"; cd "$W/case/gp/src/app"
printf 'package main\n\nimport "github.com/nobody/missingpkg"\n\nfunc main() { missingpkg.Do() }\n' > main.go
cap go-gopath-missing env GO111MODULE=off GOPATH="$W/case/gp" sh -c 'cd gp/src/app && go build .'
fresh; cd "$W/case"; printf '[package\nname = "x"\n' > Cargo.toml
cap cargo-bad-manifest cargo build --offline -q
fresh; cd "$W/case"; cargo new -q --vcs none cl >/dev/null 2>&1
printf 'fn main() {\n    let v = vec![1, 2, 3];\n    if v.len() == 0 { println!("empty"); }\n}\n' > cl/src/main.rs
cap clippy-len-zero sh -c 'cd cl && cargo clippy --offline -q -- -D warnings'

# Shell, make
fresh; cd "$W/case"
cap sh-command-not-found sh -c 'terraform-missing-cli plan'
cap bash-command-not-found bash -c 'kubectl-missing apply -f x.yaml'
cap bash-unbound-variable bash -c 'set -u; echo "$DEPLOY_TARGET"'
printf 'all:\n\ttrue\n' > Makefile
cap make-no-rule make lint

# Rust
fresh; cd "$W/case"; cargo new -q --vcs none app >/dev/null 2>&1; cd app
printf 'fn main() {\n    let n: i32 = "three";\n    println!("{}", n);\n}\n' > src/main.rs
cap rust-mismatched-types sh -c 'cd app && cargo build --offline -q'
printf 'fn add(a: i32, b: i32) -> i32 { a - b }\nfn main() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 3), 5); }\n}\n' > src/main.rs
cap rust-test-fail sh -c 'cd app && cargo test --offline -q'
printf 'use serde_missing::Serialize;\nfn main() {}\n' > src/main.rs
cap rust-unresolved-crate sh -c 'cd app && cargo build --offline -q'

# Java
fresh; cd "$W/case"
printf 'public class A {\n  public static void main(String[] a) {\n    int n = "three";\n  }\n}\n' > A.java
cap javac-incompatible-types javac A.java
printf 'import com.google.gson.Gson;\npublic class B {\n  public static void main(String[] a) { new Gson(); }\n}\n' > B.java
cap javac-package-missing javac B.java

# Failures no rule should claim.
fresh; cd "$W/case"
cap plain-fail sh -c 'echo "step 3 of 5: something went wrong"; echo "FAIL: HTTP JSON response was not OK"; exit 1'
cap curl-refused curl -sS --max-time 5 http://127.0.0.1:9/

# Databases
fresh; cd "$W/case"
cap psql-refused psql -h 127.0.0.1 -p 5432 -U app -c 'select 1'
