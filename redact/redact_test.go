package redact

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShapes(t *testing.T) {
	if len(shapes) < 40 {
		t.Fatalf("the table holds %d shapes, want at least 40", len(shapes))
	}
	seen := map[string]bool{}
	r := New(Options{})
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			if seen[sh.name] {
				t.Fatalf("shape %q twice", sh.name)
			}
			seen[sh.name] = true
			if !strings.Contains(sh.line, sh.secret) {
				t.Fatalf("the secret %q is not in the line", sh.secret)
			}
			got := r.Redact(sh.line)
			if strings.Contains(got, sh.secret) {
				t.Errorf("secret survived:\n%s", got)
			}
			if !strings.Contains(got, Redacted) {
				t.Errorf("no %s in:\n%s", Redacted, got)
			}
			for _, k := range sh.keep {
				if !strings.Contains(got, k) {
					t.Errorf("lost %q:\n%s", k, got)
				}
			}
			if again := r.Redact(got); again != got {
				t.Errorf("redacting twice changes the text (-once +twice):\n%s", cmp.Diff(got, again))
			}
		})
	}
}

func TestMustStay(t *testing.T) {
	if len(mustStay) < 10 {
		t.Fatalf("%d lines, want at least 10", len(mustStay))
	}
	r := New(Options{Environ: []string{"GITHUB_TOKEN=" + "gh" + "p_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"}})
	for _, line := range mustStay {
		t.Run(line, func(t *testing.T) {
			if diff := cmp.Diff(line, r.Redact(line)); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValues(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		in   string
		want string
	}{
		{"secret environment value",
			Options{Environ: []string{"MY_SERVICE_TOKEN=the-value-of-it", "HOME=/root"}},
			"calling with the-value-of-it from /root", "calling with [REDACTED] from /root"},
		{"environment name that is not secret",
			Options{Environ: []string{"GIT_AUTHOR_NAME=Jane Doe", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "TOKEN_FILE=/run/secrets/t"}},
			"Jane Doe via /tmp/ssh-x/agent.1 read /run/secrets/t", "Jane Doe via /tmp/ssh-x/agent.1 read /run/secrets/t"},
		{"short environment value",
			Options{Environ: []string{"DB_PASSWORD=abc12"}},
			"abc12 abc12", "abc12 abc12"},
		{"environment value naming a variable",
			Options{Environ: []string{"TOKEN_VAR=GITHUB_TOKEN"}},
			"GITHUB_TOKEN must be set", "GITHUB_TOKEN must be set"},
		{"glued names",
			Options{Environ: []string{"PGPASSWORD=Sup3rSecret", "MYSQL_PWD=Zx9Kq2Lm"}},
			"login Sup3rSecret Zx9Kq2Lm", "login [REDACTED] [REDACTED]"},
		{"explicit value whatever its name",
			Options{Values: []string{"wh4t3v3r-it-is"}},
			"the deploy says wh4t3v3r-it-is", "the deploy says [REDACTED]"},
		{"explicit short value only as a word",
			Options{Values: []string{"b3ta"}},
			"channel b3ta, b3tamax, xb3ta", "channel [REDACTED], b3tamax, xb3ta"},
		{"explicit value below the minimum, boolean, or a name",
			Options{Values: []string{"abc", "true", "NODE_ENV", "1"}},
			"abc true NODE_ENV 1", "abc true NODE_ENV 1"},
		{"multi-line value line by line",
			Options{Values: []string{"first-line-secret\nsecond-line-secret\nab"}},
			"x first-line-secret y\nsecond-line-secret ab", "x [REDACTED] y\n[REDACTED] ab"},
		{"longest value first",
			Options{Values: []string{"abcdefgh", "abcdefgh-and-more"}},
			"abcdefgh-and-more", "[REDACTED]"},
		{"value inside a shape",
			Options{Values: []string{"hunter2-secret"}},
			"password=hunter2-secret; next", "password=[REDACTED]; next"},
		{"adjacent secrets, one marker",
			Options{Values: []string{"part-one-", "part-two"}},
			"x part-one-part-two y", "x [REDACTED] y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, New(tc.opts).Redact(tc.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithValues(t *testing.T) {
	base := New(Options{Environ: []string{"API_TOKEN=from-the-env"}})
	step := base.WithValues("from-the-step")
	in := "from-the-env from-the-step"
	if diff := cmp.Diff("[REDACTED] from-the-step", base.Redact(in)); diff != "" {
		t.Errorf("base (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("[REDACTED] [REDACTED]", step.Redact(in)); diff != "" {
		t.Errorf("with values (-want +got):\n%s", diff)
	}
	var none *Redactor
	if diff := cmp.Diff("[REDACTED]", none.WithValues("only-this").Redact("only-this")); diff != "" {
		t.Errorf("nil with values (-want +got):\n%s", diff)
	}
}

func TestNilAndZero(t *testing.T) {
	for name, r := range map[string]*Redactor{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			if got := r.Redact("password=hunter2x"); got != "password=[REDACTED]" {
				t.Errorf("Redact = %q", got)
			}
			if diff := cmp.Diff([]string{"ok", "token=[REDACTED]"}, r.All([]string{"ok", "token=abcdef12"})); diff != "" {
				t.Errorf("All (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretName(t *testing.T) {
	tests := map[string]bool{
		"GITHUB_TOKEN": true, "PGPASSWORD": true, "MYSQL_PWD": true, "AWS_SECRET_ACCESS_KEY": true,
		"STRIPE_API_KEY": true, "NPM_AUTH": true, "GH_PAT": true, "SENTRY_DSN": true, "SSH_KEY": true,
		"AZURE_STORAGE_CONNECTION_STRING": true, "client_secret": true, "SLACK_WEBHOOK_URL": true,
		"HOME": false, "PATH": false, "GIT_AUTHOR_NAME": false, "GIT_AUTHOR_EMAIL": false, "SSH_AUTH_SOCK": false,
		"TOKEN_FILE": false, "GITHUB_TOKEN_PATH": false, "KEYBOARD": false, "DBUS_SESSION_BUS_ADDRESS": false,
		"TOKENIZERS_PARALLELISM": false, "BYPASS_CACHE": false, "PWD": false, "OLDPWD": false,
	}
	for name, want := range tests {
		if got := secretName(name); got != want {
			t.Errorf("secretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestUnchangedTextIsNotCopied(t *testing.T) {
	r := New(Options{})
	s := strings.Repeat("ok  \tgithub.com/acme/api\t0.012s\n", 100)
	if n := testing.AllocsPerRun(10, func() { _ = r.Redact(s) }); n != 0 {
		t.Errorf("Redact of clean text: %v allocations, want 0", n)
	}
}

// TestArgv: a secret given as the argument after a flag that names one is
// redacted, as it would be in one string; other arguments stay.
func TestArgv(t *testing.T) {
	r := New(Options{})
	got := r.Argv([]string{"deploy", "--password", "hunter2hunter2", "--user", "bob", "--token=abc123def456ghi"})
	want := []string{"deploy", "--password", Redacted, "--user", "bob", "--token=" + Redacted}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Argv (-want +got):\n%s", diff)
	}
}
