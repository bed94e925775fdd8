package learn

import (
	"sort"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

// The feedback log's use cases (orket feedback list, stats, patterns):
// reviewers' rejections and corrections, read.

// A FeedbackEntry is one review of a kept run: a rejection or a
// correction.
type FeedbackEntry = feedback.Entry

// A Pattern is a category that recurs in an agent's rejections (the
// pattern_detected object of docs/feedback.md, Patterns).
type Pattern = feedback.PatternObject

// A FeedbackFilter selects entries of the feedback log.
type FeedbackFilter struct {
	Agent, Task, Category string
	Since                 time.Time // zero: any age
}

// FeedbackList is orket feedback list: entries, newest first.
type FeedbackList struct {
	Code         orket.Code       `json:"code"`
	Entries      []*FeedbackEntry `json:"entries"`
	DamagedLines int              `json:"damaged_lines"`
}

// FeedbackStats is orket feedback stats: entries counted per category,
// agent and item.
type FeedbackStats struct {
	Code         orket.Code     `json:"code"`
	Total        int            `json:"total"`
	Categories   map[string]int `json:"categories"`
	Agents       map[string]int `json:"agents"`
	Items        map[string]int `json:"items"`
	DamagedLines int            `json:"damaged_lines"`
}

// FeedbackLog is a repository's feedback log.
type FeedbackLog struct {
	Repo   *txn.Repo
	Config *config.Config
}

func (fl FeedbackLog) entries(f FeedbackFilter) ([]*FeedbackEntry, int, error) {
	all, damaged, err := feedback.OpenLog(OrketDir(fl.Repo)).Entries(feedback.Filter{Agent: f.Agent, Since: f.Since})
	if err != nil {
		return nil, 0, memoryError(err)
	}
	out := []*FeedbackEntry{}
	for _, e := range all {
		if (f.Task == "" || e.Task == f.Task) && (f.Category == "" || string(e.Category) == f.Category) {
			out = append(out, e)
		}
	}
	return out, len(damaged), nil
}

// List returns the entries f selects, newest first, at most limit (0:
// all).
func (fl FeedbackLog) List(f FeedbackFilter, limit int) (*FeedbackList, error) {
	list, damaged, err := fl.entries(f)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Time.After(list[j].Time) })
	if limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	return &FeedbackList{Code: orket.OK, Entries: list, DamagedLines: damaged}, nil
}

// Stats counts the entries f selects.
func (fl FeedbackLog) Stats(f FeedbackFilter) (*FeedbackStats, error) {
	list, damaged, err := fl.entries(f)
	if err != nil {
		return nil, err
	}
	res := &FeedbackStats{Code: orket.OK, Total: len(list), Categories: map[string]int{}, Agents: map[string]int{}, Items: map[string]int{},
		DamagedLines: damaged}
	for _, e := range list {
		res.Categories[string(e.Category)]++
		res.Agents[e.Agent]++
		res.Items[e.Item]++
	}
	return res, nil
}

// Patterns is orket feedback patterns: the pattern_detected object for
// the strongest pattern of an agent's rejections with every pattern
// besides, or the no-pattern object (docs/feedback.md, Patterns).
type Patterns struct {
	Agent string    `json:"-"`
	Since time.Time `json:"-"`
	Total int       `json:"-"`
	// None is the no-pattern object when there is no pattern.
	None *feedback.NoPatternObject `json:"-"`
	Pattern
	Patterns []Pattern `json:"patterns"`
}

// Patterns finds the categories that recur in an agent's rejections
// ("": the default agent) since a time (zero: within retention).
func (fl FeedbackLog) Patterns(agent string, since time.Time, now time.Time) (*Patterns, error) {
	if since.IsZero() && fl.Config.Lessons.Retention.MaxAge > 0 {
		since = now.Add(-fl.Config.Lessons.Retention.MaxAge)
	}
	if agent == "" {
		agent = store.DefaultAgent
	}
	a, err := feedback.OpenLog(OrketDir(fl.Repo)).Analyze(agent, since)
	if err != nil {
		return nil, memoryError(err)
	}
	res := &Patterns{Agent: agent, Since: since, Total: a.Total}
	if len(a.Patterns) == 0 {
		none := a.NoPatternObject()
		res.None = &none
		return res, nil
	}
	res.Patterns = a.PatternObjects()
	res.Pattern = res.Patterns[0]
	return res, nil
}

// Result is the --json object: the no-pattern object when there is no
// pattern.
func (p *Patterns) Result() any {
	if p.None != nil {
		return p.None
	}
	return p
}

// memoryError keeps coded errors and makes any other (a log that cannot
// be read) an internal error that says which.
func memoryError(err error) error {
	if err = coded(err); err == nil || orket.Describe(err).Code != orket.EInternal {
		return err
	}
	return &orket.Error{Code: orket.EInternal, Err: err, Msg: "the evaluation log: " + err.Error(), Hint: "check that .orket/memory is readable and writable"}
}

// MemoryError is memoryError for the command line.
func MemoryError(err error) error { return memoryError(err) }
