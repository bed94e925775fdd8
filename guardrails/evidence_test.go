package guardrails

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCites(t *testing.T) {
	tests := []struct {
		name, text, section string
		want                []Citation
	}{
		{"generated", "Run `go generate ./...` before `go test ./...` in pkg/api: it failed 5 times with missing_dependency", "pkg/api",
			[]Citation{{CitesCommand, "go generate ./..."}, {CitesCommand, "go test ./..."}, {CitesPath, "pkg/api"}}},
		{"variable", "Export DATABASE_URL before `go test ./...` (or set it in the step's env)", Everywhere,
			[]Citation{{CitesCommand, "go test ./..."}, {CitesEnvVar, "DATABASE_URL"}}},
		{"quoted variable and path", "Set `API_TOKEN` and keep `config/app.yaml` and `go.mod` in sync", "",
			[]Citation{{CitesEnvVar, "API_TOKEN"}, {CitesPath, "config/app.yaml"}, {CitesPath, "go.mod"}}},
		{"unquoted path and script", "Read docs/setup.md, then run ./scripts/gen.sh", "",
			[]Citation{{CitesPath, "docs/setup.md"}, {CitesPath, "scripts/gen.sh"}}},
		{"not citations", "Return `nil` from `fmt.Errorf`, use `func (s *Store) Close()`, see https://x.org/a/b.md and github.com/segmentio/kafka-go and and/or E_VERIFY_FAILED, /etc/hosts.conf, ../up.md", "",
			nil},
		{"glob scope", "Keep handlers small", "pkg/**/*.go, cmd/x", []Citation{{CitesPath, "pkg"}, {CitesPath, "cmd/x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Cites(tt.text, tt.section)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run(t, dir, "git", "init", "-q")
	return dir
}

func run(t *testing.T, dir string, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// A line citing a path, a command or a variable that is gone is demoted
// and says why; the others are not.
func TestEvidenceDemotion(t *testing.T) {
	for _, mode := range []string{"git", "walk"} {
		t.Run(mode, func(t *testing.T) {
			var root string
			if mode == "git" {
				root = gitRepo(t)
			} else {
				root = t.TempDir() // not a repository: the tree is walked
			}
			write(t, root, "scripts/gen.sh", "#!/bin/sh\n")
			write(t, root, "config/db.go", "package config\n\nvar url = os.Getenv(\"DATABASE_URL\")\n")
			write(t, root, "pkg/api/x.go", "package api\n")
			write(t, root, ".orket/guardrails/claude/v1.md", "OLD_ONLY_IN_ORKET\n")
			if mode == "git" {
				run(t, root, "git", "add", "config", "pkg") // scripts/ stays untracked: it counts too
			}
			lines := []Line{
				{ID: "gp-aaaa01", Section: "pkg/api", Text: "Run `./scripts/gen.sh` before `go test ./...`"},
				{ID: "gp-aaaa02", Section: Everywhere, Text: "Export DATABASE_URL before `go test ./...`"},
				{ID: "gp-aaaa03", Section: Everywhere, Text: "Start the db with `orket-no-such-tool up` first"},
				{ID: "gp-aaaa04", Section: Everywhere, Text: "Set OLD_ONLY_IN_ORKET before you start"},
				{ID: "gp-aaaa05", Section: Everywhere, Text: "Run `go vet ./...` and `git status` before finishing"},
			}
			ck := &Checker{Root: root, Commands: []string{"go vet ./...", "go test ./..."}}
			demoted := func() map[string]string {
				out := map[string]string{}
				for _, e := range ck.Check(context.Background(), lines) {
					if e.Demoted {
						out[e.Line.ID] = e.Why()
					}
				}
				return out
			}
			want := map[string]string{
				"gp-aaaa03": "`orket-no-such-tool up` is not in the verify profile and orket-no-such-tool is not on PATH",
				"gp-aaaa04": "OLD_ONLY_IN_ORKET is not referenced anywhere in the repository",
			}
			if diff := cmp.Diff(want, demoted()); diff != "" {
				t.Fatalf("before (-want +got):\n%s", diff)
			}
			// The script, the variable's only reference and the scope go.
			os.Remove(filepath.Join(root, "scripts", "gen.sh"))
			write(t, root, "config/db.go", "package config\n")
			os.RemoveAll(filepath.Join(root, "pkg"))
			want["gp-aaaa01"] = "scripts/gen.sh no longer exists; pkg/api no longer exists"
			want["gp-aaaa02"] = "DATABASE_URL is not referenced anywhere in the repository"
			if diff := cmp.Diff(want, demoted()); diff != "" {
				t.Errorf("after (-want +got):\n%s", diff)
			}
		})
	}
}

// Prepare gives a run the version's own file when nothing is demoted,
// and an annotated copy when something is; a demoted line can be
// proposed for removal, and approving that writes a version without it.
func TestPrepareAndRemoval(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	write(t, r.root, "pkg/api/x.go", "package api\n")
	write(t, r.root, "scripts/gen.sh", "#!/bin/sh\n")
	s := r.store()
	add := func(text, section string) *Proposal {
		c := Cluster{Kind: KindCategory, Key: hashKey("ck-", text), Label: "x", Section: section}
		p := &Proposal{Agent: "claude", CreatedAt: t0, Cluster: c, LessonText: text,
			ConstraintUpdate: Change{Type: Addition, Section: section, NewText: text}}
		p.ID = proposalID("claude", c, 0)
		must[[]*Proposal](t)(s.Proposals.Add(p))
		must[*Version](t)(approve(s, p.ID, "Ana", t0))
		return p
	}
	add("Run `scripts/gen.sh` before `go test ./...`", "pkg/api")
	add("Keep handlers small", "pkg/api")
	ck := &Checker{Root: r.root, Commands: []string{"go test ./..."}}
	prep := must[*Prepared](t)(s.Prepare(ctx, "claude", ck))
	if prep.Demoted != 0 || prep.Path != s.Path("claude", 2) || prep.Version.Version != 2 {
		t.Fatalf("prepared: %+v", prep)
	}
	os.Remove(filepath.Join(r.root, "scripts", "gen.sh"))
	prep = must[*Prepared](t)(s.Prepare(ctx, "claude", ck))
	if prep.Demoted != 1 || filepath.Base(prep.Path) != CurrentView {
		t.Fatalf("prepared: %+v", prep)
	}
	if got := read(t, prep.Path); !strings.Contains(got, "- [demoted: scripts/gen.sh no longer exists] Run `scripts/gen.sh`") ||
		!strings.Contains(got, "- Keep handlers small <!--") {
		t.Errorf("annotated view:\n%s", got)
	}
	rm := ProposeRemovals("claude", prep.Version, prep.Evidence, nil, t0)
	if len(rm) != 1 || rm[0].ConstraintUpdate.Type != Removal {
		t.Fatalf("removals: %+v", rm)
	}
	must[[]*Proposal](t)(s.Proposals.Add(rm...))
	prior, _, _ := s.Proposals.List(ProposalFilter{Agent: "claude"})
	if again := ProposeRemovals("claude", prep.Version, prep.Evidence, prior, t0); len(again) != 0 {
		t.Errorf("removal proposed twice")
	}
	v3 := must[*Version](t)(approve(s, rm[0].ID, "Ana", t0))
	if v3.Version != 3 || len(Items(v3.Text)) != 1 || len(v3.Lines) != 1 || v3.Changes[0].Type != Removal {
		t.Errorf("v3: %+v\n%s", v3, v3.Text)
	}
	if diff := cmp.Diff(Changes(must[*Version](t)(s.Version("claude", 2)).Text, v3.Text), v3.Changes); diff != "" {
		t.Errorf("v3 changes are not the text's (-want +got):\n%s", diff)
	}
}
