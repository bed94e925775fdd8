package classify

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/orket/orket/internal/lazyre"
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
	Pattern    *Expr
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
	Reject *Expr
	// Requires, when set, must match somewhere in the output for the rule
	// to apply: the context that makes the evidence mean what the tag says
	// (a database client's name beside a refused connection).
	Requires *Expr
	// Unless, when set, vetoes the rule on an output where it matches
	// anywhere: a test that panicked, raced or timed out did not fail an
	// assertion, whatever its runner printed after.
	Unless *Expr
	// Command, when set, must match the step's command line for the rule
	// to apply (see ClassifyCommand): output that means a failure only
	// for a known command, such as the bare file names a formatter's
	// check mode lists. Classify, which has no command, never applies it.
	Command *Expr

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
		if !envName().MatchString(m[i]) {
			return nil
		}
		return &preflight.Check{Type: preflight.EnvVarPresent, Name: m[i]}
	}
}

var envName = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

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

// cExt is the extension of a C, C++, Objective-C or CUDA source or header
// file, as compilers name it in a diagnostic.
const cExt = `(?:c|cc|cp|cpp|cxx|c\+\+|C|h|hh|hpp|hxx|h\+\+|H|ipp|tcc|inl|m|mm|cu|cuh)`

// envVar is an environment variable's name as failure messages spell it:
// upper case with at least one underscore or digit, so that plain words
// (FAIL, HTTP, JSON) never pass for one.
const envVar = `[A-Z][A-Z0-9]*_[A-Z0-9_]*|[A-Z]+[0-9][A-Z0-9_]*`

// envAssertion is an assertion on the environment, not a test's
// expectation: assert(process.env.X, "X is required"), assert "X" in
// os.environ, "X is not set".
const envAssertion = `AssertionError(?: \[ERR_ASSERTION\])?: \$?(?:` + envVar + `) (?:is required|is not set|must be set|is missing|is undefined)`

// pick returns the first non-empty of the groups.
func pick(m []string, groups ...int) string {
	for _, g := range groups {
		if g < len(m) && m[g] != "" {
			return m[g]
		}
	}
	return ""
}

// unreachable reports whether a reason a client gives says the server
// could not be reached at all (as opposed to refusing a login).
var unreachable = lazyre.New(`(?i)^(?:connection refused|timeout expired|connection timed out|no route to host|could not connect)`)

// libpqCheck reads libpq's "connection to server at HOST, port P failed:
// REASON" (or "on socket PATH"): an address that did not answer, or a
// socket that is not there.
func libpqCheck(m []string) *preflight.Check {
	host, port, sock, reason := m[1], m[2], m[3], m[4]
	switch {
	case sock != "" && strings.HasPrefix(reason, "No such file or directory"):
		return &preflight.Check{Type: preflight.FileExists, Path: sock}
	case host != "" && unreachable().MatchString(reason):
		return addrCheck(1, 2)([]string{"", host, port})
	}
	return nil
}

// Builtin returns the catalogue, in priority order: when several rules
// match, the first one's tag leads the advice. More specific rules come
// first. Each expression is compiled the first time a rule needs it (see
// Expr); every call returns the same slice, which callers must not modify.
func Builtin() []Rule { return builtin() }

// An Expr is a rule's regular expression, compiled the first time it is
// used: a classification runs few of the catalogue's 230 expressions (a
// rule whose anchors are absent from the output never runs), and
// compiling them all cost every classifying process 7-12 ms.
type Expr struct {
	src string
	re  func() *regexp.Regexp
}

// expr is the expression src, compiled when first used (panicking then,
// as regexp.MustCompile does, if it does not compile: TestCatalogueCompiles
// compiles every one).
func expr(src string) *Expr {
	return &Expr{src: src, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })}
}

// compiledExpr is an Expr of an expression already compiled.
func compiledExpr(re *regexp.Regexp) *Expr {
	return &Expr{src: re.String(), re: func() *regexp.Regexp { return re }}
}

// Regexp returns the expression compiled.
func (e *Expr) Regexp() *regexp.Regexp { return e.re() }

// String returns the expression's source.
func (e *Expr) String() string { return e.src }

var builtin = sync.OnceValue(func() []Rule {
	return []Rule{
		// missing_env_var
		{ID: "env.named-not-set", Tag: MissingEnvVar, Tool: "any", Confidence: 0.9,
			Pattern: expr(`(?i:environment variable|env var|env)\s*[:"'\x60]?\s*\$?(` + envVar + `|[A-Z]{2,})["'\x60]?\s+(?:is\s+)?(?:not set|unset|missing|required|not defined|undefined|empty)`),
			Check:   envCheck(1), Subject: group(1)},
		{ID: "env.missing-required", Tag: MissingEnvVar, Tool: "any", Confidence: 0.9,
			Pattern: expr(`(?i:missing|required|undefined|unset)\s+(?i:environment variable|env var)s?:?\s*["'\x60]?\$?([A-Za-z_][A-Za-z0-9_]*)`),
			Check:   envCheck(1), Subject: group(1)},
		{ID: "env.not-set", Tag: MissingEnvVar, Tool: "any", Confidence: 0.8,
			Pattern: expr(`\$?\b(` + envVar + `)\b["'\x60]?\s+(?:is\s+)?(?:not set|unset|must be (?:set|defined|provided|specified)|is required|not defined|is empty|missing value|needs to be set|(?:was |is )?not provided|environment variable (?:is )?(?:not set|required|missing))`),
			// CMake's own variables (CMAKE_CXX_COMPILER not set) are not
			// the environment's.
			Reject: expr(`^\$?CMAKE_`),
			Check:  envCheck(1), Subject: group(1)},
		{ID: "env.please-set", Tag: MissingEnvVar, Tool: "any", Confidence: 0.8,
			Pattern: expr(`(?i:please (?:set|export|define|provide)|you (?:must|need to|have to) (?:set|export|define))\s+(?i:the\s+)?(?i:env(?:ironment)? var(?:iable)?\s+)?["'\x60]?\$?(` + envVar + `)\b`),
			Check:   envCheck(1), Subject: group(1)},
		{ID: "env.not-present", Tag: MissingEnvVar, Tool: "node/ruby/compose", Confidence: 0.85,
			Pattern: expr(`process\.env\.(` + envVar + `) is (?:undefined|not set|missing|required)|key not found: "(` + envVar + `)" \(KeyError\)|The "?(` + envVar + `)"? variable is not set|are not present in the environment:\s*\n?\s*(` + envVar + `)`),
			Check:   func(m []string) *preflight.Check { return envCheck(1)([]string{"", pick(m, 1, 2, 3, 4)}) },
			Subject: func(m []string) string { return pick(m, 1, 2, 3, 4) }},
		{ID: "env.library-missing", Tag: MissingEnvVar, Tool: "decouple/envalid/env-var/dotenv", Confidence: 0.85,
			Pattern: expr(`UndefinedValueError: (` + envVar + `) not found|Missing environment variables?:\s*\n\s+(` + envVar + `):|"(` + envVar + `)" is a required variable|Missing required configuration keys?: \["(` + envVar + `)"|(?i:missing)\s+\$?(` + envVar + `)(?:\s+(?i:env(?:ironment)? var(?:iable)?|variable|in (?:the )?environment)|\s*$)`),
			Check:   func(m []string) *preflight.Check { return envCheck(1)([]string{"", pick(m, 1, 2, 3, 4, 5)}) },
			Subject: func(m []string) string { return pick(m, 1, 2, 3, 4, 5) }},
		{ID: "go.envconfig-required", Tag: MissingEnvVar, Tool: "envconfig", Confidence: 0.85,
			Pattern: expr(`required key ([A-Za-z_][A-Za-z0-9_]*) missing value`),
			Check:   envCheck(1), Subject: group(1)},
		{ID: "python.environ-keyerror", Tag: MissingEnvVar, Tool: "python", Confidence: 0.9,
			Pattern: expr(`(?:<frozen os>|os\.py)", line \d+, in __getitem__\s*\n(?:.*\n)*?KeyError: '([A-Za-z_][A-Za-z0-9_]*)'`),
			Check:   envCheck(1), Subject: group(1)},
		{ID: "pytest.environ-keyerror", Tag: MissingEnvVar, Tool: "pytest", Confidence: 0.9,
			Pattern: expr(`(?m)^E\s+KeyError: '([A-Za-z_][A-Za-z0-9_]*)'\s*\n(?:\s*\n)*(?:<frozen os>|\S*os\.py):\d+: KeyError|^(?:<frozen os>|\S*os\.py):\d+: in __getitem__\n(?:.*\n){0,3}?E\s+KeyError: '([A-Za-z_][A-Za-z0-9_]*)'|^(?:<frozen os>|\S*os\.py):\d+: KeyError: '([A-Za-z_][A-Za-z0-9_]*)'`),
			Check:   func(m []string) *preflight.Check { return envCheck(1)([]string{"", pick(m, 1, 2, 3)}) },
			Subject: func(m []string) string { return pick(m, 1, 2, 3) }},
		{ID: "shell.unbound-variable", Tag: MissingEnvVar, Tool: "sh/bash", Confidence: 0.8,
			Pattern: expr(`(?m)^(?:[\w./-]+: )?(?:line )?(?:\d+: )?([A-Za-z_][A-Za-z0-9_]*): (?:unbound variable|parameter (?:null or )?not set|must be set|is required|not set)$`),
			Check:   envCheck(1), Subject: group(1)},
		{ID: "rust.env-not-present", Tag: MissingEnvVar, Tool: "rust", Confidence: 0.7,
			Pattern: expr(`(?m)(?:^|: )NotPresent$`)},

		// Variables named only inside a structured error: a schema library
		// that validated the environment (zod, t3-env) names the variable
		// in an issue's path, with undefined as what it received.
		{ID: "schema.env-missing", Tag: MissingEnvVar, Tool: "zod/t3-env", Confidence: 0.85,
			Pattern: expr(`"path": \[\s*"(` + envVar + `)"\s*\],?\s*"message": "(?:Required|Invalid input: expected \w+, received undefined)"|received undefined\n\s*→ at (` + envVar + `)\b|\b(` + envVar + `): \[\s*'(?:Required|Invalid input: expected \w+, received undefined)'|path: \[ '(` + envVar + `)' \],\s*message: '(?:Required|Invalid input: expected \w+, received undefined)'|env must have required property '(` + envVar + `)'|Set the (` + envVar + `) environment variable|\b(` + envVar + `): \{ _errors: \[ '(?:Required|Invalid input: expected \w+, received undefined)' \] \}`),
			Check:   func(m []string) *preflight.Check { return envCheck(1)([]string{"", pick(m, 1, 2, 3, 4, 5, 6, 7)}) },
			Subject: func(m []string) string { return pick(m, 1, 2, 3, 4, 5, 6, 7) }},
		// pydantic's settings (BaseSettings in v1, pydantic-settings in v2)
		// read fields from the environment, case-insensitively: a required
		// field missing from a settings class is a variable not set. It
		// implies no check: the variable is the field's name only without
		// an env_prefix or an alias, which the output does not show
		// (round7's APP_REDIS_URL, round9's SERVICE_TOKEN).
		{ID: "pydantic.settings-missing", Tag: MissingEnvVar, Tool: "pydantic", Confidence: 0.85,
			Pattern:  expr(`(?m)^([a-z_][a-z0-9_]*)\n  [Ff]ield required\b`),
			Requires: expr(`validation errors? for \w*(?:Settings|Config|Env)\b|pydantic_settings[/.]|pydantic/env_settings\.py`),
			Subject:  func(m []string) string { return strings.ToUpper(m[1]) }},
		// Java's helpful NullPointerException names System.getenv as what
		// returned null, but not the variable: a tag without a check.
		{ID: "java.getenv-null", Tag: MissingEnvVar, Tool: "java", Confidence: 0.8,
			Pattern: expr(`NullPointerException: [^\n]*because the return value of "java\.lang\.System\.getenv\(String\)" is null`)},
		// A variable read with os.getenv (None when unset) or
		// process.env.X (undefined) and used at once: the traceback's
		// source line names it, the error says None or undefined.
		{ID: "getenv.used-unset", Tag: MissingEnvVar, Tool: "python/node", Confidence: 0.85,
			Pattern: expr(`(?m)\bos\.(?:getenv|environ\.get)\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']\s*\)[^\n]*\n(?:\s*[\^~]+\s*\n)?(?:E\s+)?(?:TypeError|AttributeError): [^\n]*'?NoneType'?|process\.env\.([A-Za-z_][A-Za-z0-9_]*)\b[^\n]*\n\s*\^+\s*\n\s*\n(?:Uncaught )?TypeError(?: \[\w+\])?: (?:Cannot read propert(?:y|ies) of undefined|Invalid URL|The "\w+" argument must be (?:of type|an instance of) [^\n]*Received undefined)`),
			Check:   func(m []string) *preflight.Check { return envCheck(1)([]string{"", pick(m, 1, 2)}) },
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		// missing_dependency
		{ID: "go.module.missing", Tag: MissingDependency, Tool: "go", Confidence: 0.95,
			Pattern: expr(`(?:no required module provides package|cannot find module providing package) ([^\s;:]+)`),
			Subject: group(1)},
		{ID: "go.package.missing", Tag: MissingDependency, Tool: "go", Confidence: 0.9,
			Pattern: expr(`cannot find package "([^"]+)"|package ([\w./-]+) is not in std\b`),
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "go.module.fetch-failed", Tag: MissingDependency, Tool: "go", Confidence: 0.85,
			Pattern: expr(`(?m)(?:^go: |: module )([\w.-]+/[\w./-]+?)(?:@[\w.+-]+)?: (?:Get|reading) "?https?://[^\s"]+/@v/`),
			Subject: group(1)},
		{ID: "go.sql-unknown-driver", Tag: MissingDependency, Tool: "go", Confidence: 0.85,
			Pattern: expr(`sql: unknown driver "([\w-]+)" \(forgotten import\?\)`), Subject: group(1)},
		{ID: "python.module-not-found", Tag: MissingDependency, Tool: "python", Confidence: 0.95,
			Pattern: expr(`ModuleNotFoundError: No module named '([\w.]+)'`), Subject: group(1)},
		{ID: "python.distribution-not-found", Tag: MissingDependency, Tool: "python", Confidence: 0.85,
			Pattern: expr(`DistributionNotFound: The '([^']+)' distribution was not found|PackageNotFoundError: (?:No package metadata was found for )?([\w.\[\]-]+)`),
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "mypy.import-not-found", Tag: MissingDependency, Tool: "mypy", Confidence: 0.9,
			Pattern: expr(`error: (?:Cannot find implementation or library stub for module named|Library stubs not installed for) "([\w.]+)"`), Subject: group(1)},
		{ID: "pip.no-distribution", Tag: MissingDependency, Tool: "pip", Confidence: 0.9,
			Pattern: expr(`(?m)^ERROR: (?:Could not find a version that satisfies the requirement|No matching distribution found for) ([\w.\[\]-]+)`), Subject: group(1)},
		{ID: "python.subprocess-not-found", Tag: MissingDependency, Tool: "python", Confidence: 0.85,
			Pattern: expr(`in _execute_child\n(?:.*\n){0,4}?FileNotFoundError: \[Errno 2\] No such file or directory: '([^'/]+)'`),
			Check:   commandCheck(1), Subject: group(1)},
		{ID: "node.cannot-find-module", Tag: MissingDependency, Tool: "node", Confidence: 0.9,
			Pattern: expr(`Error(?: \[ERR_MODULE_NOT_FOUND\])?: Cannot find (?:module|package) '([^'./][^']*)'`), Subject: group(1)},
		{ID: "typescript.cannot-find-module", Tag: MissingDependency, Tool: "tsc", Confidence: 0.85,
			Pattern: expr(`error TS2(?:307|792): Cannot find module '([^'./][^']*)'|error TS2688: Cannot find type definition file for '([^']+)'`),
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "npm.fetch-failed", Tag: MissingDependency, Tool: "npm", Confidence: 0.85,
			Pattern: expr(`(?m)^npm (?:ERR!|error) (?:code (?:ECONNREFUSED|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|ENOTCACHED|E404|ETARGET|ECONNRESET)$|(?:FetchError: )?request to \S+ failed)`)},
		{ID: "jest.environment-missing", Tag: MissingDependency, Tool: "jest", Confidence: 0.8,
			Pattern: expr(`Test environment ([\w@/.-]+) cannot be found`), Subject: group(1)},
		{ID: "eslint.plugin-missing", Tag: MissingDependency, Tool: "eslint", Confidence: 0.8,
			Pattern: expr(`The [\w-]+ formatter is no longer part of core ESLint|There was a problem loading formatter|ESLint couldn't find the (?:plugin|config) "([^"]+)"`)},
		{ID: "rust.unresolved-crate", Tag: MissingDependency, Tool: "rustc", Confidence: 0.85,
			Pattern: expr("unresolved (?:module or unlinked crate|import) `([\\w:]+)`"), Subject: group(1)},
		{ID: "cargo.dependency-unavailable", Tag: MissingDependency, Tool: "cargo", Confidence: 0.9,
			Pattern: expr("no matching package named `([\\w-]+)` found|failed to get `([\\w-]+)` as a dependency of package"),
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "java.package-missing", Tag: MissingDependency, Tool: "javac", Confidence: 0.85,
			Pattern: expr(`error: package ([\w.]+) does not exist`), Subject: group(1)},
		{ID: "java.noclassdef", Tag: MissingDependency, Tool: "java", Confidence: 0.8,
			Pattern: expr(`java\.lang\.NoClassDefFoundError: ([\w/$]+)\s*\n`), Subject: group(1)},
		{ID: "maven.resolution", Tag: MissingDependency, Tool: "maven", Confidence: 0.9,
			Pattern: expr(`Could not resolve dependencies for project|or one of its dependencies could not be resolved|in offline mode and the artifact \S+ has not been downloaded|Could not (?:find|transfer) artifact|Failed to read artifact descriptor for`)},
		{ID: "gradle.resolution", Tag: MissingDependency, Tool: "gradle", Confidence: 0.9,
			Pattern: expr(`Could not resolve all (?:files|dependencies|artifacts) for configuration|No cached version of \S+ available for offline mode|(?m)^\s*> Could not (?:find|resolve) ([\w.-]+:[\w.-]+(?::[\w.-]+)?)\.?$`),
			Subject: group(1)},
		{ID: "java.class-not-found", Tag: MissingDependency, Tool: "java", Confidence: 0.8,
			Pattern: expr(`java\.lang\.ClassNotFoundException: ([\w.$]+)|No suitable driver found for (jdbc:[\w:]+)`),
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "ruby.load-error", Tag: MissingDependency, Tool: "ruby/bundler", Confidence: 0.9,
			Pattern: expr(`cannot load such file -- ([\w./-]+) \(LoadError\)|Could not find gem '([^']+)'|Could not find ([\w-]+)-[\d.]+ in (?:locally installed gems|any of the sources)`),
			Subject: func(m []string) string { return pick(m, 1, 2, 3) }},
		{ID: "php.autoload", Tag: MissingDependency, Tool: "php/composer", Confidence: 0.85,
			Pattern: expr(`vendor/autoload\.php\)?: [Ff]ailed to open stream: No such file or directory|Uncaught Error: Class "([\w\\]+)" not found`),
			Subject: group(1)},
		{ID: "perl.module-missing", Tag: MissingDependency, Tool: "perl", Confidence: 0.9,
			Pattern: expr(`Can't locate [\w/]+\.pm in @INC \(you may need to install the ([\w:]+) module\)`),
			Subject: group(1)},
		{ID: "pip.check", Tag: MissingDependency, Tool: "pip", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+ [\w.+!-]+ requires ([\w.-]+), which is not installed\.$`),
			Subject: group(1)},
		{ID: "shared-library-missing", Tag: MissingDependency, Tool: "ld.so/dlopen", Confidence: 0.9,
			Pattern: expr(`(?:error while loading shared libraries: |\b)([\w.+-]+\.so(?:\.[\w.]+)?): cannot open shared object file`),
			Subject: group(1)},
		{ID: "rust.linker-missing", Tag: MissingDependency, Tool: "rustc", Confidence: 0.85,
			Pattern: expr("error: linker `([\\w.+-]+)` not found"),
			Check:   commandCheck(1), Subject: group(1)},
		{ID: "env.interpreter-missing", Tag: MissingDependency, Tool: "env", Confidence: 0.85,
			Pattern: expr(`(?m)^(?:/usr)?(?:/bin/)?env: [‘'"]?([\w.+-]+)[’'"]?: No such file or directory$`),
			Check:   commandCheck(1), Subject: group(1)},
		{ID: "shell.command-not-found", Tag: MissingDependency, Tool: "sh/bash", Confidence: 0.9,
			Pattern: expr(`(?m)(?:^|: )([\w.+-]+): (?:command not found|not found)$`),
			Check:   commandCheck(1), Subject: group(1)},
		{ID: "make.command-not-found", Tag: MissingDependency, Tool: "make", Confidence: 0.85,
			Pattern: expr(`(?m)^make(?:\[\d+\])?: ([\w.+-]+): (?:No such file or directory|Command not found)$`),
			Check:   commandCheck(1), Subject: group(1)},
		{ID: "exec.not-in-path", Tag: MissingDependency, Tool: "go/node/java", Confidence: 0.9,
			Pattern: expr(`exec: "([\w.+-]+)": executable file not found in \$PATH|spawn(?:Sync)? ([\w.+-]+) ENOENT|Cannot run program "([\w.+-]+)": error=2,|No such file or directory - ([\w.+-]+) \(Errno::ENOENT\)|(?m)^which: no ([\w.+-]+) in \(`),
			Check: func(m []string) *preflight.Check {
				return &preflight.Check{Type: preflight.CommandExists, Command: pick(m, 1, 2, 3, 4, 5)}
			},
			Subject: func(m []string) string { return pick(m, 1, 2, 3, 4, 5) }},

		// C and C++: a header the compiler cannot find. A header included
		// with quotes is the project's own (a generated config.h, a wrong
		// include path): build_config_error, below.
		{ID: "c.missing-header", Tag: MissingDependency, Tool: "gcc/clang", Confidence: 0.9,
			Pattern: expr(`(?m)^\S+:\d+(?::\d+)?: fatal error: (?:([\w./+-]+): No such file or directory|'([\w./+-]+)' file not found)(?:\n[^\n]*)?`),
			Reject:  expr(`\n\s*(?:\d+ \| )?\s*#\s*(?:include|import)\s*"`),
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "ld.library-missing", Tag: MissingDependency, Tool: "ld/lld", Confidence: 0.9,
			Pattern: expr(`\b(?:ld(?:\.\w+)?|lld|collect2): (?:error: )?(?:cannot find -l([\w.+-]+)|unable to find library -l([\w.+-]+))|\bld: library not found for -l([\w.+-]+)|\bmold: fatal: library not found: ([\w.+-]+)`),
			Subject: func(m []string) string { return pick(m, 1, 2, 3, 4) }},
		// Build systems that look a library up: CMake's find_package and
		// pkg_check_modules, Meson's dependency(), pkg-config, autoconf.
		{ID: "cmake.package-missing", Tag: MissingDependency, Tool: "cmake", Confidence: 0.9,
			Pattern: expr(`Could NOT find (\w+)|Could not find a (?:package configuration file|configuration file for package) (?:provided by )?"(\w+)"|By not providing "Find(\w+)\.cmake"|No CMAKE_(?:C|CXX|CUDA|Fortran|OBJC)_COMPILER could be found|variables are used in this project, but they are set to NOTFOUND|Could not find compiler set in environment variable \w+:\s*\n\s*([\w./+-]+?)\.?\n|CMake was unable to find a build program corresponding to "(\w+)"|\(find_program\):\s*\n\s*Could not find \w+ using the following names: ([\w.+-]+)|Could not find \w+ using the following (?:names|files): ([\w.+-]+)`),
			Check: func(m []string) *preflight.Check {
				if g := pick(m, 4, 6); g != "" {
					return commandCheck(1)([]string{"", g})
				}
				return nil
			},
			Subject: func(m []string) string { return pick(m, 1, 2, 3, 4, 5, 6, 7) }},
		{ID: "meson.dependency-missing", Tag: MissingDependency, Tool: "meson", Confidence: 0.9,
			Pattern: expr(`ERROR: Dependency "([^"]+)" not found|ERROR: (?:C|C\+\+|\w+) (?:shared or static )?library '([^']+)' not found|ERROR: Program '([\w.+-]+)' not found|Dependency lookup for (\S+) with method \S+ failed|ERROR: Unknown compiler\(s\)(?:: \[\['([\w./+-]+)')?`),
			Check: func(m []string) *preflight.Check {
				if g := pick(m, 3, 5); g != "" {
					return commandCheck(1)([]string{"", g})
				}
				return nil
			},
			Subject: func(m []string) string { return pick(m, 1, 2, 3, 4, 5) }},
		{ID: "pkg-config.missing", Tag: MissingDependency, Tool: "pkg-config", Confidence: 0.9,
			Pattern: expr(`Package ([\w.+-]+) was not found in the pkg-config search path|No package '([\w.+-]+)' found|Package '([\w.+-]+)', required by '[^']+', not found`),
			Subject: func(m []string) string { return pick(m, 1, 2, 3) }},
		{ID: "configure.missing", Tag: MissingDependency, Tool: "autoconf", Confidence: 0.8,
			Pattern: expr(`(?m)^configure: error: [^\n]*(?:not found|is required|could not be found|No package|not installed|[Cc]annot find|no acceptable|[Mm]issing)[^\n]*`)},
		// Package managers: no version matches, the registry or index is
		// unreachable, the resolver found no solution.
		{ID: "pnpm.resolution", Tag: MissingDependency, Tool: "pnpm", Confidence: 0.9,
			Pattern: expr(`\bERR_PNPM_(?:NO_MATCHING_VERSION\w*|FETCH_\d+|META_FETCH_FAIL|NO_OFFLINE_\w+|WORKSPACE_PKG_NOT_FOUND|LINKED_PKG_DIR_NOT_FOUND|\w*NETWORK_ERROR|TARBALL_\w+|NO_VERSIONS|PEER_DEP_ISSUES|\w*RESOLVE\w*|\w*NOT_FOUND)\b`),
			Reject:  expr(`ERR_PNPM_(?:NO_IMPORTER_MANIFEST_FOUND|\w*SCRIPT\w*|\w*LOCKFILE\w*)`)},
		{ID: "pnpm.command-missing", Tag: MissingDependency, Tool: "pnpm", Confidence: 0.85,
			Pattern: expr(`ERR_PNPM_RECURSIVE_EXEC_FIRST_FAIL\W{0,12}Command "([\w.@/+-]+)" not found`),
			Check:   commandCheck(1), Subject: group(1)},
		{ID: "yarn.resolution", Tag: MissingDependency, Tool: "yarn", Confidence: 0.9,
			Pattern: expr(`(?m)^error (?:Couldn't find any versions for "([^"]+)"|Couldn't find package "([^"]+)"|Received malformed response from registry|An unexpected error occurred: "[^"\n]*(?:ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|ECONNRESET|404 Not Found|getaddrinfo)[^"\n]*")|YN0035: [^\n]*(?:Package not found|failed to provide the requested resource)|YN0082: [^\n]*No candidates found|YN0001: [^\n]*(?:ECONNREFUSED|ENOTFOUND|getaddrinfo|RequestError)`),
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "yarn.network", Tag: MissingDependency, Tool: "yarn", Confidence: 0.85,
			Pattern:  expr(`(?m)^error Error: (?:connect (?:ECONNREFUSED|ETIMEDOUT)|getaddrinfo \w+|read ECONNRESET|socket hang up)[^\n]*|^info There appears to be trouble with your network connection`),
			Requires: expr(`(?m)^yarn (?:add|install|upgrade|outdated|info|global add) v\d`)},
		{ID: "resolver.no-solution", Tag: MissingDependency, Tool: "poetry/pip/uv/composer/bundler", Confidence: 0.85,
			Pattern: expr(`version solving failed|SolverProblemError|No solution found when resolving dependencies|ResolutionImpossible|Your requirements could not be resolved to an installable set of packages|Bundler could not find compatible versions for gem|Unable to find installation candidates for ([\w.-]+)|Could not find a matching version of package ([\w.-]+)|which doesn't match any versions|Cannot install [\w.-]+ because these package versions have conflicting dependencies|(?m)^npm (?:ERR!|error) code ERESOLVE$`),
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "registry.unreachable", Tag: MissingDependency, Tool: "composer/bundler/pip", Confidence: 0.8,
			// Composer's console wraps its messages at any space.
			Pattern: expr(`file could not be downloaded(?: \([^)\n]*\))?:\s+(?:[Ff]ailed\s+to\s+open\s+stream:\s+)?(?:Connection\s+refused|Could\s+not\s+resolve\s+host|Connection\s+timed\s+out)|Could not fetch specs from https?://\S+|Could not reach host \S+|Could not fetch URL https?://\S+: connection error`)},
		{ID: "python.index-unreachable", Tag: MissingDependency, Tool: "poetry/pip", Confidence: 0.85,
			Pattern: expr(`Max retries exceeded with url: /\S*(?:simple|pypi)/\S*|Failed to fetch: \x60https?://\S+/simple/\S*\x60`)},
		// Bundlers and test runners that resolve a bare import (not a
		// relative path, which is the project's own file).
		{ID: "bundler.unresolved", Tag: MissingDependency, Tool: "esbuild/vite/webpack/jest/bun", Confidence: 0.85,
			Pattern: expr(`Could not resolve:? "([^"./][^"]*)"|Rollup failed to resolve import "([^"./][^"]*)"|Module not found: Error: Can't resolve '([^'./][^']*)'|Failed to resolve (?:import|entry for package) "([^"./][^"]*)"|Cannot find (?:module|package) '([^'./][^']*)' from '|Cannot find package "([^"./][^"]*)" from "`),
			Subject: func(m []string) string { return pick(m, 1, 2, 3, 4, 5, 6) }},
		{ID: "terraform.provider-unavailable", Tag: MissingDependency, Tool: "terraform/tofu", Confidence: 0.9,
			Pattern: expr(`Error: (?:Failed to query available provider packages|Failed to install provider|Failed to download module|Failed to retrieve available versions for module|Error accessing remote module registry|Incompatible provider version|Invalid provider registry host)`)},
		// type_error
		{ID: "go.compile.type", Tag: TypeError, Tool: "go", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+\.go:\d+:\d+: (?:cannot use .* as .* value|undefined: \w+|too many arguments|not enough arguments|invalid operation|mismatched types|.* has no field or method|missing return|cannot convert|assignment mismatch|.* is not a type|cannot assign to)`)},
		// The compiler's own errors, under the "# package" line go build,
		// go run and go test print before them: whatever the message, the
		// code does not compile (syntax errors and vet's findings aside).
		{ID: "go.compile", Tag: TypeError, Tool: "go", Confidence: 0.8,
			Pattern:  expr(`(?m)^(?:vet: )?\.?/?[\w./@+-]*\.go:\d+:\d+: (.+)$`),
			Requires: expr(`(?m)^# [\w./@+-]+(?: \[[\w./@+-]+\.test\])?\n(?:# \[[\w./@+-]+\]\n)?(?:vet: )?\.?/?[\w./@+-]*\.go:\d+:\d+: `),
			Reject:   expr(`syntax error|format %|possible misuse|unreachable code|lock (?:value|by value)|struct field tag|self-assignment|call not used|unkeyed fields|missing go\.sum entry|no required module provides|is not in std`)},
		{ID: "typescript.error", Tag: TypeError, Tool: "tsc", Confidence: 0.9,
			Pattern: expr(`error TS(?:2\d{3}|7\d{3}|180(?:4[6-9]|50)|61(?:33|38|92|96|98|99)|6205):`),
			Reject:  expr(`TS2(?:307|792|688)`)},
		{ID: "rust.mismatched-types", Tag: TypeError, Tool: "rustc", Confidence: 0.9,
			Pattern: expr(`error\[E0\d{3}\]: ([^\n]*)`),
			Reject:  expr(`error\[E0(?:432|433|463)\]: (?:unresolved import|failed to resolve: use of (?:unresolved module|undeclared crate)|can't find crate|cannot find module or crate)|error\[E0752\]`)},
		{ID: "java.incompatible-types", Tag: TypeError, Tool: "javac", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+\.java:\d+: error: (.+)$|error: (?:incompatible types|cannot find symbol|method \w+ in class \w+ cannot be applied)`),
			Reject:  expr(`error: (?:package [\w.]+ does not exist|'.' expected|illegal start of|class, interface, enum,? or record expected|reached end of file while parsing|unclosed (?:string|character|comment)|not a statement|<identifier> expected)`)},
		{ID: "mypy.error", Tag: TypeError, Tool: "mypy", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+\.py:\d+: error: .*\[[a-z][\w-]*\]$`),
			Reject:  expr(`\[(?:import|import-untyped|import-not-found|syntax)\]$`)},
		{ID: "pyright", Tag: TypeError, Tool: "pyright", Confidence: 0.85,
			Pattern: expr(`(?m)^\s+\S+\.pyi?:\d+:\d+ - error: [^\n]*(?:\n[ \t\x{a0}]{3,}[^\n]*)*?\(report[A-Z]\w+\)$`),
			Reject:  expr(`\(report(?:MissingImports|MissingModuleSource|UnusedImport|UnusedVariable)\)$`)},
		{ID: "ruby-php.type-error", Tag: TypeError, Tool: "ruby/php", Confidence: 0.6,
			Pattern: expr(`(?m): (?:no implicit conversion of \w+ into \w+|\w+ can't be coerced into \w+|wrong argument type \w+ \(expected \w+\)) \(TypeError\)$|Uncaught TypeError: `)},
		// JavaScript's API shape: a call of what is no longer a function,
		// under a stack of the project's files, and an ES module that no
		// longer exports what another imports; as a terminal shows them and
		// as node --test's TAP quotes them (its diagnostics behind "# ").
		// (A property read of undefined is not: most often a value that
		// was never set.)
		{ID: "js.type-error", Tag: TypeError, Tool: "node", Confidence: 0.6,
			Pattern:  expr(`(?m)^\s*(?:Uncaught )?TypeError(?: \[\w+\])?: (\S+ is not a (?:function|constructor))$|^(?:# )?\s*SyntaxError: The requested module '[^']+' does not provide an export named '[^']+'$`),
			Requires: expr(`(?m)^(?:# )?\s+(?:at )?(?:.* \()?(?:file://)?[^\s()]+\.[cm]?[jt]sx?:\d+:\d+\)?$|^(?:# )?file://\S+\.[cm]?[jt]sx?:\d+$`)},
		{ID: "js.type-error.tap", Tag: TypeError, Tool: "node --test (TAP)", Confidence: 0.6,
			Pattern:  expr(`(?m)^\s+error: '(\S+ is not a (?:function|constructor))'$`),
			Requires: expr(`(?m)^\s+name: 'TypeError'$`)},
		{ID: "python.type-error", Tag: TypeError, Tool: "python", Confidence: 0.6,
			Pattern:  expr(`(?m)^(?:E\s+)?TypeError: (.+)$`),
			Requires: expr(`(?m)^Traceback \(most recent call last\):|^E\s+TypeError: `),
			// None from os.getenv is a variable not set (getenv.used-unset).
			Unless: expr(`\bos\.(?:getenv|environ\.get)\([^\n]*\n(?:\s*[\^~]+\s*\n)?(?:E\s+)?TypeError: [^\n]*NoneType`)},

		// A C or C++ compiler's own errors on a source file: whatever the
		// message, the code does not compile. Left to other rules: syntax
		// errors (no tag), warnings made errors (lint_error), and the
		// findings of clang-tidy and cppcheck, which name their check in
		// brackets where a compiler names a -W flag.
		{ID: "c.compile", Tag: TypeError, Tool: "gcc/clang", Confidence: 0.8,
			Pattern: expr(`(?m)^\S*\.` + cExt + `:\d+(?::\d+)?: error: (.+)$`),
			Reject:  expr(`error: (?:expected |stray |missing terminating|unterminated |#error|extra tokens|invalid preprocessing|macro "|unknown (?:argument|directive)|code should be clang-formatted)|\[-W(?:error|pedantic)[^\]]*\]$|\[[A-Za-z][\w.-]*(?:,-warnings-as-errors)?\]$`)},
		// lint_error
		{ID: "go.vet", Tag: LintError, Tool: "go vet", Confidence: 0.8,
			Pattern: expr(`(?m)^\S+\.go:\d+:\d+: (?:\w+\.\w+ format %|.* possible misuse|unreachable code|.* composite literal uses unkeyed fields|result of .* call not used|self-assignment|.* copies lock value|.* passes lock by value|struct field tag .* not compatible with reflect\.StructTag\.Get|.* call has possible (?:Printf )?formatting directive|.* call needs \d+ args? but has \d+ args?|.* arg list ends with redundant newline|the cancel function .* is not used|using resp before checking for errors|.* has possible Printf formatting directive)`)},
		{ID: "golangci.linter", Tag: LintError, Tool: "golangci-lint/staticcheck", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+\.go:\d+:\d+: .* \((?:[A-Z]{1,2}\d{4}|errcheck|govet|ineffassign|unused|staticcheck|gosimple|revive|gocritic|misspell)\)$`)},
		{ID: "gofmt.unformatted", Tag: LintError, Tool: "gofmt", Confidence: 0.8,
			Pattern: expr(`(?i)gofmt\b.*(?:not formatted|needs? formatting|needed)|(?m)^diff (?:-u )?\S+\.go\.orig \S+\.go$`)},
		{ID: "python.flake8-ruff", Tag: LintError, Tool: "flake8/ruff", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+\.py:\d+:\d+: [A-Z]{1,3}\d{3,4} `)},
		{ID: "pylint", Tag: LintError, Tool: "pylint", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+\.py:\d+:\d+: [CRWEF]\d{4}: .* \([\w-]+\)$`)},
		{ID: "pyflakes", Tag: LintError, Tool: "pyflakes", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+\.py:\d+:(?:\d+:)? (?:'[^']+' imported but unused|undefined name '[^']+'|local variable '[^']+' (?:is assigned to but never used|defined .* referenced before assignment)|redefinition of unused '[^']+'|'[^']+' may be undefined, or defined from star imports|f-string is missing placeholders|import '[^']+' from line \d+ shadowed by loop variable|'from [\w.]+ import \*' used)`)},
		{ID: "isort.check", Tag: LintError, Tool: "isort", Confidence: 0.85,
			Pattern: expr(`(?m)^ERROR: \S+ Imports are incorrectly sorted`)},
		{ID: "yamllint", Tag: LintError, Tool: "yamllint", Confidence: 0.8,
			Pattern: expr(`(?m)^\s+\d+:\d+\s+(?:error|warning)\s+.+\s\s\([\w-]+\)$|^\S+:\d+:\d+: \[(?:error|warning)\] .+ \([\w-]+\)$`)},
		{ID: "markdownlint", Tag: LintError, Tool: "markdownlint", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+:\d+(?::\d+)? (?:error |warning )?MD\d{3}/[\w-]+ `)},
		{ID: "eslint.compact", Tag: LintError, Tool: "eslint", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+: line \d+, col \d+, (?:Error|Warning) - .+ \([\w@/-]+\)$|^\S+:\d+:\d+: .+ \[(?:Error|Warning)/[\w@/-]+\]$`)},
		{ID: "formatter.diff", Tag: LintError, Tool: "shfmt/formatters", Confidence: 0.75,
			Pattern: expr(`(?m)^--- \S+\.orig\n\+\+\+ \S+`)},
		{ID: "rubocop", Tag: LintError, Tool: "rubocop", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+\.rb:\d+:\d+: [CWEF]: (?:\[Correctable\] )?[A-Z]\w+/\w+: `)},
		{ID: "perlcritic", Tag: LintError, Tool: "perlcritic", Confidence: 0.85,
			Pattern: expr(`(?m) at line \d+, column \d+\.\s+.*\(Severity: \d\)$`)},
		{ID: "phpcs", Tag: LintError, Tool: "PHP_CodeSniffer", Confidence: 0.85,
			Pattern: expr(`(?m)^FOUND \d+ ERRORS?(?: AND \d+ WARNINGS?)? AFFECTING \d+ LINES?$|^\s*\d+ \| (?:ERROR|WARNING) \| `)},
		{ID: "black.would-reformat", Tag: LintError, Tool: "black", Confidence: 0.85,
			Pattern: expr(`(?m)^would reformat \S+|^\d+ files? would be reformatted`)},
		{ID: "eslint.problems", Tag: LintError, Tool: "eslint", Confidence: 0.9,
			Pattern: expr(`✖ \d+ problems? \(\d+ errors?`)},
		{ID: "prettier.check", Tag: LintError, Tool: "prettier", Confidence: 0.85,
			Pattern: expr(`\[warn\] Code style issues (?:found in|were found in)`)},
		{ID: "clippy", Tag: LintError, Tool: "clippy", Confidence: 0.85,
			Pattern: expr(`rust-clippy/[\w.-]+/index\.html|#\[deny\(clippy::|-D clippy::`)},
		{ID: "rust.deny-warnings", Tag: LintError, Tool: "rustc", Confidence: 0.8,
			Pattern: expr("implied by `-D warnings`|#\\[deny\\((?:warnings|unused\\w*|dead_code)\\)\\]")},
		{ID: "rustfmt.check", Tag: LintError, Tool: "rustfmt", Confidence: 0.85,
			Pattern: expr(`(?m)^Diff in \S+\.rs(?::\d+| at line \d+):`)},
		{ID: "shellcheck", Tag: LintError, Tool: "shellcheck", Confidence: 0.9,
			Pattern: expr(`(?m)^\s*\^-*\^? SC\d{4}(?: \((?:error|warning|info|style)\))?:|^\S+:\d+:\d+: (?:note|warning|error|style): .* \[SC\d{4}\]$`)},

		{ID: "c.werror", Tag: LintError, Tool: "gcc/clang", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+:\d+:\d+: error: .+ \[-W(?:error(?:=[\w+=-]+|,-W[\w+=-]+)|pedantic|clang-format-violations)\]$|^cc1(?:plus)?: all warnings being treated as errors$`)},
		{ID: "clang-tidy", Tag: LintError, Tool: "clang-tidy", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+:\d+:\d+: (?:warning|error): .+ \[(?:clang-analyzer|bugprone|cert|cppcoreguidelines|modernize|performance|readability|misc|google|llvm|llvmlibc|hicpp|portability|concurrency|abseil|android|boost|darwin|fuchsia|linuxkernel|mpi|objc|openmp|zircon|altera)-[\w.-]+(?:,[\w.-]+)*\]$`)},
		{ID: "cppcheck", Tag: LintError, Tool: "cppcheck", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+\.` + cExt + `:\d+:\d+: (?:error|warning|style|performance|portability): .+ \[[a-z][A-Za-z0-9]+\]$`)},
		{ID: "xo-stylelint", Tag: LintError, Tool: "xo/stylelint", Confidence: 0.85,
			Pattern: expr(`(?m)^\s+(?:✖\s+\d+:\d+|\d+:\d+\s+✖)\s+\S.*?\s{2,}[@\w/-]+$`)},
		// A formatter's check mode that lists the files it would change
		// and nothing else (terraform fmt -check, gofmt -l, shfmt -l):
		// only the command line says what the names mean.
		{ID: "formatter.list", Tag: LintError, Tool: "terraform fmt/gofmt/shfmt", Confidence: 0.8,
			Pattern: expr(`(?m)^\S+\.(?:tf|tfvars|hcl|go|sh|bash)$`),
			Command: expr(`\b(?:(?:terraform|tofu) fmt\b[^|;&]*-check|(?:gofmt|shfmt)\b[^|;&]*\s-l\b)`)},
		// A linter no rule was written for (a team's own, a new one): its
		// command line says it is a linter, and it prints a finding a
		// line, `path:line[:col]: message`. A compiler's or type
		// checker's error line (": error: ") is left to their rules, and
		// a test's (`tests/test_x.py:12: AssertionError`, of a step that
		// lints and then tests) to the test runners'.
		{ID: "linter.findings", Tag: LintError, Tool: "a linter, by its command", Confidence: 0.75,
			Pattern: expr(`(?m)^\S+\.[A-Za-z]\w{0,5}:\d+(?::\d+)?:? +[^\s:].*$`),
			Reject:  expr(`: (?:fatal )?error: |:\d+: (?:[A-Z]\w*(?:Error|Exception)|assert)\b`),
			Command: expr(`(?i)lint`)},
		{ID: "standard", Tag: LintError, Tool: "standard/ts-standard", Confidence: 0.85,
			Pattern:  expr(`(?m)^\s+\S+\.[cm]?[jt]sx?:\d+:\d+: .+ \((?:@?[\w-]+/)?[\w-]+\)$`),
			Requires: expr(`(?m)^(?:ts-)?standard: `)},
		{ID: "js-linters", Tag: LintError, Tool: "biome/oxlint/htmlhint", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+:\d+:\d+ lint/\w+/\w+ |^\s+× Formatter would have printed the following content:|^Scanned \d+ files?, found [1-9]\d* errors? in \d+ files?|^\s+[×⚠!x] (?:eslint|typescript|unicorn|react|import|jest|oxc|jsx-a11y|nextjs|promise|vitest|node|jsdoc|regexp)(?:-plugin-[\w-]+)?\([\w-]+\): `)},
		{ID: "commitlint", Tag: LintError, Tool: "commitlint", Confidence: 0.85,
			Pattern:  expr(`(?m)^✖\s+.+ \[[a-z]+(?:-[a-z]+)+\]$`),
			Requires: expr(`(?m)^⧗\s+input: `)},
		{ID: "cpplint", Tag: LintError, Tool: "cpplint", Confidence: 0.85,
			Pattern: expr(`(?m)^\S+:\d+:\s+.+\s+\[[a-z]+/[\w-]+\] \[\d\]$`)},
		{ID: "terraform.fmt", Tag: LintError, Tool: "terraform fmt", Confidence: 0.85,
			Pattern: expr(`(?m)^--- old/\S+\.(?:tf|tfvars|hcl)\n\+\+\+ new/`)},
		// test_assertion_failed
		{ID: "go.test.fail", Tag: TestAssertionFailed, Tool: "go test", Confidence: 0.85,
			Pattern:  expr(`(?m)^\s+\S+_test\.go:\d+: (.*)$`),
			Requires: expr(`(?m)^\s*--- FAIL: `),
			Reject:   expr(`(?i)connection refused|i/o timeout|no such host|deadline exceeded|no such file or directory|executable file not found|\bnot set\b|must be set|is required`),
			Unless:   expr(`(?m)^panic: |^WARNING: DATA RACE$|race detected during execution of test|^fatal error: |^signal: killed$`)},
		{ID: "python.assertion", Tag: TestAssertionFailed, Tool: "python/pytest", Confidence: 0.8,
			Pattern: expr(`(?m)^(?:E\s+)?AssertionError\b|^FAILED \S+::\S+ - (?:AssertionError|assert |Failed: DID NOT RAISE)|^E\s+(?:assert |Failed: DID NOT RAISE)|^FAIL: \w+ \(`),
			Unless:  expr(envAssertion)},
		{ID: "node.assertion", Tag: TestAssertionFailed, Tool: "node/jest/vitest", Confidence: 0.8,
			Pattern: expr(`AssertionError(?: \[ERR_ASSERTION\])?:|(?m)^\s*Expected: .*\n\s*Received: |expect\(received\)\.\w+\(|code: 'ERR_ASSERTION'`),
			Unless:  expr(envAssertion)},
		{ID: "rust.assertion", Tag: TestAssertionFailed, Tool: "cargo test", Confidence: 0.85,
			Pattern: expr("(?m)^assertion (?:`left (?:==|!=) right` )?failed|^note: test did not panic as expected"), Subject: group(0)},
		{ID: "ruby.expectation", Tag: TestAssertionFailed, Tool: "rspec/minitest", Confidence: 0.85,
			Pattern: expr(`(?m)^\s*Failure/Error: (?:expect|is_expected|assert|should)\b|^\s*\d+\) Failure:\n\S+#test_\w+ \[|Failed asserting that |^Failure: test_\w+\(\w+\)|^<.*> expected but was\n<.*>$`)},
		{ID: "python.doctest-hypothesis", Tag: TestAssertionFailed, Tool: "doctest/hypothesis", Confidence: 0.8,
			Pattern: expr(`(?m)^Failed example:\n(?:.*\n)*?^Expected:\n(?:.*\n)*?^Got:|^Falsifying example: `)},
		{ID: "jasmine-tape.expectation", Tag: TestAssertionFailed, Tool: "jasmine/tape", Confidence: 0.8,
			Pattern: expr(`(?m)^\s+Message:\n\s+Expected .* to (?:be|equal|contain|have|match)|^not ok \d+ .*\n\s+---\n\s+operator: \w+\n\s+expected: |^\s*not ok \d+ - .*\n\s+---\n(?:\s+[^\n]*\n){0,6}?\s+(?:wanted|found|compare|actual\s*): `)},
		{ID: "perl.test-more", Tag: TestAssertionFailed, Tool: "Test::More/prove", Confidence: 0.85,
			Pattern: expr(`(?m)^#\s+Failed test (?:'[^']*'|at )`)},
		{ID: "bats.assertion", Tag: TestAssertionFailed, Tool: "bats", Confidence: 0.8,
			Pattern:  expr(`(?m)^#\s+\x60\[\[? .* \]\]?' failed$`),
			Requires: expr(`(?m)^not ok \d+ `)},
		{ID: "junit.failure", Tag: TestAssertionFailed, Tool: "maven/junit", Confidence: 0.85,
			Pattern: expr(`Tests run: \d+, Failures: [1-9]|expected:<.*> but was:<.*>|expected: <.*> but was: <.*>|AssertionFailedError|java\.lang\.AssertionError`)},

		// C and C++ tests: assert(3) as glibc, musl and macOS print it,
		// GoogleTest, Catch2, Unity, Check, Criterion.
		{ID: "c.assert", Tag: TestAssertionFailed, Tool: "assert.h/gtest/catch2/unity/check", Confidence: 0.8,
			Pattern: expr("(?m): Assertion `.+' failed\\.$|^Assertion failed: .+, (?:function \\w+, )?file \\S+, line \\d+\\.?$|^\\S+:\\d+: Failure$|^\\S+:\\d+: FAILED:$|^\\S+\\.c:\\d+:\\w+:FAIL\\b|^\\S+\\.c:\\d+:F:\\w+:\\w+:\\d+: |^\\[----\\] \\S+:\\d+: Assertion [Ff]ailed|^\\[   LINE   \\] --- \\S+:\\d+: error: Failure!$|^\\S+:\\d+: ERROR: (?:CHECK|REQUIRE)\\w*\\( .* \\) is NOT correct!|^\\S+\\(\\d+\\): (?:fatal )?error: in \"[^\"]*\": (?:critical )?check .* has failed")},
		{ID: "cunit.assertion", Tag: TestAssertionFailed, Tool: "CUnit", Confidence: 0.8,
			Pattern:  expr(`(?m)^\s+\d+\. \S+:\d+\s+- \S.*$`),
			Requires: expr(`CUnit - A unit testing framework`)},
		{ID: "uvu.assertion", Tag: TestAssertionFailed, Tool: "uvu", Confidence: 0.8,
			Pattern:  expr(`(?m)^\s+Expected values? to (?:be |not be )?(?:strictly |deeply |loosely )?(?:equal|match|be \w+)[^\n]*\((?:is|equal|ok|not|match|instance|type|snapshot|fixture|unreachable)[\w.]*\)$`),
			Requires: expr(`(?m)^\s+FAIL\s+"`)},
		{ID: "ava.assertion", Tag: TestAssertionFailed, Tool: "ava", Confidence: 0.8,
			Pattern:  expr("(?m)^\\s*(?:Difference \\(- actual, \\+ expected\\):|Value is not \x60(?:true|false)\x60:|Value is not (?:truthy|falsy):|Values are deeply equal to each other, but they must not be:|Function (?:returned|threw unexpected exception|threw):|Value must (?:not )?match expression:|Promise (?:resolved|rejected) with:|Expected instance of \\S+, got:?)$"),
			Requires: expr(`(?m)^\s*✘ `)},
		// build_config_error
		{ID: "go.mod-config", Tag: BuildConfigError, Tool: "go", Confidence: 0.9,
			Pattern: expr(`go\.mod file not found|does not contain main module|cannot find main module|missing go\.sum entry|updates to go\.mod needed|go\.mod requires go >= [\d.]+|errors parsing go\.mod|replacement directory \S+ does not exist|verifying \S+: checksum mismatch|inconsistent vendoring in|build constraints exclude all Go files in|no Go files in \S|pattern \S+: no matching files found`)},
		{ID: "npm.missing-script", Tag: BuildConfigError, Tool: "npm", Confidence: 0.9,
			Pattern: expr(`(?i)npm (?:ERR!|error) missing script:? "?([\w:-]+)`), Subject: group(1)},
		{ID: "npm.lockfile", Tag: BuildConfigError, Tool: "npm", Confidence: 0.9,
			Pattern: expr(`\x60?npm ci\x60? (?:command )?can only install (?:packages )?(?:with an existing package-lock\.json|when your package\.json and package-lock\.json)`)},
		{ID: "npm.package-json", Tag: BuildConfigError, Tool: "npm", Confidence: 0.9,
			Pattern: expr(`(?m)^npm (?:ERR!|error) code EJSONPARSE$|Invalid package\.json|^npm (?:ERR!|error) enoent (?:Could not read package\.json|This is related to npm not being able to find a file)|^npm (?:ERR!|error) No workspaces found`)},
		{ID: "typescript.config", Tag: BuildConfigError, Tool: "tsc", Confidence: 0.85,
			Pattern: expr(`error TS(?:5\d{3}|60(?:46|53|54|59)|18003):`)},
		{ID: "typescript.tsconfig-syntax", Tag: BuildConfigError, Tool: "tsc", Confidence: 0.85,
			Pattern: expr(`(?m)^\S*tsconfig[\w.-]*\.json(?:\(\d+,\d+\): |:\d+:\d+ - )error TS\d+`)},
		{ID: "jest.config", Tag: BuildConfigError, Tool: "jest", Confidence: 0.85,
			Pattern: expr(`● (?:Validation Error|Multiple configurations found):`),
			Unless:  expr(`Test environment \S+ cannot be found|Module \S+ in the \w+ option was not found`)},
		{ID: "eslint.config", Tag: BuildConfigError, Tool: "eslint", Confidence: 0.85,
			Pattern: expr(`Configuration for rule "[^"]+" is invalid|ESLint couldn't find an eslint\.config|No ESLint configuration found`)},
		{ID: "pytest.config", Tag: BuildConfigError, Tool: "pytest", Confidence: 0.85,
			Pattern: expr(`(?m)^ERROR: usage: .*\n.*error: unrecognized arguments: |^ERROR: \S*(?:pytest\.ini|pyproject\.toml|setup\.cfg|tox\.ini): |'\w+' not found in \x60markers\x60 configuration option`)},
		{ID: "pytest.path-missing", Tag: BuildConfigError, Tool: "pytest", Confidence: 0.8,
			Pattern: expr(`(?m)^ERROR: file or directory not found: (\S+)$`),
			Check:   fileCheck(1), Subject: group(1)},
		{ID: "pip.project", Tag: BuildConfigError, Tool: "pip", Confidence: 0.85,
			Pattern: expr(`Neither 'setup\.py' nor 'pyproject\.toml' found|does not appear to be a Python project|error: externally-managed-environment`)},
		{ID: "pip.requirements-missing", Tag: BuildConfigError, Tool: "pip", Confidence: 0.85,
			Pattern: expr(`Could not open requirements file: \[Errno 2\] No such file or directory: '([^']+)'`),
			Check:   fileCheck(1), Subject: group(1)},
		{ID: "pylint.config", Tag: BuildConfigError, Tool: "pylint", Confidence: 0.85,
			Pattern: expr(`E0015: Unrecognized option found: |E0014: Out-of-place setting encountered`)},
		{ID: "python.toml-invalid", Tag: BuildConfigError, Tool: "pip/python", Confidence: 0.8,
			Pattern: expr(`tomli?\.TOMLDecodeError|tomllib\.TOMLDecodeError`)},
		{ID: "mypy.config", Tag: BuildConfigError, Tool: "mypy", Confidence: 0.8,
			Pattern: expr(`(?m)^\S*(?:mypy\.ini|setup\.cfg|pyproject\.toml): (?:File contains no section headers|Source contains parsing errors)`)},
		{ID: "make.no-rule", Tag: BuildConfigError, Tool: "make", Confidence: 0.85,
			Pattern: expr(`No rule to make target '([^']+)'|No targets specified and no makefile found|\*\*\* missing separator|\*\*\* (?:recipe|commands) commences? before first target`), Subject: group(1)},
		{ID: "cargo.manifest", Tag: BuildConfigError, Tool: "cargo", Confidence: 0.9,
			Pattern: expr("failed to parse manifest at|could not find `Cargo.toml`|(?m)^\\s*--> Cargo\\.toml:\\d+:\\d+|is not supported by the following package|cannot be built because it requires rustc|because --locked was passed|needs to be updated but --locked was passed|failed to load manifest for (?:workspace member|dependency)|no (?:bin|example|test|bench) target named")},
		{ID: "maven.project", Tag: BuildConfigError, Tool: "maven", Confidence: 0.9,
			Pattern: expr(`Non-parseable POM|there is no POM in this directory|Some problems were encountered while processing the POMs|The build could not read \d+ projects?|Unknown lifecycle phase "[^"]+"`)},
		{ID: "gradle.build-script", Tag: BuildConfigError, Tool: "gradle", Confidence: 0.9,
			Pattern: expr(`Could not compile (?:build|settings|script|initialization script) file|A problem occurred (?:evaluating|configuring) (?:root )?project|Task '[^']+' not found in (?:root )?project|Plugin \[id: '[^']+'(?:, version: '[^']+')?\] was not found|Could not find method \w+\(\) for arguments`)},
		{ID: "rust.include-missing", Tag: BuildConfigError, Tool: "rustc", Confidence: 0.7,
			Pattern: expr("couldn't read `([^`]+)`: No such file or directory"),
			Check:   fileCheck(1), Subject: group(1)},
		{ID: "go.open-missing-file", Tag: BuildConfigError, Tool: "go", Confidence: 0.6,
			Pattern: expr(`open ([\w@./+-]+): no such file or directory`),
			Check:   fileCheck(1), Subject: group(1)},
		{ID: "python.file-not-found", Tag: BuildConfigError, Tool: "python", Confidence: 0.6,
			Pattern: expr(`FileNotFoundError: \[Errno 2\] No such file or directory: '([^']+)'`),
			Unless:  expr(`in _execute_child\n`),
			Check:   fileCheck(1), Subject: group(1)},
		{ID: "node.enoent", Tag: BuildConfigError, Tool: "node", Confidence: 0.6,
			Pattern: expr(`ENOENT: no such file or directory, (?:open|stat|scandir) '([^']+)'`),
			Check:   fileCheck(1), Subject: group(1)},
		{ID: "ruby-php.file-missing", Tag: BuildConfigError, Tool: "ruby/php", Confidence: 0.6,
			Pattern: expr(`No such file or directory @ rb_sysopen - (\S+)|(?:fopen|file_get_contents|file|parse_ini_file)\(([^)]+)\): [Ff]ailed to open stream: No such file or directory`),
			Reject:  expr(`vendor/autoload\.php`),
			Check:   func(m []string) *preflight.Check { return fileCheck(1)([]string{"", pick(m, 1, 2)}) },
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "file.cannot-open", Tag: BuildConfigError, Tool: "any", Confidence: 0.6,
			Pattern: expr(`(?i:cannot|can't|could not|couldn't|unable to|failed to) (?:open|read|load) (?:file |config(?:uration)? (?:file )?)?['"\x60]?([\w./-]+\.\w+)['"\x60]?: No such file or directory`),
			Check:   fileCheck(1), Subject: group(1)},
		{ID: "python.configparser", Tag: BuildConfigError, Tool: "python", Confidence: 0.8,
			Pattern: expr(`configparser\.(?:NoSectionError|NoOptionError|MissingSectionHeaderError|DuplicateSectionError|DuplicateOptionError|ParsingError): `)},
		{ID: "java.jarfile-missing", Tag: BuildConfigError, Tool: "java", Confidence: 0.8,
			Pattern: expr(`Error: Unable to access jarfile (\S+)`),
			Check:   fileCheck(1), Subject: group(1)},
		{ID: "java.file-missing", Tag: BuildConfigError, Tool: "java", Confidence: 0.6,
			Pattern: expr(`java\.nio\.file\.NoSuchFileException: (\S+)|java\.io\.FileNotFoundException: (\S+) \(No such file or directory\)`),
			Check:   func(m []string) *preflight.Check { return fileCheck(1)([]string{"", pick(m, 1, 2)}) },
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "shell.file-missing", Tag: BuildConfigError, Tool: "coreutils", Confidence: 0.6,
			Pattern: expr(`(?m)^(?:cat|head|tail|cp|wc|grep|sort|jq|diff|cmp|source|\.): ([\w./-]+): No such file or directory$`),
			Check:   fileCheck(1), Subject: group(1)},

		// C and C++: the project's own header (included with quotes), a
		// source file the driver cannot open, symbols the link did not
		// find (a library not linked, a file not compiled in).
		{ID: "c.missing-local-header", Tag: BuildConfigError, Tool: "gcc/clang", Confidence: 0.8,
			Pattern: expr(`(?m)^\S+:\d+(?::\d+)?: fatal error: (?:([\w./+-]+): No such file or directory|'([\w./+-]+)' file not found)\n\s*(?:\d+ \| )?\s*#\s*(?:include|import)\s*"`),
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "cc.input-missing", Tag: BuildConfigError, Tool: "gcc/clang", Confidence: 0.85,
			Pattern: expr(`(?m)^(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+|cc1|cc1plus)(?:-[\d.]+)?: (?:fatal )?error: (?:([\w./+-]+\.\w+): No such file or directory|no such file or directory: '([\w./+-]+\.\w+)')$`),
			Check:   func(m []string) *preflight.Check { return fileCheck(1)([]string{"", pick(m, 1, 2)}) },
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		// The compiler driver refusing its command line: a flag this
		// compiler does not know, or nothing to compile.
		{ID: "cc.command-line", Tag: BuildConfigError, Tool: "gcc/clang", Confidence: 0.85,
			Pattern: expr(`(?m)^(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+|cc1|cc1plus)(?:-[\d.]+)?: (?:fatal )?error: (?:unrecognized command[- ]line option '([^']+)'|unknown argument: '([^']+)'|no input files$|invalid argument '([^']+)' not allowed with)`),
			Subject: func(m []string) string { return pick(m, 1, 2, 3) }},
		{ID: "ld.undefined-reference", Tag: BuildConfigError, Tool: "ld/lld", Confidence: 0.85,
			Pattern: expr("undefined reference to `([^'\\n]+)'|(?m)^(?:ld(?:\\.lld)?|lld): error: undefined symbol: (.+)$|Undefined symbols for architecture \\w+:|multiple definition of `([^'\\n]+)'|error LNK2019: unresolved external symbol (\\S+)|(?m)^mold: error: undefined symbol: (.+)$|recompile with -fPIC"),
			Subject: func(m []string) string { return pick(m, 1, 2, 3, 4, 5) }},
		{ID: "cmake.source-missing", Tag: BuildConfigError, Tool: "cmake", Confidence: 0.85,
			Pattern: expr(`Cannot find source file:\s*\n\s*([\w./+-]+)\n`),
			Check:   fileCheck(1), Subject: group(1)},
		{ID: "cmake.error", Tag: BuildConfigError, Tool: "cmake", Confidence: 0.85,
			Pattern: expr(`(?m)^CMake Error(?: at [^\n]+)?:[^\n]*`),
			Unless:  expr(`Could NOT find \w+|Could not find a (?:package configuration file|configuration file for package)|By not providing "Find\w+\.cmake"|No CMAKE_\w+_COMPILER could be found|Could not find compiler set in environment variable|CMake was unable to find a build program|Could not find \w+ using the following (?:names|files)|set to NOTFOUND|No package '[^']+' found|Package '[^']+', required by '[^']*', not found|was not found in the pkg-config search path`)},
		{ID: "ninja.missing", Tag: BuildConfigError, Tool: "ninja", Confidence: 0.85,
			Pattern: expr(`ninja: error: '([\w./+-]+)', needed by '[^']+', missing and no known rule to make it|ninja: error: loading '(build\.ninja)': No such file or directory`),
			Check: func(m []string) *preflight.Check {
				if m[1] == "" {
					return nil
				}
				return fileCheck(1)(m)
			},
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "meson.build-file", Tag: BuildConfigError, Tool: "meson", Confidence: 0.85,
			Pattern: expr(`(?m)^\S*meson(?:\.build|_options\.txt|\.options):\d+:\d+: ERROR: (.*)$|ERROR: Neither source directory '[^']*' nor build directory '[^']*' contain a build file meson\.build|ERROR: (?:Unknown options?: |Invalid option |Value "[^"]*" \(of type "\w+"\) for (?:combo )?option)`),
			Reject:  expr(`ERROR: (?:Dependency "|Dependency lookup for |(?:C|C\+\+|\w+) (?:shared or static )?library '|Program '|Unknown compiler)`)},
		{ID: "pnpm.project", Tag: BuildConfigError, Tool: "pnpm", Confidence: 0.9,
			Pattern: expr(`\bERR_PNPM_(?:\w*LOCKFILE\w*|ADDING_TO_ROOT|NO_SCRIPT|RECURSIVE_RUN_NO_SCRIPT|NO_IMPORTER_MANIFEST_FOUND|NO_PKG_MANIFEST|UNSUPPORTED_ENGINE|BAD_PM_VERSION|\w*JSON_PARSE\w*|UNSUPPORTED_PLATFORM|INVALID_WORKSPACE_CONFIGURATION)\b`)},
		{ID: "yarn.project", Tag: BuildConfigError, Tool: "yarn", Confidence: 0.9,
			Pattern: expr("The engine \"[\\w-]+\" is incompatible with this module|Your lockfile needs to be updated, but yarn was run with `--frozen-lockfile`|YN0028: [^\\n]*The lockfile would have been modified by this install, which is explicitly forbidden|(?m)^error Command \"([\\w:-]+)\" not found\\.?$|Usage Error: Couldn't find a script named \"([^\"]+)\"|This package doesn't seem to be present in your lockfile|doesn't seem to be part of the project declared in|(?m)^error Couldn't find a package\\.json file in|Usage Error: The project in \\S+ doesn't seem to have been installed|(?m)^npm (?:ERR!|error) (?:code EBADENGINE|notsup Unsupported engine)"),
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "pm.project", Tag: BuildConfigError, Tool: "poetry/uv/composer/bundler", Confidence: 0.9,
			Pattern: expr("The Poetry configuration is invalid:|pyproject\\.toml changed significantly since poetry\\.lock was last generated|poetry\\.lock is not consistent with pyproject\\.toml|Poetry could not find a pyproject\\.toml file|\\[tool\\.poetry\\] section not found|needs to be updated, but `--locked` was provided|The lock file is not up to date with the latest changes in composer\\.json|Composer could not find a composer\\.json file|You are trying to install in deployment mode after changing\\s+your Gemfile|(?m)^Could not locate Gemfile|composer\\.json\"? (?:does not match the expected JSON schema|is invalid)|(?m)^\\S+ does not contain any element$|No file/folder found for package \\S+"),
		},
		// Terraform and OpenTofu: an error located in a .tf file (validate,
		// plan), or one that says init was not run.
		{ID: "terraform.file-missing", Tag: BuildConfigError, Tool: "terraform/tofu", Confidence: 0.85,
			Pattern: expr(`no file exists at\s+"([^"]+)"|The file "([^"]+)" could not be read`),
			Check:   func(m []string) *preflight.Check { return fileCheck(1)([]string{"", pick(m, 1, 2)}) },
			Subject: func(m []string) string { return pick(m, 1, 2) }},
		{ID: "terraform.config", Tag: BuildConfigError, Tool: "terraform/tofu", Confidence: 0.85,
			Pattern: expr(`(?m)^(?:│ )?Error: ([^\n]+)\n(?:│\s*)?\n(?:│ )?  on \S+\.tf(?:\.json)? line \d+|Error: (?:Module not installed|Unreadable module directory|Required plugins are not installed|Inconsistent dependency lock file|Backend initialization required|Missing required provider|No configuration files)`),
			Reject:  expr(`Error: (?:Failed to query available provider packages|Failed to install provider|Failed to download module|Failed to retrieve available versions for module|Error accessing remote module registry|Incompatible provider version|Invalid provider registry host)`)},
		// port_in_use
		{ID: "go.bind-in-use", Tag: PortInUse, Tool: "go", Confidence: 0.95,
			Pattern: expr(`listen tcp[46]? (?:[\w.-]*|\[[0-9a-fA-F:.]*\]):(\d+): bind: address already in use`),
			Check:   portCheck(1), Subject: group(1)},
		{ID: "node.eaddrinuse", Tag: PortInUse, Tool: "node", Confidence: 0.95,
			Pattern: expr(`EADDRINUSE:? address already in use (?:[\w.:-]*|\[[0-9a-fA-F:.]*\]):(\d+)`),
			Check:   portCheck(1), Subject: group(1)},
		{ID: "server.port-in-use", Tag: PortInUse, Tool: "postgres/redis/mariadb", Confidence: 0.9,
			Pattern: expr(`Is another postmaster already running on port (\d+)\?|listening socket (?:[\w.*-]*|\[[0-9a-fA-F:.]*\]):(\d+): bind: Address already in use|another (?:server|mysqld) running on port: (\d+)|bind\(\) to (?:[\w.*-]+|\[[0-9a-fA-F:.]*\]):(\d+) failed \(98: Address already in use\)|error while attempting to bind on address \('[^']*', (\d+)(?:, \d+, \d+)?\): address already in use|[Pp]ort (\d+) (?:is|was) already in use|port (\d+) \(Errno::EADDRINUSE\)|Failed to listen on [\w.:\[\]-]+:(\d+) \(reason: Address already in use\)|Bind for [\d.:\[\]]+:(\d+) failed: port is already allocated`),
			Check: func(m []string) *preflight.Check {
				return portCheck(1)([]string{"", pick(m, 1, 2, 3, 4, 5, 6, 7, 8, 9)})
			},
			Subject: func(m []string) string { return pick(m, 1, 2, 3, 4, 5, 6, 7, 8, 9) }},
		{ID: "server.port-in-use-wordings", Tag: PortInUse, Tool: "gunicorn/werkzeug/puma/kestrel/apache/ranch", Confidence: 0.9,
			Pattern: expr(`Connection in use: \('[^']*', (\d+)\)|[Pp]ort (\d+) is in use by another program|Address already in use - bind\(2\) for "[^"]*" port (\d+)|Failed to bind to address https?://[^\s/]*:(\d+)[^\n]*address already in use|could not bind to address \[?[\w.:]*\]?:(\d+)|port: (\d+)[^\n]*for reason :eaddrinuse`),
			Check: func(m []string) *preflight.Check {
				return portCheck(1)([]string{"", pick(m, 1, 2, 3, 4, 5, 6)})
			},
			Subject: func(m []string) string { return pick(m, 1, 2, 3, 4, 5, 6) }},
		// Address in use in any other wording. The port, when the output
		// names it elsewhere or the step's command line does, is taken by
		// portFromContext.
		{ID: "address-in-use", Tag: PortInUse, Tool: "any", Confidence: 0.8,
			Pattern: expr(`(?i)address already in use|\bEADDRINUSE\b|That port is already in use|Only one usage of each socket address|kind: AddrInUse\b|\baddress in use\b`)},

		// db_connection_failed
		{ID: "postgres.connection", Tag: DBConnectionFailed, Tool: "libpq (psql, psycopg2)", Confidence: 0.95,
			Pattern: expr(`connection to server (?:at "([^"]+)"(?: \([\d.:a-fA-F]+\))?, port (\d+)|on socket "([^"]+)") failed: ([^\n]*)`),
			Check:   libpqCheck, Subject: func(m []string) string {
				if m[3] != "" {
					return m[3]
				}
				return m[1] + ":" + m[2]
			}},
		{ID: "db.connect-call-failed", Tag: DBConnectionFailed, Tool: "asyncpg/aiomysql/aioredis", Confidence: 0.85,
			Pattern: expr(`Connect call failed \('([\w.:-]+)', (` + dbPorts + `)\)|Multiple exceptions: \[Errno 111\] Connect call failed \('([\w.:-]+)', (` + dbPorts + `)\)`),
			Check:   func(m []string) *preflight.Check { return addrCheck(1, 2)([]string{"", pick(m, 1, 3), pick(m, 2, 4)}) }},
		{ID: "db.client-named", Tag: DBConnectionFailed, Tool: "orm/drivers", Confidence: 0.85,
			Pattern: expr("Can't reach database server at `?([\\w.-]+)`?:`?(\\d+)`?|MongoServerSelectionError|server selection error: |Redis::CannotConnectError|Error connecting to Redis on ([\\w.-]+):(\\d+) \\(Errno::ECONNREFUSED\\)|PG::ConnectionBad|Mysql2::Error::ConnectionError|pq: SSL is not enabled on the server|ActiveRecord::ConnectionNotEstablished|ActiveRecord::NoDatabaseError|unable to open database file|PDOException: SQLSTATE\\[(?:HY000|08006|08001)\\] \\[(?:200[2356]|7)\\]"),
			Check:   func(m []string) *preflight.Check { return addrCheck(1, 2)([]string{"", pick(m, 1, 3), pick(m, 2, 4)}) }},
		{ID: "postgres.host-unknown", Tag: DBConnectionFailed, Tool: "libpq", Confidence: 0.9,
			Pattern: expr(`could not translate host name "([^"]+)" to address`), Subject: group(1)},
		{ID: "postgres.jdbc", Tag: DBConnectionFailed, Tool: "pgjdbc", Confidence: 0.9,
			Pattern: expr(`PSQLException: (?:Connection to ([\w.-]+|\[[0-9a-fA-F:]+\]):(\d+) refused|The connection attempt failed|FATAL: )`),
			Check:   addrCheck(1, 2), Subject: func(m []string) string { return pick(m, 1) }},
		{ID: "node-postgres.timeout", Tag: DBConnectionFailed, Tool: "node-postgres", Confidence: 0.85,
			Pattern: expr(`Error: (?:timeout expired|Connection terminated (?:unexpectedly|due to connection timeout))\n\s+at .*node_modules/pg(?:-pool)?/`)},
		{ID: "pg_isready.no-response", Tag: DBConnectionFailed, Tool: "pg_isready", Confidence: 0.9,
			Pattern: expr(`(?m)^([\w.-]+|\[[0-9a-fA-F:]+\]):(\d+) - no response$`),
			Check:   addrCheck(1, 2), Subject: func(m []string) string { return m[1] + ":" + m[2] }},
		{ID: "pgx.dial", Tag: DBConnectionFailed, Tool: "pgx", Confidence: 0.9,
			Pattern:  expr(`(?m)^\s*([\w.-]+|\[[0-9a-fA-F:]+\]):(\d+) \([^)\s]*\): dial error: `),
			Requires: expr("failed to connect to `"),
			Check:    addrCheck(1, 2), Subject: func(m []string) string { return m[1] + ":" + m[2] }},
		{ID: "pgx.connect", Tag: DBConnectionFailed, Tool: "pgx", Confidence: 0.85,
			Pattern: expr("failed to connect to `(?:host=\\S+ )?user=\\S+ database=[^`]*`")},
		{ID: "go.dial-refused", Tag: DBConnectionFailed, Tool: "go", Confidence: 0.85,
			Pattern: expr(`dial tcp ([\w.-]+|\[[0-9a-fA-F:]+\]):(` + dbPorts + `): connect: connection refused`),
			Check:   addrCheck(1, 2), Subject: func(m []string) string { return m[1] + ":" + m[2] }},
		{ID: "node.econnrefused", Tag: DBConnectionFailed, Tool: "node", Confidence: 0.85,
			Pattern: expr(`ECONNREFUSED ([\w.-]+|::1):(` + dbPorts + `)\b`),
			Check:   addrCheck(1, 2), Subject: func(m []string) string { return m[1] + ":" + m[2] }},
		{ID: "postgres.auth", Tag: DBConnectionFailed, Tool: "postgres", Confidence: 0.9,
			Pattern: expr(`password authentication failed for user "([^"]+)"|database "([^"]+)" does not exist|FATAL:\s+role "[^"]+" does not exist|pg_hba\.conf rejects connection|no pg_hba\.conf entry for`)},
		{ID: "mysql.cannot-connect", Tag: DBConnectionFailed, Tool: "mysql/mariadb", Confidence: 0.9,
			Pattern: expr(`Can't connect to (?:local )?(?:MySQL |MariaDB )?server (?:on '([\w.:-]+)'|through socket '([^']+)')(?: \((\d+)\))?|Lost connection to (?:MySQL )?server at '(?:handshake: )?reading initial communication packet`),
			Check: func(m []string) *preflight.Check {
				switch {
				case m[2] != "" && m[3] == "2":
					return &preflight.Check{Type: preflight.FileExists, Path: m[2]}
				case m[1] != "" && m[3] == "111":
					// MySQL 8's client names the port: '127.0.0.1:3307' (111).
					if host, port, err := net.SplitHostPort(m[1]); err == nil {
						return addrCheck(1, 2)([]string{"", host, port})
					}
				}
				return nil
			}},
		{ID: "mysql.host-unknown", Tag: DBConnectionFailed, Tool: "mysql/mariadb", Confidence: 0.9,
			Pattern: expr(`Unknown (?:MySQL |MariaDB )?server host '([^']+)'`), Subject: group(1)},
		{ID: "mariadb.jdbc", Tag: DBConnectionFailed, Tool: "mariadb/mysql jdbc", Confidence: 0.9,
			Pattern: expr(`Could not connect to address=\(host=([\w.-]+)\)\(port=(\d+)\)[^\n]*|Communications link failure`),
			Check: func(m []string) *preflight.Check {
				if strings.Contains(m[0], "Connection refused") || strings.Contains(m[0], "connect timed out") {
					return addrCheck(1, 2)(m)
				}
				return nil
			},
			Subject: func(m []string) string { return pick(m, 1) }},
		{ID: "mysql.access-denied", Tag: DBConnectionFailed, Tool: "mysql/mariadb", Confidence: 0.9,
			Pattern: expr(`Access denied for user '[^']*'@'[^']*'(?: \(using password: (?:YES|NO)\)| to database '[^']+')|Unknown database '[^']+'`)},
		{ID: "redis.cannot-connect", Tag: DBConnectionFailed, Tool: "redis", Confidence: 0.9,
			Pattern: expr(`Could not connect to Redis at (?:([\w.-]+):(\d+)|(/\S+)): ([^\n]*)|Error \d+ connecting to ([\w.-]+):(\d+)\. Connection refused`),
			Check: func(m []string) *preflight.Check {
				switch {
				case m[3] != "" && strings.HasPrefix(m[4], "No such file"):
					return &preflight.Check{Type: preflight.FileExists, Path: m[3]}
				case m[1] != "" && unreachable().MatchString(m[4]):
					return addrCheck(1, 2)(m)
				case m[5] != "":
					return addrCheck(5, 6)(m)
				}
				return nil
			}},
		{ID: "redis.auth", Tag: DBConnectionFailed, Tool: "redis", Confidence: 0.9,
			Pattern: expr(`NOAUTH (?:Authentication required|HELLO must be called)|WRONGPASS invalid username-password pair|redis\.exceptions\.AuthenticationError`)},
		{ID: "redis-py.connection", Tag: DBConnectionFailed, Tool: "redis-py", Confidence: 0.85,
			Pattern: expr(`redis\.exceptions\.(?:ConnectionError|TimeoutError|BusyLoadingError): ([^\n]*)`)},
		// A Node driver's refused connection, its stack naming the driver.
		{ID: "node.driver-refused", Tag: DBConnectionFailed, Tool: "node drivers", Confidence: 0.8,
			Pattern:  expr(`ECONNREFUSED ([\w.-]+|::1):(\d+)\b`),
			Requires: expr(`node_modules/(?:mysql2?|pg|pg-pool|mongodb|redis|@redis/client|ioredis|mssql|tedious|oracledb|cassandra-driver|typeorm|sequelize|knex|mongoose|@prisma/client)/|\bTypeORM\b|MongoNetworkError`),
			Check:    addrCheck(1, 2), Subject: func(m []string) string { return m[1] + ":" + m[2] }},
		// A refused connection in a Python traceback that passes through a
		// database or cache driver.
		{ID: "python.driver-refused", Tag: DBConnectionFailed, Tool: "python drivers", Confidence: 0.8,
			Pattern:  expr(`(?m)^ConnectionRefusedError: \[Errno 111\] Connection refused$`),
			Requires: expr(`/(?:pymemcache|memcache|pylibmc|redis|psycopg2?|pymysql|MySQLdb|pymongo|cassandra|aiopg|asyncpg|aiomysql|motor|kombu|elasticsearch)/[\w/]*\.py", line \d+`)},
		// psycopg 3 says "connection failed" and, before 3.2, not where.
		{ID: "psycopg.connection", Tag: DBConnectionFailed, Tool: "psycopg 3", Confidence: 0.9,
			Pattern: expr(`psycopg(?:_pool)?\.(?:errors\.)?OperationalError: (?:connection failed|connection is bad|consuming input failed)|psycopg_pool\.PoolTimeout: `)},
		// A refused connection in any wording, to a database or cache:
		// named on the same line (go-redis's "redis: dial tcp ...", an
		// Elixir DBConnection), or by its client library (ioredis,
		// Sequelize, Jedis, Lettuce, Npgsql). A well-known port alone is
		// go.dial-refused's and node.econnrefused's.
		{ID: "db.refused", Tag: DBConnectionFailed, Tool: "drivers", Confidence: 0.85,
			Pattern: expr(`(?i:redis|postgres(?:ql)?|pgx?|mysql|mariadb|mongo(?:db)?|memcached?|cassandra|clickhouse|database|db|cache)\b[^\n]{0,80}?dial tcp ([\w.-]+|\[[0-9a-fA-F:]+\]):(\d+): connect: connection refused|\(DBConnection\.ConnectionError\) tcp connect \(([\w.-]+):(\d+)\): connection refused|SequelizeConnectionRefusedError\]?: connect ECONNREFUSED ([\w.-]+|::1):(\d+)|\[ioredis\] Unhandled error event: Error: connect ECONNREFUSED ([\w.-]+|::1):(\d+)|Npgsql\.NpgsqlException[^\n]*Failed to connect to ([\w.-]+|\[[0-9a-fA-F:]+\]):(\d+)|RedisConnectionException: Unable to connect to ([\w.-]+)/?[\w.:-]*?:(\d+)|JedisConnectionException: Failed to connect to|Cannot connect to redis://([\w.-]+):(\d+)|Sequel::DatabaseConnectionError|RedisException: Connection refused`),
			Check: func(m []string) *preflight.Check {
				for i := 1; i+1 < len(m); i += 2 {
					if m[i] != "" {
						return addrCheck(i, i+1)(m)
					}
				}
				return nil
			}},
		{ID: "pymongo.connection", Tag: DBConnectionFailed, Tool: "pymongo", Confidence: 0.9,
			Pattern: expr(`pymongo\.errors\.(?:ServerSelectionTimeoutError|ConnectionFailure|AutoReconnect|NetworkTimeout): (?:([\w.-]+):(\d+): \[Errno 111\] Connection refused)?`),
			Check: func(m []string) *preflight.Check {
				if m[1] == "" {
					return nil
				}
				return addrCheck(1, 2)(m)
			}},
	}
})
