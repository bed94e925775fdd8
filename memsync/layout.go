package memsync

import (
	"path"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/orket/orket/store"
)

// RefName is the ref that holds the shared memory, in every clone and on
// the remote.
const RefName = "refs/orket/memory"

// The memory tree's format (store.MemoryFormat) is in its file "format".
// A tree of another format is refused rather than misread.
const formatFile = "format"

// A Kind says what makes two lines of a log the same record.
type Kind int

const (
	// Records: one id is one record. Two different lines with one id
	// (a record marked flaky, redacted, or written by a newer orket) are
	// versions of it; one wins (see beats), whatever the order they are
	// met in.
	Records Kind = iota
	// Events: one (id, time) is one record. A status change is a new
	// line with the same id and a later time; every such line is kept,
	// and the record's status is that of its latest line.
	Events
)

// A Log is one JSON-lines log that travels.
type Log struct {
	// Name is the log's path relative to .orket, and its name in the
	// memory tree: "memory/evaluations.jsonl".
	Name string
	// Path is the local file; "" is Name below the .orket directory.
	Path string
	Kind Kind
	// Schemas are the schema_version values of its records: Import
	// routes a record to the log that names its schema.
	Schemas []string
	// TimeFields are the fields holding a record's time (RFC 3339), the
	// first present one counting (at most four).
	TimeFields []string
	// AgentField is the path to the record's agent ("default" when
	// missing), for retention per agent.
	AgentField []string
	// Retained logs are subject to Retention; the others (task events,
	// proposals) keep every line: a person's word is never aged out.
	Retained bool
}

// DefaultLogs returns the logs that travel: lessons, evaluations,
// feedback, task events and guardrail proposals.
func DefaultLogs() []Log {
	return []Log{
		{Name: store.LessonsFile, Kind: Records, Schemas: []string{store.LessonSchema, store.OriginLessonSchema},
			TimeFields: []string{"created_at"}, AgentField: []string{"request", "agent"}, Retained: true},
		{Name: store.EvaluationsFile, Kind: Records, Schemas: []string{store.EvaluationSchema},
			TimeFields: []string{"time"}, AgentField: []string{"agent"}, Retained: true},
		{Name: store.FeedbackFile, Kind: Records, Schemas: []string{store.FeedbackSchema},
			TimeFields: []string{"time"}, AgentField: []string{"agent"}, Retained: true},
		{Name: store.TasksFile, Kind: Events, Schemas: []string{store.TaskEventSchema},
			TimeFields: []string{"time"}, AgentField: []string{"agent"}},
		{Name: store.ProposalsFile, Kind: Events, Schemas: []string{store.ProposalSchema},
			TimeFields: []string{"time", "updated_at", "created_at"}, AgentField: []string{"agent"}},
	}
}

// undatedDay is the shard of records without a time; it sorts first.
const undatedDay = "0000-00-00"

// shardDir is where a log's shards live in the memory tree:
// "memory/evaluations.jsonl.d".
func shardDir(logName string) string { return logName + ".d" }

// shardPath is the tree path of one day of a log:
// "memory/evaluations.jsonl.d/2026-07/2026-07-14.jsonl". Two levels keep
// each tree small, so a sync writes a few small trees, not one that lists
// every day.
func shardPath(logName, day string) string {
	return shardDir(logName) + "/" + day[:7] + "/" + day + ".jsonl"
}

// shardDay returns the day of a shard's tree path below the log's
// directory ("2026-07/2026-07-14.jsonl"), or false when the path is not a
// shard.
func shardDay(rel string) (string, bool) {
	const form = "0000-00/0000-00-00.jsonl"
	if len(rel) != len(form) {
		return "", false
	}
	for i := 0; i < len(form); i++ {
		switch c := rel[i]; form[i] {
		case '0':
			if c < '0' || c > '9' {
				return "", false
			}
		default:
			if c != form[i] {
				return "", false
			}
		}
	}
	if rel[:7] != rel[8:15] {
		return "", false
	}
	return rel[8:18], true
}

// groupShards sorts the shards of a memory tree by the log directory they
// are in: dir → day → blob.
func groupShards(f flat) map[string]map[string]plumbing.Hash {
	out := map[string]map[string]plumbing.Hash{}
	const tail = len("/0000-00/0000-00-00.jsonl")
	for p, h := range f {
		if len(p) <= tail {
			continue
		}
		d, ok := shardDay(p[len(p)-tail+1:])
		if !ok {
			continue
		}
		dir := p[:len(p)-tail]
		m := out[dir]
		if m == nil {
			m = map[string]plumbing.Hash{}
			out[dir] = m
		}
		m[d] = h
	}
	return out
}

// versionName parses a guardrails file name: "v12.md" is (12, "md").
func versionName(name string) (int, string, bool) {
	base, ext, ok := strings.Cut(name, ".")
	if !ok || (ext != "md" && ext != "json") || len(base) < 2 || base[0] != 'v' || base[1] == '0' {
		return 0, "", false
	}
	n, err := strconv.Atoi(base[1:])
	if err != nil || n <= 0 || strconv.Itoa(n) != base[1:] {
		return 0, "", false
	}
	return n, ext, true
}

// validAgent reports whether an agent's name can be a directory of
// guardrails: one path component, no dot-file, no control character.
func validAgent(name string) bool {
	if name == "" || name[0] == '.' || len(name) > 255 || path.Base(name) != name {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || c == '/' || c == '\\' {
			return false
		}
	}
	return true
}

func guardrailPath(agent string, n int, ext string) string {
	return store.GuardrailsDir + "/" + agent + "/v" + strconv.Itoa(n) + "." + ext
}
