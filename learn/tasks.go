package learn

import (
	"context"
	"errors"
	"os"
	"sort"
	"strings"
	"time"

	gitconfig "github.com/go-git/go-git/v5/config"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/testhook"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verdict"
)

// A TaskAction is a person's word on a task (docs/verdicts.md): resolve an
// escalation, reset a count, escalate by hand, or override a rejected run.
type TaskAction struct {
	Repo   *txn.Repo
	Config *config.Config
	Task   string // the task (for override: found from the run)
	Agent  string // reset: only this agent's count; escalate: whose attempts to report
	RunID  string // override: the run (or a unique prefix of its id)
	Reason string
	By     string // who (git's user.name, or the login)
	Now    time.Time
	Env    []string // escalation.notify's environment
}

// A TaskResult is what a person's action did.
type TaskResult struct {
	Code       orket.Code        `json:"code"`
	Action     string            `json:"action"`
	Task       string            `json:"task"`
	Agent      string            `json:"agent,omitempty"`
	RunID      string            `json:"run_id,omitempty"`
	Reason     string            `json:"reason,omitempty"`
	By         string            `json:"by,omitempty"`
	Cleared    int               `json:"attempts_cleared"` // rejections the count held before
	Escalation *orket.Escalation `json:"escalation,omitempty"`
	// Applied names the paths --apply wrote back.
	Applied []string `json:"applied,omitempty"`
	// Warnings are what went wrong without changing the outcome.
	Warnings []string `json:"warnings,omitempty"`
}

// TaskStatus is a task as orket task list shows it, per agent.
type TaskStatus struct {
	Task        string            `json:"task"`
	Agent       string            `json:"agent"`
	Rejections  int               `json:"rejections"`
	Maximum     int               `json:"maximum"`
	Escalated   bool              `json:"escalated"`
	Escalation  *orket.Escalation `json:"escalation,omitempty"`
	LastRunID   string            `json:"last_run_id,omitempty"`
	LastVerdict string            `json:"last_verdict,omitempty"`
	LastTime    *time.Time        `json:"last_time,omitempty"`
}

// A TaskList is orket task list.
type TaskList struct {
	Code  orket.Code   `json:"code"`
	Tasks []TaskStatus `json:"tasks"`
}

// Tasks is ListTasks as orket task list's object.
func Tasks(repo *txn.Repo, cfg *config.Config, task, agent string) (*TaskList, error) {
	list, err := ListTasks(repo, cfg, task, agent)
	if err != nil {
		return nil, memoryError(err)
	}
	return &TaskList{Code: orket.OK, Tasks: list}, nil
}

// ListTasks returns every task the logs know, per agent, filtered by task
// and agent when given.
func ListTasks(repo *txn.Repo, cfg *config.Config, task, agent string) (_ []TaskStatus, err error) {
	defer func() { err = coded(err) }()
	all, err := Verdicts(repo).Tasks()
	if err != nil {
		return nil, err
	}
	out := []TaskStatus{}
	for _, st := range all {
		if task != "" && st.Task != task || agent != "" && st.Agent != agent && st.Agent != "" {
			continue
		}
		ts := TaskStatus{Task: st.Task, Agent: st.Agent, Rejections: len(st.Attempts), Maximum: escalateAfter(cfg)}
		if st.Escalation != nil {
			ts.Escalated, ts.Escalation = true, escalationOf(st.Escalation)
		}
		if l := st.Last; l != nil {
			t := l.Time
			ts.LastRunID, ts.LastVerdict, ts.LastTime = l.RunID, l.Verdict, &t
		}
		out = append(out, ts)
	}
	return out, nil
}

// knownTask returns the task's state, or a usage error naming the
// nearest known task when the logs know no such task.
func knownTask(store *verdict.Store, task string) error {
	all, err := store.Tasks()
	if err != nil {
		return err
	}
	var names []string
	for _, st := range all {
		if st.Task == task {
			return nil
		}
		names = append(names, st.Task)
	}
	hint := "orket task list shows the tasks orket knows"
	if near := config.Suggest(task, names); near != "" {
		hint = "did you mean " + config.ShellQuote([]string{near}) + "? " + hint
	}
	return orket.Errorf(orket.EUsage, hint, "no task %q in the evaluation log", task)
}

func needReason(a TaskAction, what string) error {
	if strings.TrimSpace(a.Reason) == "" {
		return orket.Errorf(orket.EUsage, "say why with --reason \"...\": it is kept in .orket/memory/tasks.jsonl", "%s needs a reason", what)
	}
	return nil
}

// ResolveTask ends a task's escalation: runs of it go on, and every
// agent's count starts over.
func ResolveTask(a TaskAction) (_ *TaskResult, err error) {
	defer func() { err = coded(err) }()
	if err := needReason(a, "orket task resolve"); err != nil {
		return nil, err
	}
	store := Verdicts(a.Repo)
	if err := knownTask(store, a.Task); err != nil {
		return nil, err
	}
	st, err := store.State(a.Task, "")
	if err != nil {
		return nil, err
	}
	if st.Escalation == nil {
		return nil, orket.Errorf(orket.EUsage, "orket task reset clears a count without an escalation",
			"task %q is not escalated", a.Task)
	}
	res := &TaskResult{Code: orket.OK, Action: verdict.EventResolve, Task: a.Task, Reason: a.Reason, By: a.By,
		Escalation: escalationOf(st.Escalation)}
	if agentState, err := store.State(a.Task, st.Escalation.Agent); err == nil {
		res.Cleared = len(agentState.Attempts)
	}
	testhook.Point("resolve:before-event")
	err = store.Event(&verdict.TaskEvent{Time: a.Now.UTC(), Type: verdict.EventResolve, Task: a.Task, Reason: a.Reason, By: a.By})
	testhook.Point("resolve:after-event")
	if err == nil {
		// What failed without any change is mended, the person says: the
		// baselines cached before are not to be reused.
		if cerr := clearBaselines(a.Repo); cerr != nil {
			res.Warnings = append(res.Warnings, "could not empty the baseline cache: "+cerr.Error())
		}
	}
	return res, err
}

// ResetTask starts an agent's count (every agent's, when none is named)
// over; an escalation stays until it is resolved.
func ResetTask(a TaskAction) (_ *TaskResult, err error) {
	defer func() { err = coded(err) }()
	store := Verdicts(a.Repo)
	if err := knownTask(store, a.Task); err != nil {
		return nil, err
	}
	res := &TaskResult{Code: orket.OK, Action: verdict.EventReset, Task: a.Task, Agent: a.Agent, Reason: a.Reason, By: a.By}
	all, err := store.Tasks()
	if err != nil {
		return nil, err
	}
	for _, st := range all {
		if st.Task == a.Task && (a.Agent == "" || st.Agent == a.Agent) {
			res.Cleared += len(st.Attempts)
		}
	}
	return res, store.Event(&verdict.TaskEvent{Time: a.Now.UTC(), Type: verdict.EventReset, Task: a.Task, Agent: a.Agent, Reason: a.Reason, By: a.By})
}

// EscalateTask escalates a task by hand: a report of the agent's open
// attempts (every agent's, when none is named) and the person's reason;
// runs of the task stop until it is resolved. The task need not have run
// yet: a person may stop work before it starts.
func EscalateTask(ctx context.Context, a TaskAction) (_ *TaskResult, err error) {
	defer func() { err = coded(err) }()
	if err := needReason(a, "orket escalate"); err != nil {
		return nil, err
	}
	store := Verdicts(a.Repo)
	st, err := store.State(a.Task, a.Agent)
	if err != nil {
		return nil, err
	}
	if st.Escalation != nil {
		return nil, orket.Errorf(orket.EUsage, "orket task resolve ends it", "task %q is already escalated (%s)", a.Task,
			reportNote(a.Task, st.Escalation.Report, reportElsewhere(a.Repo, st.Escalation.Report)))
	}
	var attempts []*verdict.Evaluation
	all, err := store.Tasks()
	if err != nil {
		return nil, err
	}
	for _, t := range all {
		if t.Task == a.Task && (a.Agent == "" || t.Agent == a.Agent) {
			attempts = append(attempts, t.Attempts...)
		}
	}
	sort.SliceStable(attempts, func(i, j int) bool { return attempts[i].Time.Before(attempts[j].Time) })
	rep := verdict.NewReport("esc-"+a.Now.UTC().Format("20060102T150405Z")+"-hand", a.Now, a.Task, a.Agent, attempts, a.Reason)
	addOutputs(a.Repo, rep)
	md, js, err := WriteReport(a.Repo, rep)
	if err != nil {
		return nil, internal("write the escalation report", "check that .orket is writable", err)
	}
	esc := &orket.Escalation{Report: md, ReportJSON: js, Trigger: rep.Trigger.Type}
	if err := store.Event(&verdict.TaskEvent{Time: a.Now.UTC(), Type: verdict.EventEscalate, Task: a.Task, Agent: a.Agent,
		Reason: a.Reason, By: a.By, Report: md}); err != nil {
		return nil, err
	}
	if status, err := Notify(ctx, a.Repo, a.Config, a.Env, md); status != "" {
		esc.Notified = status
		if err != nil {
			return &TaskResult{Code: orket.OK, Action: verdict.EventEscalate, Task: a.Task, Agent: a.Agent, Reason: a.Reason, By: a.By, Escalation: esc}, &NotifyError{Err: err}
		}
	}
	return &TaskResult{Code: orket.OK, Action: verdict.EventEscalate, Task: a.Task, Agent: a.Agent, Reason: a.Reason, By: a.By,
		Cleared: len(attempts), Escalation: esc}, nil
}

// Override accepts a rejected run anyway: it is logged with the reason,
// the count of its agent on its task starts over and an escalation of the
// task ends. With apply, the run's kept change is put back in the tree,
// under the repository lock; a change that no longer applies writes
// nothing.
func Override(ctx context.Context, a TaskAction, apply bool) (_ *TaskResult, err error) {
	defer func() { err = coded(err) }()
	if err := needReason(a, "orket override"); err != nil {
		return nil, err
	}
	store := Verdicts(a.Repo)
	ev, err := findRun(store, a.RunID)
	if err != nil {
		return nil, err
	}
	if ev.Verdict != verdict.Reject && ev.Verdict != verdict.Escalate {
		// A run that passed and a reviewer rejected counts as rejected:
		// a person may accept it anyway.
		if reviewed, err := store.Reviewed(ev.RunID); err != nil || !reviewed {
			return nil, orket.Errorf(orket.EUsage, "override accepts a rejected run", "run %s was not rejected (%s)", ev.RunID, ev.Verdict)
		}
	}
	st, err := store.State(ev.Task, ev.Agent)
	if err != nil {
		return nil, err
	}
	res := &TaskResult{Code: orket.OK, Action: verdict.EventOverride, Task: ev.Task, Agent: ev.Agent, RunID: ev.RunID,
		Reason: a.Reason, By: a.By, Cleared: len(st.Attempts)}
	if st.Escalation != nil {
		res.Escalation = escalationOf(st.Escalation)
	}
	if apply {
		if res.Applied, err = orket.ApplyKept(ctx, a.Repo, ev.RunID, ev.PatchFile); err != nil {
			return nil, err
		}
	}
	return res, store.Event(&verdict.TaskEvent{Time: a.Now.UTC(), Type: verdict.EventOverride, Task: ev.Task, Agent: ev.Agent,
		RunID: ev.RunID, Reason: a.Reason, By: a.By})
}

// findRun returns the evaluation of the run whose id is, or starts with,
// id.
func findRun(store *verdict.Store, id string) (*verdict.Evaluation, error) {
	if id == "" {
		return nil, orket.Errorf(orket.EUsage, "give a run id: the run_id of its --json, or orket task list's last run", "override needs a run")
	}
	found := map[string]*verdict.Evaluation{}
	if _, err := store.EachEvaluation(func(e *verdict.Evaluation) error {
		if strings.HasPrefix(e.RunID, id) {
			found[e.RunID] = e
		}
		return nil
	}); err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, orket.Errorf(orket.EUsage, "the run_id of a run's --json or record names it", "no evaluated run %q", id)
	case 1:
		for _, e := range found {
			return e, nil
		}
	}
	return nil, orket.Errorf(orket.EUsage, "give more of the id", "%q names %d runs", id, len(found))
}

// Person names who acts: ORKET_USER, git's user.name, USER, or the host.
func Person(r *txn.Repo, getenv func(string) string) string {
	if u := getenv("ORKET_USER"); u != "" {
		return u
	}
	if c, err := r.Git.ConfigScoped(gitconfig.GlobalScope); err == nil && c.User.Name != "" {
		return c.User.Name
	}
	if u := getenv("USER"); u != "" {
		return u
	}
	name, _ := os.Hostname()
	return name
}

// clearBaselines empties the baseline cache of the work tree at repo.
func clearBaselines(repo *orket.Repo) error {
	err := os.Remove(store.BaselinesPath(repo.Root))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
