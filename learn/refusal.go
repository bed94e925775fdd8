package learn

import (
	"strings"

	"github.com/orket/orket"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/scope"
)

// recordRefusal keeps an edit orket refused (a protected path, a write
// outside the scope) as feedback the agent's next runs are told when they
// touch it again: a refusal teaches as a reviewer's rejection does.
func (r *run) recordRefusal() error {
	rec := r.Record
	b := rec.Barrier
	if b == nil || rec.Request.DryRun {
		return nil
	}
	e := &feedback.Entry{Time: r.Env.Now(), Type: feedback.TypeRefusal, RunID: rec.RunID, Task: rec.Request.Task,
		Agent: rec.Request.Agent, ArtifactType: feedback.GuessArtifactType(rec.Plan.TouchSet), Category: feedback.Other,
		By: "orket", Scope: rec.Request.Scope, Profile: rec.Request.Profile}
	switch {
	case rec.Code == orket.EWriteProtected && len(b.Protected) > 0:
		e.Item = protectGlob(r.Config.Protect, b.Protected[0])
		e.Touched = b.Protected
		e.Reason = "`" + e.Item + "` is protected: leave it alone (only a person may allow a change there, with --allow-protected)"
	case rec.Code == orket.EWriteOutOfScope && len(b.Outside)+len(b.Guarded) > 0:
		e.Touched = append(append([]string{}, b.Outside...), b.Guarded...)
		e.Item = strings.Join(rec.Request.Scope, " ")
		e.Reason = "`" + e.Touched[0] + "` is outside the scope `" + e.Item + "`: change it in a run scoped to it, or leave it alone"
	default:
		return nil
	}
	e.Action = e.Reason
	return feedback.OpenLog(OrketDir(r.Repo)).Record(e, r.red)
}

// protectGlob is the protect: glob that holds p, else p.
func protectGlob(globs []string, p string) string {
	for _, g := range globs {
		if s, err := scope.Parse([]string{g}); err == nil && s.Contains(p) {
			return g
		}
	}
	return p
}
