package classify

import (
	"net"
	"regexp"
	"strconv"

	"github.com/orket/orket/preflight"
)

// The baseline tags.
const (
	MissingEnvVar       = "missing_env_var"
	MissingDependency   = "missing_dependency"
	TypeError           = "type_error"
	LintError           = "lint_error"
	TestAssertionFailed = "test_assertion_failed"
	BuildConfigError    = "build_config_error"
	PortInUse           = "port_in_use"
	DBConnectionFailed  = "db_connection_failed"
)

// A Rule recognises one kind of failure in tool output.
type Rule struct {
	ID         string
	Tag        string
	Tool       string // whose output it reads, for the catalogue
	Pattern    *regexp.Regexp
	Confidence float64 // how specific the evidence is, 0..1
	// Check builds the preflight check the match implies, from the
	// submatches; nil when it implies none.
	Check func(m []string) *preflight.Check
	// Subject names what the failure is about ("DATABASE_URL",
	// "github.com/x/y"), for the advice; from the submatches.
	Subject func(m []string) string
	// Reject, when set, drops a match whose text it matches: the pattern
	// found the shape, but this instance is evidence of something else
	// (a Go test's t.Fatal line that only reports a refused connection).
	Reject *regexp.Regexp
	// Requires, when set, must match somewhere in the output for the rule
	// to apply: the context that makes the evidence mean what the tag says
	// (a database client's name beside a refused connection).
	Requires *regexp.Regexp
	// Unless, when set, vetoes the rule on an output where it matches
	// anywhere: a test that panicked, raced or timed out did not fail an
	// assertion, whatever its runner printed after.
	Unless *regexp.Regexp

	userChecks []preflight.Check // checks a user rule declares
}

func group(i int) func([]string) string {
	return func(m []string) string {
		if i < len(m) {
			return m[i]
		}
		return ""
	}
}

func envCheck(i int) func([]string) *preflight.Check {
	return func(m []string) *preflight.Check {
		if !envName.MatchString(m[i]) {
			return nil
		}
		return &preflight.Check{Type: preflight.EnvVarPresent, Name: m[i]}
	}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func commandCheck(i int) func([]string) *preflight.Check {
	return func(m []string) *preflight.Check {
		return &preflight.Check{Type: preflight.CommandExists, Command: m[i]}
	}
}

func fileCheck(i int) func([]string) *preflight.Check {
	return func(m []string) *preflight.Check {
		return &preflight.Check{Type: preflight.FileExists, Path: m[i]}
	}
}

func portCheck(i int) func([]string) *preflight.Check {
	return func(m []string) *preflight.Check {
		p, err := strconv.Atoi(m[i])
		if err != nil || p < 1 || p > 65535 {
			return nil
		}
		return &preflight.Check{Type: preflight.PortFree, Port: p}
	}
}

// addrCheck builds a tcp_reachable check from a host and a port group.
func addrCheck(host, port int) func([]string) *preflight.Check {
	return func(m []string) *preflight.Check {
		p, err := strconv.Atoi(m[port])
		if err != nil || p < 1 || p > 65535 || m[host] == "" {
			return nil
		}
		return &preflight.Check{Type: preflight.TCPReachable, Address: net.JoinHostPort(m[host], m[port])}
	}
}

// dbPorts are the well-known ports of databases and caches: a refused
// connection to one of them is a database that is not running.
const dbPorts = `5432|3306|6379|27017|1433|1521|9042|5984|11211|26257|9200|5433|3307|6380`

// envVar is an environment variable's name as failure messages spell it:
// upper case with at least one underscore or digit, so that plain words
// (FAIL, HTTP, JSON) never pass for one.
const envVar = `[A-Z][A-Z0-9]*_[A-Z0-9_]*|[A-Z]+[0-9][A-Z0-9_]*`

// Builtin is the catalogue, in priority order: when several rules match,
// the first one's tag leads the advice. More specific rules come first.
var Builtin = []Rule{
	// missing_env_var
	{ID: "env.named-not-set", Tag: MissingEnvVar, Tool: "any", Confidence: 0.9,
		Pattern: regexp.MustCompile(`(?:environment variable|env var|env)\s*[:"'\x60]?\s*\$?(` + envVar + `|[A-Z]{2,})["'\x60]?\s+(?:is\s+)?(?:not set|unset|missing|required|not defined|undefined|empty)`),
		Check:   envCheck(1), Subject: group(1)},
	{ID: "env.missing-required", Tag: MissingEnvVar, Tool: "any", Confidence: 0.9,
		Pattern: regexp.MustCompile(`(?i:missing|required|undefined|unset)\s+(?i:environment variable|env var)s?:?\s*["'\x60]?\$?([A-Za-z_][A-Za-z0-9_]*)`),
		Check:   envCheck(1), Subject: group(1)},
	{ID: "env.not-set", Tag: MissingEnvVar, Tool: "any", Confidence: 0.8,
		Pattern: regexp.MustCompile(`\$?\b(` + envVar + `)\b["'\x60]?\s+(?:is\s+)?(?:not set|unset|must be set|is required|not defined|is empty|environment variable (?:is )?(?:not set|required|missing))`),
		Check:   envCheck(1), Subject: group(1)},
	{ID: "python.environ-keyerror", Tag: MissingEnvVar, Tool: "python", Confidence: 0.9,
		Pattern: regexp.MustCompile(`(?:<frozen os>|os\.py)", line \d+, in __getitem__\s*\n(?:.*\n)*?KeyError: '([A-Za-z_][A-Za-z0-9_]*)'`),
		Check:   envCheck(1), Subject: group(1)},
	{ID: "shell.unbound-variable", Tag: MissingEnvVar, Tool: "sh/bash", Confidence: 0.7,
		Pattern: regexp.MustCompile(`(?m)^(?:[\w./-]+: )?(?:line \d+: )?([A-Za-z_][A-Za-z0-9_]*): (?:unbound variable|parameter not set)`),
		Check:   envCheck(1), Subject: group(1)},

	// missing_dependency
	{ID: "go.module.missing", Tag: MissingDependency, Tool: "go", Confidence: 0.95,
		Pattern: regexp.MustCompile(`(?:no required module provides package|cannot find module providing package) ([^\s;:]+)`),
		Subject: group(1)},
	{ID: "go.package.missing", Tag: MissingDependency, Tool: "go", Confidence: 0.9,
		Pattern: regexp.MustCompile(`cannot find package "([^"]+)"`), Subject: group(1)},
	{ID: "python.module-not-found", Tag: MissingDependency, Tool: "python", Confidence: 0.95,
		Pattern: regexp.MustCompile(`ModuleNotFoundError: No module named '([\w.]+)'`), Subject: group(1)},
	{ID: "node.cannot-find-module", Tag: MissingDependency, Tool: "node", Confidence: 0.9,
		Pattern: regexp.MustCompile(`Error: Cannot find (?:module|package) '([^']+)'`), Subject: group(1)},
	{ID: "rust.unresolved-crate", Tag: MissingDependency, Tool: "rustc", Confidence: 0.85,
		Pattern: regexp.MustCompile("unresolved (?:module or unlinked crate|import) `([\\w:]+)`"), Subject: group(1)},
	{ID: "java.package-missing", Tag: MissingDependency, Tool: "javac", Confidence: 0.85,
		Pattern: regexp.MustCompile(`error: package ([\w.]+) does not exist`), Subject: group(1)},
	{ID: "shell.command-not-found", Tag: MissingDependency, Tool: "sh/bash", Confidence: 0.9,
		Pattern: regexp.MustCompile(`(?m)(?:^|: )([\w.+-]+): (?:command not found|not found)$`),
		Check:   commandCheck(1), Subject: group(1)},
	{ID: "exec.not-in-path", Tag: MissingDependency, Tool: "go/node", Confidence: 0.9,
		Pattern: regexp.MustCompile(`exec: "([\w.+-]+)": executable file not found in \$PATH|spawn ([\w.+-]+) ENOENT`),
		Check: func(m []string) *preflight.Check {
			name := m[1]
			if name == "" {
				name = m[2]
			}
			return &preflight.Check{Type: preflight.CommandExists, Command: name}
		},
		Subject: func(m []string) string { return m[1] + m[2] }},

	// type_error
	{ID: "go.compile.type", Tag: TypeError, Tool: "go", Confidence: 0.85,
		Pattern: regexp.MustCompile(`(?m)^\S+\.go:\d+:\d+: (?:cannot use .* as .* value|undefined: \w+|too many arguments|not enough arguments|invalid operation|mismatched types|.* has no field or method|missing return|cannot convert)`)},
	{ID: "typescript.error", Tag: TypeError, Tool: "tsc", Confidence: 0.9,
		Pattern: regexp.MustCompile(`error TS(?:2\d{3}|7\d{3}):`)},
	{ID: "rust.mismatched-types", Tag: TypeError, Tool: "rustc", Confidence: 0.9,
		Pattern: regexp.MustCompile(`error\[E0(?:308|277|061|599|425|369)\]`)},
	{ID: "java.incompatible-types", Tag: TypeError, Tool: "javac", Confidence: 0.85,
		Pattern: regexp.MustCompile(`error: (?:incompatible types|cannot find symbol|method \w+ in class \w+ cannot be applied)`)},
	{ID: "mypy.error", Tag: TypeError, Tool: "mypy", Confidence: 0.85,
		Pattern: regexp.MustCompile(`(?m)^\S+\.py:\d+: error: .*\[(?:arg-type|assignment|attr-defined|return-value|call-arg|union-attr|name-defined|index|operator|override|misc)\]$`)},
	{ID: "python.type-error", Tag: TypeError, Tool: "python", Confidence: 0.6,
		Pattern: regexp.MustCompile(`(?m)^TypeError: (.+)$`)},

	// lint_error
	{ID: "go.vet", Tag: LintError, Tool: "go vet", Confidence: 0.8,
		Pattern: regexp.MustCompile(`(?m)^\S+\.go:\d+:\d+: (?:\w+\.\w+ format %|.* possible misuse|unreachable code|.* composite literal uses unkeyed fields|result of .* call not used|self-assignment|.* copies lock value|.* passes lock by value)`)},
	{ID: "golangci.linter", Tag: LintError, Tool: "golangci-lint/staticcheck", Confidence: 0.85,
		Pattern: regexp.MustCompile(`(?m)^\S+\.go:\d+:\d+: .* \((?:[A-Z]{1,2}\d{4}|errcheck|govet|ineffassign|unused|staticcheck|gosimple|revive|gocritic|misspell)\)$`)},
	{ID: "gofmt.unformatted", Tag: LintError, Tool: "gofmt", Confidence: 0.8,
		Pattern: regexp.MustCompile(`(?i)gofmt\b.*(?:not formatted|needs? formatting|needed)`)},
	{ID: "python.flake8-ruff", Tag: LintError, Tool: "flake8/ruff", Confidence: 0.85,
		Pattern: regexp.MustCompile(`(?m)^\S+\.py:\d+:\d+: [A-Z]{1,3}\d{3,4} `)},
	{ID: "eslint.problems", Tag: LintError, Tool: "eslint", Confidence: 0.9,
		Pattern: regexp.MustCompile(`✖ \d+ problems? \(\d+ errors?`)},
	{ID: "clippy", Tag: LintError, Tool: "clippy", Confidence: 0.85,
		Pattern: regexp.MustCompile(`rust-clippy/[\w.-]+/index\.html|#\[deny\(clippy::|-D clippy::`)},

	// test_assertion_failed
	{ID: "go.test.fail", Tag: TestAssertionFailed, Tool: "go test", Confidence: 0.85,
		Pattern: regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`), Subject: group(1)},
	{ID: "python.assertion", Tag: TestAssertionFailed, Tool: "python/pytest", Confidence: 0.8,
		Pattern: regexp.MustCompile(`(?m)^(?:E\s+)?AssertionError\b|^FAILED \S+::\S+`)},
	{ID: "node.assertion", Tag: TestAssertionFailed, Tool: "node/jest/vitest", Confidence: 0.8,
		Pattern: regexp.MustCompile(`AssertionError(?: \[ERR_ASSERTION\])?:|(?m)^\s*Expected: .*\n\s*Received: `)},
	{ID: "rust.test.fail", Tag: TestAssertionFailed, Tool: "cargo test", Confidence: 0.85,
		Pattern: regexp.MustCompile(`(?m)^(?:test )?(\S+) (?:\.\.\. |--- )FAILED$`), Subject: group(1)},
	{ID: "junit.failure", Tag: TestAssertionFailed, Tool: "maven/junit", Confidence: 0.85,
		Pattern: regexp.MustCompile(`Tests run: \d+, Failures: [1-9]|expected:<.*> but was:<.*>|AssertionFailedError`)},

	// build_config_error
	{ID: "go.no-main-module", Tag: BuildConfigError, Tool: "go", Confidence: 0.9,
		Pattern: regexp.MustCompile(`go\.mod file not found|does not contain main module|cannot find main module|missing go\.sum entry|updates to go\.mod needed`)},
	{ID: "npm.missing-script", Tag: BuildConfigError, Tool: "npm", Confidence: 0.9,
		Pattern: regexp.MustCompile(`(?i)npm (?:ERR!|error) missing script:? "?([\w:-]+)`), Subject: group(1)},
	{ID: "make.no-rule", Tag: BuildConfigError, Tool: "make", Confidence: 0.85,
		Pattern: regexp.MustCompile(`No rule to make target '([^']+)'`), Subject: group(1)},
	{ID: "cargo.manifest", Tag: BuildConfigError, Tool: "cargo", Confidence: 0.9,
		Pattern: regexp.MustCompile("failed to parse manifest at|could not find `Cargo.toml`|(?m)^\\s*--> Cargo\\.toml:\\d+:\\d+")},
	{ID: "go.open-missing-file", Tag: BuildConfigError, Tool: "go", Confidence: 0.6,
		Pattern: regexp.MustCompile(`open ([\w@./+-]+): no such file or directory`),
		Check:   fileCheck(1), Subject: group(1)},
	{ID: "python.file-not-found", Tag: BuildConfigError, Tool: "python", Confidence: 0.6,
		Pattern: regexp.MustCompile(`FileNotFoundError: \[Errno 2\] No such file or directory: '([^']+)'`),
		Check:   fileCheck(1), Subject: group(1)},
	{ID: "node.enoent", Tag: BuildConfigError, Tool: "node", Confidence: 0.6,
		Pattern: regexp.MustCompile(`ENOENT: no such file or directory, (?:open|stat|scandir) '([^']+)'`),
		Check:   fileCheck(1), Subject: group(1)},

	// port_in_use
	{ID: "go.bind-in-use", Tag: PortInUse, Tool: "go", Confidence: 0.95,
		Pattern: regexp.MustCompile(`listen tcp[46]? (?:[\w.-]*|\[[0-9a-fA-F:.]*\]):(\d+): bind: address already in use`),
		Check:   portCheck(1), Subject: group(1)},
	{ID: "node.eaddrinuse", Tag: PortInUse, Tool: "node", Confidence: 0.95,
		Pattern: regexp.MustCompile(`EADDRINUSE:? address already in use (?:[\w.:-]*|\[[0-9a-fA-F:.]*\]):(\d+)`),
		Check:   portCheck(1), Subject: group(1)},
	{ID: "address-in-use", Tag: PortInUse, Tool: "any", Confidence: 0.8,
		Pattern: regexp.MustCompile(`(?i)address already in use`)},

	// db_connection_failed
	{ID: "go.dial-refused", Tag: DBConnectionFailed, Tool: "go", Confidence: 0.85,
		Pattern: regexp.MustCompile(`dial tcp ([\w.-]+|\[[0-9a-fA-F:]+\]):(` + dbPorts + `): connect: connection refused`),
		Check:   addrCheck(1, 2), Subject: func(m []string) string { return m[1] + ":" + m[2] }},
	{ID: "node.econnrefused", Tag: DBConnectionFailed, Tool: "node", Confidence: 0.85,
		Pattern: regexp.MustCompile(`ECONNREFUSED ([\w.-]+|::1):(` + dbPorts + `)\b`),
		Check:   addrCheck(1, 2), Subject: func(m []string) string { return m[1] + ":" + m[2] }},
	{ID: "postgres.refused", Tag: DBConnectionFailed, Tool: "psql/libpq", Confidence: 0.95,
		Pattern: regexp.MustCompile(`connection to server at "([^"]+)"(?: \([\d.:a-f]+\))?, port (\d+) failed: Connection refused`),
		Check:   addrCheck(1, 2), Subject: func(m []string) string { return m[1] + ":" + m[2] }},
	{ID: "postgres.auth", Tag: DBConnectionFailed, Tool: "postgres", Confidence: 0.9,
		Pattern: regexp.MustCompile(`password authentication failed for user "([^"]+)"|database "([^"]+)" does not exist`)},
	{ID: "mysql.cannot-connect", Tag: DBConnectionFailed, Tool: "mysql", Confidence: 0.9,
		Pattern: regexp.MustCompile(`Can't connect to (?:local )?MySQL server(?: on '([\w.-]+)(?::(\d+))?')?`)},
	{ID: "redis.cannot-connect", Tag: DBConnectionFailed, Tool: "redis", Confidence: 0.9,
		Pattern: regexp.MustCompile(`Could not connect to Redis at ([\w.-]+):(\d+)|Error \d+ connecting to ([\w.-]+):(\d+)\. Connection refused`),
		Check: func(m []string) *preflight.Check {
			if m[1] != "" {
				return addrCheck(1, 2)(m)
			}
			return addrCheck(3, 4)(m)
		}},
}
