package guardrails

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"time"

	"github.com/orket/orket/feedback"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/verdict"
)

// Gather reads an agent's signals ("": every agent's) from the three
// logs: the lesson log at lessonsPath (lessons.path), and the feedback
// and evaluation logs of the .orket directory. Damaged lines are
// skipped, as their own readers skip them.
func Gather(lessonsPath, orketDir, agent string) ([]Signal, error) {
	c := &Collector{Agent: agent}
	if lessonsPath != "" {
		if _, err := (&lessons.Store{Path: lessonsPath}).Each(func(l *lessons.Lesson) error {
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
	approve := []byte(`"verdict":"APPROVE"`)
	err := scanLog(filepath.Join(orketDir, filepath.FromSlash(EvaluationsFile)), func(line []byte) {
		if bytes.Contains(line, approve) {
			// Only its place in the attempts counts: read what that needs.
			e := verdict.Evaluation{Verdict: verdict.Approve}
			scanObject(line, func(k, v []byte) {
				switch string(k) {
				case "run_id":
					e.RunID = jsonString(v)
				case "task":
					e.Task = jsonString(v)
				case "agent":
					e.Agent = jsonString(v)
				case "edit_source":
					e.EditSource = jsonString(v)
				case "time":
					e.Time, _ = time.Parse(time.RFC3339Nano, jsonString(v))
				case "score":
					e.Score, _ = strconv.Atoi(string(v))
				}
			})
			if e.RunID != "" {
				c.AddEvaluation(&e)
			}
			return
		}
		var e verdict.Evaluation
		if json.Unmarshal(line, &e) == nil && e.RunID != "" {
			c.AddEvaluation(&e)
		}
	})
	if err != nil {
		return nil, err
	}
	return c.Signals(), nil
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
