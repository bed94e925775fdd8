package feedback

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orket/orket/scope"
)

// The pattern rule (docs/feedback.md): a category holding more than PatternShare
// percent of an agent's rejections, with at least PatternMin of them, is
// a pattern. 4 of 10 is; 2 in all is not.
const (
	PatternShare = 30
	PatternMin   = 3
)

// IsPattern reports whether count rejections of one category among total
// make a pattern.
func IsPattern(count, total int) bool {
	return count >= PatternMin && count*100 > PatternShare*total
}

// A Percent is a share of rejections, written with one decimal (40.0).
type Percent float64

func percent(n, total int) Percent {
	if total == 0 {
		return 0
	}
	return Percent(math.Round(float64(n)*1000/float64(total)) / 10)
}

// MarshalJSON writes p with one decimal.
func (p Percent) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(p), 'f', 1, 64)), nil
}

// String gives p as prose: "40", "33.3".
func (p Percent) String() string { return strconv.FormatFloat(float64(p), 'f', -1, 64) }

// An Analysis counts rejections per category.
type Analysis struct {
	Agent    string           `json:"agent,omitempty"` // "": every agent
	Total    int              `json:"total_rejections"`
	Counts   map[Category]int `json:"counts"`
	Patterns []Pattern        `json:"patterns"`
	actions  map[Category]*counter
}

// A Pattern is a category that recurs.
type Pattern struct {
	Category   Category `json:"category"`
	Count      int      `json:"occurrence_count"`
	Total      int      `json:"total_rejections"`
	Percentage Percent  `json:"percentage"`
	Correction string   `json:"suggested_correction"`
	// Actions are the learned actions of the pattern's rejections, most
	// frequent first, at most five.
	Actions []string `json:"learned_actions,omitempty"`
}

// NewAnalysis starts counting the rejections of agent ("": every agent).
func NewAnalysis(agent string) *Analysis {
	return &Analysis{Agent: agent, Counts: map[Category]int{}, actions: map[Category]*counter{}}
}

// Add counts e if it is a rejection by the analysis's agent.
func (a *Analysis) Add(e *Entry) {
	if e.Type != TypeReviewRejection || (a.Agent != "" && e.Agent != a.Agent) {
		return
	}
	cat := e.Category
	if !contains(categoryNames, string(cat)) {
		cat = Other
	}
	a.Total++
	a.Counts[cat]++
	c := a.actions[cat]
	if c == nil {
		c = &counter{}
		a.actions[cat] = c
	}
	c.add(e.Action)
}

var categoryNames = func() []string {
	var out []string
	for _, c := range Categories {
		out = append(out, string(c))
	}
	return out
}()

// Finish finds the patterns among the counts: most rejections first,
// then in priority order. Other is never a pattern, whatever its share:
// it names no concern to correct; it counts in the total.
func (a *Analysis) Finish() *Analysis {
	a.Patterns = a.Patterns[:0]
	for _, cat := range Categories[:len(Categories)-1] {
		n := a.Counts[cat]
		if !IsPattern(n, a.Total) {
			continue
		}
		a.Patterns = append(a.Patterns, Pattern{Category: cat, Count: n, Total: a.Total,
			Percentage: percent(n, a.Total), Correction: Corrections[cat], Actions: a.actions[cat].top(5)})
	}
	sort.SliceStable(a.Patterns, func(i, j int) bool { return a.Patterns[i].Count > a.Patterns[j].Count })
	return a
}

// Analyze counts the rejections of agent ("": every agent) among entries.
func Analyze(entries []*Entry, agent string) *Analysis {
	a := NewAnalysis(agent)
	for _, e := range entries {
		a.Add(e)
	}
	return a.Finish()
}

// Analyze counts the rejections of agent in the log since a time (zero:
// all of them; a run passes lessons.retention.max_age). It decodes only
// the fields it counts.
func (l *Log) Analyze(agent string, since time.Time) (*Analysis, error) {
	a := NewAnalysis(agent)
	seen := map[string]bool{}
	_, err := l.log.Each(func(line []byte) error {
		var e struct {
			ID       string    `json:"id"`
			Time     time.Time `json:"time"`
			Type     string    `json:"type"`
			Agent    string    `json:"agent"`
			Category Category  `json:"category"`
			Action   string    `json:"learned_action"`
		}
		if json.Unmarshal(line, &e) != nil || e.ID == "" || e.Type == "" {
			return nil
		}
		if (since.IsZero() || !e.Time.Before(since)) && !seen[e.ID] {
			seen[e.ID] = true
			a.Add(&Entry{ID: e.ID, Time: e.Time, Type: e.Type, Agent: e.Agent, Category: e.Category, Action: e.Action})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a.Finish(), nil
}

// Percentages returns each category's share of the rejections, for the
// categories that have any.
func (a *Analysis) Percentages() map[Category]Percent {
	out := map[Category]Percent{}
	for cat, n := range a.Counts {
		if n > 0 {
			out[cat] = percent(n, a.Total)
		}
	}
	return out
}

// PatternObject is the object orket feedback patterns --json gives for
// a pattern.
type PatternObject struct {
	PatternDetected         bool     `json:"pattern_detected"`
	Category                Category `json:"category"`
	OccurrenceCount         int      `json:"occurrence_count"`
	TotalRejections         int      `json:"total_rejections"`
	Percentage              Percent  `json:"percentage"`
	SuggestedCorrection     string   `json:"suggested_correction"`
	AppliesToNextGeneration bool     `json:"applies_to_next_generation"`
	Agent                   string   `json:"agent,omitempty"`
	LearnedActions          []string `json:"learned_actions,omitempty"`
}

// NoPatternObject is the object orket feedback patterns --json gives
// when there is no pattern.
type NoPatternObject struct {
	PatternDetected bool                 `json:"pattern_detected"`
	TotalRejections int                  `json:"total_rejections"`
	Categories      map[Category]Percent `json:"categories"`
	Message         string               `json:"message"`
	Agent           string               `json:"agent,omitempty"`
}

// Messages of a NoPatternObject.
const (
	NoPatternMessage     = "No recurring pattern detected yet (need 30% threshold)"
	TooFewPatternMessage = "No recurring pattern detected yet (need at least 3 rejections in a category)"
)

// PatternObjects returns a PatternObject for each pattern.
func (a *Analysis) PatternObjects() []PatternObject {
	out := []PatternObject{}
	for _, p := range a.Patterns {
		out = append(out, PatternObject{PatternDetected: true, Category: p.Category, OccurrenceCount: p.Count,
			TotalRejections: p.Total, Percentage: p.Percentage, SuggestedCorrection: p.Correction,
			AppliesToNextGeneration: true, Agent: a.Agent, LearnedActions: p.Actions})
	}
	return out
}

// NoPatternObject returns the object of an analysis without a pattern.
// Its message says what is missing: the 30% share, or (some category is
// over 30% with fewer than 3 rejections) the data.
func (a *Analysis) NoPatternObject() NoPatternObject {
	msg := NoPatternMessage
	for cat, n := range a.Counts {
		if cat != Other && n*100 > PatternShare*a.Total && n < PatternMin {
			msg = TooFewPatternMessage
		}
	}
	return NoPatternObject{TotalRejections: a.Total, Categories: a.Percentages(), Message: msg, Agent: a.Agent}
}

// PatternsDetected is the "patterns_detected" object of a Logged: the
// share of each category named, and whether one is a pattern.
type PatternsDetected struct {
	Percentages       map[Category]Percent
	ThresholdExceeded bool
}

// MarshalJSON writes {"<category>": <percent>, ..., "threshold_exceeded": bool},
// categories in priority order.
func (p PatternsDetected) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for _, cat := range Categories {
		v, ok := p.Percentages[cat]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "%q:%s,", cat, strconv.FormatFloat(float64(v), 'f', 1, 64))
	}
	fmt.Fprintf(&b, `"threshold_exceeded":%t}`, p.ThresholdExceeded)
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *PatternsDetected) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	p.Percentages = map[Category]Percent{}
	for k, v := range raw {
		if k == "threshold_exceeded" {
			if err := json.Unmarshal(v, &p.ThresholdExceeded); err != nil {
				return err
			}
			continue
		}
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return err
		}
		p.Percentages[Category(k)] = Percent(f)
	}
	return nil
}

// Logged is what orket reject --json prints for a logged rejection,
// with the entry's id, the run and what the undo did.
type Logged struct {
	RejectionLogged         bool             `json:"rejection_logged"`
	ArtifactType            string           `json:"artifact_type"`
	ArtifactName            string           `json:"artifact_name"`
	Category                Category         `json:"category"`
	LearnedAction           string           `json:"learned_action"`
	PatternsDetected        PatternsDetected `json:"patterns_detected"`
	WillApplyNextGeneration bool             `json:"will_apply_next_generation"`
	ID                      string           `json:"id"`
	RunID                   string           `json:"run_id,omitempty"`
	Undo                    *Undo            `json:"undo,omitempty"`
}

// NewLogged describes a logged entry, given the analysis of its agent's
// rejections (e included). patterns_detected holds the share of every
// pattern and of e's own category.
func NewLogged(e *Entry, a *Analysis) Logged {
	pd := PatternsDetected{Percentages: map[Category]Percent{}}
	for _, p := range a.Patterns {
		pd.Percentages[p.Category] = p.Percentage
		pd.ThresholdExceeded = true
	}
	pd.Percentages[e.Category] = percent(a.Counts[e.Category], a.Total)
	return Logged{RejectionLogged: true, ArtifactType: e.ArtifactType, ArtifactName: e.Item,
		Category: e.Category, LearnedAction: e.Action, PatternsDetected: pd,
		WillApplyNextGeneration: len(a.Patterns) > 0, ID: e.ID, RunID: e.RunID, Undo: e.Undo}
}

// A counter counts strings, remembering the order it first saw them in.
type counter struct {
	n     map[string]int
	order []string
}

func (c *counter) add(s string) {
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[s] == 0 {
		c.order = append(c.order, s)
	}
	c.n[s]++
}

// top returns the strings counted, most frequent first (then in the
// order first seen), at most n, the empty string aside.
func (c *counter) top(n int) []string {
	keys := make([]string, 0, len(c.order))
	for _, k := range c.order {
		if k != "" {
			keys = append(keys, k)
		}
	}
	sort.SliceStable(keys, func(i, j int) bool { return c.n[keys[i]] > c.n[keys[j]] })
	if len(keys) > n {
		keys = keys[:n]
	}
	return keys
}

// A Past is the rejections of one item: how many, why, what was learned.
type Past struct {
	Item    string    `json:"item"`
	Count   int       `json:"count"`
	Reasons []string  `json:"reasons"`         // oldest first, each once
	Actions []string  `json:"learned_actions"` // most frequent first, then oldest; each once
	Last    time.Time `json:"last"`
	RunIDs  []string  `json:"run_ids,omitempty"`
	IDs     []string  `json:"entry_ids"`
}

// Text says it in a line: `pkg/api was rejected 3 times before; reasons:
// "a"; "b"; "c". Learned: X; Y`.
func (p *Past) Text() string {
	times := "once"
	if p.Count == 2 {
		times = "twice"
	} else if p.Count > 2 {
		times = strconv.Itoa(p.Count) + " times"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s was rejected %s before", p.Item, times)
	if len(p.Reasons) > 0 {
		q := make([]string, len(p.Reasons))
		for i, r := range p.Reasons {
			q[i] = strconv.Quote(oneLine(r, 200))
		}
		b.WriteString("; reasons: " + strings.Join(q, "; "))
	}
	if len(p.Actions) > 0 {
		b.WriteString(". Learned: " + strings.Join(p.Actions, "; "))
	}
	return b.String()
}

// History groups rejections by item, most rejected first (then most
// recent first).
func History(entries []*Entry) []*Past {
	byItem := map[string]*Past{}
	actions := map[string]*counter{}
	var order []*Past
	for _, e := range entries {
		if e.Type != TypeReviewRejection {
			continue
		}
		p := byItem[e.Item]
		if p == nil {
			p = &Past{Item: e.Item}
			byItem[e.Item] = p
			actions[e.Item] = &counter{}
			order = append(order, p)
		}
		p.Count++
		if !contains(p.Reasons, e.Reason) {
			p.Reasons = append(p.Reasons, e.Reason)
		}
		actions[e.Item].add(e.Action)
		if e.Time.After(p.Last) {
			p.Last = e.Time
		}
		if e.RunID != "" && !contains(p.RunIDs, e.RunID) {
			p.RunIDs = append(p.RunIDs, e.RunID)
		}
		p.IDs = append(p.IDs, e.ID)
	}
	for _, p := range order {
		p.Actions = actions[p.Item].top(10)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].Count != order[j].Count {
			return order[i].Count > order[j].Count
		}
		return order[i].Last.After(order[j].Last)
	})
	return order
}

// Advisory kinds.
const (
	AdvisoryPattern = "pattern" // the agent's recurring concern
	AdvisoryPast    = "past"    // earlier rejections of what this run touches
	AdvisoryRefusal = "refusal" // earlier refused writes to what this run touches
)

// An Advisory is what a later run is told of earlier reviews, as data the
// caller renders (human text, --json, ORKET_ADVISORIES).
type Advisory struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
	// A pattern's category and share of the agent's rejections.
	Category   Category `json:"category,omitempty"`
	Percentage Percent  `json:"percentage,omitempty"`
	Count      int      `json:"count"`
	Total      int      `json:"total,omitempty"`
	// Past rejections: their item, reasons and learned actions.
	Item    string   `json:"item,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	Actions []string `json:"learned_actions,omitempty"`
	// IDs are the feedback entries the advisory rests on.
	IDs []string `json:"entry_ids,omitempty"`
}

// A Query describes the run about to start.
type Query struct {
	Agent string   // whose patterns ("" is "default")
	Scope []string // the run's scope patterns
	Touch []string // its touch set, when planned (a patch); empty otherwise
	// Since bounds the window (zero: every entry; a run: retention's max_age).
	Since time.Time
	// MaxPast bounds the past-rejection advisories (0: 3).
	MaxPast int
}

// Advise returns the advisories for a run: the agent's patterns ("Based
// on earlier reviews, examples are a common concern (40% of recent
// rejections): validate all code examples"), then the past rejections,
// by any agent, of the items and areas the run touches (see Related).
func Advise(entries []*Entry, q Query) []Advisory {
	agent := q.Agent
	if agent == "" {
		agent = "default"
	}
	a := NewAnalysis(agent)
	var related, rejections []*Entry
	var refused []Advisory
	rq := newRelation(q)
	for _, e := range entries {
		if !q.Since.IsZero() && e.Time.Before(q.Since) {
			continue
		}
		a.Add(e)
		if e.Type == TypeReviewRejection {
			rejections = append(rejections, e)
		}
		switch {
		case e.Type == TypeReviewRejection && rq.related(e):
			related = append(related, e)
		case e.Type == TypeRefusal && (e.Agent == agent || e.Agent == "") && rq.refused(e):
			refused = addRefusal(refused, e)
		}
	}
	a.Finish()
	seen := map[string]bool{}
	out := pathConcerns(rejections, rq, seen)
	for _, p := range a.Patterns {
		out = append(out, Advisory{Kind: AdvisoryPattern, Category: p.Category, Percentage: p.Percentage,
			Count: p.Count, Total: p.Total, Actions: p.Actions,
			Text: fmt.Sprintf("Based on earlier reviews, %s %s a common concern (%s%% of recent rejections): %s",
				p.Category, verb(p.Category), p.Percentage, lowerFirst(p.Correction))})
	}
	out = append(out, refused...)
	max := q.MaxPast
	if max <= 0 {
		max = 3
	}
	var unseen []*Entry
	for _, e := range related {
		if !seen[e.ID] {
			unseen = append(unseen, e)
		}
	}
	for i, p := range History(unseen) {
		if i == max {
			break
		}
		out = append(out, Advisory{Kind: AdvisoryPast, Count: p.Count, Item: p.Item, Reasons: p.Reasons,
			Actions: p.Actions, IDs: p.IDs, Text: p.Text()})
	}
	return out
}

// Advise reads the log and returns the advisories for a run. It decodes
// only the fields advisories use.
func (l *Log) Advise(q Query) ([]Advisory, error) {
	var entries []*Entry
	seen := map[string]bool{}
	_, err := l.log.Each(func(line []byte) error {
		var e struct {
			ID       string    `json:"id"`
			Time     time.Time `json:"time"`
			Type     string    `json:"type"`
			RunID    string    `json:"run_id"`
			Agent    string    `json:"agent"`
			Item     string    `json:"item"`
			Reason   string    `json:"reason"`
			Category Category  `json:"category"`
			Action   string    `json:"learned_action"`
			Scope    []string  `json:"scope"`
			Touched  []string  `json:"touched"`
		}
		if json.Unmarshal(line, &e) != nil || e.ID == "" || e.Type == "" || seen[e.ID] {
			return nil
		}
		seen[e.ID] = true
		entries = append(entries, &Entry{ID: e.ID, Time: e.Time, Type: e.Type, RunID: e.RunID, Agent: e.Agent, Item: e.Item,
			Reason: e.Reason, Category: e.Category, Action: e.Action, Scope: e.Scope, Touched: e.Touched})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return Advise(entries, q), nil
}

func verb(c Category) string {
	if c == Examples {
		return "are"
	}
	return "is"
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// Related reports whether an earlier rejection concerns the run q
// describes. With a touch set: the run touches a path the rejected
// change touched (or below its item, or named as its item), or a path
// in the rejected run's scope. Without one (a command edit, before it
// runs): the run's scope takes in a path the rejected change touched or
// its item, or the two scopes overlap (one's base directory holds the
// other's).
func Related(e *Entry, q Query) bool { return newRelation(q).related(e) }

type relation struct {
	q     Query
	scope scope.Scope
	ok    bool // the run's scope parsed
}

func newRelation(q Query) relation {
	s, err := scope.Parse(q.Scope)
	return relation{q: q, scope: s, ok: err == nil}
}

func (r relation) related(e *Entry) bool {
	if len(NamedPaths(e.Reason)) > 0 {
		// A reason that names what it guards is told through those
		// paths (pathConcerns), not through what else the change touched.
		return false
	}
	itemPath := ""
	if e.Item != "" && !strings.ContainsAny(e.Item, " \t") && e.Item != strings.Join(e.Scope, " ") {
		itemPath = strings.TrimSuffix(strings.TrimPrefix(e.Item, "./"), "/")
	}
	if len(r.q.Touch) > 0 {
		es, _ := scope.Parse(e.Scope)
		for _, p := range r.q.Touch {
			for _, t := range e.Touched {
				if p == t {
					return true
				}
			}
			if itemPath != "" && (p == itemPath || strings.HasPrefix(p, itemPath+"/") ||
				(!strings.Contains(itemPath, "/") && path.Base(p) == itemPath)) {
				return true
			}
			if len(e.Scope) > 0 && es.Contains(p) {
				return true
			}
		}
		return false
	}
	if !r.ok || r.scope.Empty() {
		return false
	}
	if r.holds(e.Touched) || itemPath != "" && r.scope.Contains(itemPath) {
		return true
	}
	for _, a := range r.scope.Patterns() {
		for _, b := range e.Scope {
			if overlap(scope.Base(a), scope.Base(strings.TrimSuffix(strings.TrimPrefix(b, "./"), "/"))) {
				return true
			}
		}
	}
	return false
}

// refused reports whether a refused write concerns the run: it touches
// a refused path or one the refused glob matches; without a touch set,
// its scope takes in a refused path.
func (r relation) refused(e *Entry) bool {
	if len(r.q.Touch) > 0 {
		item, err := scope.Parse([]string{e.Item})
		for _, p := range r.q.Touch {
			if contains(e.Touched, p) || e.Item != "" && err == nil && item.Contains(p) {
				return true
			}
		}
		return false
	}
	return r.holds(e.Touched)
}

// holds reports whether the run's scope takes in one of paths.
func (r relation) holds(paths []string) bool {
	if !r.ok || r.scope.Empty() {
		return false
	}
	for _, p := range paths {
		if r.scope.Contains(p) {
			return true
		}
	}
	return false
}

// addRefusal adds a refusal to the advisories, once per reason.
func addRefusal(out []Advisory, e *Entry) []Advisory {
	for i := range out {
		if out[i].Text == e.Reason {
			out[i].Count++
			out[i].IDs = append(out[i].IDs, e.ID)
			return out
		}
	}
	return append(out, Advisory{Kind: AdvisoryRefusal, Text: e.Reason, Item: e.Item, Count: 1, IDs: []string{e.ID}})
}

// overlap reports whether two base directories are one inside the other
// ("" is the root, inside which everything is).
func overlap(a, b string) bool {
	if a == "." {
		a = ""
	}
	if b == "." {
		b = ""
	}
	return a == "" || b == "" || a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// oneLine folds text to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
