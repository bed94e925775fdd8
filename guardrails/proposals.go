package guardrails

// The proposals store: .orket/memory/proposals.jsonl, append-only. A
// proposal is written once, whole (with its created_at); each status
// change is a line of its own with the proposal's id, the new status and
// its time, as orket sync expects of an events log: one (id, time) is one
// line, logs of several clones merge as a union, and a proposal's status
// is the status line with the latest time (ties: the later status in the
// order proposed < deferred < approved < rejected < applied, then the
// line's content), whatever order the lines are in. Records of guardrail
// versions that clashed in a sync (type version_clash, written by orket
// sync) are read as proposals too.

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/orket/orket/redact"
	"github.com/orket/orket/store"
)

// Record kinds of the store.
const (
	recordProposal = "proposal"
	recordStatus   = "status"
)

// A Status is where a proposal is in its life.
type Status string

// The statuses (docs/guardrails.md, The review gate; deferred: a person
// looked and chose to decide later).
const (
	StatusProposed Status = "proposed"
	StatusDeferred Status = "deferred"
	StatusApproved Status = "approved" // decided; its version not written yet
	StatusRejected Status = "rejected"
	StatusApplied  Status = "applied" // its version is written
)

// Pending reports whether a person has yet to decide (proposed,
// deferred), or orket has yet to write the approved version.
func (s Status) Pending() bool {
	return s == StatusProposed || s == StatusDeferred || s == StatusApproved
}

func (s Status) rank() int {
	switch s {
	case StatusProposed:
		return 0
	case StatusDeferred:
		return 1
	case StatusApproved:
		return 2
	case StatusRejected:
		return 3
	case StatusApplied:
		return 4
	}
	return -1
}

// transitions are the status changes allowed: a person approves,
// rejects or defers a pending proposal; orket applies an approved one.
var transitions = map[Status][]Status{
	StatusProposed: {StatusApproved, StatusRejected, StatusDeferred},
	StatusDeferred: {StatusApproved, StatusRejected, StatusDeferred},
	StatusApproved: {StatusApplied},
}

// ErrTransition reports a status change that is not allowed (rejecting
// an applied proposal, approving a rejected one).
var ErrTransition = errors.New("status change not allowed")

// CanMove reports whether a proposal may go from one status to another.
func CanMove(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Where the lesson text came from.
const (
	SourceDeterministic = "deterministic"
	SourceExtractor     = "extractor"
)

// A Proposal is a lesson proposed for an agent's guardrails
// (docs/guardrails.md, Proposals).
type Proposal struct {
	Schema     string    `json:"schema_version"`
	Record     string    `json:"record"` // "proposal"
	ID         string    `json:"id"`
	Agent      string    `json:"agent"`
	CreatedAt  time.Time `json:"created_at"`
	Cluster    Cluster   `json:"cluster"`
	Generation int       `json:"generation"` // proposals of the cluster before this one
	LessonText string    `json:"lesson_text"`
	TextSource string    `json:"text_source"` // deterministic, extractor
	// DeterministicText is orket's own text when the extractor rewrote it.
	DeterministicText string `json:"deterministic_text,omitempty"`
	ConstraintUpdate  Change `json:"constraint_update"`
	// SourceFeedback names the signals (lesson, feedback and evaluation
	// ids), oldest first; Sources holds the latest MaxSources of them.
	SourceFeedback []string `json:"source_feedback"`
	Sources        []Signal `json:"sources"`
	Count          int      `json:"count"` // signals in the cluster
	Total          int      `json:"total"` // the agent's signals
	Confidence     float64  `json:"confidence"`
	Frequency      float64  `json:"frequency"` // Count/Total
	Impact         string   `json:"impact"`    // low, medium, high
	// Status and what follows come from the status lines.
	Status    Status    `json:"status"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	DecidedBy string    `json:"decided_by,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Version   int       `json:"version,omitempty"` // the guardrails version that applied it
	// Clash is set on a version clash found by orket sync.
	Clash *Clash `json:"clash,omitempty"`
}

// ClashType is the type of the records orket sync writes to the
// proposals store when two clones wrote different texts under one
// version number.
const ClashType = "version_clash"

// KindClash is the cluster kind of a clash proposal.
const KindClash = "clash"

// A Clash is a guardrails version two clones wrote differently: the
// number kept one text; approving the clash adds to the current text the
// constraints the other has and it lacks (line additions, nothing
// removed); rejecting it leaves the kept text alone.
type Clash struct {
	Version      int      `json:"version"`
	KeptText     string   `json:"kept_text"`
	ClashingText string   `json:"clashing_text"`
	Clashing     *Version `json:"-"` // the clashing version's json, when it parsed
}

// clashProposal reads a version_clash record.
func clashProposal(line []byte) *Proposal {
	var r struct {
		ID         string    `json:"id"`
		Time       time.Time `json:"time"`
		Agent      string    `json:"agent"`
		Version    int       `json:"version"`
		LessonText string    `json:"lesson_text"`
		Kept       struct {
			Text string          `json:"md"`
			JSON json.RawMessage `json:"json"`
		} `json:"kept"`
		Clashing struct {
			Text string          `json:"md"`
			JSON json.RawMessage `json:"json"`
		} `json:"clashing"`
	}
	if json.Unmarshal(line, &r) != nil || r.ID == "" {
		return nil
	}
	c := &Clash{Version: r.Version, KeptText: r.Kept.Text, ClashingText: r.Clashing.Text}
	if v, err := ParseVersion(r.Clashing.JSON); err == nil {
		c.Clashing = v
	}
	adds := clashAdditions("", c)
	return &Proposal{Schema: store.ProposalSchema, Record: recordProposal, ID: r.ID, Agent: r.Agent, CreatedAt: r.Time,
		Cluster:    Cluster{Kind: KindClash, Key: r.ID, Label: fmt.Sprintf("clash of v%d", r.Version), Section: Everywhere},
		LessonText: r.LessonText, TextSource: SourceDeterministic, Status: StatusProposed, Impact: "medium", Confidence: 1,
		ConstraintUpdate: Change{Type: Addition, Section: Everywhere, NewText: fmt.Sprintf("%d constraints of the clashing v%d", len(adds), r.Version)},
		SourceFeedback:   []string{}, Sources: []Signal{}, Clash: c}
}

// clashAdditions are the constraints of the clashing text that text
// lacks (by id, else by section and text), in order.
func clashAdditions(text string, c *Clash) []Change {
	have := map[string]bool{}
	for _, it := range Items(text) {
		have[it.Section+"\x00"+it.Text] = true
		if it.ID != "" {
			have[it.ID] = true
		}
	}
	var out []Change
	for _, it := range Items(c.ClashingText) {
		if it.ID != "" && have[it.ID] || have[it.Section+"\x00"+it.Text] {
			continue
		}
		out = append(out, Change{Type: Addition, Section: it.Section, NewText: it.Text, Line: it.ID})
	}
	return out
}

// A statusLine is a status change.
type statusLine struct {
	Schema   string    `json:"schema_version"`
	Record   string    `json:"record"`   // "status"
	ID       string    `json:"id"`       // the proposal's
	Proposal string    `json:"proposal"` // the proposal's id again, for readers that take id as a line's id
	Agent    string    `json:"agent"`
	Status   Status    `json:"status"`
	Time     time.Time `json:"time"`
	By       string    `json:"by,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Version  int       `json:"version,omitempty"`
}

// newer reports whether status line a wins over b.
func (a *statusLine) newer(b *statusLine) bool {
	switch {
	case !a.Time.Equal(b.Time):
		return a.Time.After(b.Time)
	case a.Status.rank() != b.Status.rank():
		return a.Status.rank() > b.Status.rank()
	}
	return a.By+"\x00"+a.Reason > b.By+"\x00"+b.Reason
}

// A ProposalLog is the proposals store.
type ProposalLog struct {
	log      *store.Log
	Redactor *redact.Redactor // redacts a reason before it is written (nil: known shapes)
}

// OpenProposals returns the proposals store of the .orket directory.
func OpenProposals(orketDir string) *ProposalLog {
	return &ProposalLog{log: &store.Log{Path: filepath.Join(orketDir, filepath.FromSlash(store.ProposalsFile))}}
}

// Path returns the store's file.
func (l *ProposalLog) Path() string { return l.log.Path }

// Add appends new proposals whose ids the store does not hold yet
// (another run, or another clone, may have proposed the same cluster);
// it returns those it wrote.
func (l *ProposalLog) Add(ps ...*Proposal) ([]*Proposal, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	known := map[string]bool{}
	if _, err := l.each(func(p *Proposal, _ *statusLine) {
		if p != nil {
			known[p.ID] = true
		}
	}); err != nil {
		return nil, err
	}
	var recs []any
	var added []*Proposal
	for _, p := range ps {
		if known[p.ID] {
			continue
		}
		known[p.ID] = true
		q := *p
		q.Schema, q.Record, q.Status = store.ProposalSchema, recordProposal, StatusProposed
		q.DecidedAt, q.DecidedBy, q.Reason, q.Version = time.Time{}, "", "", 0
		recs = append(recs, &q)
		added = append(added, p)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	if err := l.log.Append(recs...); err != nil {
		return nil, fmt.Errorf("append to %s: %w", l.log.Path, err)
	}
	return added, nil
}

// each streams the store: fn gets a proposal line (and nil) or a status
// line (and a nil proposal).
func (l *ProposalLog) each(fn func(*Proposal, *statusLine)) ([]store.Damaged, error) {
	return l.log.Each(func(line []byte) error {
		var head struct {
			Record string `json:"record"`
			Type   string `json:"type"`
		}
		if json.Unmarshal(line, &head) != nil {
			return nil
		}
		if head.Record == "" && head.Type == ClashType {
			if p := clashProposal(line); p != nil {
				fn(p, nil)
			}
			return nil
		}
		switch head.Record {
		case recordProposal:
			var p Proposal
			if json.Unmarshal(line, &p) == nil && p.ID != "" {
				fn(&p, nil)
			}
		case recordStatus:
			var s statusLine
			if json.Unmarshal(line, &s) == nil {
				if s.Proposal == "" {
					s.Proposal = s.ID
				}
				if s.Proposal != "" {
					fn(nil, &s)
				}
			}
		}
		return nil
	})
}

// A ProposalFilter selects proposals; its zero value selects all.
type ProposalFilter struct {
	Agent   string
	Pending bool // only proposed, deferred and approved ones
}

// List returns the proposals with their current status, oldest first
// (ties by id); an id seen twice counts once (its first line).
func (l *ProposalLog) List(f ProposalFilter) ([]*Proposal, []store.Damaged, error) {
	byID := map[string]*Proposal{}
	var order []*Proposal
	latest := map[string]*statusLine{}
	damaged, err := l.each(func(p *Proposal, s *statusLine) {
		if p != nil {
			if byID[p.ID] == nil {
				byID[p.ID] = p
				order = append(order, p)
			}
			return
		}
		if cur := latest[s.Proposal]; cur == nil || s.newer(cur) {
			latest[s.Proposal] = s
		}
	})
	if err != nil {
		return nil, damaged, err
	}
	var out []*Proposal
	for _, p := range order {
		p.Status = StatusProposed
		if s := latest[p.ID]; s != nil {
			p.Status, p.DecidedAt, p.DecidedBy, p.Reason, p.Version = s.Status, s.Time, s.By, s.Reason, s.Version
		}
		if f.Agent != "" && p.Agent != f.Agent || f.Pending && !p.Status.Pending() {
			continue
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, damaged, nil
}

// ErrNotFound reports an unknown proposal id (or prefix), or an ambiguous
// prefix.
var ErrNotFound = errors.New("no such proposal")

// Get returns the proposal with id, or the only one whose id starts with
// it (at least 4 characters after "gp-").
func (l *ProposalLog) Get(id string) (*Proposal, error) {
	all, _, err := l.List(ProposalFilter{})
	if err != nil {
		return nil, err
	}
	var found []*Proposal
	for _, p := range all {
		if p.ID == id {
			return p, nil
		}
		if len(strings.TrimPrefix(id, "gp-")) >= 4 && strings.HasPrefix(p.ID, id) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	return nil, fmt.Errorf("%s names %d proposals: %w", id, len(found), ErrNotFound)
}

// A Decision is a person's (or orket's) word on a proposal.
type Decision struct {
	Status  Status
	By      string
	Reason  string
	Time    time.Time
	Version int // the version that applied it (StatusApplied)
}

// ErrReasonRequired reports a rejection without a reason.
var ErrReasonRequired = errors.New("a rejection needs a reason")

// SetStatus records a status change after checking it is allowed from
// the proposal's current status (ErrTransition); a rejection needs a
// reason (ErrReasonRequired). It returns the proposal as it now is.
func (l *ProposalLog) SetStatus(id string, d Decision) (*Proposal, error) {
	p, err := l.Get(id)
	if err != nil {
		return nil, err
	}
	if !CanMove(p.Status, d.Status) {
		return p, fmt.Errorf("proposal %s is %s, cannot become %s: %w", p.ID, p.Status, d.Status, ErrTransition)
	}
	if d.Status == StatusRejected && strings.TrimSpace(d.Reason) == "" {
		return p, ErrReasonRequired
	}
	if err := l.appendStatus(p, d); err != nil {
		return p, err
	}
	return p, nil
}

func (l *ProposalLog) appendStatus(p *Proposal, d Decision) error {
	if d.Time.IsZero() {
		d.Time = time.Now()
	}
	s := &statusLine{Schema: store.ProposalSchema, Record: recordStatus, Proposal: p.ID, Agent: p.Agent, Status: d.Status,
		Time: d.Time.UTC(), By: oneLine(l.Redactor.Redact(d.By), 200), Reason: l.Redactor.Redact(strings.TrimSpace(d.Reason)), Version: d.Version}
	s.ID = p.ID
	if err := l.log.Append(s); err != nil {
		return fmt.Errorf("append to %s: %w", l.log.Path, err)
	}
	p.Status, p.DecidedAt, p.DecidedBy, p.Reason, p.Version = s.Status, s.Time, s.By, s.Reason, s.Version
	return nil
}

// Prune applies retention per agent: a proposal whose latest line is
// older than maxAge (0: no limit) goes, and of each agent's proposals
// only the newest maxPerAgent (by creation; 0: no limit) stay; a
// proposal's status lines go with it. Damaged lines go too. It returns
// how many proposals it removed.
func (l *ProposalLog) Prune(maxPerAgent int, maxAge time.Duration, now time.Time) (int, error) {
	all, _, err := l.List(ProposalFilter{})
	if err != nil {
		return 0, err
	}
	// Age by the latest line, then each agent's newest by creation: the
	// retention rule of every log (store.Retention).
	var young []*Proposal
	removed := map[string]bool{}
	for _, p := range all {
		last := p.CreatedAt
		if p.DecidedAt.After(last) {
			last = p.DecidedAt
		}
		if maxAge > 0 && now.Sub(last) > maxAge {
			removed[p.ID] = true
			continue
		}
		young = append(young, p)
	}
	metas := make([]store.Meta, len(young))
	for i, p := range young {
		metas[i] = store.Meta{Agent: p.Agent, Time: p.CreatedAt}
	}
	for i, k := range (store.Retention{MaxPerAgent: maxPerAgent}).Keep(metas, now) {
		if !k {
			removed[young[i].ID] = true
		}
	}
	if _, err := l.log.Rewrite(func(line []byte) bool {
		var head struct {
			Record   string `json:"record"`
			Type     string `json:"type"`
			ID       string `json:"id"`
			Proposal string `json:"proposal"`
		}
		if json.Unmarshal(line, &head) != nil {
			return false
		}
		switch {
		case head.Record == recordProposal, head.Record == "" && head.Type == ClashType:
			return !removed[head.ID]
		case head.Record == recordStatus:
			return !removed[firstNonEmpty(head.Proposal, head.ID)]
		}
		return true // a record of a later version: not ours to drop
	}); err != nil {
		return 0, err
	}
	return len(removed), nil
}
