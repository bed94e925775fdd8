// Package config reads orket.yaml: strictly (every mistake is an *Error
// naming the file, the line and what to write instead), with the defaults
// of docs/config.md filled in, and resolves verify profiles through
// extends. It also detects verify steps from a repository's manifests, for
// orket init and for repositories without an orket.yaml.
package config

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/orket/orket/preflight"
	"github.com/orket/orket/store"
)

// FileName is the configuration file's name at the repository root.
const FileName = "orket.yaml"

// A Config is a loaded orket.yaml.
type Config struct {
	Version    int
	Scope      []string // default --scope patterns
	Verify     Verify
	Lessons    Lessons
	Classify   Classify
	Preflight  Preflight
	Verdict    Verdict
	Escalation Escalation
	Snapshot   Snapshot
	// Protect lists globs of paths an edit may not modify or delete, even
	// inside its scope (tests, lint configuration, CI).
	Protect []string
	Sandbox Sandbox
	// Feedback and Memory set how a reviewer's rejection is learned from
	// (docs/feedback.md).
	Feedback Feedback
	Memory   Memory
	// Guardrails and Stats set the versions kept and the samples compared
	// (docs/guardrails.md).
	Guardrails Guardrails
	Stats      Stats

	// File is the path the configuration was read from; empty when the
	// profiles were detected because there is no orket.yaml.
	File string
	// Detected lists what detection found ("go.mod", "web/package.json"),
	// when File is empty.
	Detected []string
}

// Verify holds the verify profiles.
type Verify struct {
	Default  string
	Profiles map[string]*Profile
	Order    []string // profile names as written
	// Writes lists the paths (doublestar globs) verify steps may write
	// outside a run's scope: generated files such as coverage reports.
	Writes []string
	// BaselineOff turns off running a failed step again on the tree
	// without the change (verify.baseline: off).
	BaselineOff bool
	// BaselineMax: only steps that took less run again (default 2m).
	BaselineMax time.Duration
}

// A Profile is a named list of steps, possibly extending another profile.
type Profile struct {
	Name     string
	Extends  string
	FailFast *bool // nil: inherited, default true
	Parallel *bool // nil: inherited, default false
	Steps    []Step
	Line     int
}

// A Step is one verify command.
type Step struct {
	Name     string
	Shell    string   // a command line run by sh -c; or
	Argv     []string // an argv run without a shell
	Timeout  time.Duration
	Env      map[string]string
	Dir      string // repository-relative; "" is the root
	Required bool
	When     []string // doublestar globs over the touch set; empty: always
	Weight   int      // its weight in a run's score; 1 when not given
	Retry    int      // how many times a failure is run again on the same tree (a pass then is flaky)
	Line     int
}

// ScoreWeight is the step's weight in a run's score (1 by default).
func (s Step) ScoreWeight() int {
	if s.Weight == 0 {
		return 1
	}
	return s.Weight
}

// Command returns the step's command as one line, for output and lessons.
func (s Step) Command() string {
	if s.Argv != nil {
		return ShellQuote(s.Argv)
	}
	return s.Shell
}

// Lessons configures the lesson log and retrieval.
type Lessons struct {
	Path      string
	TopK      int
	HalfLife  time.Duration
	Retention Retention
	Tail      Tail
	// The proposal rules (docs/guardrails.md, Proposals): a cluster of
	// MinClusterSize among MinSamples entries of an agent, more than
	// FrequencyThreshold of them.
	MinSamples         int
	MinClusterSize     int
	FrequencyThreshold float64
	// Extractor is a command (an argv) that may rewrite a proposal's text.
	Extractor        []string
	ExtractorTimeout time.Duration
}

// Retention bounds the lesson log.
type Retention struct {
	MaxEntries int
	// MaxEntriesPerAgent bounds each agent's lessons, feedback entries and
	// evaluations.
	MaxEntriesPerAgent int
	MaxAge             time.Duration
}

// Rule is lessons.retention as the one retention rule of the state
// directory (store.Retention): each log takes its bounds with Of.
func (r Retention) Rule() store.Retention {
	return store.Retention{MaxEntries: r.MaxEntries, MaxPerAgent: r.MaxEntriesPerAgent, MaxAge: r.MaxAge}
}

// Tail caps the output kept from a step.
type Tail struct {
	MaxLines int
	MaxBytes int
}

// Classify holds user classification rules, checked before built-in ones.
type Classify struct {
	Rules []Rule
}

// A Rule is a user classification rule.
type Rule struct {
	ID        string
	Tag       string
	Pattern   string
	Re        *regexp.Regexp
	Preflight []preflight.Check
	Line      int
}

// Preflight holds the declared checks.
type Preflight struct {
	Strict bool
	Checks []preflight.Check
}

// Verdict sets how runs are judged (docs/verdicts.md).
type Verdict struct {
	Approve       int // the least score that approves (80)
	EscalateAfter int // consecutive rejections of a task that escalate it (3; 0: never)
}

// Feedback extends the categories of rejection reasons.
type Feedback struct {
	Keywords map[string][]string // by category: more words that put a reason in it
}

// Memory sets the agent memory's summariser.
type Memory struct {
	// Summarizer is a command (an argv) given the review prompt on stdin;
	// its output becomes the learning. None: the learned action is.
	Summarizer        []string
	SummarizerTimeout time.Duration // 60s
	// Sync is "auto" (sync with Remote at the start and end of each run)
	// or "" (off: only orket sync shares the memory).
	Sync   string
	Remote string // the remote orket sync and memory.sync use ("origin")
}

// Guardrails sets how many versions of an agent's guardrails are kept,
// and whether their approvals must be signed.
type Guardrails struct {
	MaxVersions int // 10
	// RequireSigned: an approval is signed with the approver's git
	// signing key (gpg.format ssh or openpgp), and a version is approved
	// only when its signature verifies against AllowedSigners (ssh) or
	// AllowedKeys (OpenPGP).
	RequireSigned bool
	// AllowedSigners is the allowed-signers file (ssh-keygen's format),
	// repository-relative, read as HEAD commits it
	// (".orket-allowed-signers").
	AllowedSigners string
	// AllowedKeys is the file of allowed OpenPGP public keys (gpg
	// --export --armor), repository-relative, read as HEAD commits it
	// (".orket-allowed-keys.asc").
	AllowedKeys string
}

// DefaultAllowedSigners is guardrails.allowed_signers' default.
const DefaultAllowedSigners = ".orket-allowed-signers"

// DefaultAllowedKeys is guardrails.allowed_keys' default.
const DefaultAllowedKeys = ".orket-allowed-keys.asc"

// Stats sets the runs compared before and after a guardrails version.
type Stats struct {
	SampleSize int // 20
}

// Sandbox sets the kernel barrier of edit commands (docs/sandbox.md).
type Sandbox struct {
	Mode  string   // auto (""), required or off
	Write []string // more paths an edit command may write (build caches); ~ is the home directory
}

// Escalation sets what happens when a task is escalated.
type Escalation struct {
	// NotifyShell or NotifyArgv is a command told of an escalation, with
	// the report's path as its last argument and in
	// ORKET_ESCALATION_REPORT (a string runs by sh -c, a list as an argv).
	NotifyShell string
	NotifyArgv  []string
}

// Snapshot sets how a transaction learns what changed in the tree.
type Snapshot struct {
	// FSMonitor is the fsmonitor hook snapshots and measurements ask
	// what changed (snapshot.fsmonitor): "" or "git", git's
	// core.fsmonitor when it names a hook; "off", none; anything else a
	// hook command, as core.fsmonitor would name it.
	FSMonitor string
}

// Defaults returns a configuration holding every default docs/config.md
// gives, and no profiles.
func Defaults() *Config {
	return &Config{
		Version:    1,
		Verify:     Verify{Profiles: map[string]*Profile{}, BaselineMax: 2 * time.Minute},
		Verdict:    Verdict{Approve: 80, EscalateAfter: 3},
		Memory:     Memory{SummarizerTimeout: time.Minute, Remote: "origin"},
		Guardrails: Guardrails{MaxVersions: 10, AllowedSigners: DefaultAllowedSigners, AllowedKeys: DefaultAllowedKeys},
		Stats:      Stats{SampleSize: 20},
		Lessons: Lessons{
			Path:       store.RepoPath(store.LessonsFile),
			TopK:       3,
			HalfLife:   14 * 24 * time.Hour,
			Retention:  Retention{MaxEntries: 1000, MaxEntriesPerAgent: 1000, MaxAge: 90 * 24 * time.Hour},
			Tail:       Tail{MaxLines: 200, MaxBytes: 32768},
			MinSamples: 5, MinClusterSize: 3, FrequencyThreshold: 0.10, ExtractorTimeout: time.Minute,
		},
	}
}

// A Resolved profile is a profile with its extends chain flattened.
type Resolved struct {
	Name     string
	Steps    []Step // parents' steps first
	FailFast bool
	Parallel bool
}

// UnknownProfileError reports a --profile that orket.yaml does not define.
type UnknownProfileError struct {
	Name  string
	Known []string
}

func (e *UnknownProfileError) Error() string {
	return fmt.Sprintf("profile %q is not defined (defined: %s)", e.Name, joinQuoted(e.Known))
}

// Profile resolves the named profile, or the default one for "".
func (c *Config) Profile(name string) (*Resolved, error) {
	if name == "" {
		name = c.Verify.Default
	}
	if _, ok := c.Verify.Profiles[name]; !ok {
		return nil, &UnknownProfileError{Name: name, Known: c.Verify.Order}
	}
	r := &Resolved{Name: name, FailFast: true}
	// The chain is acyclic and every name exists: Parse checked both.
	var chain []*Profile
	for p := c.Verify.Profiles[name]; p != nil; p = c.Verify.Profiles[p.Extends] {
		chain = append(chain, p)
		if p.Extends == "" {
			break
		}
	}
	failFastSet, parallelSet := false, false
	for _, p := range chain {
		if p.FailFast != nil && !failFastSet {
			r.FailFast, failFastSet = *p.FailFast, true
		}
		if p.Parallel != nil && !parallelSet {
			r.Parallel, parallelSet = *p.Parallel, true
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		r.Steps = append(r.Steps, chain[i].Steps...)
	}
	return r, nil
}

// FormatDuration writes a duration as orket.yaml spells it, so that output
// shows what the user wrote rather than Go's 2160h0m0s: whole days as days
// (90d, 14d), other whole hours as hours (36h), durations under two
// minutes in seconds (90s, 1.5s, 500ms), and anything else in hours,
// minutes and seconds with the zero parts left out (5m, 1h30m, 2m30s).
// ParseDuration reads every result back to d.
func FormatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == math.MinInt64:
		return d.String() // -d would overflow
	case d < 0:
		return "-" + FormatDuration(-d)
	case d == 0:
		return "0s"
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d < time.Second:
		return d.String() // 500ms, 250µs
	case d < 2*time.Minute:
		s := strconv.FormatInt(int64(d/time.Second), 10)
		if frac := d % time.Second; frac > 0 {
			s += strings.TrimRight(fmt.Sprintf(".%09d", frac), "0")
		}
		return s + "s"
	}
	var s string
	if h := d / time.Hour; h > 0 {
		s = fmt.Sprintf("%dh", h)
	}
	if m := d % time.Hour / time.Minute; m > 0 {
		s += fmt.Sprintf("%dm", m)
	}
	if rest := d % time.Minute; rest > 0 {
		s += rest.String()
	}
	return s
}
