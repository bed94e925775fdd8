package guardrails

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func extractorProposal() *Proposal {
	c := Cluster{Kind: KindFold, Key: "fk-1", Label: "`go test ./...`: missing_dependency", Section: "pkg/api"}
	return &Proposal{ID: "gp-0123456789ab", Agent: "claude", Cluster: c, LessonText: "Run `go generate ./...` before `go test ./...`",
		ConstraintUpdate: Change{Type: Addition, Section: "pkg/api", NewText: "Run `go generate ./...` before `go test ./...`"}, Count: 5, Total: 9}
}

// The extractor gets the cluster as JSON on stdin and its output becomes
// the lesson (cleaned, redacted); when it fails, hangs or says nothing,
// the deterministic text stays and the error says why.
func TestExtractor(t *testing.T) {
	dir := t.TempDir()
	stdin := filepath.Join(dir, "stdin.json")
	ctx := context.Background()

	p := extractorProposal()
	x := &Extractor{Argv: []string{"sh", "-c", `cat > "$0"; printf '**Always run go generate before go test in pkg/api.** Second sentence. Third one.\ntoken ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\n'`, stdin}}
	if err := x.Apply(ctx, p); err != nil {
		t.Fatal(err)
	}
	if p.LessonText != "Always run go generate before go test in pkg/api. Second sentence." || p.TextSource != SourceExtractor ||
		p.ConstraintUpdate.NewText != p.LessonText || p.DeterministicText != "Run `go generate ./...` before `go test ./...`" {
		t.Errorf("rewritten: %+v", p)
	}
	if in := read(t, stdin); !strings.Contains(in, `"instruction":`) || !strings.Contains(in, `"lesson_text":"Run `+"`go generate ./...`") {
		t.Errorf("stdin: %s", in)
	}

	redacted := extractorProposal()
	x = &Extractor{Argv: []string{"sh", "-c", `cat >/dev/null; echo 'Use token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB'`}}
	if err := x.Apply(ctx, redacted); err != nil || strings.Contains(redacted.LessonText, "ghp_") {
		t.Errorf("not redacted: %q %v", redacted.LessonText, err)
	}

	for _, tc := range []struct {
		name string
		argv []string
		is   error
	}{
		{"fails", []string{"sh", "-c", `cat >/dev/null; echo 'model unavailable' >&2; exit 3`}, nil},
		{"silent", []string{"sh", "-c", `cat >/dev/null`}, ErrExtractorNoOutput},
		{"hangs", []string{"sh", "-c", `sleep 30 & sleep 30`}, ErrExtractorTimedOut},
		{"missing", []string{filepath.Join(dir, "no-such-extractor")}, os.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := extractorProposal()
			before := *p
			start := time.Now()
			err := (&Extractor{Argv: tc.argv, Timeout: 300 * time.Millisecond, Grace: 100 * time.Millisecond}).Apply(ctx, p)
			var ee *ExtractorError
			if !errors.As(err, &ee) || tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("error: %v", err)
			}
			if tc.name == "fails" && !strings.Contains(err.Error(), "model unavailable") {
				t.Errorf("stderr not in the error: %v", err)
			}
			if p.LessonText != before.LessonText || p.TextSource != "" {
				t.Errorf("text changed on failure: %+v", p)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
	// No extractor: nothing to do.
	if err := (*Extractor)(nil).Apply(ctx, extractorProposal()); err != nil {
		t.Error(err)
	}
}
