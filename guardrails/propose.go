package guardrails

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/orket/orket/store"
)

// Config holds the numbers of docs/guardrails.md; DefaultConfig gives
// its defaults.
type Config struct {
	MinSamples         int           // lessons.min_samples: entries of an agent before any proposal (5)
	MinClusterSize     int           // lessons.min_cluster_size: entries in a cluster (3)
	FrequencyThreshold float64       // lessons.frequency_threshold: a cluster's share must exceed it (0.10)
	MaxVersions        int           // guardrails.max_versions: versions kept per agent (10)
	SampleSize         int           // stats.sample_size: runs before and after a version (20)
	MaxEntriesPerAgent int           // retention.max_entries_per_agent for the proposals store (1000)
	MaxAge             time.Duration // retention.max_age for the proposals store (90 days)
}

// DefaultConfig returns the defaults of docs/guardrails.md, Settings.
func DefaultConfig() Config {
	return Config{MinSamples: 5, MinClusterSize: 3, FrequencyThreshold: 0.10, MaxVersions: 10, SampleSize: 20,
		MaxEntriesPerAgent: 1000, MaxAge: 90 * 24 * time.Hour}
}

// withDefaults fills zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.MinSamples <= 0 {
		c.MinSamples = d.MinSamples
	}
	if c.MinClusterSize <= 0 {
		c.MinClusterSize = d.MinClusterSize
	}
	if c.FrequencyThreshold <= 0 {
		c.FrequencyThreshold = d.FrequencyThreshold
	}
	if c.MaxVersions <= 0 {
		c.MaxVersions = d.MaxVersions
	}
	if c.SampleSize <= 0 {
		c.SampleSize = d.SampleSize
	}
	return c
}

// Everywhere is the section of constraints that name no scope.
const Everywhere = "Everywhere"

// Cluster kinds.
const (
	KindFold     = "fold"     // one failure (docs/lessons.md's fold key)
	KindCategory = "category" // one review category (or verdict note) in one scope
	KindLine     = "line"     // one guardrail line (a removal)
)

// A Cluster is what a proposal was made from.
type Cluster struct {
	Kind    string `json:"kind"`
	Key     string `json:"key"`     // fk-... for a fold, ck-... for a category, the line's id
	Label   string `json:"label"`   // for people
	Section string `json:"section"` // the scope the constraint goes under
	// FoldNoDir is a fold's key without its directory, to match failures
	// known from evaluations alone.
	FoldNoDir string `json:"fold_nodir,omitempty"`
}

// ID names the cluster across proposals: kind and key.
func (c Cluster) ID() string { return c.Kind + ":" + c.Key }

// Change types (the types of a version's changes; docs/guardrails.md,
// Versions).
const (
	Addition     = "addition"
	Modification = "modification"
	Removal      = "removal"
)

// A Change is one line changed in an agent's guardrails.
type Change struct {
	Type    string `json:"type"`
	Section string `json:"section"`
	OldText string `json:"old_text,omitempty"`
	NewText string `json:"new_text,omitempty"`
	// Line is the id of the line (a proposal's id) the change adds,
	// replaces or removes; "" for a line a person wrote.
	Line string `json:"line,omitempty"`
}

// Input is what Propose reads.
type Input struct {
	Agent   string
	Signals []Signal    // the agent's signals (others are ignored), as Collector gives them
	Prior   []*Proposal // the agent's earlier proposals with their status (ProposalLog.List)
	Current *Version    // the agent's current guardrails (nil: none yet)
	Votes   map[string]Tally
	Now     time.Time
}

// MaxSources bounds the signals a proposal carries whole (its
// source_feedback names up to MaxSourceIDs).
const (
	MaxSources   = 50
	MaxSourceIDs = 500
)

// Propose clusters an agent's signals and returns the new proposals,
// largest cluster first. The rules (docs/guardrails.md):
//
//   - Nothing is proposed before the agent has cfg.MinSamples signals.
//   - Signals are clustered by fold (failed dir, command, tags,
//     normalised first error) and by category and scope (review
//     rejections and corrections by their category and scope; CONDITIONAL
//     verdicts by their first note). A cluster of at least
//     cfg.MinClusterSize signals making more than cfg.FrequencyThreshold
//     of the agent's signals is a candidate.
//   - A candidate with a pending proposal (proposed, deferred, approved)
//     is not proposed again. One whose constraint is in the current
//     guardrails is not either, unless its line has more down votes than
//     up and the cluster grew by cfg.MinClusterSize signals since it was
//     applied: then a modification is proposed. One that was rejected (or
//     applied and later removed) is proposed again once the cluster has
//     grown by cfg.MinClusterSize signals since that decision.
//
// Ids and texts are deterministic: the same logs give the same proposals
// on every clone.
func Propose(cfg Config, in Input) []*Proposal {
	cfg = cfg.withDefaults()
	var sigs []Signal
	for _, s := range in.Signals {
		if s.Agent == in.Agent {
			sigs = append(sigs, s)
		}
	}
	if len(sigs) < cfg.MinSamples {
		return nil
	}
	pr := proposer{cfg: cfg, in: in, total: len(sigs), prior: priorByCluster(in), active: activeLines(in.Current)}
	var out []*Proposal
	for _, g := range clusterSignals(sigs) {
		if p := pr.propose(g); p != nil {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// A signalGroup is a cluster and the signals in it, in order.
type signalGroup struct {
	cluster Cluster
	members []Signal
}

// newer counts the group's signals after t.
func (g *signalGroup) newer(t time.Time) int {
	k := 0
	for _, s := range g.members {
		if s.Time.After(t) {
			k++
		}
	}
	return k
}

// clusterSignals puts each signal in the cluster of its fold and in that
// of its category and scope, and returns the clusters in the order they
// were first met.
func clusterSignals(sigs []Signal) []*signalGroup {
	groups := map[string]*signalGroup{}
	var order []*signalGroup
	put := func(c Cluster, s Signal) {
		id := c.ID()
		g := groups[id]
		if g == nil {
			g = &signalGroup{cluster: c}
			groups[id] = g
			order = append(order, g)
		}
		g.members = append(g.members, s)
	}
	for _, s := range sigs {
		if !s.Fold.Empty() {
			put(Cluster{Kind: KindFold, Key: s.Fold.Key(), FoldNoDir: s.Fold.KeyNoDir()}, s)
		}
		if s.Category != "" {
			sc := scopeKey(s.Context.Scope)
			put(Cluster{Kind: KindCategory, Key: hashKey("ck-", s.Category+"\x00"+sc)}, s)
		}
	}
	return order
}

// priorByCluster returns the agent's earlier proposals by cluster id.
func priorByCluster(in Input) map[string][]*Proposal {
	prior := map[string][]*Proposal{}
	for _, p := range in.Prior {
		if p.Agent == in.Agent {
			prior[p.Cluster.ID()] = append(prior[p.Cluster.ID()], p)
		}
	}
	return prior
}

// activeLines returns the current guardrails' lines by the cluster they
// were proposed for.
func activeLines(current *Version) map[string]Line {
	active := map[string]Line{}
	if current != nil {
		for _, l := range current.ActiveLines() {
			if l.Cluster != "" {
				active[l.Cluster] = l
			}
		}
	}
	return active
}

// A proposer decides, cluster by cluster, what Propose proposes.
type proposer struct {
	cfg    Config
	in     Input
	total  int                    // the agent's signals
	prior  map[string][]*Proposal // by cluster id
	active map[string]Line        // by cluster id
}

// propose returns the proposal for g, or nil: when g is too small or too
// rare, when a proposal of it is pending, when its line is in the
// guardrails and not voted down since it grew, or when it was decided
// and has not grown since.
func (pr *proposer) propose(g *signalGroup) *Proposal {
	cfg, in := pr.cfg, pr.in
	id := g.cluster.ID()
	n := len(g.members)
	if n < minSize(cfg, g.cluster, g.members) || float64(n) <= cfg.FrequencyThreshold*float64(pr.total) {
		return nil
	}
	ps := pr.prior[id]
	pending, decided := pr.lastDecision(id, ps)
	if pending {
		return nil
	}
	c := g.cluster
	describe(&c, g.members)
	p := newProposal(in.Agent, c, len(ps), g.members, pr.total, in.Now)
	if line, ok := pr.active[id]; ok {
		t := in.Votes[line.ID]
		after := g.newer(line.Since)
		if t.Net() >= 0 || after < cfg.MinClusterSize {
			return nil
		}
		p.LessonText = fmt.Sprintf("%s (it recurred %d times after this rule)", p.LessonText, after)
		p.ConstraintUpdate = Change{Type: Modification, Section: line.Section, OldText: line.Text, NewText: p.LessonText, Line: line.ID}
	} else if len(ps) > 0 && g.newer(decided) < cfg.MinClusterSize {
		return nil
	}
	return p
}

// lastDecision reads the earlier proposals ps of cluster id: whether
// one is pending, and when the latest was decided (or made, or its line
// left the guardrails).
func (pr *proposer) lastDecision(id string, ps []*Proposal) (pending bool, decided time.Time) {
	cur := pr.in.Current
	for _, p := range ps {
		if p.Status.Pending() {
			pending = true
		}
		t := p.DecidedAt
		if t.IsZero() {
			t = p.CreatedAt
		}
		if _, on := pr.active[id]; p.Status == StatusApplied && !on && cur != nil && cur.CreatedAt.After(t) {
			t = cur.CreatedAt // its line left the guardrails (a rollback, an edit) by then
		}
		if t.After(decided) {
			decided = t
		}
	}
	return pending, decided
}

// minSize is the signals cluster c needs for a proposal:
// cfg.MinClusterSize, one fewer (never under two) for a failure met in
// runs of scopes apart: one hazard in two places is a convention of the
// repository already (a linter's rule, code that calls what a change
// alters), and the next place is where a rule would have helped.
func minSize(cfg Config, c Cluster, members []Signal) int {
	if c.Kind == KindFold && cfg.MinClusterSize > 2 && apart(members) {
		return cfg.MinClusterSize - 1
	}
	return cfg.MinClusterSize
}

// apart reports whether two of ss were met in scopes with no pattern in
// common (a run retried with a wider scope is the same place).
func apart(ss []Signal) bool {
	for i, a := range ss {
		for _, b := range ss[i+1:] {
			if len(a.Context.Scope) > 0 && len(b.Context.Scope) > 0 && !overlap(a.Context.Scope, b.Context.Scope) {
				return true
			}
		}
	}
	return false
}

// overlap reports whether a and b share a pattern.
func overlap(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// ProposeRemovals proposes to remove the agent's guardrail lines whose
// evidence is gone (CheckLines), each once: not while a removal of the
// line is pending, nor after a person rejected it.
func ProposeRemovals(agent string, v *Version, evidence []Evidence, prior []*Proposal, now time.Time) []*Proposal {
	if v == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, p := range prior {
		if p.Agent == agent && p.Cluster.Kind == KindLine && p.Status != StatusApplied {
			seen[p.Cluster.Key] = true
		}
	}
	var out []*Proposal
	for _, e := range evidence {
		if !e.Demoted {
			continue
		}
		key := e.Line.ID
		if key == "" {
			key = hashKey("lt-", e.Line.Section+"\x00"+e.Line.Text)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		c := Cluster{Kind: KindLine, Key: key, Label: "line: " + oneLine(e.Line.Text, 60), Section: e.Line.Section}
		p := &Proposal{
			Schema: store.ProposalSchema, Record: recordProposal, Agent: agent, CreatedAt: now.UTC(), Cluster: c,
			LessonText: "Remove \"" + e.Line.Text + "\": " + e.Why(),
			TextSource: SourceDeterministic, Status: StatusProposed, Impact: "low", Confidence: 0.9,
			SourceFeedback: []string{}, Sources: []Signal{},
			ConstraintUpdate: Change{Type: Removal, Section: e.Line.Section, OldText: e.Line.Text, Line: e.Line.ID},
		}
		p.ID = proposalID(agent, c, 0)
		out = append(out, p)
	}
	return out
}

func newProposal(agent string, c Cluster, generation int, members []Signal, total int, now time.Time) *Proposal {
	n := len(members)
	conf, sev := 0.0, 0
	for _, s := range members {
		conf += s.Confidence
		if r := s.Severity.Rank(); r > sev {
			sev = r
		}
	}
	conf = float64(n) / float64(n+2) * conf / float64(n)
	if c.Kind == KindCategory && strings.HasPrefix(c.Label, "other") {
		conf /= 2
	}
	impact := "low"
	switch {
	case sev >= High.Rank():
		impact = "high"
	case sev == Medium.Rank():
		impact = "medium"
	}
	ids := make([]string, 0, n)
	for _, s := range members {
		ids = append(ids, s.ID)
	}
	if len(ids) > MaxSourceIDs {
		ids = ids[len(ids)-MaxSourceIDs:]
	}
	src := members
	if len(src) > MaxSources {
		src = src[len(src)-MaxSources:]
	}
	text := lessonText(c, members)
	p := &Proposal{
		Schema: store.ProposalSchema, Record: recordProposal, Agent: agent, CreatedAt: now.UTC(), Cluster: c, Generation: generation,
		LessonText: text, TextSource: SourceDeterministic,
		ConstraintUpdate: Change{Type: Addition, Section: c.Section, NewText: text},
		SourceFeedback:   ids, Sources: append([]Signal(nil), src...), Count: n, Total: total,
		Confidence: round(conf, 2), Frequency: round(float64(n)/float64(total), 3), Impact: impact, Status: StatusProposed,
	}
	p.ID = proposalID(agent, c, generation)
	p.ConstraintUpdate.Line = p.ID
	return p
}

// proposalID is "gp-" and 12 hex digits of a hash of the agent, the
// cluster and how many proposals the cluster had before.
func proposalID(agent string, c Cluster, generation int) string {
	return hashKey("gp-", agent+"\x00"+c.ID()+"\x00"+strconv.Itoa(generation))[:15]
}

func hashKey(prefix, s string) string {
	sum := sha256.Sum256([]byte(s))
	return prefix + hex.EncodeToString(sum[:8])
}

func scopeKey(scope []string) string {
	s := append([]string(nil), scope...)
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// describe sets a cluster's label and section from its members.
func describe(c *Cluster, members []Signal) {
	last := members[len(members)-1]
	switch c.Kind {
	case KindFold:
		f := last.Fold
		// A hazard met in several scopes is a rule for everywhere; one met
		// in one scope is that scope's.
		c.Section = f.Dir
		if c.Section == "" {
			c.Section = onlyValue(members, func(s Signal) string { return scopeKey(s.Context.Scope) })
		}
		label := "`" + f.Command + "`"
		if f.Command == "" {
			label = "a step"
		}
		if len(f.Tags) > 0 {
			label += ": " + strings.Join(f.Tags, ", ")
		} else if f.FirstError != "" {
			label += ": " + oneLine(f.FirstError, 60)
		}
		c.Label = label
	default:
		c.Section = scopeKey(last.Context.Scope)
		c.Label = strings.TrimPrefix(last.Category, "note:")
		if c.Section != "" {
			c.Label += " in " + c.Section
		}
	}
	if c.Section == "" {
		c.Section = Everywhere
	}
}

// onlyValue returns the one value key takes over ss, "" when it takes
// several (or none).
func onlyValue(ss []Signal, key func(Signal) string) string {
	v := ""
	for _, s := range ss {
		switch k := key(s); {
		case k == "":
		case v == "":
			v = k
		case k != v:
			return ""
		}
	}
	return v
}

// mostFrequent returns the most frequent non-empty value of key over ss,
// the earliest on a tie.
func mostFrequent(ss []Signal, key func(Signal) string) string {
	count := map[string]int{}
	best, bestN := "", 0
	for _, s := range ss {
		k := key(s)
		if k == "" {
			continue
		}
		count[k]++
	}
	for _, s := range ss {
		k := key(s)
		if k != "" && count[k] > bestN {
			best, bestN = k, count[k]
		}
	}
	return best
}

// lessonText is a cluster's deterministic lesson: an instruction, where,
// and the evidence ("Run `go generate ./...` before `go test ./...` in
// pkg/api: it failed 5 times with missing_dependency").
func lessonText(c Cluster, members []Signal) string {
	where := ""
	if c.Section != Everywhere {
		where = " in " + c.Section
	}
	last := members[len(members)-1]
	action := strings.TrimRight(mostFrequent(members, func(s Signal) string { return s.Action }), ". ")
	switch {
	case c.Kind == KindFold:
		return foldLesson(members, where, action)
	case strings.HasPrefix(last.Category, "note:"):
		return fmt.Sprintf("Avoid \"%s\"%s: %d runs were judged CONDITIONAL for it", last.Title, where, len(members))
	}
	return reviewLesson(members, where, action)
}

// foldLesson is the lesson of a failure's cluster: the action, before
// the command that failed (or the edit command), and the latest cause.
func foldLesson(members []Signal, where, action string) string {
	n := len(members)
	last := members[len(members)-1]
	f := last.Fold
	// The rule quotes the cause: the latest lesson's title.
	why := last.Title
	if why == "" {
		why = last.Details.ErrorMessage
	}
	if why == "" {
		why = strings.Join(f.Tags, ", ")
	}
	quoted := "no known cause"
	if why != "" {
		quoted = strconv.Quote(oneLine(why, 100))
	}
	if f.Step == "edit" {
		if action == "" {
			action = "check the edit command before running it"
		}
		return fmt.Sprintf("%s%s: the edit command failed %d times with %s", capitalize(action), where, n, quoted)
	}
	cmd := "`" + f.Command + "`"
	if f.Command == "" {
		cmd = "the verify steps"
	}
	switch {
	case action == "":
		action = "make sure " + cmd + where + " passes before you finish"
	case strings.Contains(action, "before the run"):
		action = strings.Replace(action, "before the run", "before "+cmd+where, 1)
	case !strings.Contains(" "+strings.ToLower(action)+" ", " before "):
		action += " before " + cmd + where
	default:
		// The action says when already: one "before" is enough.
		action += where
	}
	return fmt.Sprintf("%s: it failed %d times with %s", capitalize(action), n, quoted)
}

// reviewLesson is the lesson of a review category's cluster: the action
// and how many changes reviewers rejected and people corrected, or, with
// no usable action, to read what reviewers asked for and their latest
// reasons.
func reviewLesson(members []Signal, where, action string) string {
	last := members[len(members)-1]
	rejected, corrected := 0, 0
	for _, s := range members {
		if s.Type == HumanCorrection {
			corrected++
		} else {
			rejected++
		}
	}
	there := " there"
	if where == "" {
		there = ""
	}
	var what string
	switch {
	case corrected == 0:
		what = fmt.Sprintf("reviewers rejected %d changes%s for %s", rejected, there, last.Category)
	case rejected == 0:
		what = fmt.Sprintf("people corrected %d changes%s (%s)", corrected, there, last.Category)
	default:
		what = fmt.Sprintf("reviewers rejected %d and people corrected %d changes%s (%s)", rejected, corrected, there, last.Category)
	}
	if last.Category == "other" || action == "" || strings.HasPrefix(action, "Review:") {
		var reasons []string
		for i := len(members) - 1; i >= 0 && len(reasons) < 2; i-- {
			if r := members[i].Details.ErrorMessage; r != "" {
				reasons = append(reasons, strconv.Quote(oneLine(r, 60)))
			}
		}
		text := "Read what reviewers asked for before changing " + strings.TrimPrefix(where, " in ")
		if where == "" {
			text = "Read what reviewers asked for before finishing"
		}
		text += ": " + what
		if len(reasons) > 0 {
			text += " (latest: " + strings.Join(reasons, "; ") + ")"
		}
		return text
	}
	return fmt.Sprintf("%s%s: %s", capitalize(action), where, what)
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func round(f float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(f*p) / p
}
