package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/orket/orket"
	"github.com/orket/orket/internal/inert"
	"github.com/orket/orket/learn"
)

// printProposals tells a person what new proposals a run, a rejection or
// a correction made, and how to decide them.
func printProposals(o *options, ps []orket.ProposalView) {
	proposalLines(ps, func(format string, args ...any) { fmt.Fprintf(o.stdout, format+"\n", args...) })
}

// proposalLines writes printProposals' lines with line.
func proposalLines(ps []orket.ProposalView, line func(format string, args ...any)) {
	for _, p := range ps {
		line("  proposed %s for %s's guardrails (%s): %s", p.ID, p.Agent, p.Section, clipRunes(p.Text, 160))
	}
	if len(ps) > 0 {
		line("  a person decides: orket lessons review")
	}
}

// guardrailsOf opens the repository, its configuration and its agents'
// guardrails.
func guardrailsOf(o *options) (learn.Guardrails, error) {
	r, cfg, err := repoAndConfig(o)
	if err != nil {
		return learn.Guardrails{}, err
	}
	return learn.Guardrails{Repo: r, Config: cfg}, nil
}

func lessonsProposeCommand(o *options, result *any) *cli.Command {
	var agent string
	return &cli.Command{
		Name: "propose", Usage: "cluster the feedback entries and write the guardrails proposals they make",
		UsageText: "orket lessons propose [--agent A]",
		Description: `propose runs the proposal rules (lessons.min_samples, min_cluster_size,
frequency_threshold) on each agent's feedback entries: failed steps,
verdicts short of APPROVE, rejections and corrections. New proposals are
stored as proposed; orket lessons review decides them. Runs do this after
each new entry; propose is for after an import or a change of the rules.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "agent", Usage: "only `AGENT` (default: every agent with entries)", Destination: &agent}},
		Action: noArgs(func(c *cli.Context) error {
			r, cfg, err := repoAndConfig(o)
			if err != nil {
				return err
			}
			res, err := learn.Propose(c.Context, r, cfg, o.environ(), agent, o.now())
			if err != nil {
				return err
			}
			*result = res
			for _, w := range res.Warnings {
				fmt.Fprintln(o.stderr, "orket: warning: "+w)
			}
			if o.json {
				return nil
			}
			if len(res.Proposals) == 0 {
				fmt.Fprintf(o.stdout, "no new proposals (agents with feedback entries: %s)\n", orNone(strings.Join(res.Agents, ", ")))
				return nil
			}
			printProposals(o, res.Proposals)
			return nil
		}),
	}
}

func lessonsReviewCommand(o *options, result *any) *cli.Command {
	var agent string
	return &cli.Command{
		Name: "review", Usage: "decide the pending guardrails proposals: a approve, r reject, v view the sources, q defer",
		UsageText: "orket lessons review [--agent A]",
		Description: `On a terminal, review shows each pending proposal in a box (the agent,
the version it would write, the change, its sources, confidence and
impact) and reads one key: a approves (writes the next version of the
agent's guardrails), r rejects (asks a reason), v shows every source, q
defers (the proposal stays pending). Without a terminal (an agent, CI,
--json) it lists the pending proposals and exits 0 without waiting;
orket lessons approve|reject ID decide them.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "agent", Usage: "only `AGENT`'s proposals", Destination: &agent}},
		Action: noArgs(func(c *cli.Context) error {
			gs, err := guardrailsOf(o)
			if err != nil {
				return err
			}
			undecided, err := gs.Pending(agent)
			if err != nil {
				return err
			}
			in, ok := o.stdin.(*os.File)
			out, outOK := o.rawStdout.(*os.File)
			if !ok || !outOK || !isTerminal(in) || !isTerminal(out) || o.json || o.getenv("CI") != "" {
				*result = &learn.PendingProposals{Code: orket.OK, Pending: undecided}
				if !o.json {
					fmt.Fprint(o.stdout, learn.PendingList(undecided))
				}
				return nil
			}
			g := &gate{o: o, in: in, gs: gs, by: person(o, gs.Repo)}
			decided, err := g.review(c.Context, undecided)
			*result = &reviewed{Code: orket.OK, Decided: decided}
			return err
		}),
	}
}

// A gate is the review on a terminal.
type gate struct {
	o  *options
	in *os.File
	gs learn.Guardrails
	by string
}

// reviewed is what a review on a terminal decided.
type reviewed struct {
	Code    orket.Code `json:"code"`
	Decided []decision `json:"decided"`
}

// A decision is what the review did with a proposal.
type decision struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Version int    `json:"version,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// errStopped is Ctrl-D in the review: the rest stays pending.
var errStopped = errors.New("review stopped")

// review shows each proposal and carries out the key pressed. Ctrl-D
// stops the review; Ctrl-C interrupts it (E_INTERRUPTED): either way
// what is left stays pending.
func (g *gate) review(ctx context.Context, ps []*learn.Proposal) ([]decision, error) {
	w := g.o.stdout
	if len(ps) == 0 {
		fmt.Fprintln(w, "no pending proposals")
		return nil, nil
	}
	width := learn.BoxWidth
	if cols, _, err := term.GetSize(int(g.in.Fd())); err == nil && cols < width+2 && cols >= 42 {
		width = cols - 2
	}
	var out []decision
	for i, p := range ps {
		item, err := g.gs.Review(ctx, p)
		if err != nil {
			return out, err
		}
		fmt.Fprintf(w, "\nproposal %d of %d\n", i+1, len(ps))
		fmt.Fprint(w, learn.Box(item, width))
		d, err := g.decide(ctx, p, item, width)
		if errors.Is(err, errStopped) {
			fmt.Fprintln(w, "review stopped; the rest stays pending")
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, *d)
	}
	return out, nil
}

// decide reads keys until one decides the proposal.
func (g *gate) decide(ctx context.Context, p *learn.Proposal, item *learn.ReviewItem, width int) (*decision, error) {
	w := g.o.stdout
	for {
		key, err := readKey(g.in)
		if err != nil {
			return nil, errStopped
		}
		if err := g.control(key); err != nil {
			return nil, err
		}
		a := learn.KeyAction(rune(key))
		var reason string
		switch a {
		case learn.ActionNone:
			continue
		case learn.ActionView:
			fmt.Fprint(w, learn.Sources(p))
			fmt.Fprint(w, learn.Box(item, width))
			continue
		case learn.ActionReject:
			fmt.Fprint(w, "Why reject it? ")
			if reason, err = g.readLine(); err != nil {
				return nil, err
			}
			if reason == "" {
				fmt.Fprintln(w, "a rejection needs a reason; press a key again")
				continue
			}
		}
		v, dp, err := g.gs.Decide(ctx, p.ID, a, g.by, reason, g.o.now())
		if err != nil {
			return nil, err
		}
		d := &decision{ID: dp.ID, Status: string(dp.Status), Reason: reason}
		switch a {
		case learn.ActionApprove:
			d.Version = v.Version
			fmt.Fprintf(w, "approved %s: %s's guardrails are now v%d (%s)\n", p.ID, p.Agent, v.Version, g.gs.File(p.Agent, v.Version))
		case learn.ActionReject:
			fmt.Fprintf(w, "rejected %s: %s\n", p.ID, reason)
		case learn.ActionDefer:
			fmt.Fprintf(w, "deferred %s: it stays pending\n", p.ID)
		}
		return d, nil
	}
}

// control handles Ctrl-C (an interrupt) and Ctrl-D (stop).
func (g *gate) control(key byte) error {
	switch key {
	case 3:
		fmt.Fprintln(g.o.stdout)
		return &orket.Error{Code: orket.EInterrupted, Msg: "the review was interrupted (Ctrl-C)", Hint: "what was not decided stays pending: orket lessons review"}
	case 4:
		return errStopped
	}
	return nil
}

// readLine reads a reason in raw mode, a byte at a time, echoing it:
// Enter ends it, Backspace erases, Ctrl-C and Ctrl-D stop as keys do.
func (g *gate) readLine() (string, error) {
	var line []byte
	for {
		key, err := readKey(g.in)
		if err != nil {
			return "", errStopped
		}
		if err := g.control(key); err != nil {
			return "", err
		}
		switch {
		case key == '\r' || key == '\n':
			fmt.Fprintln(g.o.stdout)
			return strings.TrimSpace(string(line)), nil
		case key == 127 || key == 8:
			if len(line) > 0 {
				// Erase a whole UTF-8 character.
				i := len(line) - 1
				for i > 0 && line[i]&0xC0 == 0x80 {
					i--
				}
				line = line[:i]
				fmt.Fprint(g.o.rawStdout, "\b \b") // the person's own erase, not text to show
			}
		case key >= 0x20 || key == '\t':
			line = append(line, key)
			g.o.stdout.Write([]byte{key})
		}
	}
}

// readKey reads one byte from the terminal without waiting for Enter and
// without the terminal's own echo or signals.
func readKey(f *os.File) (byte, error) {
	old, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		return 0, err
	}
	defer term.Restore(int(f.Fd()), old)
	var b [1]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0, err
	}
	return b[0], nil
}

func lessonsApproveCommand(o *options, result *any) *cli.Command {
	var by string
	return &cli.Command{
		Name: "approve", Usage: "approve a guardrails proposal: write the next version of its agent's guardrails",
		UsageText: "orket lessons approve ID [--by NAME]",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "by", Usage: "who approves (default: ORKET_USER, git's user.name, USER)", Destination: &by}},
		Action: func(c *cli.Context) error {
			id, err := oneID(c, "orket lessons approve gp-3f2a (orket lessons review lists them)")
			if err != nil {
				return err
			}
			gs, err := guardrailsOf(o)
			if err != nil {
				return err
			}
			res, err := gs.Approve(c.Context, id, orDefault(by, person(o, gs.Repo)), o.now())
			if err != nil {
				return err
			}
			*result = res
			if p, v := res.Proposal, res.Version; !o.json {
				fmt.Fprintf(o.stdout, "approved %s: %s's guardrails are now v%d (%s)\n", p.ID, p.Agent, v.Version, gs.File(p.Agent, v.Version))
			}
			return nil
		},
	}
}

func lessonsRejectCommand(o *options, result *any) *cli.Command {
	var by, reason string
	return &cli.Command{
		Name: "reject", Usage: "reject a guardrails proposal, with a reason",
		UsageText: `orket lessons reject ID --reason "..." [--by NAME]`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reason", Usage: "why (required)", Destination: &reason},
			&cli.StringFlag{Name: "by", Usage: "who rejects (default: ORKET_USER, git's user.name, USER)", Destination: &by},
		},
		Action: func(c *cli.Context) error {
			id, err := oneID(c, `orket lessons reject gp-3f2a --reason "..."`)
			if err != nil {
				return err
			}
			if strings.TrimSpace(reason) == "" {
				return orket.Errorf(orket.EUsage, `say why with --reason "..."`, "a rejection needs a reason")
			}
			gs, err := guardrailsOf(o)
			if err != nil {
				return err
			}
			res, err := gs.Reject(c.Context, id, orDefault(by, person(o, gs.Repo)), reason, o.now())
			if err != nil {
				return err
			}
			*result = res
			if !o.json {
				fmt.Fprintf(o.stdout, "rejected %s: %s\n", res.Proposal.ID, res.Proposal.Reason)
			}
			return nil
		},
	}
}

func oneID(c *cli.Context, example string) (string, error) {
	if c.Args().Len() != 1 {
		return "", orket.Errorf(orket.EUsage, example, "name one proposal id")
	}
	return c.Args().First(), nil
}

// guardrailsCommand groups the commands that read and roll back the
// agents' guardrails.
func guardrailsCommand(o *options, result *any) *cli.Command {
	return group(o, "guardrails", "read each agent's approved guardrails, their versions, and roll back", "orket guardrails show|diff|log|rollback [--agent A]",
		guardrailsShowCommand(o, result), guardrailsDiffCommand(o, result), guardrailsLogCommand(o, result), guardrailsRollbackCommand(o, result))
}

// agentFlag is --agent, defaulting to ORKET_AGENT, else the only agent
// with guardrails, else default.
type agentFlag struct{ name string }

func (a *agentFlag) flag() cli.Flag {
	return &cli.StringFlag{Name: "agent", Usage: "whose guardrails (default: ORKET_AGENT, else the only agent with guardrails, else default)", Destination: &a.name}
}

// open opens the agents' guardrails and resolves the agent: --agent,
// else ORKET_AGENT, else the only agent with guardrails, else default.
func (a *agentFlag) open(o *options) (learn.Guardrails, string, error) {
	gs, err := guardrailsOf(o)
	if err != nil {
		return gs, "", err
	}
	name := a.name
	if name == "" {
		name = o.getenv("ORKET_AGENT")
	}
	agent, err := gs.Agent(name)
	return gs, agent, err
}

func versionArg(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "v"))
	if err != nil || n < 1 {
		return 0, orket.Errorf(orket.EUsage, "name a version as 3 or v3 (orket guardrails log lists them)", "%q is not a version", s)
	}
	return n, nil
}

func guardrailsShowCommand(o *options, result *any) *cli.Command {
	var af agentFlag
	return &cli.Command{
		Name: "show", Usage: "print a version of an agent's guardrails (default: the current one), with each line's votes and evidence",
		UsageText: "orket guardrails show [N] [--agent A]",
		Flags:     []cli.Flag{af.flag()},
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 1 {
				return orket.Errorf(orket.EUsage, "orket guardrails show [N]", "name at most one version")
			}
			gs, agent, err := af.open(o)
			if err != nil {
				return err
			}
			n := 0
			if c.Args().Present() {
				if n, err = versionArg(c.Args().First()); err != nil {
					return err
				}
			}
			res, err := gs.Show(c.Context, agent, n)
			if err != nil {
				return err
			}
			*result = res
			v, votes, ev := res.Version, res.Votes, res.Evidence
			if o.json {
				return nil
			}
			if v == nil {
				fmt.Fprintf(o.stdout, "agent %s has no guardrails yet (orket lessons review approves proposals)\n", agent)
				return nil
			}
			a := res.Approval
			fmt.Fprintf(o.stdout, "%s (v%d, %s by %s, %s)\n", gs.File(agent, v.Version), v.Version, v.Kind, inert.Text(orDefault(a.By, v.ApprovedBy)), v.CreatedAt.Format("2006-01-02 15:04"))
			fmt.Fprintln(o.stdout, approvalLine(a, v.Version, res.Current)+"\n")
			fmt.Fprint(o.stdout, v.Text) // inert on stdout: a synced version may come from anyone who can push
			var notes []string
			for _, l := range v.AllLines() {
				if t, ok := votes[l.ID]; ok && l.ID != "" {
					notes = append(notes, fmt.Sprintf("  %s votes %s: %s", l.ID, t, clipRunes(l.Text, 80)))
				}
			}
			for _, e := range ev {
				if e.Demoted {
					notes = append(notes, fmt.Sprintf("  demoted (%s): %s", e.Why(), clipRunes(e.Line.Text, 80)))
				}
			}
			if len(notes) > 0 {
				fmt.Fprintln(o.stdout, "\n"+strings.Join(notes, "\n"))
			}
			return nil
		},
	}
}

// approvalLine says what a version's approval is worth here, and which
// version edit commands are given.
func approvalLine(a learn.ApprovalCheck, n, current int) string {
	given := "no version is given to edit commands"
	if current > 0 {
		given = fmt.Sprintf("edit commands are given v%d", current)
	}
	if !a.Approved {
		return fmt.Sprintf("UNAPPROVED: %s; it is never given to an edit command (%s)", inert.Text(a.Why), given)
	}
	s := "approved by " + inert.Text(a.By)
	switch {
	case a.Synced:
		s += " on " + inert.Text(orDefault(a.Clone, "an unknown clone")) + " (it came by orket sync)"
	default:
		s += " on this clone"
	}
	if a.Signed {
		s += "; signed by " + inert.Text(a.Signer) + ", checked against the allowed signers"
	}
	if a.Edited {
		s += "; its text was edited after the approval"
	}
	if current != n {
		s += "; " + given
	}
	return s
}

func guardrailsDiffCommand(o *options, result *any) *cli.Command {
	var af agentFlag
	return &cli.Command{
		Name: "diff", Usage: "a unified diff of two versions of an agent's guardrails",
		UsageText: "orket guardrails diff A B [--agent A]",
		Flags:     []cli.Flag{af.flag()},
		Action: func(c *cli.Context) error {
			if c.Args().Len() != 2 {
				return orket.Errorf(orket.EUsage, "orket guardrails diff 1 3", "name two versions")
			}
			a, err := versionArg(c.Args().Get(0))
			if err != nil {
				return err
			}
			b, err := versionArg(c.Args().Get(1))
			if err != nil {
				return err
			}
			gs, agent, err := af.open(o)
			if err != nil {
				return err
			}
			res, err := gs.Diff(agent, a, b)
			if err != nil {
				return err
			}
			*result = res
			if d := res.Diff; !o.json {
				if d == "" {
					fmt.Fprintf(o.stdout, "v%d and v%d hold the same text\n", a, b)
				}
				fmt.Fprint(o.stdout, d)
			}
			return nil
		},
	}
}

func guardrailsLogCommand(o *options, result *any) *cli.Command {
	var af agentFlag
	return &cli.Command{
		Name: "log", Usage: "every version of an agent's guardrails written, dropped ones too",
		UsageText: "orket guardrails log [--agent A]",
		Flags:     []cli.Flag{af.flag()},
		Action: noArgs(func(c *cli.Context) error {
			gs, agent, err := af.open(o)
			if err != nil {
				return err
			}
			res, err := gs.Log(agent)
			if err != nil {
				return err
			}
			*result = res
			h := res.Versions
			if o.json {
				return nil
			}
			if len(h) == 0 {
				fmt.Fprintf(o.stdout, "agent %s has no guardrails yet\n", agent)
				return nil
			}
			tw := tabwriter.NewWriter(o.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tWHEN\tKIND\tBY\tCHANGES\tKEPT\tWHY")
			for _, e := range h {
				kind := e.Kind
				if e.Restores > 0 {
					kind += " to v" + strconv.Itoa(e.Restores)
				}
				why := e.Reason
				if why == "" && len(e.Lessons) > 0 {
					why = strings.Join(e.Lessons, ", ")
				}
				fmt.Fprintf(tw, "v%d\t%s\t%s\t%s\t%d\t%s\t%s\n", e.Version, e.Time.Format("2006-01-02 15:04"), kind, inert.Text(e.By), e.Changes, yesNo(e.Kept), clipRunes(why, 60))
			}
			return tw.Flush()
		}),
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "dropped"
}

func guardrailsRollbackCommand(o *options, result *any) *cli.Command {
	var af agentFlag
	var to int
	var by, reason string
	return &cli.Command{
		Name: "rollback", Usage: "write a new version holding an earlier version's text",
		UsageText: `orket guardrails rollback [--to N] [--reason "..."] [--agent A]`,
		Description: `rollback writes the next version of the agent's guardrails with version
N's text, byte for byte (without --to, the version before the current
one), and logs who and why. orket stats suggests rollbacks; it never
makes one.`,
		Flags: []cli.Flag{af.flag(),
			&cli.IntFlag{Name: "to", Usage: "the version whose text to restore (default: the one before the current)", Destination: &to},
			&cli.StringFlag{Name: "reason", Usage: "why", Destination: &reason},
			&cli.StringFlag{Name: "by", Usage: "who (default: ORKET_USER, git's user.name, USER)", Destination: &by},
		},
		Action: noArgs(func(c *cli.Context) error {
			gs, agent, err := af.open(o)
			if err != nil {
				return err
			}
			res, err := gs.Rollback(c.Context, agent, to, orDefault(by, person(o, gs.Repo)), reason, o.now())
			if err != nil {
				return err
			}
			*result = res
			if v := res.Version; !o.json {
				fmt.Fprintf(o.stdout, "rolled back: %s's guardrails are now v%d, the text of v%d (%d line(s) changed; %s)\n",
					agent, v.Version, v.Restores, len(v.Changes), gs.File(agent, v.Version))
			}
			return nil
		}),
	}
}

func statsCommand(o *options, result *any) *cli.Command {
	var agent string
	return &cli.Command{
		Name: "stats", Usage: "error rate, score, lessons applied and each guardrails version's before and after, per agent",
		UsageText: "orket stats [--agent A] [--json]",
		Description: `stats reads the evaluation log and what each run was told. Per agent:
the error rate (REJECT or ESCALATE), mean score, repeat-failure and task
completion rates, lessons applied, versions, rollback frequency; per
guardrails version, the stats.sample_size runs before and after it. A
version that made the error rate worse over a full sample is flagged with
a suggested rollback, which only a person runs.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "agent", Usage: "only `AGENT`", Destination: &agent}},
		Action: noArgs(func(c *cli.Context) error {
			gs, err := guardrailsOf(o)
			if err != nil {
				return err
			}
			res, err := gs.Stats(c.Context, agent)
			if err != nil {
				return err
			}
			*result = res
			if !o.json {
				printStats(o.stdout, res.Stats)
			}
			return nil
		}),
	}
}

func pct(f float64) string { return strconv.Itoa(int(f*100+0.5)) + "%" }

// sample is a version's runs on one side: how many, the error rate, the
// share rejected in review, the mean score.
func sample(s learn.Sample) string {
	if s.Runs == 0 {
		return "no runs"
	}
	return fmt.Sprintf("%d, %s, %s, %.1f", s.Runs, pct(s.ErrorRate), pct(s.ReviewRejectionRate), s.MeanScore)
}

func printStats(w io.Writer, s *learn.Stats) {
	if s.Runs == 0 {
		fmt.Fprintln(w, "no agent runs evaluated yet")
		return
	}
	fmt.Fprintf(w, "%d runs; mean score %.1f; lessons applied %d; guardrails versions %d; rollback frequency %s (sample size %d)\n\n",
		s.Runs, s.AverageScore, s.LessonsAppliedCount, s.PromptVersionsCount, pct(s.RollbackFrequency), s.SampleSize)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tRUNS\tERROR RATE\tREJECTED IN REVIEW\tMEAN SCORE\tREPEAT FAILURES\tTASKS DONE\tLESSONS\tVERSIONS\tROLLBACKS\tCURRENT")
	for _, a := range s.Agents {
		cur := "-"
		if a.CurrentVersion > 0 {
			cur = "v" + strconv.Itoa(a.CurrentVersion)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.1f\t%s\t%s\t%d\t%d\t%d\t%s\n", a.Agent, a.Runs, pct(a.ErrorRate), pct(a.ReviewRejectionRate), a.MeanScore, pct(a.RepeatFailureRate),
			pct(a.TaskCompletionRate), a.LessonsApplied, a.Versions, a.Rollbacks, cur)
	}
	tw.Flush()
	for _, a := range s.Agents {
		if len(a.Comparisons) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: each version's runs before and after\n", a.Agent)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "VERSION\tKIND\tBEFORE (RUNS, ERRORS, IN REVIEW, SCORE)\tAFTER (RUNS, ERRORS, IN REVIEW, SCORE)\t")
		for _, c := range a.Comparisons {
			mark := ""
			if c.Worse {
				mark = "WORSE"
			} else if !c.Full {
				mark = "sample not full yet"
			}
			fmt.Fprintf(tw, "v%d\t%s\t%s\t%s\t%s\n", c.Version, c.Kind, sample(c.Before), sample(c.After), mark)
		}
		tw.Flush()
	}
	for _, f := range s.Flagged {
		fmt.Fprintf(w, "\n! %s v%d made things worse: %s\n", f.Agent, f.Version, f.Suggest.Why)
		if f.Suggest.To > 0 {
			fmt.Fprintf(w, "  a person may run: orket guardrails rollback --agent %s --to %d\n", f.Agent, f.Suggest.To)
		} else {
			fmt.Fprintf(w, "  it was the first version: reject or remove its lesson (orket guardrails show --agent %s)\n", f.Agent)
		}
	}
}
