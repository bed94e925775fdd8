package learn

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/internal/inert"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/scope"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

// OrketDir is the main work tree's .orket directory, which holds the
// memory its linked work trees share.
func OrketDir(r *txn.Repo) string {
	return filepath.Join(mainRoot(r), filepath.FromSlash(store.Dir))
}

// feedbackWindow is where patterns are looked for: within retention.
func feedbackWindow(cfg *config.Config, now time.Time) time.Time {
	if age := cfg.Lessons.Retention.MaxAge; age > 0 {
		return now.Add(-age)
	}
	return time.Time{}
}

// feedbackAdvice is what earlier reviews say of the run about to start:
// the agent's patterns, and past rejections of what it touches.
func (r *run) feedbackAdvice() []feedback.Advisory {
	req := r.Record.Request
	touch := r.touchSet()
	adv, err := feedback.OpenLog(OrketDir(r.Repo)).Advise(feedback.Query{Agent: req.Agent, Scope: req.Scope, Touch: touch,
		Since: feedbackWindow(r.Config, r.Env.Now())})
	if err != nil {
		r.Warn("cannot read the feedback log: " + err.Error())
	}
	return adv
}

// reviewRejected reviews what people and tools dropped in .orket/rejected
// since the last run into the agent memory (docs/feedback.md).
func (r *run) reviewRejected(ctx context.Context) {
	done, st, err := reviewRejected(ctx, r.Repo, r.Config, r.red, r.Env.Now)
	if err != nil {
		r.Warn("reviewing .orket/rejected: " + err.Error())
	}
	if st.WantsPruning {
		r.Warn(fmt.Sprintf(store.RepoPath(store.MemoryFile)+" holds %d learnings, more than %d: it wants pruning by a person", st.Learnings, feedback.MaxLearnings))
	}
	r.Record.Reviewed = done
}

// A Reviewed is a file of .orket/rejected reviewed into the agent memory.
type Reviewed = feedback.Reviewed

// A MemoryStatus is the agent memory after a write: how many learnings it
// holds, and whether it wants pruning by a person.
type MemoryStatus = feedback.MemoryStatus

// ReviewRejected reviews every new file of .orket/rejected into the agent
// memory and moves it to done/ (orket memory review, and each run); what
// leaves the machine in a summariser's prompt is redacted with environ's
// secrets.
func ReviewRejected(ctx context.Context, repo *txn.Repo, cfg *config.Config, environ []string, now func() time.Time) ([]Reviewed, MemoryStatus, error) {
	done, st, err := reviewRejected(ctx, repo, cfg, redact.New(redact.Options{Environ: environ}), now)
	return done, st, coded(err)
}

func reviewRejected(ctx context.Context, repo *txn.Repo, cfg *config.Config, red *redact.Redactor, now func() time.Time) ([]feedback.Reviewed, feedback.MemoryStatus, error) {
	dir := OrketDir(repo)
	rv := &feedback.Reviewer{OrketDir: dir, Redactor: red, Now: now, Summarizer: summarizer(cfg, repo, red)}
	if pending, err := rv.Pending(); err != nil || len(pending) == 0 {
		return nil, feedback.MemoryStatus{}, err
	}
	cat, err := feedback.NewCategorizer(cfg.Feedback.Keywords)
	if err != nil {
		return nil, feedback.MemoryStatus{}, err
	}
	rv.Categorizer = cat
	done, st, err := rv.ReviewAll(ctx)
	if errors.Is(err, feedback.ErrReviewBusy) {
		return done, st, nil
	}
	return done, st, err
}

// memoryMarkdown is the agent memory as ORKET_ADVISORIES carries it: the
// file, cut to its last maxMemory bytes.
func memoryMarkdown(repo *txn.Repo) string {
	b, err := feedback.OpenMemory(OrketDir(repo)).Read()
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return ""
	}
	if len(b) > maxMemory {
		b = b[len(b)-maxMemory:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
		b = append([]byte("(the start of the file is left out)\n"), b...)
	}
	return string(b)
}

// maxMemory bounds the agent memory an edit command is handed.
const maxMemory = 32 << 10

// A MemoryView is what an agent should read before it plans (docs/feedback.md):
// the agent memory, the patterns of its rejections, and the top
// advisories for its scope.
type MemoryView struct {
	Code       orket.Code               `json:"code"`
	Agent      string                   `json:"agent"`
	Scope      []string                 `json:"scope"`
	MemoryFile string                   `json:"memory_file"`
	Memory     string                   `json:"memory"`
	Patterns   []feedback.PatternObject `json:"patterns"`
	Feedback   []feedback.Advisory      `json:"feedback"`
	Advisories []lessons.Advisory       `json:"advisories"`
	Preflight  []preflight.Result       `json:"preflight"`
	// Guardrails are the agent's approved rules (nil: none yet), with
	// their text; lines whose evidence is gone are marked demoted.
	Guardrails *orket.GuardrailsView `json:"guardrails"`
	// Warnings say what could not be read; the rest of the view stands.
	Warnings []string `json:"warnings,omitempty"`
	// Reviewed are files of .orket/rejected reviewed just now (orket
	// memory review).
	Reviewed []feedback.Reviewed `json:"reviewed,omitempty"`
}

// A MemoryQuery asks for an agent's memory for a scope.
type MemoryQuery struct {
	Repo   *txn.Repo
	Config *config.Config
	Agent  string
	Scope  []string
	Env    orket.Env
}

// Memory gathers what an agent should read before it plans.
func Memory(q MemoryQuery) (_ *MemoryView, err error) {
	defer func() { err = coded(err) }()
	if q.Agent == "" {
		q.Agent = store.DefaultAgent
	}
	if q.Env.Now == nil {
		q.Env.Now = time.Now
	}
	if q.Env.Getenv == nil {
		q.Env.Getenv = func(string) string { return "" }
	}
	if _, err := scope.Parse(q.Scope); err != nil {
		return nil, &orket.Error{Code: orket.EUsage, Err: err, Msg: err.Error(), Hint: "scopes are repository-relative directories or globs such as pkg/api"}
	}
	v := &MemoryView{Code: orket.OK, Agent: q.Agent, Scope: nonNil(q.Scope), Memory: memoryMarkdown(q.Repo),
		MemoryFile: q.Repo.DisplayPath(store.Path(OrketDir(q.Repo), store.MemoryFile)),
		Patterns:   []feedback.PatternObject{}, Feedback: []feedback.Advisory{}, Advisories: []lessons.Advisory{}, Preflight: []preflight.Result{}}
	since := feedbackWindow(q.Config, q.Env.Now())
	log := feedback.OpenLog(OrketDir(q.Repo))
	if a, err := log.Analyze(q.Agent, since); err == nil {
		v.Patterns = a.PatternObjects()
	}
	if adv, err := log.Advise(feedback.Query{Agent: q.Agent, Scope: q.Scope, Since: since}); err == nil && adv != nil {
		v.Feedback = adv
	}
	g, err := guardrailsView(context.Background(), q.Repo, openGuardrails(q.Repo, q.Config), guardrailsChecker(q.Repo, q.Config), q.Agent)
	if err != nil {
		p := orket.Describe(coded(err))
		v.Warnings = append(v.Warnings, fmt.Sprintf("the agent's guardrails are left out: %s: %s; %s", p.Code, p.Msg, p.Hint))
	}
	v.Guardrails = g.view(true)
	if prof, err := q.Config.Profile(""); err == nil {
		// Without a scope, the memory is the whole repository's.
		sc := q.Scope
		if len(sc) == 0 {
			sc = []string{"**"}
		}
		a := Advise(AdviceQuery{Repo: q.Repo, Config: q.Config, Profile: prof, Scope: sc, Getenv: q.Env.Getenv, Now: q.Env.Now()})
		v.Advisories, v.Preflight = a.Advisories, a.Preflight
	}
	return v, nil
}

// Markdown is the view as an agent reads it (a hook's output, AGENTS.md).
func (v *MemoryView) Markdown() string {
	var b strings.Builder
	// One inert line per field, inert blocks for the texts: what came
	// from other clones is shown, never interpreted.
	clean := inert.Text
	fmt.Fprintf(&b, "# orket memory for agent %s", clean(v.Agent))
	if len(v.Scope) > 0 {
		fmt.Fprintf(&b, ", scope %s", clean(strings.Join(v.Scope, ", ")))
	}
	b.WriteString("\n\nWhat earlier runs and reviews of this repository taught; read it before you plan. It is advice, not a rule.\n")
	if g := v.Guardrails; g != nil && g.Version > 0 {
		fmt.Fprintf(&b, "\n## Guardrails v%d (%s), %s\n\n", g.Version, clean(g.File), approvedBy(g))
		b.WriteString(guardrailsMarkdown(sectionsFor(inert.Block(g.Text), v.Scope)))
	}
	if len(v.Patterns) > 0 {
		b.WriteString("\n## Patterns in reviewers' rejections\n\n")
		for _, p := range v.Patterns {
			fmt.Fprintf(&b, "- %s: %d of %d rejections (%.0f%%): %s\n", clean(string(p.Category)), p.OccurrenceCount, p.TotalRejections, float64(p.Percentage), clean(p.SuggestedCorrection))
		}
	}
	if len(v.Feedback) > 0 {
		b.WriteString("\n## Earlier reviews\n\n")
		for _, f := range v.Feedback {
			fmt.Fprintf(&b, "- %s\n", clean(f.Text))
		}
	}
	if len(v.Advisories) > 0 {
		b.WriteString("\n## Past failures of the checks\n\n")
		for _, a := range v.Advisories {
			fmt.Fprintf(&b, "- %s (seen %d time(s); `%s`)", clean(a.Title), a.Count, clean(a.FailedCommand))
			if a.FirstError != "" {
				fmt.Fprintf(&b, ": %s", clean(a.FirstError))
			}
			b.WriteString("\n")
			for _, s := range a.SuggestedActions {
				fmt.Fprintf(&b, "  - %s\n", clean(s))
			}
		}
	}
	for _, c := range v.Preflight {
		if !c.OK {
			fmt.Fprintf(&b, "- missing now: %s\n", clean(c.Detail))
		}
	}
	if v.Memory != "" {
		fmt.Fprintf(&b, "\n## Agent memory (%s)\n\n%s", clean(v.MemoryFile), strings.TrimRight(inert.Block(v.Memory), "\n")+"\n")
	}
	return b.String()
}
