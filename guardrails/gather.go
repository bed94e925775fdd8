package guardrails

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/orket/orket/feedback"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/store"
	"github.com/orket/orket/verdict"
)

// Gather reads an agent's signals ("": every agent's) from the three
// logs: the lesson log at lessonsPath (lessons.path), and the feedback
// and evaluation logs of the .orket directory. Damaged lines are
// skipped, as their own readers skip them.
func Gather(lessonsPath, orketDir, agent string) ([]Signal, error) {
	c := &Collector{Agent: agent}
	if lessonsPath != "" {
		if _, err := (&lessons.Store{Path: lessonsPath}).EachBrief(func(l *lessons.Lesson) error {
			c.AddLesson(l)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if _, err := feedback.OpenLog(orketDir).Each(func(e *feedback.Entry) error {
		c.AddFeedback(e)
		return nil
	}); err != nil {
		return nil, err
	}
	skip := otherAgent(agent)
	err := scanLog(filepath.Join(orketDir, filepath.FromSlash(store.EvaluationsFile)), func(line []byte) {
		if skip(line) {
			return
		}
		if e := readEvaluation(line, agent); e != nil {
			c.AddEvaluation(e)
		}
	})
	if err != nil {
		return nil, err
	}
	return c.Signals(), nil
}

// readEvaluation reads what Gather needs of an evaluation line of agent
// ("": any), its head (verdict.ReadHead). It returns nil for another
// agent's line and for a damaged one.
func readEvaluation(line []byte, agent string) *verdict.Evaluation {
	e, ok := verdict.ReadHead(line)
	if !ok || agent != "" && e.Agent != agent && !(agent == "default" && e.Agent == "") {
		return nil
	}
	return e
}

// otherAgent returns a quick test that a log line (as encoding/json
// writes it: compact) is surely another agent's: its "agent" key is
// there, compact, with another value. Anything else is read whole.
func otherAgent(agent string) func(line []byte) bool {
	if agent == "" || agent == "default" {
		return func([]byte) bool { return false }
	}
	q, _ := json.Marshal(agent)
	want := q[1:] // the value's text and its closing quote
	key := []byte(`"agent":"`)
	return func(line []byte) bool {
		i := bytes.Index(line, key)
		return i >= 0 && !bytes.HasPrefix(line[i+len(key):], want)
	}
}

// ProposeResult is what Store.Propose did.
type ProposeResult struct {
	Added []*Proposal // written to the store
	// ExtractorErrors say why the extractor's text was not used (the
	// deterministic text was), one per proposal it failed on.
	ExtractorErrors []error
}

// Propose runs the proposal rules (the package function Propose) on an
// agent's signals against its earlier proposals, its current guardrails
// and the votes (nil: none), lets the extractor (nil: none) rewrite the
// new proposals' text, and adds them to the store. Call it after each
// recorded entry (the threshold trigger) and on orket lessons propose.
func (s *Store) Propose(ctx context.Context, agent string, sigs []Signal, votes map[string]Tally, ex *Extractor, now time.Time) (*ProposeResult, error) {
	prior, _, err := s.Proposals.List(ProposalFilter{Agent: agent})
	if err != nil {
		return nil, err
	}
	cur, err := s.Current(agent)
	if err != nil {
		return nil, err
	}
	if now.IsZero() {
		now = time.Now()
	}
	ps := Propose(s.Config, Input{Agent: agent, Signals: sigs, Prior: prior, Current: cur, Votes: votes, Now: now})
	res := &ProposeResult{}
	for _, p := range ps {
		if err := ex.Apply(ctx, p); err != nil {
			res.ExtractorErrors = append(res.ExtractorErrors, err)
		}
	}
	res.Added, err = s.Proposals.Add(ps...)
	return res, err
}
