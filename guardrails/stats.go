package guardrails

// Statistics of agents and of their guardrails versions
// (docs/guardrails.md, Stats: each version measured before and after),
// from the evaluation log: error rate (the share of REJECT and ESCALATE
// verdicts), mean score, repeat-failure rate (the share of runs that
// failed on a fold they had been warned about: their Exposure lists it)
// and task completion rate (the share of the tasks in a sample with an
// APPROVE or CONDITIONAL run), overall and over SampleSize runs before and
// after each version. A version whose error rate is higher after than
// before, over a full sample each side, is flagged with a suggested
// rollback; nothing is rolled back automatically.
//
// The logs are read with a scanner that decodes only the fields used,
// so 100,000 evaluations are read well within 200 ms (docs/benchmarks.md).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/rawjson"
	"github.com/orket/orket/store"
	"github.com/orket/orket/verdict"
)

// A Run is what stats read of one evaluation.
type Run struct {
	RunID   string
	Agent   string
	Task    string
	Time    time.Time
	Verdict string
	Score   int
	Version int // the guardrails version the run was given (0: none or unknown)
	// Repeat: the run failed on a fold it had been warned about.
	Repeat bool
	// Reviewed: the run passed and a reviewer then rejected it (orket
	// reject).
	Reviewed bool
}

// Failed reports whether the run's verdict is REJECT or ESCALATE.
func (r *Run) Failed() bool { return r.Verdict == verdict.Reject || r.Verdict == verdict.Escalate }

// A Sample is a set of runs measured.
type Sample struct {
	Runs               int     `json:"runs"`
	ErrorRate          float64 `json:"error_rate"`
	MeanScore          float64 `json:"mean_score"`
	RepeatFailureRate  float64 `json:"repeat_failure_rate"`
	TaskCompletionRate float64 `json:"task_completion_rate"`
	// ReviewRejectionRate is the share of runs a reviewer rejected after
	// they passed, beside ErrorRate (the runs verification rejected).
	ReviewRejectionRate float64 `json:"review_rejection_rate"`
}

// Measure measures runs.
func Measure(runs []Run) Sample {
	ps := make([]*Run, len(runs))
	for i := range runs {
		ps[i] = &runs[i]
	}
	return measure(ps)
}

func measure(runs []*Run) Sample {
	s := Sample{Runs: len(runs)}
	if len(runs) == 0 {
		return s
	}
	errs, repeats, reviewed, score := 0, 0, 0, 0
	tasks := map[string]bool{}
	for _, r := range runs {
		if r.Failed() {
			errs++
		}
		if r.Reviewed {
			reviewed++
		}
		if r.Repeat {
			repeats++
		}
		score += r.Score
		done := (r.Verdict == verdict.Approve || r.Verdict == verdict.Conditional) && !r.Reviewed
		tasks[r.Task] = tasks[r.Task] || done
	}
	completed := 0
	for _, d := range tasks {
		if d {
			completed++
		}
	}
	n := float64(len(runs))
	s.ErrorRate = round(float64(errs)/n, 4)
	s.ReviewRejectionRate = round(float64(reviewed)/n, 4)
	s.MeanScore = round(float64(score)/n, 2)
	s.RepeatFailureRate = round(float64(repeats)/n, 4)
	s.TaskCompletionRate = round(float64(completed)/float64(len(tasks)), 4)
	return s
}

// A Suggestion is a rollback a person may want to run.
type Suggestion struct {
	To  int    `json:"to"` // the version to go back to (0: the version was the first; reject its lesson instead)
	Why string `json:"why"`
}

// A Comparison is a version's before and after.
type Comparison struct {
	Version   int       `json:"version"`
	Kind      string    `json:"kind"`
	CreatedAt time.Time `json:"created_at"`
	Current   bool      `json:"current"`
	Kept      bool      `json:"kept"`
	Before    Sample    `json:"before"`
	After     Sample    `json:"after"`
	Full      bool      `json:"full_sample"` // SampleSize runs on each side
	Worse     bool      `json:"worse"`       // full, and a higher error rate after
	// SuggestedRollback is set on a worse version.
	SuggestedRollback *Suggestion `json:"suggested_rollback,omitempty"`
}

// Performance returns the comparison as a version's performance field
// (docs/guardrails.md, Stats).
func (c Comparison) Performance() *Performance {
	p := &Performance{RunsBefore: c.Before.Runs, RunsAfter: c.After.Runs}
	if c.Before.Runs > 0 {
		q, e := c.Before.MeanScore, c.Before.ErrorRate
		p.QualityBefore, p.ErrorRateBefore = &q, &e
	}
	if c.After.Runs > 0 {
		q, e := c.After.MeanScore, c.After.ErrorRate
		p.QualityAfter, p.ErrorRateAfter = &q, &e
	}
	return p
}

// AgentStats are one agent's figures.
type AgentStats struct {
	Agent string `json:"agent"`
	Sample
	LessonsApplied    int          `json:"lessons_applied"`
	Versions          int          `json:"versions"` // written, kept or not
	Rollbacks         int          `json:"rollbacks"`
	RollbackFrequency float64      `json:"rollback_frequency"` // rollbacks per version written
	CurrentVersion    int          `json:"current_version"`
	Comparisons       []Comparison `json:"comparisons"`
}

// A Flag is a version that made things worse.
type Flag struct {
	Agent   string     `json:"agent"`
	Version int        `json:"version"`
	Suggest Suggestion `json:"suggested_rollback"`
}

// Stats are orket stats' figures (docs/guardrails.md, Stats).
type Stats struct {
	ErrorRateByAgent    map[string]float64 `json:"error_rate_by_agent"`
	AverageScore        float64            `json:"average_score"`
	AverageScoreByAgent map[string]float64 `json:"average_score_by_agent"`
	LessonsAppliedCount int                `json:"lessons_applied_count"`
	PromptVersionsCount int                `json:"prompt_versions_count"`
	RollbackFrequency   float64            `json:"rollback_frequency"`
	SampleSize          int                `json:"sample_size"`
	Runs                int                `json:"runs"`
	Agents              []AgentStats       `json:"agents"`
	Flagged             []Flag             `json:"flagged"`
}

// ComputeStats computes the figures from runs (any order) and each
// agent's version history; sampleSize is stats.sample_size. Runs of an
// agent are ordered by time; the runs before a version are the last
// sampleSize before its creation; the runs after are the first
// sampleSize from its creation that were given it (Run.Version), or,
// for runs that do not say, that started before the next version.
func ComputeStats(runs []Run, histories map[string][]Event, sampleSize int) *Stats {
	if sampleSize <= 0 {
		sampleSize = DefaultConfig().SampleSize
	}
	st := &Stats{ErrorRateByAgent: map[string]float64{}, AverageScoreByAgent: map[string]float64{}, SampleSize: sampleSize,
		Runs: len(runs), Agents: []AgentStats{}, Flagged: []Flag{}}
	byAgent, agents := runsByAgent(runs, histories)
	totalScore := 0
	rollbacks := 0
	for _, a := range agents {
		rs := byAgent[a]
		if !sort.SliceIsSorted(rs, func(i, j int) bool { return rs[i].Time.Before(rs[j].Time) }) {
			sort.SliceStable(rs, func(i, j int) bool { return rs[i].Time.Before(rs[j].Time) })
		}
		for _, r := range rs {
			totalScore += r.Score
		}
		as, flags := agentStats(a, rs, histories[a], sampleSize)
		if len(rs) > 0 {
			st.ErrorRateByAgent[a] = as.ErrorRate
			st.AverageScoreByAgent[a] = as.MeanScore
		}
		st.Flagged = append(st.Flagged, flags...)
		st.LessonsAppliedCount += as.LessonsApplied
		st.PromptVersionsCount += as.Versions
		rollbacks += as.Rollbacks
		st.Agents = append(st.Agents, as)
	}
	if len(runs) > 0 {
		st.AverageScore = round(float64(totalScore)/float64(len(runs)), 2)
	}
	if st.PromptVersionsCount > 0 {
		st.RollbackFrequency = round(float64(rollbacks)/float64(st.PromptVersionsCount), 4)
	}
	return st
}

// runsByAgent returns the runs of each agent (in the order of runs), an
// agent with a history and no runs included, and the agents, sorted.
func runsByAgent(runs []Run, histories map[string][]Event) (map[string][]*Run, []string) {
	count := map[string]int{}
	for i := range runs {
		count[runs[i].Agent]++
	}
	byAgent := make(map[string][]*Run, len(count))
	for a, n := range count {
		byAgent[a] = make([]*Run, 0, n)
	}
	for i := range runs {
		byAgent[runs[i].Agent] = append(byAgent[runs[i].Agent], &runs[i])
	}
	for a := range histories {
		if _, ok := byAgent[a]; !ok {
			byAgent[a] = nil
		}
	}
	agents := make([]string, 0, len(byAgent))
	for a := range byAgent {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	return byAgent, agents
}

// agentStats computes an agent's figures from its runs (sorted by time)
// and its version history, and flags the versions that made things
// worse.
func agentStats(agent string, rs []*Run, evs []Event, sampleSize int) (AgentStats, []Flag) {
	as := AgentStats{Agent: agent, Sample: measure(rs), Comparisons: []Comparison{}}
	var flags []Flag
	lessons := map[string]bool{}
	for i, e := range evs {
		as.Versions++
		if e.Kind == KindRollback {
			as.Rollbacks++
		}
		for _, l := range e.Lessons {
			if e.Kind == KindApproval {
				lessons[l] = true
			}
		}
		if e.Version > as.CurrentVersion {
			as.CurrentVersion = e.Version
		}
		var next time.Time
		if i+1 < len(evs) {
			next = evs[i+1].Time
		}
		c := compare(rs, e, next, sampleSize)
		c.Current = i == len(evs)-1
		if c.Worse {
			c.SuggestedRollback = suggestRollback(e, c)
			flags = append(flags, Flag{Agent: agent, Version: e.Version, Suggest: *c.SuggestedRollback})
		}
		as.Comparisons = append(as.Comparisons, c)
	}
	as.LessonsApplied = len(lessons)
	if as.Versions > 0 {
		as.RollbackFrequency = round(float64(as.Rollbacks)/float64(as.Versions), 4)
	}
	return as, flags
}

// suggestRollback is the rollback suggested for version e, which c found
// worse: to the version before it, or, for the first, its lesson's
// rejection.
func suggestRollback(e Event, c Comparison) *Suggestion {
	to := e.Previous
	why := fmt.Sprintf("error rate %.0f%% over the %d runs after v%d, %.0f%% over the %d before", 100*c.After.ErrorRate, c.After.Runs, e.Version, 100*c.Before.ErrorRate, c.Before.Runs)
	if to == 0 {
		why += "; it is the first version: reject or remove its lesson instead"
	} else {
		why += fmt.Sprintf("; roll back to v%d", to)
	}
	return &Suggestion{To: to, Why: why}
}

// compare measures the runs around version e (rs sorted by time).
func compare(rs []*Run, e Event, next time.Time, n int) Comparison {
	c := Comparison{Version: e.Version, Kind: e.Kind, CreatedAt: e.Time, Kept: e.Kept}
	at := sort.Search(len(rs), func(i int) bool { return !rs[i].Time.Before(e.Time) })
	before := rs[max(0, at-n):at]
	var after []*Run
	for i := at; i < len(rs) && len(after) < n; i++ {
		r := rs[i]
		switch {
		case r.Version == e.Version:
			after = append(after, r)
		case r.Version == 0 && (next.IsZero() || r.Time.Before(next)):
			after = append(after, r)
		case r.Version > e.Version, r.Version == 0:
			i = len(rs) // superseded
		}
	}
	c.Before, c.After = measure(before), measure(after)
	c.Full = c.Before.Runs == n && c.After.Runs == n
	// Worse: more runs rejected after, by verification or in review.
	c.Worse = c.Full && c.After.ErrorRate+c.After.ReviewRejectionRate > c.Before.ErrorRate+c.Before.ReviewRejectionRate
	return c
}

// ReadRuns reads the evaluation log (of one agent; "": all) into runs,
// marking repeats from the exposure log (which may be missing). Damaged
// lines are skipped; verify-only runs (edit_source none) are not runs of
// an agent.
func ReadRuns(evaluations, exposures, agent string) ([]Run, error) {
	var runs []Run
	if fi, err := os.Stat(evaluations); err == nil {
		runs = make([]Run, 0, fi.Size()/400+16) // a line is about 450 bytes
	}
	intern := interner{}
	folds := foldKeys{}
	failing := map[string]int{} // run id -> index in runs, of the failed runs
	foldOf := map[int]string{}  // index in runs -> the failure's fold key, quoted
	skip := otherAgent(agent)
	err := scanLog(evaluations, func(line []byte) {
		if skip(line) {
			return
		}
		l, ok := readRun(line, agent, intern)
		if !ok {
			return
		}
		if l.Failed() && exposures != "" {
			failing[l.RunID] = len(runs)
			foldOf[len(runs)] = folds.key(l.cmd, l.tags, l.first)
		}
		runs = append(runs, l.Run)
	})
	if err != nil || len(failing) == 0 {
		return runs, err
	}
	return runs, markRepeats(exposures, runs, failing, foldOf)
}

// A runLine is a Run read from an evaluation line, with the raw JSON of
// what its failure's fold is made of.
type runLine struct {
	Run
	cmd, tags, first []byte
}

// readRun reads a run of agent ("": any) from an evaluation line; ok is
// false for a damaged line, a verify-only run and another agent's.
func readRun(line []byte, agent string, intern interner) (l runLine, ok bool) {
	r := &l.Run
	var runID, edit, stamp []byte
	ok = rawjson.Object(line, func(k, v []byte) {
		switch string(k) {
		case "run_id":
			runID = v
		case "agent":
			r.Agent = intern.string(v)
		case "task":
			r.Task = intern.string(v)
		case "time":
			stamp = v
		case "verdict":
			r.Verdict = intern.string(v)
		case "score":
			r.Score, _ = strconv.Atoi(string(v))
		case "guardrails_version":
			r.Version, _ = strconv.Atoi(string(v))
		case "edit_source":
			edit = v
		case "failed_command":
			l.cmd = v
		case "tags":
			l.tags = v
		case "first_error":
			l.first = v
		}
	})
	if !ok || len(runID) < 3 || r.Verdict == "" || string(edit) == `"none"` {
		return l, false
	}
	if r.Agent == "" {
		r.Agent = "default"
	}
	if agent != "" && r.Agent != agent {
		return l, false
	}
	r.Time = parseTime(stamp)
	r.RunID = jsonString(runID)
	return l, true
}

// An interner returns one string for equal JSON strings (up to 100,000 of
// them): the agents, tasks and verdicts of many runs are few values.
type interner map[string]string

// string is the string a raw JSON value holds ("" for anything else).
func (in interner) string(v []byte) string {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return jsonString(v)
	}
	raw := v[1 : len(v)-1]
	if s, ok := in[string(raw)]; ok {
		return s
	}
	s := string(raw)
	if len(in) < 100000 {
		in[s] = s
	}
	return s
}

// foldKeys remembers the fold keys of the failures read: many failures
// are of the same command, tags and first error.
type foldKeys map[string]string

// key returns the quoted fold key (with no directory) of a failure, from
// the raw JSON of its failed command, tags and first error.
func (m foldKeys) key(cmd, tags, first []byte) string {
	raw := string(cmd) + "\x00" + string(tags) + "\x00" + string(first)
	k, seen := m[raw]
	if !seen {
		var t []string
		json.Unmarshal(tags, &t)
		k = `"` + FoldOf("", jsonString(cmd), t, jsonString(first)).KeyNoDir() + `"`
		m[raw] = k
	}
	return k
}

// markRepeats marks the failed runs (failing: run id -> index in runs)
// whose exposure, in the exposure log, lists their fold (foldOf: index in
// runs -> quoted fold key) as repeats.
func markRepeats(exposures string, runs []Run, failing map[string]int, foldOf map[int]string) error {
	runKey := []byte(`"run_id":"`)
	return scanLog(exposures, func(line []byte) {
		// Most runs did not fail: find the run id without scanning the
		// whole line (a key's quotes are never escaped, so this is the
		// key, not text inside a value).
		if i := bytes.Index(line, runKey); i >= 0 {
			rest := line[i+len(runKey):]
			if j := bytes.IndexByte(rest, '"'); j >= 0 && bytes.IndexByte(rest[:j], '\\') < 0 {
				if _, ok := failing[string(rest[:j])]; !ok {
					return
				}
			}
		}
		var runID, fs []byte
		rawjson.Object(line, func(k, v []byte) {
			switch string(k) {
			case "run_id":
				runID = v
			case "folds":
				fs = v
			}
		})
		if len(fs) < 3 || len(runID) < 3 {
			return
		}
		at, ok := failing[jsonString(runID)]
		if ok && bytes.Contains(fs, []byte(foldOf[at])) {
			runs[at].Repeat = true
		}
	})
}

// markReviewed marks the runs a reviewer rejected, from the task events
// (which may be missing).
func markReviewed(tasks string, runs []Run) error {
	reviewed := map[string]bool{}
	err := scanLog(tasks, func(line []byte) {
		if !bytes.Contains(line, []byte(`"type":"`+verdict.EventReview+`"`)) {
			return
		}
		var e verdict.TaskEvent
		if json.Unmarshal(line, &e) == nil && e.Type == verdict.EventReview {
			reviewed[e.RunID] = true
		}
	})
	for i := range runs {
		// A run verification rejected (kept with --keep-on-fail) is
		// counted there already.
		if reviewed[runs[i].RunID] && !runs[i].Failed() {
			runs[i].Reviewed = true
		}
	}
	return err
}

// Stats reads the evaluation and exposure logs and every agent's history
// (one agent's when agent is set) and computes the figures.
func (s *Store) Stats(ctx context.Context, agent string) (*Stats, error) {
	runs, err := ReadRuns(filepath.Join(s.OrketDir, filepath.FromSlash(store.EvaluationsFile)),
		filepath.Join(s.OrketDir, filepath.FromSlash(store.ExposuresFile)), agent)
	if err != nil {
		return nil, err
	}
	if err := markReviewed(filepath.Join(s.OrketDir, filepath.FromSlash(store.TasksFile)), runs); err != nil {
		return nil, err
	}
	agents := []string{agent}
	if agent == "" {
		if agents, err = s.Agents(); err != nil {
			return nil, err
		}
	}
	hist := map[string][]Event{}
	for _, a := range agents {
		evs, err := s.History(a)
		if err != nil {
			return nil, err
		}
		if len(evs) > 0 {
			hist[a] = evs
		}
	}
	return ComputeStats(runs, hist, s.Config.SampleSize), nil
}

// Agents lists the agents that have guardrails, by the name their
// history or latest version gives (else their directory's), sorted.
func (s *Store) Agents() ([]string, error) {
	root, err := s.root()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	names, err := root.ReadDirNames(store.GuardrailsDir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !validAgentDir(n) {
			continue
		}
		if st, err := root.Lstat(store.GuardrailsDir + "/" + n); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		name := ""
		if err := scanLog(filepath.Join(s.OrketDir, store.GuardrailsDir, n, store.HistoryFile), func(line []byte) {
			if name == "" {
				rawjson.Object(line, func(k, v []byte) {
					if string(k) == "agent" {
						name = jsonString(v)
					}
				})
			}
		}); err != nil {
			return nil, err
		}
		if name == "" {
			if v, err := s.newest(root, n); err == nil && v != nil {
				name = firstNonEmpty(v.Agent, n)
			}
		}
		if name != "" && AgentDir(name) == n && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// scanLog calls fn with each line of a JSON-lines log (store.Log.Scan).
func scanLog(path string, fn func(line []byte)) error {
	return (&store.Log{Path: path}).Scan(func(line []byte) error {
		fn(line)
		return nil
	})
}

// parseTime reads a JSON string holding an RFC 3339 time, as Go writes
// it ("2026-05-01T09:00:00.123Z", "...+02:00"), without allocating; the
// zero time when it is not one.
func parseTime(v []byte) time.Time {
	if len(v) < 22 || v[0] != '"' || v[len(v)-1] != '"' {
		return time.Time{}
	}
	b := v[1 : len(v)-1]
	num := func(i, n int) (int, bool) {
		x := 0
		for _, c := range b[i : i+n] {
			if c < '0' || c > '9' {
				return 0, false
			}
			x = x*10 + int(c-'0')
		}
		return x, true
	}
	if b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return slowTime(v)
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	h, ok4 := num(11, 2)
	mi, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return slowTime(v)
	}
	i, ns := 19, 0
	if i < len(b) && b[i] == '.' {
		i++
		digits := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if digits < 9 {
				ns = ns*10 + int(b[i]-'0')
				digits++
			}
			i++
		}
		for ; digits < 9; digits++ {
			ns *= 10
		}
	}
	if i == len(b)-1 && b[i] == 'Z' {
		return time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC)
	}
	return slowTime(v)
}

func slowTime(v []byte) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, jsonString(v))
	return t
}

// jsonString is the string a raw JSON value holds ("" for anything else).
func jsonString(v []byte) string {
	s, _ := rawjson.String(v)
	return s
}
