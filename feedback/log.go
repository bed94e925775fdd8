package feedback

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/orket/orket/redact"
	"github.com/orket/orket/store"
)

// Entry types; readers skip the types they do not know.
const (
	TypeReviewRejection = "review_rejection"
	// TypeHumanCorrection is what a person changed after a kept run
	// (orket correct RUN --note): the note is the reason, the change the
	// correction.
	TypeHumanCorrection = "human_correction"
	// TypeRefusal is an edit orket refused (a protected path, a write
	// outside the scope): Item is what was refused (the protect: glob, or
	// the scope), Touched the paths, Reason what the agent is to do.
	TypeRefusal = "refusal"
)

// Artifact types (orket reject --type).
var ArtifactTypes = []string{"code", "test", "docs", "config", "other"}

// CheckArtifactType reports an artifact type that is not one of
// ArtifactTypes.
func CheckArtifactType(t string) error {
	if contains(ArtifactTypes, t) {
		return nil
	}
	return fmt.Errorf("artifact type %q is not one of %s", t, strings.Join(ArtifactTypes, ", "))
}

// GuessArtifactType names what a change touched, for a rejection given
// no --type: test when every path is a test, docs when every path is
// documentation, config when every path is configuration, code
// otherwise (other when there are no paths).
func GuessArtifactType(paths []string) string {
	if len(paths) == 0 {
		return "other"
	}
	all := func(is func(string) bool) bool {
		for _, p := range paths {
			if !is(p) {
				return false
			}
		}
		return true
	}
	switch {
	case all(isTestPath):
		return "test"
	case all(isDocPath):
		return "docs"
	case all(isConfigPath):
		return "config"
	}
	return "code"
}

func isTestPath(p string) bool {
	base := path.Base(p)
	stem := strings.TrimSuffix(base, path.Ext(base))
	for _, seg := range strings.Split(path.Dir(p), "/") {
		if seg == "test" || seg == "tests" || seg == "__tests__" || seg == "spec" || seg == "testdata" {
			return true
		}
	}
	return strings.HasSuffix(stem, "_test") || strings.HasPrefix(stem, "test_") ||
		strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") || strings.HasSuffix(stem, "Test")
}

func isDocPath(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown", ".rst", ".adoc", ".txt":
		return true
	}
	first, _, _ := strings.Cut(p, "/")
	return first == "docs" || first == "doc"
}

func isConfigPath(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".yml", ".yaml", ".toml", ".ini", ".cfg", ".conf", ".json", ".env", ".properties":
		return true
	}
	switch path.Base(p) {
	case "Dockerfile", "Makefile", ".gitignore", ".editorconfig", "go.mod", "go.sum":
		return true
	}
	return strings.HasPrefix(p, ".github/")
}

// Undo outcomes (Undo.Status).
const (
	UndoDone     = "undone"      // the change is out; Patch restores it
	UndoDiverged = "diverged"    // the tree moved on: recorded only; Diverged names the paths
	UndoSkipped  = "not_undone"  // --no-undo: recorded only
	UndoFailed   = "undo_failed" // the undo stopped (Note says why); nothing was taken out
)

// Undo is what a rejection did to the tree.
type Undo struct {
	Status   string   `json:"status"`
	Patch    string   `json:"patch,omitempty"`    // repository-relative: .orket/rejected/<run-id>.patch
	Diverged []string `json:"diverged,omitempty"` // paths that no longer hold what the run left
	Branch   string   `json:"branch,omitempty"`   // a --commit run's branch, moved back
	Commit   string   `json:"commit,omitempty"`   // the run's commit the branch left
	Parent   string   `json:"parent,omitempty"`   // where the branch points now
	Note     string   `json:"note,omitempty"`
}

// An Entry is one line of the feedback log (orket.feedback/v1).
type Entry struct {
	Schema string    `json:"schema_version"`
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	Type   string    `json:"type"`
	RunID  string    `json:"run_id,omitempty"`
	Task   string    `json:"task,omitempty"`
	Agent  string    `json:"agent"`
	// Item names what was rejected: --item, else the run's scope.
	Item         string   `json:"item"`
	ArtifactType string   `json:"artifact_type"`
	Reason       string   `json:"reason"` // verbatim, redacted
	Category     Category `json:"category"`
	Keyword      string   `json:"keyword,omitempty"`
	Technologies []string `json:"technologies,omitempty"`
	Action       string   `json:"learned_action"`
	// Learning is the summariser's learning, when one ran and answered.
	Learning string   `json:"learning,omitempty"`
	By       string   `json:"by,omitempty"`
	Scope    []string `json:"scope,omitempty"`
	Profile  string   `json:"profile,omitempty"`
	Touched  []string `json:"touched,omitempty"`
	Undo     *Undo    `json:"undo,omitempty"`
	// Correction is, for a human correction, what the person changed
	// after the run: a patch from the run's result to theirs (redacted,
	// at most MaxCorrection bytes).
	Correction string `json:"correction,omitempty"`
}

// MaxCorrection bounds the patch a correction entry carries.
const MaxCorrection = 64 << 10

// A Rejection is what a reviewer's rejection says, before it is learned
// from.
type Rejection struct {
	Time         time.Time
	RunID        string
	Task         string
	Agent        string // "" is "default"
	Item         string // "" is the scope, joined by spaces
	ArtifactType string // "" is guessed from Touched
	Reason       string // verbatim; "" is NoReason
	By           string
	Scope        []string
	Touched      []string
	Undo         *Undo
	Run          RunContext // Profile and Toolchain; Paths defaults to Touched
}

// Entry learns from a rejection: its category and learned action.
// Seal it before it is appended.
func (c *Categorizer) Entry(r Rejection) *Entry {
	rc := r.Run
	if rc.Paths == nil {
		rc.Paths = r.Touched
	}
	l := c.Learn(r.Reason, rc)
	e := &Entry{
		Time: r.Time, Type: TypeReviewRejection, RunID: r.RunID, Task: r.Task,
		Agent: r.Agent, Item: r.Item, ArtifactType: r.ArtifactType,
		Reason: l.Reason, Category: l.Category, Keyword: l.Keyword, Technologies: l.Technologies,
		Action: l.Action, By: r.By, Scope: r.Scope, Profile: rc.Profile, Touched: r.Touched, Undo: r.Undo,
	}
	if e.Agent == "" {
		e.Agent = "default"
	}
	if e.Item == "" {
		e.Item = strings.Join(r.Scope, " ")
	}
	if e.ArtifactType == "" {
		e.ArtifactType = GuessArtifactType(r.Touched)
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	return e
}

// Seal removes terminal escapes and control characters from the entry's
// free text and redacts it (r nil: the known secret shapes only), then
// sets its schema and its id. The id is derived from the sealed content
// (time to the nanosecond included): "fb-<time>-<hash>", stable once
// set, and unique across clones, so logs merge by id. Call it last,
// before Append.
func (e *Entry) Seal(r *redact.Redactor) {
	e.Schema = store.FeedbackSchema
	clean := func(s string) string { return r.Redact(stripControl(s)) }
	e.Reason = clean(e.Reason)
	e.Action = clean(e.Action)
	e.Learning = clean(e.Learning)
	e.Item = clean(e.Item)
	e.By = clean(e.By)
	if e.Undo != nil {
		e.Undo.Note = clean(e.Undo.Note)
	}
	if e.Correction != "" {
		e.Correction = r.Redact(e.Correction)
		if len(e.Correction) > MaxCorrection {
			e.Correction = e.Correction[:MaxCorrection] + "\n... (cut at 64 KiB)\n"
		}
	}
	e.ID = ""
	b, _ := json.Marshal(e)
	sum := sha256.Sum256(b)
	e.ID = "fb-" + e.Time.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(sum[:6])
}

// stripControl removes ANSI escape sequences and control characters
// other than newline and tab.
func stripControl(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0x1b { // ESC [ ... final byte, or ESC and one byte
			if i+1 < len(s) && s[i+1] == '[' {
				j := i + 2
				for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
					j++
				}
				i = j
			} else {
				i++
			}
			continue
		}
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			continue
		}
		b.WriteByte(c)
	}
	return strings.Map(func(r rune) rune {
		if r >= 0x80 && r < 0xa0 {
			return -1
		}
		return r
	}, b.String())
}

// A Log is the feedback log.
type Log struct {
	log *store.Log
}

// OpenLog returns the feedback log of the .orket directory orketDir.
func OpenLog(orketDir string) *Log {
	return &Log{log: &store.Log{Path: filepath.Join(orketDir, filepath.FromSlash(store.FeedbackFile))}}
}

// Path returns the log's file.
func (l *Log) Path() string { return l.log.Path }

// ErrUnsealed reports an entry appended without Seal.
var ErrUnsealed = errors.New("feedback entry not sealed")

// Record seals e with r and appends it.
func (l *Log) Record(e *Entry, r *redact.Redactor) error {
	e.Seal(r)
	return l.Append(e)
}

// Append writes sealed entries (another clone's, say) at the end of the
// log, whole, under its lock, fsynced: concurrent writers lose nothing.
func (l *Log) Append(es ...*Entry) error {
	recs := make([]any, len(es))
	for i, e := range es {
		if e.Schema != store.FeedbackSchema || e.ID == "" {
			return fmt.Errorf("append to %s: %w", l.log.Path, ErrUnsealed)
		}
		recs[i] = e
	}
	if err := l.log.Append(recs...); err != nil {
		return fmt.Errorf("append to %s: %w", l.log.Path, err)
	}
	return nil
}

// Each calls fn with every entry in order; a damaged line, or one that is
// not a feedback entry, is skipped (the damaged ones are returned).
func (l *Log) Each(fn func(*Entry) error) ([]store.Damaged, error) {
	return l.log.Each(func(line []byte) error {
		var e Entry
		if json.Unmarshal(line, &e) != nil || e.ID == "" || e.Type == "" {
			return nil
		}
		return fn(&e)
	})
}

// A Filter selects entries; its zero value selects every entry.
type Filter struct {
	Agent string    // "": every agent
	Type  string    // "": every type
	Since time.Time // zero: from the start
}

// Match reports whether f selects e.
func (f Filter) Match(e *Entry) bool {
	return (f.Agent == "" || e.Agent == f.Agent) && (f.Type == "" || e.Type == f.Type) &&
		(f.Since.IsZero() || !e.Time.Before(f.Since))
}

// Entries returns the entries f selects, in log order; an id seen twice
// (a merge, a retried append) counts once, its first line.
func (l *Log) Entries(f Filter) ([]*Entry, []store.Damaged, error) {
	var out []*Entry
	seen := map[string]bool{}
	damaged, err := l.Each(func(e *Entry) error {
		if f.Match(e) && !seen[e.ID] {
			seen[e.ID] = true
			out = append(out, e)
		}
		return nil
	})
	return out, damaged, err
}

// Find returns the entry with id, or nil.
func (l *Log) Find(id string) (*Entry, error) {
	var found *Entry
	_, err := l.Each(func(e *Entry) error {
		if e.ID == id && found == nil {
			found = e
		}
		return nil
	})
	return found, err
}

// Prune applies retention: no entry older than maxAge (0: no age
// limit), at most maxPerAgent per agent (0: no limit), the newest kept.
// Damaged lines go too. It returns how many lines it removed.
func (l *Log) Prune(maxPerAgent int, maxAge time.Duration, now time.Time) (int, error) {
	return l.log.Prune(store.Retention{MaxPerAgent: maxPerAgent, MaxAge: maxAge}, now, store.AgentTime)
}
