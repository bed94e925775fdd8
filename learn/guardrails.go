package learn

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	gitconfig "github.com/go-git/go-git/v5/config"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/guardrails"
	"github.com/orket/orket/internal/inert"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verdict"
)

// GuardrailsConfig is docs/guardrails.md's numbers as orket.yaml sets them.
func GuardrailsConfig(cfg *config.Config) guardrails.Config {
	g := guardrails.DefaultConfig()
	l := cfg.Lessons
	if l.MinSamples > 0 {
		g.MinSamples = l.MinSamples
	}
	if l.MinClusterSize > 0 {
		g.MinClusterSize = l.MinClusterSize
	}
	g.FrequencyThreshold = l.FrequencyThreshold
	if cfg.Guardrails.MaxVersions > 0 {
		g.MaxVersions = cfg.Guardrails.MaxVersions
	}
	if cfg.Stats.SampleSize > 0 {
		g.SampleSize = cfg.Stats.SampleSize
	}
	if l.Retention.MaxEntriesPerAgent > 0 {
		g.MaxEntriesPerAgent = l.Retention.MaxEntriesPerAgent
	}
	if l.Retention.MaxAge > 0 {
		g.MaxAge = l.Retention.MaxAge
	}
	return g
}

// openGuardrails returns the repository's guardrails store: the agents'
// versions (approved and checked as guardrails.require_signed says), the
// proposals, what runs were told and their votes.
func openGuardrails(repo *txn.Repo, cfg *config.Config) *guardrails.Store {
	st := guardrails.Open(OrketDir(repo), GuardrailsConfig(cfg))
	st.Approvals = approvals(repo, cfg)
	return st
}

// approvals is how this clone approves guardrails versions and checks
// them: named by its host and main work tree; with require_signed, signed
// by git's signing key as git commit -S signs (gpg.format ssh: ssh-keygen
// and user.signingkey; openpgp, git's default: gpg and user.signingkey,
// else user.email's key; user.email names the signer) and checked against
// guardrails.allowed_signers (ssh) or guardrails.allowed_keys (OpenPGP)
// as HEAD commits them.
func approvals(repo *txn.Repo, cfg *config.Config) guardrails.Approvals {
	host, _ := os.Hostname()
	a := guardrails.Approvals{Clone: host + ":" + mainRoot(repo), Require: cfg.Guardrails.RequireSigned}
	if !a.Require {
		return a
	}
	committed := func(rel, def string) func() ([]byte, string, error) {
		if rel == "" {
			rel = def
		}
		return func() ([]byte, string, error) { return committedFile(repo, rel) }
	}
	k := &guardrails.SSHKeygen{AllowedSigners: committed(cfg.Guardrails.AllowedSigners, config.DefaultAllowedSigners)}
	g := &guardrails.GPG{AllowedKeys: committed(cfg.Guardrails.AllowedKeys, config.DefaultAllowedKeys)}
	a.Verifier = guardrails.Verifiers{guardrails.FormatSSH: k, guardrails.FormatOpenPGP: g}
	gc, err := repo.Git.ConfigScoped(gitconfig.SystemScope)
	if err != nil {
		a.Signer = noSigner{fmt.Errorf("%w: read git's configuration: %v", guardrails.ErrNoSigner, err)}
		return a
	}
	gpg := gc.Raw.Section("gpg")
	k.Program = gpg.Subsection("ssh").Option("program")
	if g.Program = gpg.Subsection("openpgp").Option("program"); g.Program == "" {
		g.Program = gpg.Option("program")
	}
	key := gc.Raw.Section("user").Option("signingkey")
	switch f := gpg.Option("format"); f {
	case guardrails.FormatSSH:
		k.Key, k.Signer = key, gc.User.Email
		a.Signer = k
	case "", guardrails.FormatOpenPGP:
		g.Key, g.Signer = key, gc.User.Email
		a.Signer = g
	default:
		a.Signer = noSigner{fmt.Errorf("%w: gpg.format is %s, and orket signs approvals with ssh or OpenPGP keys: set gpg.format to ssh or openpgp", guardrails.ErrNoSigner, f)}
	}
	return a
}

// noSigner is a signer that cannot sign, saying why.
type noSigner struct{ err error }

func (n noSigner) Format() string             { return "" }
func (n noSigner) Principal() (string, error) { return "", n.err }
func (n noSigner) Sign(context.Context, []byte) (*guardrails.Signature, error) {
	return nil, n.err
}

// committedFile is a file of the repository as HEAD commits it (what a
// person reviewed, not what an edit wrote into the work tree), and its
// name for messages.
func committedFile(repo *txn.Repo, rel string) ([]byte, string, error) {
	name := rel + " at HEAD"
	ref, err := repo.Git.Head()
	if err != nil {
		return nil, name, fmt.Errorf("no allowed-signers file: %s: HEAD: %v", name, err)
	}
	c, err := repo.Git.CommitObject(ref.Hash())
	if err != nil {
		return nil, name, fmt.Errorf("no allowed-signers file: %s: %v", name, err)
	}
	f, err := c.File(rel)
	if err != nil {
		return nil, name, fmt.Errorf("no allowed-signers file %s (commit one, or set guardrails.allowed_signers)", name)
	}
	text, err := f.Contents()
	if err != nil {
		return nil, name, fmt.Errorf("read %s: %v", name, err)
	}
	return []byte(text), name, nil
}

// guardrailsChecker checks what guardrail lines cite against the
// repository as it is: paths, the verify profiles' commands, variables.
func guardrailsChecker(repo *txn.Repo, cfg *config.Config) *guardrails.Checker {
	var commands []string
	for _, name := range cfg.Verify.Order {
		if p, err := cfg.Profile(name); err == nil {
			for _, s := range p.Steps {
				commands = append(commands, s.Command())
			}
		}
	}
	return &guardrails.Checker{Root: repo.Root, Commands: commands}
}

// extractor is lessons.extractor, or nil.
func extractor(cfg *config.Config, repo *txn.Repo, red *redact.Redactor) *guardrails.Extractor {
	if len(cfg.Lessons.Extractor) == 0 {
		return nil
	}
	return &guardrails.Extractor{Argv: cfg.Lessons.Extractor, Timeout: cfg.Lessons.ExtractorTimeout, Dir: repo.Root, Redactor: red}
}

// givenGuardrails reports whether the run's edit is given its agent's
// guardrails: an edit command is (ORKET_GUARDRAILS); a patch or the work
// tree was written before orket could hand it anything.
func (r *run) givenGuardrails() bool {
	return r.Edit == "command"
}

// checker is the run's one evidence checker: what its lines cite is
// searched for once, before the edit, however often the run asks.
func (r *run) checker() *guardrails.Checker {
	if r.guardCheck == nil {
		r.guardCheck = guardrailsChecker(r.Repo, r.Config)
		r.guardCheck.Remember = true
	}
	return r.guardCheck
}

// prepareGuardrails reads the agent's current guardrails for an edit
// command and checks their evidence, writing nothing: the advisories show
// them. The lock taken, exposeGuardrails reads them again for the edit.
func (r *run) prepareGuardrails(ctx context.Context) {
	if !r.givenGuardrails() {
		return
	}
	v, err := guardrailsView(ctx, r.Repo, openGuardrails(r.Repo, r.Config), r.checker(), r.Record.Request.Agent)
	if err != nil {
		r.Warn("cannot read the agent's guardrails: " + err.Error())
		return
	}
	r.Record.Guardrails = v.view(false)
}

// agentGuardrails are an agent's current guardrails as the loop holds
// them: what a record or an agent is shown, and the version (nil: none
// approved).
type agentGuardrails struct {
	orket.GuardrailsView
	version *guardrails.Version
}

// view is what a record shows (the text only when asked: a run's record
// names the file that holds it).
func (g *agentGuardrails) view(text bool) *orket.GuardrailsView {
	if g == nil {
		return nil
	}
	v := g.GuardrailsView
	if !text {
		v.Text = ""
	}
	return &v
}

// guardrailsView reads an agent's current guardrails (its newest
// approved version; the newer ones are listed as unapproved, with why)
// and checks what they cite. Text is what an agent is given: inert
// (control characters shown, never interpreted), demoted lines marked.
// nil: the agent has no versions.
func guardrailsView(ctx context.Context, repo *txn.Repo, st *guardrails.Store, ck *guardrails.Checker, agent string) (*agentGuardrails, error) {
	if agent == "" {
		agent = store.DefaultAgent
	}
	if _, err := os.Stat(filepath.Join(st.OrketDir, store.GuardrailsDir)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no agent has guardrails yet: nothing to read, and nothing is created
	}
	cur, err := st.Current(agent)
	if err != nil {
		return nil, err
	}
	after := 0
	if cur != nil {
		after = cur.Version
	}
	unapproved, err := st.Unapproved(ctx, agent, after)
	if err != nil {
		return nil, err
	}
	if cur == nil && len(unapproved) == 0 {
		return nil, nil
	}
	v := &agentGuardrails{GuardrailsView: orket.GuardrailsView{Agent: agent}}
	for _, u := range unapproved {
		v.Unapproved = append(v.Unapproved, orket.UnapprovedVersion{Version: u.Version, Why: u.Why})
	}
	if cur == nil {
		return v, nil
	}
	c := st.Check(ctx, agent, cur)
	ev := ck.Check(ctx, cur.AllLines())
	text := cur.Text
	for _, e := range ev {
		if e.Demoted {
			v.Demoted = append(v.Demoted, e.Why())
		}
	}
	if len(v.Demoted) > 0 {
		text = guardrails.Annotate(cur.Text, ev)
	}
	v.Version, v.File, v.Text, v.Rules = cur.Version, repo.DisplayPath(st.Path(agent, cur.Version)), inert.Block(text), len(guardrails.Items(cur.Text))
	v.ApprovedBy, v.Clone, v.Synced, v.Signed = c.By, c.Clone, c.Synced, c.Signed
	v.version = cur
	return v, nil
}

// exposeGuardrails, under the lock, gives an edit command its agent's
// guardrails as they are now (the annotated copy written when lines are
// demoted) and records what the run is told (that version, its lines for
// the scope, the failures its advisories warn of), for the votes and the
// stats.
func (r *run) exposeGuardrails(ctx context.Context) {
	if !r.givenGuardrails() {
		return
	}
	agent := r.Record.Request.Agent
	if agent == "" {
		agent = store.DefaultAgent
	}
	st := openGuardrails(r.Repo, r.Config)
	v, err := guardrailsView(ctx, r.Repo, st, r.checker(), agent)
	if err != nil {
		r.Warn("cannot read the agent's guardrails: " + err.Error())
	}
	var version *guardrails.Version
	r.Record.Guardrails = v.view(false)
	if v != nil && v.version != nil {
		r.guardrailsText, version = v.Text, v.version
	}
	var folds []guardrails.Fold
	for _, a := range r.Record.Advisories {
		folds = append(folds, guardrails.AdvisoryFold(a))
	}
	x := guardrails.NewExposure(r.Record.RunID, agent, r.Env.Now().UTC(), version, r.Record.Request.Scope, folds)
	// .orket/.gitignore before anything else in .orket: a run killed
	// right after this line leaves nothing git would show.
	if err := ensureLessonDir(r.Repo); err != nil {
		r.Warn("cannot create .orket: " + err.Error())
		return
	}
	if err := guardrails.OpenExposures(st.OrketDir).Record(x); err != nil {
		r.Warn("cannot record what the run was told (.orket/memory/advised.jsonl): " + err.Error())
		return
	}
	r.exposure, r.exposedTo = x, version
}

func proposalViews(ps []*guardrails.Proposal) []orket.ProposalView {
	var out []orket.ProposalView
	for _, p := range ps {
		out = append(out, orket.ProposalView{ID: p.ID, Agent: p.Agent, Type: string(p.ConstraintUpdate.Type),
			Section: p.ConstraintUpdate.Section, Text: p.LessonText, Count: p.Count})
	}
	return out
}

// learnFromRun is the learning after a run's verdict: its lines vote
// (avoided or recurred), and when the run added feedback (a lesson, a
// verdict short of APPROVE) the agent's entries are clustered again (the
// threshold trigger of docs/guardrails.md).
func (r *run) learnFromRun(ctx context.Context, ev *verdict.Evaluation) {
	if !r.Mutating() || r.Record.RunID == "" {
		return
	}
	agent := r.Record.Request.Agent
	if agent == "" {
		agent = store.DefaultAgent
	}
	c := &guardrails.Collector{Agent: agent}
	for _, l := range r.newLessons {
		c.AddLesson(l)
	}
	if ev != nil {
		c.AddEvaluation(ev)
	}
	sigs := c.Signals()
	verdictText := ""
	if ev != nil {
		verdictText = ev.Verdict
	}
	st := openGuardrails(r.Repo, r.Config)
	// The run knows what it was told: its exposure is not looked up again
	// (Store.Vote does, for a later rejection or correction).
	if x, v := r.exposure, r.exposedTo; x != nil && v != nil && x.Version != 0 {
		vs := guardrails.VotesFor(x, v, guardrails.Outcome{RunID: r.Record.RunID, Agent: agent, Time: r.Env.Now().UTC(), Verdict: verdictText, Signals: sigs})
		if err := guardrails.OpenVotes(st.OrketDir).Record(vs...); err != nil {
			r.Warn("cannot record the guardrails' votes: " + err.Error())
		}
	}
	if err := pruneGuardrailLogs(OrketDir(r.Repo), r.Config.Lessons.Retention, r.Env.Now()); err != nil {
		r.Warn("could not prune the guardrails' logs: " + err.Error())
	}
	if len(sigs) == 0 {
		return
	}
	// The run's checker answers for the tree before the edit: still the
	// tree once the change is reverted.
	ck := r.checker()
	if r.Record.Revert == nil {
		ck = guardrailsChecker(r.Repo, r.Config)
	}
	added, errs := proposeFor(ctx, r.Repo, r.Config, r.red, st, ck, agent, r.Env.Now())
	for _, err := range errs {
		r.Warn(err.Error())
	}
	r.Record.Proposals = proposalViews(added)
}

// pruneGuardrailLogs applies lessons.retention to what runs were told
// and their votes (per agent), once a log may hold more lines than that;
// a small log is not read. Proposals keep every line a person decided.
func pruneGuardrailLogs(dir string, keep config.Retention, now time.Time) error {
	x, v := guardrails.OpenExposures(dir), guardrails.OpenVotes(dir)
	return errors.Join(
		store.PruneIfDue(x.Path(), 256, keep.MaxEntriesPerAgent, keep.MaxAge, now, func() error {
			_, err := x.Prune(keep.MaxEntriesPerAgent, keep.MaxAge, now)
			return err
		}),
		store.PruneIfDue(v.Path(), 256, keep.MaxEntriesPerAgent, keep.MaxAge, now, func() error {
			_, err := v.Prune(keep.MaxEntriesPerAgent, keep.MaxAge, now)
			return err
		}))
}

// proposeFor runs the proposal rules on an agent's feedback entries and
// stores the new proposals; ck checks the evidence of the agent's lines
// (for removals). The errors are warnings: an extractor that failed (its
// proposal keeps orket's text), a log that cannot be read.
func proposeFor(ctx context.Context, repo *txn.Repo, cfg *config.Config, red *redact.Redactor, st *guardrails.Store, ck *guardrails.Checker, agent string, now time.Time) ([]*guardrails.Proposal, []error) {
	dir := OrketDir(repo)
	sigs, err := guardrails.Gather(LessonPath(repo, cfg), dir, agent)
	if err != nil {
		return nil, []error{errors.New("cannot read the feedback entries for proposals: " + err.Error())}
	}
	votes, err := guardrails.OpenVotes(dir).Tally(agent)
	if err != nil {
		return nil, []error{errors.New("cannot read the guardrails' votes: " + err.Error())}
	}
	res, err := st.Propose(ctx, agent, sigs, votes, extractor(cfg, repo, red), now.UTC())
	var errs []error
	if res != nil {
		for _, e := range res.ExtractorErrors {
			errs = append(errs, errors.New("lessons.extractor: "+e.Error()+" (the proposal keeps orket's own text)"))
		}
	}
	if err != nil {
		return nil, append(errs, errors.New("cannot make the proposals: "+err.Error()))
	}
	var ps []*guardrails.Proposal
	if res != nil {
		ps = res.Added
	}
	removals, err := proposeRemovals(ctx, st, ck, agent, now)
	if err != nil {
		errs = append(errs, errors.New("cannot propose the removal of demoted lines: "+err.Error()))
	}
	return append(ps, removals...), errs
}

// proposeRemovals proposes, once, to remove the agent's guardrail lines
// whose evidence is gone (docs/guardrails.md): a person decides.
func proposeRemovals(ctx context.Context, st *guardrails.Store, ck *guardrails.Checker, agent string, now time.Time) ([]*guardrails.Proposal, error) {
	cur, err := st.Current(agent)
	if err != nil || cur == nil {
		return nil, err
	}
	ev := ck.Check(ctx, cur.AllLines())
	demoted := false
	for _, e := range ev {
		demoted = demoted || e.Demoted
	}
	if !demoted {
		return nil, nil
	}
	prior, _, err := st.Proposals.List(guardrails.ProposalFilter{Agent: agent})
	if err != nil {
		return nil, err
	}
	return st.Proposals.Add(guardrails.ProposeRemovals(agent, cur, ev, prior, now.UTC())...)
}

// learnFromFeedback is what a reviewer's rejection or correction of a
// kept run teaches the guardrails: the lines that run was given and
// whose failure the review names turn to -1, and the agent's entries are
// clustered again.
func learnFromFeedback(ctx context.Context, repo *txn.Repo, cfg *config.Config, red *redact.Redactor, e *feedback.Entry, now time.Time) ([]*guardrails.Proposal, []error) {
	agent := e.Agent
	if agent == "" {
		agent = store.DefaultAgent
	}
	st := openGuardrails(repo, cfg)
	var errs []error
	sig := guardrails.SignalFromFeedback(e)
	if _, err := st.Vote(guardrails.Outcome{RunID: e.RunID, Agent: agent, Time: now.UTC(), Signals: []guardrails.Signal{sig}}); err != nil {
		errs = append(errs, errors.New("cannot record the guardrails' votes: "+err.Error()))
	}
	ps, more := proposeFor(ctx, repo, cfg, red, st, guardrailsChecker(repo, cfg), agent, now)
	return ps, append(errs, more...)
}

// A ProposeResult is what orket lessons propose found.
type ProposeResult struct {
	Code      orket.Code           `json:"code"`
	Agents    []string             `json:"agents"`
	Proposals []orket.ProposalView `json:"proposals"`
	Warnings  []string             `json:"warnings,omitempty"`
}

// Propose runs the proposal rules for an agent ("": every agent with
// feedback entries) and stores what is new.
func Propose(ctx context.Context, repo *txn.Repo, cfg *config.Config, environ []string, agent string, now time.Time) (_ *ProposeResult, err error) {
	defer func() { err = coded(err) }()
	red := redact.New(redact.Options{Environ: environ})
	agents := []string{agent}
	if agent == "" {
		sigs, err := guardrails.Gather(LessonPath(repo, cfg), OrketDir(repo), "")
		if err != nil {
			return nil, internal("read the feedback entries", "check that .orket/memory is readable", err)
		}
		seen := map[string]bool{}
		agents = nil
		for _, s := range sigs {
			if !seen[s.Agent] {
				seen[s.Agent] = true
				agents = append(agents, s.Agent)
			}
		}
		// Agents with guardrails but no entries left: their demoted lines.
		withGuardrails, err := openGuardrails(repo, cfg).Agents()
		if err != nil {
			return nil, internal("read the agents' guardrails", "check that .orket/guardrails is readable", err)
		}
		for _, a := range withGuardrails {
			if !seen[a] {
				seen[a] = true
				agents = append(agents, a)
			}
		}
	}
	res := &ProposeResult{Code: orket.OK, Agents: nonNil(agents), Proposals: []orket.ProposalView{}}
	st := openGuardrails(repo, cfg)
	// One search of the tree for every agent's lines.
	ck := guardrailsChecker(repo, cfg)
	ck.Remember = true
	for _, a := range agents {
		ps, errs := proposeFor(ctx, repo, cfg, red, st, ck, a, now)
		res.Proposals = append(res.Proposals, proposalViews(ps)...)
		for _, e := range errs {
			res.Warnings = append(res.Warnings, e.Error())
		}
	}
	return res, nil
}

// guardrailsMarkdown is an agent's guardrails inside another markdown
// document: the title dropped, sections one level down.
func guardrailsMarkdown(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "# "):
			continue
		case strings.HasPrefix(l, "## "):
			l = "#" + l
		}
		b.WriteString(l + "\n")
	}
	return strings.TrimLeft(b.String(), "\n")
}

// sectionsFor keeps the sections of a guardrails text that apply to a
// scope (all of them for no scope), with the preamble.
func sectionsFor(text string, sc []string) string {
	var b strings.Builder
	keep := true
	for _, l := range guardrails.ParseDoc(text) {
		if l.Heading {
			keep = guardrails.SectionApplies(l.Section, sc)
		}
		if keep {
			b.WriteString(l.Raw + "\n")
		}
	}
	return b.String()
}
