package classify

import (
	"slices"
	"strings"
	"testing"

	"github.com/orket/orket/preflight"
)

// TestUnclassified: on every captured output, a result has Unclassified
// exactly when it has no tag; its cause is a line of the output at the
// number it gives, and so is each family's line.
func TestUnclassified(t *testing.T) {
	c := New(nil)
	for _, cp := range loadCorpus(t) {
		res := c.ClassifyCommand(cp.output, stepCommand(cp.meta["command"]))
		u := res.Unclassified
		if (len(res.Tags) == 0) != (u != nil) {
			t.Errorf("%s: tags %v, unclassified %+v", cp.name, res.Tags, u)
			continue
		}
		if u == nil {
			continue
		}
		lines := strings.Split(Plain(cp.output), "\n")
		if strings.TrimSpace(cp.output) != "" && (u.Cause == "" || u.CauseLine == 0) {
			t.Errorf("%s: no cause line for an output of %d lines", cp.name, len(lines))
		}
		if u.CauseLine > 0 && !strings.Contains(lines[u.CauseLine-1], strings.TrimSuffix(u.Cause, "…")) {
			t.Errorf("%s: cause %q is not line %d (%q)", cp.name, u.Cause, u.CauseLine, lines[u.CauseLine-1])
		}
		for _, f := range u.Families {
			if f.Line < 1 || f.Line > len(lines) || !strings.Contains(lines[f.Line-1], strings.TrimSuffix(f.Text, "…")) {
				t.Errorf("%s: family %s at line %d (%q)", cp.name, f.Family, f.Line, f.Text)
			}
			if f.Why == "" || f.Name == "" {
				t.Errorf("%s: family %s says nothing", cp.name, f.Family)
			}
		}
	}
}

// TestUnclassifiedFamilies: what an untagged real output looked like.
// The families follow from the output's shape: a compiler's syntax
// error, Python's, a package manager's script failure, a crash.
func TestUnclassifiedFamilies(t *testing.T) {
	c := New(nil)
	for _, tt := range []struct {
		capture string
		family  string // the first family named
		why     string // in its explanation
	}{
		{"round7-gcc-syntax-semicolon", "c-compiler", "syntax error"},
		{"round9-gxx-syntax-class", "c-compiler", "syntax error"},
		{"round10-python-missing-colon", "syntax", "does not parse"},
		{"round10-pnpm-script-exit", "package-manager", "script"},
		{"round9-yarn-berry-not-in-lockfile", "", ""}, // tagged: no families
		{"round10-cxx-out-of-range", "exception", "std::out_of_range"},
		{"round10-ctest-exit-code", "build-system", "command it ran failed"},
		{"round9-go-api-refused", "connection", "database or cache"},
	} {
		res := c.Classify(readOutput(t, tt.capture))
		if tt.family == "" {
			if res.Unclassified != nil {
				t.Errorf("%s: tagged %v but unclassified %+v", tt.capture, res.Tags, res.Unclassified)
			}
			continue
		}
		if res.Unclassified == nil || len(res.Unclassified.Families) == 0 {
			t.Errorf("%s: tags %v, no family", tt.capture, res.Tags)
			continue
		}
		f := res.Unclassified.Families[0]
		if f.Family != tt.family || !strings.Contains(f.Why, tt.why) {
			t.Errorf("%s: first family %s (%s), want %s (…%s…)", tt.capture, f.Family, f.Why, tt.family, tt.why)
		}
		if res.Unclassified.CauseLine != f.Line {
			t.Errorf("%s: cause at line %d, family at %d", tt.capture, res.Unclassified.CauseLine, f.Line)
		}
	}
}

// TestExplainUnclassified: --explain names the cause and the families.
func TestExplainUnclassified(t *testing.T) {
	out := readOutput(t, "round8-gcc-syntax-brace")
	s := New(nil).Explain(out).String()
	for _, want := range []string{"tags: none", "cause: line 2: brace.c:4:1: error: expected declaration or statement at end of input",
		"looked like:\n  line 2: a C or C++ compiler's file:line:col: error: line, but its message \"expected declaration or statement at end of input\" is a syntax error"} {
		if !strings.Contains(s, want) {
			t.Errorf("explanation lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(New(nil).Explain(readOutput(t, "round6-gcc-missing-header")).String(), "looked like") {
		t.Error("a tagged output is explained with families")
	}
}

// TestPortFromContext: the port of an address in use, from the output
// when it names one away from the error, else from the command line; the
// command's flag wins over a number met before it.
func TestPortFromContext(t *testing.T) {
	for _, tt := range []struct {
		capture, command string
		want             int
	}{
		{"round6-django-port-in-use", "", 18101}, // the banner
		{"round6-python-bind-in-use", "", 18103}, // the traceback's source line
		{"round7-socat-in-use", "", 18115},       // the address on the error line
		{"round7-nc-in-use", "nc -l 127.0.0.1 18114", 18114},
		{"round9-memcached-in-use", "memcached -u nobody -l 127.0.0.1 -p 18132 -U 0", 18132},
		{"round10-java-port-argument", "timeout 20 java Srv.java 18154", 18154},
		{"round7-java-bind-in-use", "timeout 20 java Srv.java", 0},
	} {
		if got := PortFromContext(Plain(readOutput(t, tt.capture)), tt.command); got != tt.want {
			t.Errorf("%s with %q: port %d, want %d", tt.capture, tt.command, got, tt.want)
		}
	}
}

// TestClassifyCommand: a command line adds the port a server was given;
// without it, the same output has no check.
func TestClassifyCommand(t *testing.T) {
	c := New(nil)
	out := readOutput(t, "round10-nc-port-only")
	if res := c.Classify(out); len(res.Checks) != 0 {
		t.Errorf("without the command: checks %v", res.Checks)
	}
	res := c.ClassifyCommand(out, "nc -l 18157")
	if !slices.Equal(res.Checks, []preflight.Check{port(18157)}) || res.Subject != "18157" {
		t.Errorf("with the command: checks %v, subject %q", res.Checks, res.Subject)
	}
}

// TestSplitTopLevel: a pattern's top-level alternatives, each with the
// flags set before it.
func TestSplitTopLevel(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{`a|b`, []string{`a`, `b`}},
		{`(?m)^a|^b`, []string{`(?m)^a`, `(?m)^b`}},
		{`x(a|b)|[|(]c`, []string{`x(a|b)`, `[|(]c`}},
		{`a\|b|c`, []string{`a\|b`, `c`}},
		{`a|(?i)b|c`, []string{`a`, `(?i)b`, `(?i)c`}},
		{`(?i:a|b)`, []string{`(?i:a|b)`}},
		{`[]|]x|y`, []string{`[]|]x`, `y`}},
	} {
		var got []string
		for _, sp := range splitTopLevel(tt.in) {
			got = append(got, sp.of(tt.in))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q: %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestAdviceForUnclassified: a lesson's advice for an output no rule
// tags keeps its cause, says what it looked like and tells a person to
// teach orket a rule; it suggests no action to an agent (a guardrail made
// from it would tell the agent to write orket's rules).
func TestAdviceForUnclassified(t *testing.T) {
	res := New(nil).ClassifyStep(readOutput(t, "round10-python-missing-colon"), "", "python3 t1.py")
	a := AdviceFor(res, "python3 t1.py")
	if a.Title != "Unclassified failure of python3 t1.py" || !strings.Contains(a.Summary, "its cause: SyntaxError: expected ':'") ||
		!strings.Contains(a.Summary, "it looked like a syntax error") || !strings.Contains(a.Summary, "a rule in orket.yaml") || len(a.SuggestedActions) != 0 {
		t.Errorf("advice %+v", a)
	}
}

// TestLinterByCommand: a linter no rule names (a team's own) is known by
// its command line and its `path:line[:col]: message` findings; the same
// lines from another command, and a compiler's error line from a lint
// step, are not lint.
func TestLinterByCommand(t *testing.T) {
	c := New(nil)
	for _, tt := range []struct {
		command, output string
		lint            bool
	}{
		{"go run ./tools/stocklint ./...", "internal/stock/stock.go:42:1: SR001 exported function Reserved has no doc comment\nstocklint: 1 problem(s)\n", true},
		{"node scripts/lint.js src", "src/checkout/index.js:12: error  Unexpected console statement (log through src/log.js)  no-console\n\n1 problem(s)\n", true},
		{"make lint", "app/models.py:7:80: W-LEN line longer than 79 characters\n", true},
		{"go run ./tools/report ./...", "internal/stock/stock.go:42:1: SR001 exported function Reserved has no doc comment\n", false},
		{"make lint", "src/a.c:3:5: error: unknown type name 'foo'\n", false},
		{"npm run lint", "sh: 1: eslint: not found\n", false},
		{"make lint test", "tests/test_x.py:12: AssertionError\n", false},
	} {
		res := c.ClassifyCommand(tt.output, tt.command)
		if got := slices.Contains(res.Tags, LintError); got != tt.lint {
			t.Errorf("%s: %q: tags %v, want lint_error %v", tt.command, tt.output, res.Tags, tt.lint)
		}
	}
}

// TestJSAPIShape: JavaScript's errors of an API whose shape changed
// under its callers are type errors; a property read of undefined (most
// often a value never set) and the words without a stack are not.
func TestJSAPIShape(t *testing.T) {
	c := New(nil)
	stack := "      at quote (file:///w/src/checkout/index.js:5:15)\n      at TestContext.<anonymous> (file:///w/test/checkout.test.js:7:3)\n"
	for _, tt := range []struct {
		output string
		typ    bool
	}{
		{"✖ quote charges fees (1.2ms)\n  TypeError: serviceFee is not a function\n" + stack, true},
		{"file:///w/src/checkout/index.js:2\nimport { fee } from '../pricing/index.js';\n         ^^^\nSyntaxError: The requested module '../pricing/index.js' does not provide an export named 'fee'\n    at ModuleJob._instantiate (node:internal/modules/esm/module_job:123:21)\n", true},
		{"  TypeError: Cannot read properties of undefined (reading 'total')\n" + stack, false},
		{"TypeError: serviceFee is not a function\n", false},
	} {
		res := c.ClassifyCommand(tt.output, "node --test")
		if got := slices.Contains(res.Tags, TypeError); got != tt.typ {
			t.Errorf("%q: tags %v, want type_error %v", tt.output, res.Tags, tt.typ)
		}
	}
}
