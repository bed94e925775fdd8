// Package store owns orket's state directory, .orket, at the top of a
// repository's main work tree: where each of its files is, the schema
// string of each kind of record, the lock that guards each file, the
// JSON-lines log most of them are kept in, and the one retention rule
// that bounds them, locally and when they are shared. No other package
// names a path under .orket or a schema string: they ask this one.
//
// The layout (docs/design.md has the whole picture):
//
//	.orket/
//	  .gitignore                  hides the directory from git status
//	  memory/failure_lessons.jsonl  lessons (LessonSchema), with .idx beside it
//	  memory/evaluations.jsonl    verdicts (EvaluationSchema)
//	  memory/tasks.jsonl          a person's word on a task (TaskEventSchema)
//	  memory/feedback.jsonl       reviews and corrections (FeedbackSchema)
//	  memory/proposals.jsonl      guardrails proposals (ProposalSchema)
//	  memory/advised.jsonl        what each run was told (ExposureSchema)
//	  memory/votes.jsonl          how each rule fared (VoteSchema)
//	  memory/AGENT_MEMORY.md      the agent memory a person reads and edits
//	  memory/passing/             each step's last passing output
//	  guardrails/<agent>/vN.md    approved rules, vN.json (VersionSchema),
//	                              history.jsonl (HistorySchema)
//	  rejected/                   changes a reviewer rejected, and files
//	                              people drop there; rejected/done/ once reviewed
//	  runs/<run-id>.json          run records (RunSchema), runs/<run-id>/change.patch
//	  escalations/<id>.md, .json  escalation reports (ReportSchema)
//	  sync/                       what the last sync of the shared memory saw
//	  cache/baselines.jsonl       baselines of failed steps (BaselineSchema),
//	                              in each work tree's own .orket
//
// Every log's lock is its path with ".lock" added (Lock); a log pruned
// by runs has its last prune noted in its path with ".pruned" added.
package store

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/orket/orket/internal/fsroot"
)

// ErrSymlink reports a file of the state directory that is a symlink or
// not a regular file where orket writes one: orket never writes through
// a symlink there.
var ErrSymlink = errors.New("not a regular file (orket never follows a symlink there)")

// Dir is the state directory's name, at the top of the main work tree.
const Dir = ".orket"

// The files of the state directory, relative to it, slash-separated.
const (
	LessonsFile     = "memory/failure_lessons.jsonl"
	EvaluationsFile = "memory/evaluations.jsonl"
	TasksFile       = "memory/tasks.jsonl"
	FeedbackFile    = "memory/feedback.jsonl"
	ProposalsFile   = "memory/proposals.jsonl"
	ExposuresFile   = "memory/advised.jsonl"
	VotesFile       = "memory/votes.jsonl"
	MemoryFile      = "memory/AGENT_MEMORY.md"
	PassingDir      = "memory/passing"
	GuardrailsDir   = "guardrails"
	RejectedDir     = "rejected"
	RejectedDone    = "rejected/done"
	RunsDir         = "runs"
	EscalationsDir  = "escalations"
	IgnoreFile      = ".gitignore"
	SyncState       = "sync/state.json"   // what the last sync saw (memsync)
	SyncJournal     = "sync/journal.json" // a sync's write-back in progress
	SyncLock        = "sync/sync.lock"    // one sync at a time
	ReviewLock      = "rejected/.review.lock"
	BaselinesFile   = "cache/baselines.jsonl" // a work tree's own: its build outputs are its own
)

// The files of an agent's guardrails directory (GuardrailsDir/<agent>).
const (
	HistoryFile = "history.jsonl"
)

// The schema strings records carry in their schema_version.
const (
	LessonSchema       = "orket.failure_lesson/v1"
	OriginLessonSchema = "core_pillars/failure_lesson/v1" // the origin project's lessons, read too
	EvaluationSchema   = "orket.evaluation/v1"
	TaskEventSchema    = "orket.task_event/v1"
	FeedbackSchema     = "orket.feedback/v1"
	ReviewSchema       = "orket.rejected_review/v1"
	ProposalSchema     = "orket.proposal/v1"
	ExposureSchema     = "orket.guardrails_exposure/v1"
	VoteSchema         = "orket.guardrails_vote/v1"
	VersionSchema      = "orket.guardrails_version/v1"
	HistorySchema      = "orket.guardrails_history/v1"
	ReportSchema       = "orket.escalation/v1"
	RunSchema          = "orket.run/v1"
	BaselineSchema     = "orket.baseline/v1"
	// MemoryFormat is the format of the shared memory's tree (memsync).
	MemoryFormat = "orket.memory/v1"
)

// Path is the file rel (a name above) of the state directory dir.
func Path(dir, rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }

// BaselinesPath is the baseline cache of the work tree at root: its own,
// not the main work tree's, since its build outputs are its own.
func BaselinesPath(root string) string { return Path(filepath.Join(root, Dir), BaselinesFile) }

// RepoPath is rel as a path of the work tree: ".orket/" + rel.
func RepoPath(rel string) string { return Dir + "/" + rel }

// Lock is the lock file of the file at path: path + ".lock", beside it,
// so that the file itself can be replaced while the lock is held.
func Lock(path string) string { return path + ".lock" }

// DirLock is the lock file of a directory whose files change together
// (an agent's guardrails): DirLockName inside it.
func DirLock(dir string) string { return filepath.Join(dir, DirLockName) }

// DirLockName is the name of a directory's lock file.
const DirLockName = ".lock"

// Index is the file an index of the log at path is kept in, beside it
// (the lesson log's: lessons), and IndexMeta what says which state of
// the log it matches.
func Index(path string) string     { return path + ".idx" }
func IndexMeta(path string) string { return path + ".idx.meta" }

// InDir reports whether a repository-relative path is the state
// directory or below it.
func InDir(p string) bool { return p == Dir || strings.HasPrefix(p, Dir+"/") }

// InitIgnore is the .gitignore orket init writes into the state
// directory: orket's local state stays out of commits unless the team
// chooses to share it.
const InitIgnore = `# orket's local state: run records, snapshots, locks and lesson memory.
# It stays out of commits. To share lessons with your team, add:
#   !memory/
#   !memory/**
*
!.gitignore
`

// ensureIgnore is the .gitignore a run writes when there is none: unlike
// the one orket init writes to be committed, it hides itself too, so
// orket's state never shows up in git status unasked.
const ensureIgnore = "# orket's local state (run records, lessons); see orket init.\n*\n"

// Ensure creates the state directory of the work tree root with its
// .gitignore, synced, unless it has one: a run killed right after leaves
// nothing git would show.
func Ensure(root *fsroot.Root) error {
	name := Dir + "/" + IgnoreFile
	if _, err := root.Lstat(name); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return root.WriteFile(name, []byte(ensureIgnore), 0o644, fsroot.Options{Sync: true})
}
