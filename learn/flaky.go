package learn

import (
	"bytes"
	"encoding/json"

	"github.com/orket/orket/lessons"
	"github.com/orket/orket/verdict"
	"github.com/orket/orket/verify"
)

// markFlaky is the tree-content rule of docs/verdicts.md: a step that passes on
// content an earlier run failed it on makes that run's lessons of it
// flaky. It returns the lessons it marked.
func (r *run) markFlaky(store *verdict.Store) ([]string, error) {
	if r.Content == "" {
		return nil, nil
	}
	passed := map[string]bool{}
	for _, s := range r.Record.Steps {
		if s.Status == verify.Passed {
			passed[s.Dir+"\x00"+s.Command] = true
		}
	}
	if len(passed) == 0 {
		return nil, nil
	}
	// Only the lines that name this content and a failing verdict are
	// decoded: on most runs none does (a repository verified again and
	// again as it is names one content a thousand times, passing), and
	// decoding a thousand evaluations was most of a passing run's reading.
	runs := map[string]bool{}
	key := []byte(r.Content)
	if _, err := store.Evaluations.Each(func(line []byte) error {
		if !bytes.Contains(line, key) || !bytes.Contains(line, []byte(verdict.Reject)) && !bytes.Contains(line, []byte(verdict.Escalate)) {
			return nil
		}
		var e verdict.Evaluation
		if json.Unmarshal(line, &e) == nil && e.Content == r.Content && e.RunID != "" && e.RunID != r.Record.RunID &&
			(e.Verdict == verdict.Reject || e.Verdict == verdict.Escalate) {
			runs[e.RunID] = true
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, nil
	}
	var marked []string
	s := &lessons.Store{Path: LessonPath(r.Repo, r.Config)}
	_, err := s.Rewrite(func(l *lessons.Lesson) bool {
		if !runs[l.Outcome.RunID] || !passed[l.Verify.FailedDir+"\x00"+l.Verify.FailedCommand] || hasTag(l.Classification.Tags, FlakyTag) {
			return false
		}
		l.Classification.Tags = append(l.Classification.Tags, FlakyTag)
		marked = append(marked, l.ID)
		return true
	})
	return marked, err
}

func hasTag(tags []string, t string) bool {
	for _, x := range tags {
		if x == t {
			return true
		}
	}
	return false
}
