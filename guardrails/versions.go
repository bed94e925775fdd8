package guardrails

// Versions of an agent's guardrails live in .orket/guardrails/<agent>/:
// v<N>.md (the text) and v<N>.json (what changed, who approved, the
// lines' sources). A version exists once its json is written: the md is
// written (fsynced) first, then the json, then a line of history.jsonl;
// an md without its json is what a crash left, and the next version
// overwrites it. Every write and read goes through internal/fsroot (no
// symlink followed); writers of one agent take the agent's lock
// (.orket/guardrails/<agent>/.lock), so concurrent approvals and
// rollbacks each get their own number and none is lost.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/flock"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/store"
)

// Version kinds.
const (
	KindApproval = "approval" // a person approved a proposal
	KindRollback = "rollback" // a person went back to an earlier version's text
)

// A Line is a constraint orket wrote, with where it came from.
type Line struct {
	ID        string    `json:"id"` // the proposal's id, also in the text's comment
	Section   string    `json:"section"`
	Text      string    `json:"text"`
	Cluster   string    `json:"cluster,omitempty"` // kind:key of its proposal's cluster
	FoldNoDir string    `json:"fold_nodir,omitempty"`
	Sources   []string  `json:"sources,omitempty"` // the proposal's source_feedback
	Since     time.Time `json:"since"`             // when it was applied
}

// Performance is a version's figures before and after it
// (docs/guardrails.md, Stats; filled by UpdatePerformance from Stats,
// nil until then).
type Performance struct {
	QualityBefore   *float64 `json:"quality_before,omitempty"`
	QualityAfter    *float64 `json:"quality_after,omitempty"`
	ErrorRateBefore *float64 `json:"error_rate_before,omitempty"`
	ErrorRateAfter  *float64 `json:"error_rate_after,omitempty"`
	RunsBefore      int      `json:"runs_before"`
	RunsAfter       int      `json:"runs_after"`
}

// A Version is one version of an agent's guardrails: v<N>.json, and its
// text from v<N>.md.
type Version struct {
	Schema         string    `json:"schema_version"`
	Agent          string    `json:"agent"`
	Version        int       `json:"version"`
	CreatedAt      time.Time `json:"created_at"`
	Kind           string    `json:"kind"`            // approval, rollback
	AppliedLessons []string  `json:"applied_lessons"` // the proposals this version applied
	Changes        []Change  `json:"changes"`         // from the previous version
	ApprovedBy     string    `json:"approved_by"`
	// Approval is who approved it, on which clone, and its signature
	// (approval.go); nil in versions written before approvals were
	// recorded.
	Approval *Approval `json:"approval,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Previous int       `json:"previous,omitempty"` // the version it changed
	Restores int       `json:"restores,omitempty"` // a rollback: the version whose text it restores
	// Lines are the constraints orket wrote that the text holds, with
	// their sources.
	Lines         []Line       `json:"lines"`
	ContentSHA256 string       `json:"content_sha256"`
	Performance   *Performance `json:"performance,omitempty"`

	Text string `json:"-"` // v<N>.md
	// Edited: the text is not what orket wrote (a person edited
	// v<N>.md afterwards).
	Edited bool `json:"-"`
}

// ActiveLines returns the lines orket wrote that the text still holds
// (found by their id comment), with the section and text as they now
// read.
func (v *Version) ActiveLines() []Line { return v.lines(false) }

// AllLines returns every constraint of the text: orket's with their
// sources, and those a person wrote (no id).
func (v *Version) AllLines() []Line { return v.lines(true) }

// lines pairs the text's items with the lines orket wrote, by their id
// comment, each taking the section and text the item now has. With all,
// every item is a line (an item orket did not write, a bare one); else
// only orket's are, each id once.
func (v *Version) lines(all bool) []Line {
	if v == nil {
		return nil
	}
	meta := map[string]Line{}
	for _, l := range v.Lines {
		meta[l.ID] = l
	}
	var out []Line
	for _, it := range Items(v.Text) {
		m, ok := meta[it.ID]
		switch {
		case ok && it.ID != "":
			m.Section, m.Text = it.Section, it.Text
			out = append(out, m)
			if !all {
				delete(meta, it.ID)
			}
		case all:
			out = append(out, Line{Section: it.Section, Text: it.Text})
		}
	}
	return out
}

// An Event is a line of history.jsonl: a version written.
type Event struct {
	Schema   string    `json:"schema_version"`
	ID       string    `json:"id"`
	Agent    string    `json:"agent"`
	Version  int       `json:"version"`
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"`
	By       string    `json:"by,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Lessons  []string  `json:"lessons,omitempty"`
	Previous int       `json:"previous,omitempty"`
	Restores int       `json:"restores,omitempty"`
	Changes  int       `json:"changes"`
	// Kept: its files are still there (filled by History).
	Kept bool `json:"-"`
}

// A Store is the guardrails of a repository's agents and their
// proposals.
type Store struct {
	OrketDir  string
	Config    Config
	Proposals *ProposalLog
	// Approvals is how versions are approved and checked here (the
	// zero value: approvals unsigned).
	Approvals Approvals

	checks checkCache
}

// Open returns the store of the .orket directory orketDir.
func Open(orketDir string, cfg Config) *Store {
	return &Store{OrketDir: orketDir, Config: cfg.withDefaults(), Proposals: OpenProposals(orketDir)}
}

// AgentDir is the directory name of an agent's guardrails, as orket
// sync names it: the name itself when it is one path component (not
// empty, not starting with a dot, no slash, backslash or control
// character, at most 255 bytes), else "agent-" and a hash of it.
func AgentDir(agent string) string {
	if agent == "" {
		agent = "default"
	}
	if validAgentDir(agent) {
		return agent
	}
	sum := sha256.Sum256([]byte(agent))
	return "agent-" + hex.EncodeToString(sum[:8])
}

func validAgentDir(name string) bool {
	if name == "" || name[0] == '.' || len(name) > 255 || !utf8.ValidString(name) {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || c == '/' || c == '\\' {
			return false
		}
	}
	return true
}

func (s *Store) agentRel(agent string) string { return store.GuardrailsDir + "/" + AgentDir(agent) }

func mdName(n int) string   { return "v" + strconv.Itoa(n) + ".md" }
func jsonName(n int) string { return "v" + strconv.Itoa(n) + ".json" }

// Path returns the file of an agent's version n's text, for
// ORKET_GUARDRAILS.
func (s *Store) Path(agent string, n int) string {
	return filepath.Join(s.OrketDir, filepath.FromSlash(s.agentRel(agent)), mdName(n))
}

func (s *Store) root() (*fsroot.Root, error) {
	return fsroot.MkdirOpen(s.OrketDir)
}

// inRoot calls read with .orket opened as a root, and closes it after.
func inRoot[T any](s *Store, read func(root *fsroot.Root) (T, error)) (T, error) {
	root, err := s.root()
	if err != nil {
		var zero T
		return zero, err
	}
	defer root.Close()
	return read(root)
}

// regularOrMissing fails when rel exists and is not a regular file.
func regularOrMissing(root *fsroot.Root, rel string) error {
	st, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%s: %w", rel, store.ErrSymlink)
	}
	return nil
}

// lock takes the agent's lock, creating its directory.
func (s *Store) lock(ctx context.Context, root *fsroot.Root, agent string) (func(), error) {
	rel := s.agentRel(agent)
	if err := root.MkdirAll(rel, 0o755); err != nil {
		return nil, err
	}
	if err := regularOrMissing(root, path.Join(rel, store.DirLockName)); err != nil {
		return nil, err
	}
	unlock, err := flock.Acquire(ctx, store.DirLock(store.Path(s.OrketDir, rel)), flock.Mode{Exclusive: true, Wait: true})
	if err != nil {
		return nil, fmt.Errorf("lock the guardrails of %s: %w", agent, err)
	}
	return unlock, nil
}

var versionFile = lazyre.New(`^v([1-9][0-9]{0,8})\.json$`)

// Versions returns the numbers of the agent's kept versions, in order.
func (s *Store) Versions(agent string) ([]int, error) {
	return inRoot(s, func(root *fsroot.Root) ([]int, error) { return s.versions(root, agent) })
}

func (s *Store) versions(root *fsroot.Root, agent string) ([]int, error) {
	names, err := root.ReadDirNames(s.agentRel(agent))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, n := range names {
		if m := versionFile().FindStringSubmatch(n); m != nil {
			v, _ := strconv.Atoi(m[1])
			out = append(out, v)
		}
	}
	sort.Ints(out)
	return out, nil
}

// ErrNoVersion reports a version that is not kept (or an agent without
// guardrails).
var ErrNoVersion = errors.New("no such guardrails version")

// Version returns the agent's version n.
func (s *Store) Version(agent string, n int) (*Version, error) {
	return inRoot(s, func(root *fsroot.Root) (*Version, error) { return s.version(root, agent, n) })
}

func (s *Store) version(root *fsroot.Root, agent string, n int) (*Version, error) {
	rel := s.agentRel(agent)
	b, err := root.ReadFile(rel + "/" + jsonName(n))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("guardrails of %s, v%d: %w", agent, n, ErrNoVersion)
	}
	if err != nil {
		return nil, err
	}
	v, err := ParseVersion(b)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", rel, jsonName(n), err)
	}
	md, err := root.ReadFile(rel + "/" + mdName(n))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	v.Text = string(md)
	v.Edited = v.ContentSHA256 != "" && v.ContentSHA256 != sha(md)
	if v.Version != n {
		// A copied or renamed file: the name says which it is.
		v.Version = n
	}
	return v, nil
}

// ParseVersion reads a v<N>.json, which a person may have edited: unknown
// keys are ignored; nil lists become empty.
func ParseVersion(b []byte) (*Version, error) {
	var v Version
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadVersion, err)
	}
	if v.AppliedLessons == nil {
		v.AppliedLessons = []string{}
	}
	if v.Changes == nil {
		v.Changes = []Change{}
	}
	if v.Lines == nil {
		v.Lines = []Line{}
	}
	return &v, nil
}

// Current returns the agent's current version: its newest approved one
// (Check), or nil when it has none. Versions after it are unapproved:
// never given to an edit command, never built on.
func (s *Store) Current(agent string) (*Version, error) {
	return inRoot(s, func(root *fsroot.Root) (*Version, error) { return s.current(root, agent) })
}

func (s *Store) current(root *fsroot.Root, agent string) (*Version, error) {
	ns, err := s.versions(root, agent)
	if err != nil || len(ns) == 0 {
		return nil, err
	}
	for i := len(ns) - 1; i >= 0; i-- {
		v, err := s.version(root, agent, ns[i])
		if err != nil {
			if i < len(ns)-1 && errors.Is(err, ErrBadVersion) {
				continue // an older damaged json: not a version to give
			}
			return nil, err
		}
		if s.Check(context.Background(), agent, v).Approved {
			return v, nil
		}
	}
	return nil, nil
}

// Newest returns the agent's newest kept version, approved or not, or nil
// when it has none.
func (s *Store) Newest(agent string) (*Version, error) {
	return inRoot(s, func(root *fsroot.Root) (*Version, error) { return s.newest(root, agent) })
}

func (s *Store) newest(root *fsroot.Root, agent string) (*Version, error) {
	ns, err := s.versions(root, agent)
	if err != nil || len(ns) == 0 {
		return nil, err
	}
	return s.version(root, agent, ns[len(ns)-1])
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (s *Store) historyLog(agent string) *store.Log {
	return &store.Log{Path: filepath.Join(s.OrketDir, filepath.FromSlash(s.agentRel(agent)), store.HistoryFile)}
}

// History returns the agent's versions as written, oldest first, each
// marked Kept when its files are still there: the lines of its
// history.jsonl, and for a kept version the log does not name (one that
// came from another clone by orket sync, which carries versions but not
// this log) an event read from its json.
func (s *Store) History(agent string) ([]Event, error) {
	root, err := s.root()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	kept, err := s.versions(root, agent)
	if err != nil {
		return nil, err
	}
	isKept := map[int]bool{}
	for _, n := range kept {
		isKept[n] = true
	}
	var out []Event
	seen := map[string]bool{}
	logged := map[int]bool{}
	if err := regularOrMissing(root, s.agentRel(agent)+"/history.jsonl"); err != nil {
		return nil, err
	}
	if _, err := s.historyLog(agent).Each(func(line []byte) error {
		var e Event
		if json.Unmarshal(line, &e) == nil && e.Version > 0 && !seen[e.ID] {
			seen[e.ID] = true
			e.Kept = isKept[e.Version]
			logged[e.Version] = true
			out = append(out, e)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, n := range kept {
		if logged[n] {
			continue
		}
		v, err := s.version(root, agent, n)
		if err != nil {
			continue // a damaged json: not a version to count
		}
		out = append(out, eventOf(v))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Version != out[j].Version {
			return out[i].Version < out[j].Version
		}
		return out[i].Time.Before(out[j].Time)
	})
	return out, nil
}

// eventOf is the history event of a version written.
func eventOf(v *Version) Event {
	e := Event{Schema: store.HistorySchema, Agent: v.Agent, Version: v.Version, Time: v.CreatedAt, Kind: v.Kind, By: v.ApprovedBy,
		Reason: v.Reason, Lessons: v.AppliedLessons, Previous: v.Previous, Restores: v.Restores, Changes: len(v.Changes), Kept: true}
	if e.Kind == "" {
		e.Kind = KindApproval
	}
	e.ID = hashKey("gh-", v.Agent+"\x00"+strconv.Itoa(v.Version)+"\x00"+v.ContentSHA256+"\x00"+v.CreatedAt.Format(time.RFC3339Nano))
	return e
}

// write writes version v (whose number, text and approver are set) under
// the agent's lock: its approval signed when signatures are required,
// the text, then the json, then the history line; then it drops the
// oldest versions beyond MaxVersions.
func (s *Store) write(ctx context.Context, root *fsroot.Root, v *Version) error {
	rel := s.agentRel(v.Agent)
	v.Schema = store.VersionSchema
	v.ContentSHA256 = sha([]byte(v.Text))
	v.Approval = &Approval{By: v.ApprovedBy, Time: v.CreatedAt}
	if err := s.sign(ctx, v); err != nil {
		return err
	}
	for _, name := range []string{mdName(v.Version), jsonName(v.Version), store.HistoryFile} {
		if err := regularOrMissing(root, rel+"/"+name); err != nil {
			return err
		}
	}
	if err := root.WriteFile(rel+"/"+mdName(v.Version), []byte(v.Text), 0o644, fsroot.Options{Sync: true}); err != nil {
		return fmt.Errorf("write %s/%s: %w", rel, mdName(v.Version), err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := root.WriteFile(rel+"/"+jsonName(v.Version), append(b, '\n'), 0o644, fsroot.Options{Sync: true}); err != nil {
		return fmt.Errorf("write %s/%s: %w", rel, jsonName(v.Version), err)
	}
	e := eventOf(v)
	if err := s.historyLog(v.Agent).Append(&e); err != nil {
		return fmt.Errorf("append to %s/history.jsonl: %w", rel, err)
	}
	return s.prune(root, v.Agent)
}

// prune removes the oldest versions beyond MaxVersions (the json first,
// so a half-removed version is no version). A version its history.jsonl
// does not name (one orket sync brought) is logged first, so that it
// stays in the history and its number is never given again.
func (s *Store) prune(root *fsroot.Root, agent string) error {
	ns, err := s.versions(root, agent)
	if err != nil {
		return err
	}
	rel := s.agentRel(agent)
	var logged map[int]bool
	for len(ns) > s.Config.MaxVersions {
		n := ns[0]
		if logged == nil {
			logged = map[int]bool{}
			if _, err := s.historyLog(agent).Each(func(line []byte) error {
				var e Event
				if json.Unmarshal(line, &e) == nil {
					logged[e.Version] = true
				}
				return nil
			}); err != nil {
				return err
			}
		}
		if !logged[n] {
			if v, err := s.version(root, agent, n); err == nil {
				e := eventOf(v)
				if err := s.historyLog(agent).Append(&e); err != nil {
					return fmt.Errorf("append to %s/history.jsonl: %w", rel, err)
				}
			}
		}
		if err := root.Remove(rel + "/" + jsonName(n)); err != nil {
			return err
		}
		if err := root.Remove(rel + "/" + mdName(n)); err != nil {
			return err
		}
		ns = ns[1:]
	}
	return nil
}

// nextNumber is one past the highest version the agent ever had (kept
// or in its history).
func (s *Store) nextNumber(root *fsroot.Root, agent string) (int, error) {
	ns, err := s.versions(root, agent)
	if err != nil {
		return 0, err
	}
	top := 0
	if len(ns) > 0 {
		top = ns[len(ns)-1]
	}
	if _, err := s.historyLog(agent).Each(func(line []byte) error {
		var e struct {
			Version int `json:"version"`
		}
		if json.Unmarshal(line, &e) == nil && e.Version > top {
			top = e.Version
		}
		return nil
	}); err != nil {
		return 0, err
	}
	return top + 1, nil
}

// Approve approves a pending proposal (an id or a unique prefix) and
// applies it: under the agent's lock, it records the approval, writes
// the next version (the previous text with the proposal's one line
// changed), and marks the proposal applied in it. A proposal approved
// earlier whose version was not written (a crash) is finished. When the
// text already says it (a person wrote the same line, or already removed
// the line to remove), no version is written: the proposal is applied in
// the current one. It returns the version that holds the change.
func (s *Store) Approve(ctx context.Context, id, by string, now time.Time) (*Version, *Proposal, error) {
	p, err := s.Proposals.Get(id)
	if err != nil {
		return nil, nil, err
	}
	if err := s.canSign(); err != nil {
		return nil, p, err
	}
	root, err := s.root()
	if err != nil {
		return nil, p, err
	}
	defer root.Close()
	unlock, err := s.lock(ctx, root, p.Agent)
	if err != nil {
		return nil, p, err
	}
	defer unlock()
	if p, err = s.Proposals.Get(p.ID); err != nil { // again, under the lock
		return nil, nil, err
	}
	if now.IsZero() {
		now = time.Now()
	}
	now = now.UTC()
	by = oneLine(by, 200)
	if by == "" {
		by = "unknown"
	}
	if p.Status != StatusApproved {
		if _, err := s.Proposals.SetStatus(p.ID, Decision{Status: StatusApproved, By: by, Time: now}); err != nil {
			return nil, p, err
		}
	}
	cur, err := s.current(root, p.Agent)
	if err != nil {
		return nil, p, err
	}
	applied := func(v *Version) (*Version, *Proposal, error) {
		q, err := s.Proposals.SetStatus(p.ID, Decision{Status: StatusApplied, By: by, Time: now, Version: v.Version})
		if q == nil {
			q = p
		}
		return v, q, err
	}
	if cur != nil {
		for _, l := range cur.AppliedLessons {
			if l == p.ID {
				return applied(cur)
			}
		}
	}
	base, prev := NewDoc(p.Agent), 0
	var lines []Line
	if cur != nil {
		base, prev = cur.Text, cur.Version
		lines = append(lines, cur.Lines...)
	}
	text, changes, lines, err := applyProposal(base, lines, p, now)
	if errors.Is(err, ErrAlreadyThere) || errors.Is(err, ErrLineGone) {
		if cur == nil {
			return nil, p, err
		}
		return applied(cur)
	}
	if err != nil {
		return nil, p, err
	}
	n, err := s.nextNumber(root, p.Agent)
	if err != nil {
		return nil, p, err
	}
	v := &Version{Agent: p.Agent, Version: n, CreatedAt: now, Kind: KindApproval, AppliedLessons: []string{p.ID},
		Changes: changes, ApprovedBy: by, Previous: prev, Lines: lines, Text: text}
	if err := s.write(ctx, root, v); err != nil {
		return nil, p, err
	}
	return applied(v)
}

// applyProposal changes base as p says: its one line (ApplyChange), or
// for a clash the constraints the clashing text adds. It returns the
// text, the changes as they read in it, and the lines' metadata.
func applyProposal(base string, lines []Line, p *Proposal, now time.Time) (string, []Change, []Line, error) {
	if p.Clash != nil {
		adds := clashAdditions(base, p.Clash)
		if len(adds) == 0 {
			return base, nil, lines, ErrAlreadyThere
		}
		meta := map[string]Line{}
		if p.Clash.Clashing != nil {
			for _, l := range p.Clash.Clashing.Lines {
				meta[l.ID] = l
			}
		}
		text := base
		for _, c := range adds {
			var err error
			if text, err = ApplyChange(text, c, c.Line); err != nil {
				return base, nil, lines, err
			}
			if c.Line != "" {
				l, ok := meta[c.Line]
				if !ok {
					l = Line{ID: c.Line, Since: now}
				}
				l.Section, l.Text = c.Section, c.NewText
				lines = append(lines, l)
			}
		}
		return text, adds, lines, nil
	}
	c := p.ConstraintUpdate
	text, err := ApplyChange(base, c, p.ID)
	if err != nil {
		return base, nil, lines, err
	}
	// The change as it reads in the text.
	target := c.Line
	if ch := Changes(base, text); len(ch) == 1 {
		c = ch[0]
	}
	if c.Type != Addition {
		kept := lines[:0:0]
		for _, l := range lines {
			if l.ID != target {
				kept = append(kept, l)
			}
		}
		lines = kept
	}
	c.Line = target
	if c.Type != Removal {
		lines = append(lines, Line{ID: p.ID, Section: c.Section, Text: cleanText(c.NewText), Cluster: p.Cluster.ID(),
			FoldNoDir: p.Cluster.FoldNoDir, Sources: p.SourceFeedback, Since: now})
		c.Line = p.ID
	}
	return text, []Change{c}, lines, nil
}

// Reject rejects a pending proposal with a reason.
func (s *Store) Reject(ctx context.Context, id, by, reason string, now time.Time) (*Proposal, error) {
	return s.decide(ctx, id, Decision{Status: StatusRejected, By: by, Reason: reason, Time: now})
}

// Defer leaves a pending proposal for later ('q' in the review).
func (s *Store) Defer(ctx context.Context, id, by string, now time.Time) (*Proposal, error) {
	return s.decide(ctx, id, Decision{Status: StatusDeferred, By: by, Time: now})
}

func (s *Store) decide(ctx context.Context, id string, d Decision) (*Proposal, error) {
	p, err := s.Proposals.Get(id)
	if err != nil {
		return nil, err
	}
	root, err := s.root()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	unlock, err := s.lock(ctx, root, p.Agent)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if d.Time.IsZero() {
		d.Time = time.Now()
	}
	return s.Proposals.SetStatus(p.ID, d)
}

// ErrBadVersion reports a v<N>.json that does not parse (a person's edit
// gone wrong, a damaged file).
var ErrBadVersion = errors.New("not a guardrails version")

// ErrNoChange reports a rollback to a text equal to the current one.
var ErrNoChange = errors.New("nothing would change")

// Rollback writes a new version of the agent's guardrails holding the
// text of version to (0: the latest kept version before the current
// one), with the changes from the current text, by and reason logged.
// Nothing is rolled back automatically: a person runs it.
func (s *Store) Rollback(ctx context.Context, agent string, to int, by, reason string, now time.Time) (*Version, error) {
	root, err := s.root()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	unlock, err := s.lock(ctx, root, agent)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.canSign(); err != nil {
		return nil, err
	}
	ns, err := s.versions(root, agent)
	if err != nil {
		return nil, err
	}
	if len(ns) == 0 {
		return nil, fmt.Errorf("%s has no guardrails: %w", agent, ErrNoVersion)
	}
	cur, err := s.current(root, agent)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, fmt.Errorf("%s has no approved version to roll back from: %w", agent, ErrUnapproved)
	}
	if to == 0 {
		// The newest approved version before the current one.
		for i := len(ns) - 1; i >= 0 && to == 0; i-- {
			if ns[i] >= cur.Version {
				continue
			}
			if v, err := s.version(root, agent, ns[i]); err == nil && s.Check(ctx, agent, v).Approved {
				to = ns[i]
			}
		}
		if to == 0 {
			return nil, fmt.Errorf("%s has no approved version before v%d: %w", agent, cur.Version, ErrNoVersion)
		}
	}
	if to == cur.Version {
		return nil, fmt.Errorf("v%d is the current version: %w", to, ErrNoChange)
	}
	target, err := s.version(root, agent, to)
	if err != nil {
		return nil, fmt.Errorf("%w (kept: %s)", err, keptList(ns))
	}
	if c := s.Check(ctx, agent, target); !c.Approved {
		// Its text would come back approved by whoever rolls back.
		return nil, fmt.Errorf("v%d is not approved: %s: %w", to, c.Why, ErrUnapproved)
	}
	if target.Text == cur.Text {
		return nil, fmt.Errorf("v%d has the text of v%d: %w", to, cur.Version, ErrNoChange)
	}
	if now.IsZero() {
		now = time.Now()
	}
	n, err := s.nextNumber(root, agent)
	if err != nil {
		return nil, err
	}
	by = oneLine(by, 200)
	if by == "" {
		by = "unknown"
	}
	v := &Version{Agent: agent, Version: n, CreatedAt: now.UTC(), Kind: KindRollback, AppliedLessons: []string{},
		Changes: Changes(cur.Text, target.Text), ApprovedBy: by, Reason: oneLine(reason, 500), Previous: cur.Version, Restores: to,
		Lines: append([]Line{}, target.Lines...), Text: target.Text}
	if err := s.write(ctx, root, v); err != nil {
		return nil, err
	}
	return v, nil
}

func keptList(ns []int) string {
	if len(ns) == 0 {
		return "none"
	}
	var p []string
	for _, n := range ns {
		p = append(p, "v"+strconv.Itoa(n))
	}
	return strings.Join(p, ", ")
}

// DiffVersions is the unified diff of the agent's version a's text to
// version b's.
func (s *Store) DiffVersions(agent string, a, b int) (string, error) {
	va, err := s.Version(agent, a)
	if err != nil {
		return "", err
	}
	vb, err := s.Version(agent, b)
	if err != nil {
		return "", err
	}
	return Diff(path.Join(AgentDir(agent), mdName(a)), path.Join(AgentDir(agent), mdName(b)), va.Text, vb.Text), nil
}

// UpdatePerformance records a version's before/after (from Stats) in its
// json, under the agent's lock; the text is not touched.
func (s *Store) UpdatePerformance(ctx context.Context, agent string, n int, p *Performance) error {
	root, err := s.root()
	if err != nil {
		return err
	}
	defer root.Close()
	unlock, err := s.lock(ctx, root, agent)
	if err != nil {
		return err
	}
	defer unlock()
	rel := s.agentRel(agent) + "/" + jsonName(n)
	b, err := root.ReadFile(rel)
	if err != nil {
		return err
	}
	v, err := ParseVersion(b)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	v.Performance = p
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return root.WriteFile(rel, append(out, '\n'), 0o644, fsroot.Options{Sync: true})
}
