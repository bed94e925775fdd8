package lessons

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/orket/orket/preflight"
)

// A Query describes the run about to start.
type Query struct {
	Command  string   // "run"
	Scope    []string // the run's scope patterns
	TouchSet []string // planned or changed paths; may be empty
	Commands []string // the verify profile's commands
	Now      time.Time
	HalfLife time.Duration
	TopK     int
}

// An Advisory is a past failure judged relevant to a run: lessons that
// describe the same failure folded into one.
type Advisory struct {
	ID               string            `json:"id"` // the latest lesson's
	Title            string            `json:"title"`
	Tags             []string          `json:"tags"`
	FailedCommand    string            `json:"failed_command"`
	FirstError       string            `json:"first_error,omitempty"`
	Count            int               `json:"count"`
	FirstSeen        time.Time         `json:"first_seen"`
	LastSeen         time.Time         `json:"last_seen"`
	Score            float64           `json:"score"`
	Why              Explain           `json:"why"`
	SuggestedActions []string          `json:"suggested_actions"`
	PreflightChecks  []preflight.Check `json:"preflight_checks"`
}

// Explain is a score's parts: each signal in 0..1, and the formula.
type Explain struct {
	SameCommand       float64 `json:"same_command"`
	ScopeOverlap      float64 `json:"scope_overlap"`
	TouchIntersection float64 `json:"touch_intersection"`
	SameFailedCommand float64 `json:"same_failed_command"`
	TagRelevance      float64 `json:"tag_relevance"`
	Recency           float64 `json:"recency"`
	Formula           string  `json:"formula"`
}

// Formula is the documented scoring formula.
const Formula = "score = recency * (1*same_command + 2*scope_overlap + 3*touch_intersection + 2*same_failed_command + 2*tag_relevance) / 10; recency = 0.5^(age/half_life)"

// MinScore is the least score an advisory needs to be shown.
const MinScore = 0.15

// slim is what scoring reads of a lesson: everything but the output tail.
type slim struct {
	SchemaVersion string    `json:"schema_version"`
	ID            string    `json:"id"`
	CreatedAt     time.Time `json:"created_at"`
	Command       string    `json:"command"`
	Request       struct {
		Scope []string `json:"scope"`
	} `json:"request"`
	Plan struct {
		TouchSet []string `json:"touch_set"`
	} `json:"plan"`
	Verify struct {
		FailedCommand string `json:"failed_command"`
	} `json:"verify"`
	Classification struct {
		Tags       []string `json:"tags"`
		FirstError string   `json:"first_error"`
	} `json:"classification"`
	Advice struct {
		Title            string            `json:"title"`
		SuggestedActions []string          `json:"suggested_actions"`
		PreflightChecks  []preflight.Check `json:"preflight_checks"`
	} `json:"advice"`
}

// envTags recur whatever the edit: the environment, not the code, failed.
var envTags = map[string]bool{"missing_env_var": true, "missing_dependency": true, "port_in_use": true,
	"db_connection_failed": true, "build_config_error": true}

// Advisories streams the log and returns the top K advisories for q, best
// first, in a deterministic order. Memory stays proportional to the number
// of distinct failures, not to the log.
func (s *Store) Advisories(q Query) ([]Advisory, []Damaged, error) {
	f, err := os.Open(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return []Advisory{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return advisories(f, q)
}

func advisories(r io.Reader, q Query) ([]Advisory, []Damaged, error) {
	commands := map[string]bool{}
	for _, c := range q.Commands {
		commands[c] = true
	}
	touch := map[string]bool{}
	touchDirs := map[string]bool{}
	for _, p := range q.TouchSet {
		touch[p] = true
		touchDirs[path.Dir(p)] = true
	}
	folds := map[string]*Advisory{}
	br := bufio.NewReaderSize(r, 1<<20)
	var damaged []Damaged
	var l slim
	for n := 1; ; n++ {
		line, rerr := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			l = slim{}
			if err := json.Unmarshal(cutField(line, `"output_tail":"`), &l); err != nil || l.ID == "" ||
				(l.SchemaVersion != SchemaVersion && l.SchemaVersion != originSchema) {
				damaged = append(damaged, Damaged{Line: n, Err: "not a lesson"})
			} else {
				score(&l, q, commands, touch, touchDirs, folds)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, damaged, rerr
		}
	}
	out := make([]Advisory, 0, len(folds))
	for _, a := range folds {
		if a.Score >= MinScore {
			out = append(out, *a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Score != b.Score:
			return a.Score > b.Score
		case a.Count != b.Count:
			return a.Count > b.Count
		case !a.LastSeen.Equal(b.LastSeen):
			return a.LastSeen.After(b.LastSeen)
		}
		return a.ID < b.ID
	})
	if q.TopK >= 0 && len(out) > q.TopK {
		out = out[:q.TopK]
	}
	return out, damaged, nil
}

func score(l *slim, q Query, commands, touch, touchDirs map[string]bool, folds map[string]*Advisory) {
	var e Explain
	if l.Command == q.Command {
		e.SameCommand = 1
	}
	e.ScopeOverlap = scopeOverlap(q.Scope, l.Request.Scope)
	if len(touch) > 0 && len(l.Plan.TouchSet) > 0 {
		hits, near := 0, 0
		for _, p := range l.Plan.TouchSet {
			if touch[p] {
				hits++
			} else if touchDirs[path.Dir(p)] {
				near++
			}
		}
		e.TouchIntersection = math.Min(1, (float64(hits)+0.5*float64(near))/float64(len(touch)))
	}
	if commands[l.Verify.FailedCommand] {
		e.SameFailedCommand = 1
	}
	switch {
	case len(l.Classification.Tags) == 0:
		e.TagRelevance = 0.25
	default:
		e.TagRelevance = 0.5
		for _, t := range l.Classification.Tags {
			if envTags[t] {
				e.TagRelevance = 1
			}
		}
	}
	age := q.Now.Sub(l.CreatedAt)
	if age < 0 {
		age = 0
	}
	e.Recency = 1
	if q.HalfLife > 0 {
		e.Recency = math.Pow(0.5, float64(age)/float64(q.HalfLife))
	}
	// Relevant only with some evidence beyond being a run at all.
	if e.ScopeOverlap == 0 && e.TouchIntersection == 0 && e.SameFailedCommand == 0 {
		return
	}
	base := (1*e.SameCommand + 2*e.ScopeOverlap + 3*e.TouchIntersection + 2*e.SameFailedCommand + 2*e.TagRelevance) / 10
	s := round3(e.Recency * base)
	e.Formula = Formula
	e.ScopeOverlap, e.TouchIntersection, e.Recency = round3(e.ScopeOverlap), round3(e.TouchIntersection), round3(e.Recency)
	tags := append([]string{}, l.Classification.Tags...)
	sort.Strings(tags)
	key := l.Verify.FailedCommand + "\x00" + strings.Join(tags, ",") + "\x00" + l.Classification.FirstError
	a := folds[key]
	if a == nil {
		a = &Advisory{FailedCommand: l.Verify.FailedCommand, Tags: tags, FirstError: l.Classification.FirstError,
			FirstSeen: l.CreatedAt, LastSeen: l.CreatedAt}
		folds[key] = a
	}
	a.Count++
	if l.CreatedAt.Before(a.FirstSeen) {
		a.FirstSeen = l.CreatedAt
	}
	// The latest lesson speaks for the fold; the best score ranks it.
	if !l.CreatedAt.Before(a.LastSeen) || a.ID == "" {
		a.LastSeen = l.CreatedAt
		a.ID, a.Title = l.ID, l.Advice.Title
		a.SuggestedActions, a.PreflightChecks = l.Advice.SuggestedActions, l.Advice.PreflightChecks
	}
	if s > a.Score {
		a.Score, a.Why = s, e
	}
	if a.SuggestedActions == nil {
		a.SuggestedActions = []string{}
	}
	if a.PreflightChecks == nil {
		a.PreflightChecks = []preflight.Check{}
	}
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// scopeOverlap is the fraction of the run's scope patterns that overlap
// one of the lesson's: equal, or one's directory part contains the other.
func scopeOverlap(run, lesson []string) float64 {
	if len(run) == 0 || len(lesson) == 0 {
		return 0
	}
	hit := 0
	for _, a := range run {
		pa := staticPrefix(a)
		for _, b := range lesson {
			pb := staticPrefix(b)
			if pa == pb || pa == "" || pb == "" || strings.HasPrefix(pa, pb+"/") || strings.HasPrefix(pb, pa+"/") {
				hit++
				break
			}
		}
	}
	return float64(hit) / float64(len(run))
}

// staticPrefix is a pattern's leading directories before any glob
// character: pkg/**/*.go -> pkg; pkg/api -> pkg/api; ** -> "".
func staticPrefix(p string) string {
	var out []string
	for _, seg := range strings.Split(p, "/") {
		if strings.ContainsAny(seg, "*?[{") {
			break
		}
		out = append(out, seg)
	}
	return strings.Join(out, "/")
}

// cutField blanks the value of a JSON string field without decoding it,
// so that scoring never parses output tails.
func cutField(line []byte, key string) []byte {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return line
	}
	start := i + len(key)
	for j := start; j < len(line); j++ {
		switch line[j] {
		case '\\':
			j++
		case '"':
			out := make([]byte, 0, len(line)-(j-start))
			out = append(out, line[:start]...)
			return append(out, line[j:]...)
		}
	}
	return line
}
