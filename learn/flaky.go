package learn

import (
	"bytes"
	"encoding/json"

	"github.com/orket/orket"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/verdict"
	"github.com/orket/orket/verify"
)

// markFlaky is the tree-content rule of docs/verdicts.md: a step that
// passes on content an earlier run failed it on, in the environment it
// failed in, makes that run's lessons of it flaky. When the environment
// changed since (a variable the lesson names is set now, a port is free,
// the step's executable is another), the pass does not make the lesson
// flaky: the change resolved it. It returns the lessons it marked and
// those it found resolved. A lesson recorded without a fingerprint (by an
// older orket) is marked flaky on the content alone, as it was then.
func (r *run) markFlaky(store *verdict.Store) ([]string, []orket.ResolvedLesson, error) {
	if r.Content == "" {
		return nil, nil, nil
	}
	passed := map[string]*verify.StepResult{}
	for _, s := range r.Record.Steps {
		if s.Status == verify.Passed {
			passed[s.Dir+"\x00"+s.Command] = s
		}
	}
	if len(passed) == 0 {
		return nil, nil, nil
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
		return nil, nil, err
	}
	if len(runs) == 0 {
		return nil, nil, nil
	}
	var marked []string
	var resolved []orket.ResolvedLesson
	s := &lessons.Store{Path: LessonPath(r.Repo, r.Config)}
	_, err := s.Rewrite(func(l *lessons.Lesson) bool {
		step := passed[l.Verify.FailedDir+"\x00"+l.Verify.FailedCommand]
		if !runs[l.Outcome.RunID] || step == nil || hasTag(l.Classification.Tags, FlakyTag) {
			return false
		}
		if then := l.Verify.Environment; len(then) > 0 {
			if changed := envChanges(then, r.envStates(step.Name, step.Dir, then)); len(changed) > 0 {
				resolved = append(resolved, orket.ResolvedLesson{ID: l.ID, Changed: changed})
				return false
			}
		}
		l.Classification.Tags = append(l.Classification.Tags, FlakyTag)
		marked = append(marked, l.ID)
		return true
	})
	return marked, resolved, err
}

func hasTag(tags []string, t string) bool {
	for _, x := range tags {
		if x == t {
			return true
		}
	}
	return false
}
