package learn

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/guardrails"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

// The guardrails' use cases (orket lessons propose|review|approve|reject,
// orket guardrails show|diff|log|rollback, orket stats): a person decides
// the proposals, reads and rolls back the versions, and sees how each
// version fared.

// Guardrails' types, as the command line shows them.
type (
	Proposal   = guardrails.Proposal
	Version    = guardrails.Version
	ReviewItem = guardrails.ReviewItem
	Stats      = guardrails.Stats
	Sample     = guardrails.Sample
	Tally      = guardrails.Tally
	Evidence   = guardrails.Evidence
	Event      = guardrails.Event
	Action     = guardrails.Action
)

// The review's actions (a, r, v, q).
const (
	ActionNone    = guardrails.ActionNone
	ActionApprove = guardrails.ActionApprove
	ActionReject  = guardrails.ActionReject
	ActionView    = guardrails.ActionView
	ActionDefer   = guardrails.ActionDefer
	// BoxWidth is the review box's width on a wide enough terminal.
	BoxWidth = guardrails.BoxWidth
)

// KeyAction is the review's action of a key.
func KeyAction(key rune) Action { return guardrails.KeyAction(key) }

// Box is a proposal as the review shows it (the approval box of
// docs/guardrails.md, The review gate).
func Box(it *ReviewItem, width int) string { return guardrails.RenderBox(it, width) }

// Sources lists every source of a proposal (the review's v).
func Sources(p *Proposal) string { return guardrails.RenderSources(p) }

// PendingList lists pending proposals, as review prints them without a
// terminal.
func PendingList(ps []*Proposal) string { return guardrails.RenderList(ps) }

// Guardrails is a repository's agents' guardrails.
type Guardrails struct {
	Repo   *txn.Repo
	Config *config.Config
}

func (g Guardrails) store() *guardrails.Store { return openGuardrails(g.Repo, g.Config) }

// File is where version n of an agent's guardrails is, as a person in the
// work tree names it.
func (g Guardrails) File(agent string, n int) string {
	p := g.store().Path(agent, n)
	if rel, ok := strings.CutPrefix(p, g.Repo.Root+string(os.PathSeparator)); ok {
		return rel
	}
	return p
}

// Agent resolves whose guardrails a command means: name, else the only
// agent with guardrails, else the default agent.
func (g Guardrails) Agent(name string) (string, error) {
	if name != "" {
		return name, nil
	}
	agents, err := g.store().Agents()
	if err != nil {
		return "", storeError(err)
	}
	switch len(agents) {
	case 0:
		return store.DefaultAgent, nil
	case 1:
		return agents[0], nil
	}
	return "", orket.Errorf(orket.EUsage, "name one with --agent: "+strings.Join(agents, ", "), "%d agents have guardrails", len(agents))
}

// Pending returns the proposals waiting for a person (of agent; "":
// every agent's).
func (g Guardrails) Pending(agent string) ([]*Proposal, error) {
	ps, _, err := g.store().Proposals.List(guardrails.ProposalFilter{Agent: agent, Pending: true})
	if err != nil {
		return nil, storeError(err)
	}
	return nonNil(ps), nil
}

// PendingProposals is orket lessons review's object without a terminal.
type PendingProposals struct {
	Code    orket.Code  `json:"code"`
	Pending []*Proposal `json:"pending"`
}

// Review is a proposal as the review box shows it: the version it would
// write, the change, its votes and evidence.
func (g Guardrails) Review(ctx context.Context, p *Proposal) (*ReviewItem, error) {
	st := g.store()
	votes, err := guardrails.OpenVotes(st.OrketDir).Tally(p.Agent)
	if err != nil {
		return nil, storeError(err)
	}
	item, err := st.ReviewItem(ctx, p, votes, guardrailsChecker(g.Repo, g.Config))
	return item, storeError(err)
}

// Decide carries out a person's decision on a proposal: approve (the
// agent's next version is written), reject (with a reason) or defer.
func (g Guardrails) Decide(ctx context.Context, id string, a Action, by, reason string, now time.Time) (*Version, *Proposal, error) {
	v, p, err := g.store().Decide(ctx, id, a, by, reason, now.UTC())
	return v, p, storeError(err)
}

// A Decided is orket lessons approve or reject: the proposal decided
// and, for an approval, the version it wrote.
type Decided struct {
	Code     orket.Code `json:"code"`
	Proposal *Proposal  `json:"proposal"`
	Version  *Version   `json:"version,omitempty"`
}

// Approve approves a proposal: the agent's guardrails get their next
// version.
func (g Guardrails) Approve(ctx context.Context, id, by string, now time.Time) (*Decided, error) {
	v, p, err := g.store().Approve(ctx, id, by, now.UTC())
	if err != nil {
		return nil, storeError(err)
	}
	return &Decided{Code: orket.OK, Proposal: p, Version: v}, nil
}

// Reject rejects a proposal, with a reason.
func (g Guardrails) Reject(ctx context.Context, id, by, reason string, now time.Time) (*Decided, error) {
	if strings.TrimSpace(reason) == "" {
		return nil, orket.Errorf(orket.EUsage, `say why with --reason "..."`, "a rejection needs a reason")
	}
	p, err := g.store().Reject(ctx, id, by, reason, now.UTC())
	if err != nil {
		return nil, storeError(err)
	}
	return &Decided{Code: orket.OK, Proposal: p}, nil
}

// A GuardrailsShow is orket guardrails show: a version of an agent's
// guardrails with its lines' votes and evidence (Version nil: none yet).
type GuardrailsShow struct {
	Code    orket.Code `json:"code"`
	Agent   string     `json:"agent"`
	Version *Version   `json:"version"`
	// Approval is what the version's approval is worth here: approved
	// or not and why, who, on which clone, signed.
	Approval ApprovalCheck `json:"approval"`
	// Current is the version edit commands are given: the newest
	// approved one (0: none).
	Current  int              `json:"current"`
	Text     string           `json:"text"`
	Votes    map[string]Tally `json:"votes"`
	Evidence []Evidence       `json:"evidence"`
}

// An ApprovalCheck is what a version's approval is worth on this clone.
type ApprovalCheck = guardrails.ApprovalCheck

// MarshalJSON leaves out what an agent without guardrails has not.
func (s *GuardrailsShow) MarshalJSON() ([]byte, error) {
	type show GuardrailsShow
	if s.Version == nil {
		return json.Marshal(struct {
			Code    orket.Code `json:"code"`
			Agent   string     `json:"agent"`
			Version *Version   `json:"version"`
		}{s.Code, s.Agent, nil})
	}
	return json.Marshal((*show)(s))
}

// Show reads version n of an agent's guardrails (0: the newest, approved
// or not), checks its approval, and names the version edit commands are
// given.
func (g Guardrails) Show(ctx context.Context, agent string, n int) (*GuardrailsShow, error) {
	st := g.store()
	res := &GuardrailsShow{Code: orket.OK, Agent: agent}
	var err error
	if n > 0 {
		res.Version, err = st.Version(agent, n)
	} else {
		res.Version, err = st.Newest(agent)
	}
	if err != nil || res.Version == nil {
		return res, storeError(err)
	}
	res.Approval = st.Check(ctx, agent, res.Version)
	cur, err := st.Current(agent)
	if err != nil {
		return nil, storeError(err)
	}
	if cur != nil {
		res.Current = cur.Version
	}
	if res.Votes, err = guardrails.OpenVotes(st.OrketDir).Tally(agent); err != nil {
		return nil, storeError(err)
	}
	res.Text = res.Version.Text
	res.Evidence = guardrailsChecker(g.Repo, g.Config).Check(ctx, res.Version.AllLines())
	return res, nil
}

// A GuardrailsDiff is orket guardrails diff: a unified diff of two
// versions ("" when their text is the same).
type GuardrailsDiff struct {
	Code  orket.Code `json:"code"`
	Agent string     `json:"agent"`
	From  int        `json:"from"`
	To    int        `json:"to"`
	Diff  string     `json:"diff"`
}

// Diff compares two versions of an agent's guardrails.
func (g Guardrails) Diff(agent string, a, b int) (*GuardrailsDiff, error) {
	d, err := g.store().DiffVersions(agent, a, b)
	if err != nil {
		return nil, storeError(err)
	}
	return &GuardrailsDiff{Code: orket.OK, Agent: agent, From: a, To: b, Diff: d}, nil
}

// A GuardrailsLog is orket guardrails log: every version written.
type GuardrailsLog struct {
	Code     orket.Code `json:"code"`
	Agent    string     `json:"agent"`
	Versions []Event    `json:"versions"`
}

// Log lists every version of an agent's guardrails, dropped ones too.
func (g Guardrails) Log(agent string) (*GuardrailsLog, error) {
	h, err := g.store().History(agent)
	if err != nil {
		return nil, storeError(err)
	}
	return &GuardrailsLog{Code: orket.OK, Agent: agent, Versions: nonNil(h)}, nil
}

// A RolledBack is orket guardrails rollback: the version written.
type RolledBack struct {
	Code    orket.Code `json:"code"`
	Agent   string     `json:"agent"`
	Version *Version   `json:"version"`
}

// Rollback writes the agent's next version with version to's text (0:
// the version before the current one).
func (g Guardrails) Rollback(ctx context.Context, agent string, to int, by, reason string, now time.Time) (*RolledBack, error) {
	if to < 0 {
		return nil, orket.Errorf(orket.EUsage, "name a version as --to 3", "--to %d is not a version", to)
	}
	v, err := g.store().Rollback(ctx, agent, to, by, reason, now.UTC())
	if err != nil {
		return nil, storeError(err)
	}
	return &RolledBack{Code: orket.OK, Agent: agent, Version: v}, nil
}

// A StatsResult is orket stats.
type StatsResult struct {
	Code  orket.Code `json:"code"`
	Stats *Stats     `json:"stats"`
}

// Stats reads how each agent fares, and each guardrails version's runs
// before and after it ("": every agent).
func (g Guardrails) Stats(ctx context.Context, agent string) (*StatsResult, error) {
	s, err := g.store().Stats(ctx, agent)
	if err != nil {
		return nil, storeError(err)
	}
	return &StatsResult{Code: orket.OK, Stats: s}, nil
}
