package learn

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/lessons"
	"github.com/orket/orket/preflight"
)

func TestEnvRead(t *testing.T) {
	for _, tc := range []struct{ name, output, want string }{
		{"python subscript", `    dsn = os.environ["CLICK_TEST_DSN"]`, "CLICK_TEST_DSN"},
		{"python get", `os.environ.get('API_KEY')`, "API_KEY"},
		{"go", `dsn := os.Getenv("PG_DSN")`, "PG_DSN"},
		{"rust macro", `let d = env!("WALKDIR_FIXTURES");`, "WALKDIR_FIXTURES"},
		{"rust var", `env::var("RUST_LOG")`, "RUST_LOG"},
		{"node", `const url = process.env.REDIS_URL;`, "REDIS_URL"},
		{"ruby", `ENV["SECRET_KEY_BASE"]`, "SECRET_KEY_BASE"},
		{"shell", `psql "${DATABASE_URL}"`, "DATABASE_URL"},
		{"dumped environment", `self = environ({'GIT_AUTHOR_NAME': 'Test'})`, ""},
		{"a word", `ENVIRONMENT_NAME is wrong`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if m := envRead().FindStringSubmatch(tc.output); m != nil {
				got = m[1]
			}
			if got != tc.want {
				t.Errorf("envRead in %q = %q, want %q", tc.output, got, tc.want)
			}
		})
	}
}

func TestEnvChanges(t *testing.T) {
	then := []lessons.EnvState{
		{Kind: "command", Name: "pytest", State: "/usr/bin/pytest 221 1675265294"},
		{Kind: "env", Name: "CLICK_TEST_DSN", State: "unset"},
		{Kind: "env", Name: "API_KEY", State: "set 0123456789abcdef"},
		{Kind: "port", Name: "8080", State: "in use"},
		{Kind: "tcp", Name: "127.0.0.1:5432", State: "refuses"},
		{Kind: "env", Name: "STABLE", State: "set aaaaaaaaaaaaaaaa"},
	}
	for _, tc := range []struct {
		name string
		now  []string // the states now, in then's order
		want []string
	}{
		{"nothing changed", []string{"/usr/bin/pytest 221 1675265294", "unset", "set 0123456789abcdef", "in use", "refuses", "set aaaaaaaaaaaaaaaa"}, nil},
		{"a variable set, another changed", []string{"/usr/bin/pytest 221 1675265294", "set 1111111111111111", "set fedcba9876543210", "in use", "refuses", "set aaaaaaaaaaaaaaaa"},
			[]string{"CLICK_TEST_DSN is set", "API_KEY changed"}},
		{"the tool and the services", []string{"/opt/bin/pytest 300 1700000000", "unset", "unset", "free", "accepts", "set aaaaaaaaaaaaaaaa"},
			[]string{"pytest changed (/opt/bin/pytest)", "API_KEY is unset", "port 8080 is free", "127.0.0.1:5432 accepts connections"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := make([]lessons.EnvState, len(then))
			for i := range then {
				now[i] = then[i]
				now[i].State = tc.now[i]
			}
			if diff := cmp.Diff(tc.want, envChanges(then, now)); diff != "" {
				t.Errorf("envChanges (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandWord(t *testing.T) {
	for cmdline, want := range map[string]string{
		"go test ./...":                "go",
		"/usr/bin/pytest-3 -q tests":   "/usr/bin/pytest-3",
		"CGO_ENABLED=0 go build ./...": "go",
		"! grep -q BROKEN pkg/a.txt":   "grep",
		"$(npm bin)/jest":              "",
		"exec ./gradlew test":          "./gradlew",
		"   ":                          "",
	} {
		if got := preflight.CommandName(cmdline); got != want {
			t.Errorf("CommandName(%q) = %q, want %q", cmdline, got, want)
		}
	}
}

// TestEnvKey: the key is made once, readable by its owner only, and the
// same for every later run (and for a linked work tree, by its common
// directory).
func TestEnvKey(t *testing.T) {
	dir := t.TempDir()
	k1 := envKey(dir, "")
	if len(k1) != 32 {
		t.Fatalf("key of %d bytes", len(k1))
	}
	fi, err := os.Stat(filepath.Join(dir, "orket", "env-key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi, err)
	}
	if k2 := envKey(dir, filepath.Join(dir, "worktrees", "x")); !bytes.Equal(k1, k2) {
		t.Fatal("a second run made another key")
	}
	if names, _ := os.ReadDir(filepath.Join(dir, "orket")); len(names) != 1 {
		t.Fatalf("left behind: %v", names)
	}
}
