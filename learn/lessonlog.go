package learn

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/classify"
	"github.com/orket/orket/config"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

// The lesson log's use cases (orket lessons list, show, stats, prune,
// forget, reclassify): each reads or rewrites the log of a repository as
// its orket.yaml places it.

// A Lesson is one recorded failure.
type Lesson = lessons.Lesson

// A Damaged line of a log could not be read; it is skipped.
type Damaged = store.Damaged

// LessonLog is a repository's lesson log.
type LessonLog struct {
	Repo   *txn.Repo
	Config *config.Config
	Now    func() time.Time // nil: time.Now
}

func (ll LessonLog) store() *lessons.Store {
	return &lessons.Store{Path: LessonPath(ll.Repo, ll.Config), MaxPerAgent: ll.Config.Lessons.Retention.MaxEntriesPerAgent}
}

func (ll LessonLog) now() time.Time {
	if ll.Now == nil {
		return time.Now()
	}
	return ll.Now()
}

// A LessonFilter selects lessons: by tag, by a path their scope overlaps,
// by age, by agent and task (lessons recorded before agents were named
// are the default agent's).
type LessonFilter struct {
	Tag, Scope, Agent, Task string
	Since                   time.Time // zero: any age
}

func (f LessonFilter) match(l *Lesson) bool {
	agent := l.Request.Agent
	if agent == "" {
		agent = store.DefaultAgent
	}
	return (f.Tag == "" || contains(l.Classification.Tags, f.Tag)) && (f.Since.IsZero() || !l.CreatedAt.Before(f.Since)) &&
		(f.Scope == "" || scopeHits(l.Request.Scope, f.Scope)) &&
		(f.Agent == "" || agent == f.Agent) && (f.Task == "" || l.Request.Task == f.Task)
}

func scopeHits(lessonScope []string, s string) bool {
	for _, p := range lessonScope {
		if p == s || strings.HasPrefix(p, s+"/") || strings.HasPrefix(s, p+"/") || p == "**" {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A LessonSummary is a lesson as a list shows it.
type LessonSummary struct {
	ID            string    `json:"id"`
	CreatedAt     time.Time `json:"created_at"`
	Tags          []string  `json:"tags"`
	FailedStep    string    `json:"failed_step"`
	FailedCommand string    `json:"failed_command"`
	Title         string    `json:"title"`
	Scope         []string  `json:"scope"`
	RunID         string    `json:"run_id"`
	Agent         string    `json:"agent,omitempty"`
	Task          string    `json:"task,omitempty"`
}

func summarize(l *Lesson) LessonSummary {
	return LessonSummary{ID: l.ID, CreatedAt: l.CreatedAt, Tags: l.Classification.Tags, FailedStep: l.Verify.FailedStep,
		FailedCommand: l.Verify.FailedCommand, Title: l.Advice.Title, Scope: l.Request.Scope, RunID: l.Outcome.RunID,
		Agent: l.Request.Agent, Task: l.Request.Task}
}

// A LessonList is orket lessons list: the lessons a filter selects,
// newest first.
type LessonList struct {
	Code         orket.Code      `json:"code"`
	Lessons      []LessonSummary `json:"lessons"`
	DamagedLines int             `json:"damaged_lines"`
	Damaged      []Damaged       `json:"-"`
}

// List returns the lessons f selects, newest first (within a second, the
// later line is newer), at most limit of them (0: all).
func (ll LessonLog) List(f LessonFilter, limit int) (_ *LessonList, err error) {
	res := &LessonList{Code: orket.OK, Lessons: []LessonSummary{}}
	res.Damaged, err = ll.store().Each(func(l *Lesson) error {
		if f.match(l) {
			res.Lessons = append(res.Lessons, summarize(l))
		}
		return nil
	})
	if err != nil {
		return nil, readError(err)
	}
	list := res.Lessons
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].CreatedAt.After(list[j].CreatedAt) })
	if limit > 0 && len(list) > limit {
		res.Lessons = list[:limit]
	}
	res.DamagedLines = len(res.Damaged)
	return res, nil
}

// A LessonShow is orket lessons show: one lesson whole.
type LessonShow struct {
	Code   orket.Code `json:"code"`
	Lesson *Lesson    `json:"lesson"`
}

// Show returns the lesson whose id is, or starts with, id.
func (ll LessonLog) Show(id string) (*LessonShow, error) {
	var found []*Lesson
	if _, err := ll.store().Each(func(l *Lesson) error {
		if strings.HasPrefix(l.ID, id) && !containsLesson(found, l.ID) {
			found = append(found, l)
		}
		return nil
	}); err != nil {
		return nil, readError(err)
	}
	if err := oneLesson(id, len(found)); err != nil {
		return nil, err
	}
	return &LessonShow{Code: orket.OK, Lesson: found[0]}, nil
}

func containsLesson(ls []*Lesson, id string) bool {
	for _, l := range ls {
		if l.ID == id {
			return true
		}
	}
	return false
}

// oneLesson is the error of a lesson id that names none or several.
func oneLesson(id string, n int) error {
	switch n {
	case 0:
		return orket.Errorf(orket.EUsage, "orket lessons list shows the ids", "no lesson %q", id)
	case 1:
		return nil
	}
	return orket.Errorf(orket.EUsage, "give more of the id", "%q names %d lessons", id, n)
}

// LessonStats is orket lessons stats: lessons counted per tag, scope and
// failed command.
type LessonStats struct {
	Code           orket.Code     `json:"code"`
	Total          int            `json:"total"`
	DamagedLines   int            `json:"damaged_lines"`
	Tags           map[string]int `json:"tags"`
	Scopes         map[string]int `json:"scopes"`
	FailedCommands map[string]int `json:"failed_commands"`
	Damaged        []Damaged      `json:"-"`
}

// Stats counts the lessons f selects.
func (ll LessonLog) Stats(f LessonFilter) (_ *LessonStats, err error) {
	res := &LessonStats{Code: orket.OK, Tags: map[string]int{}, Scopes: map[string]int{}, FailedCommands: map[string]int{}}
	res.Damaged, err = ll.store().Each(func(l *Lesson) error {
		if !f.match(l) {
			return nil
		}
		res.Total++
		if len(l.Classification.Tags) == 0 {
			res.Tags["(none)"]++
		}
		for _, t := range l.Classification.Tags {
			res.Tags[t]++
		}
		res.Scopes[orNone(strings.Join(l.Request.Scope, ","))]++
		res.FailedCommands[orNone(l.Verify.FailedCommand)]++
		return nil
	})
	if err != nil {
		return nil, readError(err)
	}
	res.DamagedLines = len(res.Damaged)
	return res, nil
}

// orNone names an empty key, so that no line of the stats is blank.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// A Changed says how many lessons a rewrite of the log changed.
type Changed struct {
	Code         orket.Code `json:"code"`
	Removed      *int       `json:"removed,omitempty"`
	Reclassified *int       `json:"reclassified,omitempty"`
}

// Prune applies lessons.retention now, as runs do when the log has grown.
func (ll LessonLog) Prune(ctx context.Context) (*Changed, error) {
	var n int
	err := ll.rewrite(ctx, "lessons prune", func(s *lessons.Store) (err error) {
		n, err = pruneLessons(s, ll.Config.Lessons.Retention, ll.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Changed{Code: orket.OK, Removed: &n}, nil
}

// pruneLessons is the retention of the lesson log: runs and orket
// lessons prune apply it.
func pruneLessons(s *lessons.Store, keep config.Retention, now time.Time) (int, error) {
	return s.Prune(keep.MaxEntries, keep.MaxAge, now)
}

// Forget removes lessons: the one whose id is, or starts with, id; or
// every lesson with tag and/or of the failed step.
func (ll LessonLog) Forget(ctx context.Context, id, tag, step string) (*Changed, error) {
	switch {
	case id == "" && tag == "" && step == "":
		return nil, orket.Errorf(orket.EUsage, "give a lesson id (orket lessons list shows them), --tag T or --step NAME", "lessons forget needs a lesson to forget")
	case id != "" && (tag != "" || step != ""):
		return nil, orket.Errorf(orket.EUsage, "give the id alone, or --tag/--step without an id", "lessons forget takes an id or --tag/--step, not both")
	}
	var n int
	err := ll.rewrite(ctx, "lessons forget", func(s *lessons.Store) error {
		selected := func(l *Lesson) bool {
			return (tag == "" || contains(l.Classification.Tags, tag)) && (step == "" || l.Verify.FailedStep == step)
		}
		if id != "" {
			show, err := ll.Show(id)
			if err != nil {
				return err
			}
			selected = func(l *Lesson) bool { return l.ID == show.Lesson.ID }
		}
		var err error
		n, err = s.Remove(selected)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Changed{Code: orket.OK, Removed: &n}, nil
}

// Reclassify applies today's rules (with orket.yaml's) to every stored
// lesson; lessons keep their ids.
func (ll LessonLog) Reclassify(ctx context.Context) (*Changed, error) {
	c := classify.New(ll.Config.Classify.Rules)
	var n int
	err := ll.rewrite(ctx, "lessons reclassify", func(s *lessons.Store) (err error) {
		n, err = s.Rewrite(func(l *Lesson) bool {
			cl := c.ClassifyCommand(l.Verify.OutputTail, l.Verify.FailedCommand)
			cl.Checks = append(cl.Checks, sourceChecks(ll.Repo.Root, l.Verify.OutputTail, cl.Tags, cl.Checks)...)
			next := lessons.Classification{Tags: cl.Tags, Confidence: cl.Confidence, Signals: cl.Signals, FirstError: cl.FirstError,
				Cause: causeLine(cl, ll.Repo.Root), Location: locate(ll.Repo.Root, l.Verify.FailedDir, cl.Cause, l.Plan.TouchSet), Unclassified: cl.Unclassified}
			flaky := contains(l.Classification.Tags, FlakyTag)
			if flaky {
				next.Tags = append(append([]string{}, next.Tags...), FlakyTag)
			}
			before, _ := json.Marshal(withoutBaseline(l.Classification))
			after, _ := json.Marshal(next)
			if string(before) == string(after) {
				return false
			}
			l.Classification = next
			l.Advice = classify.AdviceFor(cl, l.Verify.FailedCommand)
			if c := causeLine(cl, ll.Repo.Root); c != "" {
				l.Advice.Title = c
			}
			if flaky {
				l.Advice.Title = "Flaky step " + l.Verify.FailedStep + ": " + l.Advice.Title
			}
			adviseCallers(l)
			return true
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Changed{Code: orket.OK, Reclassified: &n}, nil
}

// withoutBaseline is c without what only a run knows: which matched lines
// the step's last passing run did not print (Signal.New). Reclassifying
// has no baseline, so that difference is not a change of rules.
func withoutBaseline(c lessons.Classification) lessons.Classification {
	c.Signals = append([]classify.Signal(nil), c.Signals...)
	for i := range c.Signals {
		c.Signals[i].New = false
	}
	return c
}

// rewrite changes the log under the repository lock (shared, waiting),
// so that a mutating run never sees .orket change under it.
func (ll LessonLog) rewrite(ctx context.Context, name string, fn func(*lessons.Store) error) error {
	unlock, err := ll.Repo.Lock(ctx, false, true, txn.Holder{RunID: name, PID: os.Getpid(), Started: ll.now(), Command: "orket " + name})
	if err != nil {
		return &orket.Error{Code: orket.EInternal, Err: err, Msg: "take the repository lock: " + err.Error(), Hint: "check that .git is writable"}
	}
	defer unlock()
	if err := fn(ll.store()); err != nil {
		var c orket.Coded
		if errors.As(err, &c) {
			return err
		}
		return readError(err)
	}
	return nil
}

func readError(err error) error {
	return &orket.Error{Code: orket.EInternal, Err: err, Msg: "lesson log: " + err.Error(), Hint: "check the file's permissions"}
}

// An Advisory is a past failure judged relevant to a run, folded with its
// kind.
type Advisory = lessons.Advisory

// Inert makes text that came from outside orket (an edit's file names, a
// tool's output, a remote's records) safe to print: escape sequences
// are taken out, so a terminal never interprets them.
func Inert(s string) string { return lessons.StripANSI(s) }

// A CheckResult is a preflight check and what it found.
type CheckResult = preflight.Result
