package redact_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/learn"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/txn"
)

// TestNoSecretIsStored runs real failing orket runs whose steps print every
// shape of the secrets table (with a step's own env: value, a secret-named
// environment variable, a private key block followed by thousands of lines
// so the tail cuts it, and a password= right where the tail begins) and
// then looks for every secret in everything orket wrote (.orket: run
// records, lessons, kept patches) and in the record it returned (the
// --json object). Leaks: none.
func TestNoSecretIsStored(t *testing.T) {
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	run := func(script string) {
		t.Helper()
		cmd := exec.Command("sh", "-ec", script)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	run("git init -q -b main && mkdir pkg && echo a > pkg/a.txt && git add -A && git commit -qm init")

	secrets := []string{"step-env-value-4f9c2e", "env-var-value-77aa31bb"}
	var lines []string
	for _, s := range redact.Shapes {
		lines = append(lines, s.Line)
		secrets = append(secrets, s.Secret)
	}
	lines = append(lines, "using the deploy key step-env-value-4f9c2e for the upload", "the service says env-var-value-77aa31bb")
	if len(redact.Shapes) < 40 {
		t.Fatalf("the secrets table has %d shapes; it must cover at least 40", len(redact.Shapes))
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("secrets.txt", strings.Join(lines, "\n")+"\n")
	// A key block whose start the 32 KiB tail cuts off, then a password=
	// at the very edge of what the tail keeps.
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwYWJjZGVmZ2hpamtsbW5v\n", 3000) + "-----END RSA PRIVATE KEY-----\n"
	secrets = append(secrets, "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwYWJjZGVmZ2hpamtsbW5v", "edge-password-9d8e7f6a")
	write("cut.txt", pem+strings.Repeat("x", 32768-len("password=edge-password-9d8e7f6a\n")-3)+"\npassword=edge-password-9d8e7f6a\n")

	yaml := `verify:
  default: quick
  profiles:
    quick:
      - {name: shapes, run: "cat secrets.txt; exit 1", env: {DEPLOY_KEY: "step-env-value-4f9c2e"}}
    cut:
      - {name: cut, run: "cat cut.txt; exit 1"}
`
	cfg, err := config.Parse([]byte(yaml), "orket.yaml")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := txn.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := orket.OSEnv()
	env.Environ = append(env.Environ, "SERVICE_API_TOKEN=env-var-value-77aa31bb")
	var records []string
	for _, profile := range []string{"quick", "cut"} {
		rec, err := orket.Execute(context.Background(), orket.Request{Repo: repo, Config: cfg, Profile: profile, Scope: []string{"pkg"},
			Edit: orket.CommandEdit{Argv: []string{"sh", "-c", "echo b > pkg/a.txt", "--password", "argv-secret-123456"}}, AutoConfirm: true, Env: env, Learner: learn.Loop{}}, nil)
		if orket.Describe(err).Code != orket.EVerifyFailedReverted {
			t.Fatalf("profile %s: %v", profile, err)
		}
		b, _ := json.Marshal(rec)
		records = append(records, string(b))
	}
	secrets = append(secrets, "argv-secret-123456")

	// Everything orket wrote, and what it returned.
	haystack := map[string]string{}
	for i, r := range records {
		haystack[fmt.Sprintf("returned record %d", i)] = r
	}
	filepath.WalkDir(filepath.Join(dir, ".orket"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			haystack[p] = string(b)
		}
		return nil
	})
	if len(haystack) < 4 {
		t.Fatalf("too little was written to look in: %v", haystack)
	}
	leaks := 0
	for _, s := range secrets {
		for where, text := range haystack {
			if strings.Contains(text, s) {
				leaks++
				t.Errorf("secret %q stored in %s", s, where)
			}
		}
	}
	t.Logf("%d secrets (%d shapes of the table, a step's env: value, a secret-named variable, a flag's value, a cut key block, a password= at the tail's edge) looked for in %d stored files and records: %d leaks",
		len(secrets), len(redact.Shapes), len(haystack), leaks)
}
