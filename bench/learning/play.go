package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/orket/orket/store"
)

// A result is what one task did, in one of the two plays.
type result struct {
	Code     string
	Failed   bool // the task failed on something (a step, a refusal, a reviewer)
	Rejected bool // a reviewer rejected its kept change
	// Shown are the advice the run was given, in the order the agent
	// reads it: the lesson advisories, then the earlier reviews; each as
	// the lessons or feedback entries it rests on.
	Shown    []shown
	Lessons  []string // the lessons the run recorded
	Feedback string   // the feedback entry a rejection recorded
	Recorded []string // other feedback entries the run recorded (a refusal)
	Flaky    bool     // a step failed, then passed on retry: a flaky lesson
	RunID    string
	Applied  []int // the remedies the agent applied
}

type shown struct {
	Kind string   // "lesson" or "review"
	IDs  []string // lesson ids, or feedback entry ids
	Text string
	Why  string // a lesson's evidence
}

// showed reports whether a lesson was shown already.
func (r *result) showed(id string) bool {
	for _, s := range r.Shown {
		if s.Kind == "lesson" && len(s.IDs) == 1 && s.IDs[0] == id {
			return true
		}
	}
	return false
}

// An advisory is a lesson advisory, as --json writes it.
type advisory struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Why   struct {
		Evidence string `json:"evidence"`
	} `json:"why"`
}

// preflightTold is what an agent reads of orket preflight --json: its advisories
// and checks, not the echo of its own request (the scope, the paths it
// declared), and the advisories.
func preflightTold(preflightJSON string) (string, []advisory, error) {
	var pre struct {
		Advisories json.RawMessage `json:"advisories"`
		Preflight  json.RawMessage `json:"preflight"`
	}
	if err := json.Unmarshal([]byte(preflightJSON), &pre); err != nil {
		return "", nil, fmt.Errorf("orket preflight: %v\n%s", err, preflightJSON)
	}
	var adv []advisory
	if err := json.Unmarshal(pre.Advisories, &adv); err != nil {
		return "", nil, fmt.Errorf("orket preflight: %v\n%s", err, preflightJSON)
	}
	return string(pre.Advisories) + "\n" + string(pre.Preflight), adv, nil
}

// plays are a trace's two plays: with the memory, and with it wiped
// before every run.
type plays struct {
	On, Wiped []result
}

// play builds the trace's project once and plays its tasks in a copy of
// it, twice.
func play(tr Trace, orket, self string, keep, verbose, wipedOnly bool) (*plays, error) {
	work, err := os.MkdirTemp("", "orket-learning-"+tr.Name+"-")
	if err != nil {
		return nil, err
	}
	if !keep {
		defer os.RemoveAll(work)
	} else {
		fmt.Println("work directory:", work)
	}
	tmpl := filepath.Join(work, "template")
	if err := build(tr, tmpl, work); err != nil {
		return nil, err
	}
	res := &plays{}
	modes := []bool{false, true}
	if wipedOnly {
		modes = modes[1:]
	}
	for _, wiped := range modes {
		dir := filepath.Join(work, map[bool]string{false: "memory", true: "wiped"}[wiped])
		if out, err := exec.Command("cp", "-a", tmpl, dir).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("copy: %v: %s", err, out)
		}
		p := &player{tr: tr, dir: dir, orket: orket, self: self, home: filepath.Join(work, "home"), wiped: wiped, verbose: verbose,
			held: map[string]net.Listener{}}
		rs, err := p.playAll()
		p.closeAll()
		if err != nil {
			return nil, err
		}
		if wiped {
			res.Wiped = rs
		} else {
			res.On = rs
		}
	}
	return res, nil
}

// build writes the project, commits it and runs its setup.
func build(tr Trace, dir, work string) error {
	home := filepath.Join(work, "home")
	for _, d := range []string{dir, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Agent\n\temail = agent@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		return err
	}
	for p, content := range tr.Files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			return err
		}
	}
	script := append([]string{"git init -q", "git add -A", "git commit -q -m init"}, tr.Setup...)
	script = append(script, "git add -A", "git commit -q -m setup --allow-empty")
	for _, s := range script {
		cmd := exec.Command("sh", "-c", s)
		cmd.Dir, cmd.Env = dir, baseEnv(home)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("setup %q: %v\n%s", s, err, out)
		}
	}
	return nil
}

// baseEnv is the environment of the bench's commands: git isolated from
// the machine, orket never asking.
func baseEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", strings.HasPrefix(k, "GIT_"), strings.HasPrefix(k, "ORKET_"), k == "CI":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "NO_COLOR=1")
}

// A player plays one trace's tasks in one copy of its project.
type player struct {
	tr               Trace
	dir, orket, self string
	home             string
	wiped, verbose   bool
	held             map[string]net.Listener // ports the bench holds, by name
}

func (p *player) closeAll() {
	for n, l := range p.held {
		l.Close()
		delete(p.held, n)
	}
}

// hold makes port name's listener exist (true) or not.
func (p *player) hold(name string, on bool) error {
	l, held := p.held[name]
	switch {
	case on && !held:
		nl, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p.tr.Ports[name]))
		if err != nil {
			return fmt.Errorf("listen on %s: %w", name, err)
		}
		go func() {
			for {
				c, err := nl.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		p.held[name] = nl
	case !on && held:
		l.Close()
		delete(p.held, name)
	}
	return nil
}

func (p *player) playAll() ([]result, error) {
	var out []result
	for i, t := range p.tr.Tasks {
		r, err := p.playTask(i, t)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
		if p.verbose {
			mode := "memory"
			if p.wiped {
				mode = "wiped"
			}
			fmt.Printf("%s %-6s %-4s %-9s %-26s advice %d applied %v\n", p.tr.Name, mode, t.ID, t.Hazard, r.Code, len(r.Shown), r.Applied)
		}
		out = append(out, r)
	}
	return out, nil
}

// services are the ports a trace's tests dial (up unless a task says
// down); the others are ports tests listen on (free unless a task holds
// them).
func (p *player) environment(t Task) error {
	for name := range p.tr.Ports {
		up := isService(name) && !slices.Contains(t.Down, name) || slices.Contains(t.Busy, name)
		if err := p.hold(name, up); err != nil {
			return err
		}
	}
	return nil
}

// isService: a port named service-* is one tests dial; any other, one
// they listen on.
func isService(name string) bool { return strings.HasPrefix(name, "service-") }

// playTask plays one task: the world it meets, what preflight says and
// what the agent does of it, the run, a reviewer's no, a person's
// approvals, and the commit the next task starts from.
func (p *player) playTask(i int, t Task) (result, error) {
	var r result
	env, err := p.setUp(t)
	if err != nil {
		return r, err
	}
	pre, env, err := p.preflight(t, env, &r)
	if err != nil {
		return r, err
	}
	// The run: the agent is this program, told the task and what
	// preflight said.
	state, err := writeState(p.dir, i, t, pre)
	if err != nil {
		return r, err
	}
	defer os.Remove(state)
	rec, err := p.run(t, env, state, &r)
	if err != nil {
		return r, err
	}
	if err := p.review(t, env, rec, &r); err != nil {
		return r, err
	}
	// A person approves what orket proposes.
	if !p.wiped {
		if err := p.approveAll(env); err != nil {
			return r, err
		}
	}
	return r, p.commit(t)
}

// setUp makes the world the task meets: the memory wiped (in the wiped
// play), its ports and services, and its environment: the vault but
// what the task lacks, and FLAKE for a flaky task.
func (p *player) setUp(t Task) ([]string, error) {
	if p.wiped {
		if err := p.wipe(); err != nil {
			return nil, err
		}
	}
	if err := p.environment(t); err != nil {
		return nil, err
	}
	env := baseEnv(p.home)
	for k, v := range p.tr.Vault {
		if !slices.Contains(t.Unset, k) {
			env = append(env, k+"="+v)
		}
	}
	if t.Flaky {
		env = append(env, "FLAKE="+filepath.Join(filepath.Dir(p.home), fmt.Sprintf("flake-%v-%s", p.wiped, t.ID)))
	}
	return env, nil
}

// preflight is what orket preflight says before the run (its advisories
// are shown in r), and what the agent does of it: it returns the text
// the agent read and the run's environment, the remedies it names
// applied.
func (p *player) preflight(t Task, env []string, r *result) (string, []string, error) {
	out, err := p.orketOut(env, append(append([]string{"preflight", "--json"}, scopeArgs(t)...), touchArgs(t)...)...)
	if err != nil {
		return "", nil, err
	}
	pre, preAdv, err := preflightTold(out)
	if err != nil {
		return "", nil, err
	}
	for _, a := range preAdv {
		r.Shown = append(r.Shown, lessonShown(a))
	}
	return pre, p.remedyBefore(t, pre, env, r), nil
}

// remedyBefore does before the run what the remedies whose trigger the
// agent read do: variables set from the vault, held ports freed,
// services started. It notes in r the remedies that acted.
func (p *player) remedyBefore(t Task, pre string, env []string, r *result) []string {
	for k, rem := range t.Remedies {
		if !matches(rem.Trigger, pre) {
			continue
		}
		acted := false
		for _, v := range rem.SetEnv {
			env = append(env, v+"="+p.tr.Vault[v])
			acted = true
		}
		for _, n := range rem.Free {
			acted = acted || p.held[n] != nil
			p.hold(n, false)
		}
		for _, n := range rem.Start {
			p.hold(n, true)
			acted = true
		}
		if acted {
			r.Applied = append(r.Applied, k)
		}
	}
	return env
}

// A runRecord is what orket run --json says of a run.
type runRecord struct {
	Code       string     `json:"code"`
	RunID      string     `json:"run_id"`
	LessonIDs  []string   `json:"lesson_ids"`
	Advisories []advisory `json:"advisories"`
	Feedback   []struct {
		Kind string   `json:"kind"`
		IDs  []string `json:"entry_ids"`
		Text string   `json:"text"`
	} `json:"feedback"`
	Plan struct {
		TouchSet []string `json:"touch_set"`
	} `json:"plan"`
}

// run runs the task through orket, with this program as its agent
// (state is what it is told), and notes in r what the run did and
// showed.
func (p *player) run(t Task, env []string, state string, r *result) (runRecord, error) {
	args := append(append([]string{"run", "--yes", "--json", "--agent", "bench", "--task", t.ID}, scopeArgs(t)...), touchArgs(t)...)
	args = append(args, "--", p.self, "agent", state)
	out, _ := p.orketOut(env, args...)
	var rec runRecord
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		return rec, fmt.Errorf("orket run: %v\n%s", err, out)
	}
	r.Code, r.RunID, r.Lessons = rec.Code, rec.RunID, rec.LessonIDs
	r.Flaky = r.Code == "OK" && len(rec.LessonIDs) > 0 // a step passed on retry
	r.showRun(rec)
	r.Failed = r.Code != "OK"
	var err error
	if r.Recorded, err = p.refusals(r.RunID); err != nil {
		return rec, err
	}
	if applied, err := readApplied(state); err == nil {
		r.Applied = append(r.Applied, applied...)
	}
	return rec, nil
}

func lessonShown(a advisory) shown {
	return shown{Kind: "lesson", IDs: []string{a.ID}, Text: a.Title, Why: a.Why.Evidence}
}

// showRun adds what the run showed besides what preflight did (the
// agent reads both). What was refused or rejected over exactly what the
// task touches comes first in what the agent reads (ORKET_ADVISORIES),
// the rest of the reviews last.
func (r *result) showRun(rec runRecord) {
	for _, a := range rec.Advisories {
		if !r.showed(a.ID) {
			r.Shown = append(r.Shown, lessonShown(a))
		}
	}
	var exact, other []shown
	for _, f := range rec.Feedback {
		sh := shown{Kind: "review", IDs: f.IDs, Text: f.Text, Why: f.Kind}
		if f.Kind == "refusal" || f.Kind == "path" {
			exact = append(exact, sh)
		} else {
			other = append(other, sh)
		}
	}
	r.Shown = append(append(exact, r.Shown...), other...)
}

// review is a reviewer's no to a kept change touching what they guard.
func (p *player) review(t Task, env []string, rec runRecord, r *result) error {
	rv := t.Review
	if rv == nil || r.Code != "OK" || !touchesAny(rec.Plan.TouchSet, rv.Paths) {
		return nil
	}
	out, err := p.orketOut(env, "reject", "--json", "--reason", rv.Reason, rec.RunID)
	if err != nil {
		return fmt.Errorf("orket reject: %v\n%s", err, out)
	}
	var rj struct {
		ID string `json:"id"`
	}
	json.Unmarshal([]byte(out), &rj)
	r.Rejected, r.Failed, r.Feedback = true, true, rj.ID
	return nil
}

// commit lands the task's change: the next task starts from a clean
// tree.
func (p *player) commit(t Task) error {
	cmd := exec.Command("sh", "-c", "git add -A && git commit -q --allow-empty -m \"$1\"", "sh", t.ID)
	cmd.Dir, cmd.Env = p.dir, baseEnv(p.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("commit %s: %v\n%s", t.ID, err, out)
	}
	return nil
}

// refusals are the ids of the refusals a run recorded as feedback.
func (p *player) refusals(runID string) ([]string, error) {
	b, err := os.ReadFile(store.Path(filepath.Join(p.dir, store.Dir), store.FeedbackFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, line := range bytes.Split(b, []byte("\n")) {
		var e struct {
			ID    string `json:"id"`
			Type  string `json:"type"`
			RunID string `json:"run_id"`
		}
		if json.Unmarshal(line, &e) == nil && e.RunID == runID && runID != "" && e.Type == "refusal" {
			ids = append(ids, e.ID)
		}
	}
	return ids, nil
}

// wipe takes the memory out: lessons, verdicts, reviews, guardrails,
// the agent memory (orket's other state stays: it is not memory).
func (p *player) wipe() error {
	for _, d := range []string{path.Dir(store.LessonsFile), store.GuardrailsDir, store.RejectedDir} {
		if err := os.RemoveAll(store.Path(filepath.Join(p.dir, store.Dir), d)); err != nil {
			return err
		}
	}
	return nil
}

// approveAll approves every pending guardrails proposal, as a person
// who reads them does.
func (p *player) approveAll(env []string) error {
	out, err := p.orketOut(env, "lessons", "review", "--json")
	if err != nil {
		return fmt.Errorf("lessons review: %v\n%s", err, out)
	}
	var pending struct {
		Pending []struct {
			ID string `json:"id"`
		} `json:"pending"`
	}
	if err := json.Unmarshal([]byte(out), &pending); err != nil {
		return fmt.Errorf("lessons review: %v\n%s", err, out)
	}
	for _, pr := range pending.Pending {
		if out, err := p.orketOut(env, "lessons", "approve", "--by", "person", pr.ID); err != nil {
			// A proposal that no longer applies stays; a person rejects it later.
			if !strings.Contains(out, "no longer applies") {
				return fmt.Errorf("lessons approve %s: %v\n%s", pr.ID, err, out)
			}
		}
	}
	return nil
}

// orketOut runs orket in the project and returns its standard output; an
// exit status that is an outcome (not a crash) is no error.
func (p *player) orketOut(env []string, args ...string) (string, error) {
	cmd := exec.Command(p.orket, args...)
	cmd.Dir, cmd.Env = p.dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() != 70 && ee.ExitCode() != 2 {
		err = nil
	}
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

func scopeArgs(t Task) []string {
	var out []string
	for _, s := range t.Scope {
		out = append(out, "--scope", s)
	}
	return out
}

// touchArgs declare what the agent's edit means to change: its plan,
// before it reads anything orket says.
func touchArgs(t Task) []string {
	var paths []string
	for p := range t.Edit.Write {
		paths = append(paths, p)
	}
	for p := range t.Edit.Append {
		paths = append(paths, p)
	}
	for _, r := range t.Edit.Replace {
		paths = append(paths, r.Path)
	}
	sort.Strings(paths)
	var out []string
	for i, p := range paths {
		if i == 0 || paths[i-1] != p {
			out = append(out, "--touch", p)
		}
	}
	return out
}

// touchesAny reports whether touch holds one of paths.
func touchesAny(touch, paths []string) bool {
	return slices.ContainsFunc(touch, func(t string) bool { return slices.Contains(paths, t) })
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
