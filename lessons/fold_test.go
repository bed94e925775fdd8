package lessons

import (
	"testing"

	"github.com/orket/orket/preflight"
)

func TestMask(t *testing.T) {
	for _, tc := range []struct{ cause, want string }{
		{"pkg/api/routes_gen.go is out of date: run go generate ./pkg/api", "<path> is out of date: run go generate <path>"},
		{"pkg/api/handlers.go:12:9: not enough arguments in call to billing.Charge", "<path>: not enough arguments in call to <id>"},
		{"TypeError: charge() missing 1 required positional argument: 'idempotency_key'", "TypeError: <fn>() missing <n> required positional argument: <q>"},
		{"urllib.error.URLError: <urlopen error [Errno 111] Connection refused>", "URLError: <urlopen error [Errno <n>] Connection refused>"},
		{"invoice/api.py:3:1: F401 'os' imported but unused", "<path>: F401 <q> imported but unused"},
		{"src/x.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.", "<path>(<n>,<n>): error TS2322: Type <q> is not assignable to type <q>."},
		{"billing_test.go:12: got 3, want 4", "<path>: got <n>, want <n>"},
		{"DATABASE_URL is not set", "DATABASE_URL is not set"},
	} {
		if got := Mask(tc.cause); got != tc.want {
			t.Errorf("Mask(%q)\n = %q\nwant %q", tc.cause, got, tc.want)
		}
	}
}

// TestFoldKey checks which lessons are one hazard.
func TestFoldKey(t *testing.T) {
	mk := func(tags []string, cause, test string, checks ...preflight.Check) *Lesson {
		l := &Lesson{Classification: Classification{Tags: tags, Cause: cause, Location: &Location{Test: test}}}
		l.Advice.PreflightChecks = checks
		return l
	}
	mkLint := func(cause string) *Lesson {
		l := mk([]string{"lint_error"}, cause, "")
		l.Verify.FailedCommand = "flake8 invoice"
		return l
	}
	// A type error at where, in a run that changed touched.
	mkType := func(cause, where, touched string) *Lesson {
		l := mk([]string{"type_error"}, cause, "")
		l.Classification.Location.Files = []string{where}
		l.Plan.TouchSet = []string{touched}
		return l
	}
	env := preflight.Check{Type: preflight.EnvVarPresent, Name: "BILLING_KEY"}
	for _, tc := range []struct {
		name string
		a, b *Lesson
		same bool
	}{
		{"one regeneration in two packages",
			mk(nil, "pkg/api/routes_gen.go is out of date: run go generate ./pkg/api", "TestRoutesGenerated"),
			mk(nil, "pkg/models/models_gen.go is out of date: run go generate ./pkg/models", "TestModelsGenerated"), true},
		{"one variable, said two ways",
			mk([]string{"missing_env_var"}, "BILLING_KEY is not set", "", env),
			mk([]string{"missing_env_var"}, "KeyError: 'BILLING_KEY'", "", env), true},
		{"two variables",
			mk([]string{"missing_env_var"}, "BILLING_KEY is not set", "", env),
			mk([]string{"missing_env_var"}, "USERS_DSN is not set", "", preflight.Check{Type: preflight.EnvVarPresent, Name: "USERS_DSN"}), false},
		{"two assertions that say too little to be one hazard",
			mk(nil, "billing_test.go:12: got 3, want 4", "TestCharge"),
			mk(nil, "users_test.go:30: got 1, want 2", "TestLookup"), false},
		{"one linter, two rules", mkLint("invoice/a.py:3:1: F401 'os' imported but unused"), mkLint("invoice/b.py:9:101: E501 line too long (107 > 100 characters)"), true},
		{"callers broken two ways in two places",
			mkType("shop/cart.go:9:20: not enough arguments in call to price.Price", "shop/cart.go", "lib/price/price.go"),
			mkType("shop/report.go:7:7: assignment mismatch: 1 variable but stock.Level returns 2 values", "shop/report.go", "lib/stock/stock.go"), true},
		{"a type error in the file changed is not the callers'",
			mkType("shop/cart.go:9:20: not enough arguments in call to price.Price", "shop/cart.go", "lib/price/price.go"),
			mkType("lib/price/price.go:9:20: not enough arguments in call to price.Price", "lib/price/price.go", "lib/price/price.go"), false},
		{"a library misused is not callers",
			mkType("shop/cart.go:9:20: not enough arguments in call to price.Price", "shop/cart.go", "lib/price/price.go"),
			mkType("node_modules/left-pad/index.js:3:9: leftPad is not a function", "node_modules/left-pad/index.js", "src/pad.js"), false},
		{"other tags", mk([]string{"lint_error"}, "x.go:1: SH001 TODO without an owner", ""), mk(nil, "x.go:1: SH001 TODO without an owner", ""), false},
	} {
		if same := FoldKey(tc.a) == FoldKey(tc.b); same != tc.same {
			t.Errorf("%s: same fold %v, want %v (%q, %q)", tc.name, same, tc.same, FoldKey(tc.a), FoldKey(tc.b))
		}
	}
}

func TestKind(t *testing.T) {
	for p, want := range map[string]string{"pkg/api/routes_gen.go": "_gen.go", "db/schema.sql": ".sql", "Makefile": "Makefile",
		"tests/test_billing.py": "test_.py", "web/api.test.js": ".test.js", "pkg/users/users.go": ".go", "web/.eslintrc": ".eslintrc"} {
		if got := Kind(p); got != want {
			t.Errorf("Kind(%q) = %q, want %q", p, got, want)
		}
	}
}
