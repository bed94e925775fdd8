// Package orket runs orket's transaction (docs/design.md, A run): it takes
// a validated Request (a repository, its orket.yaml, an edit source, a
// scope and a profile) through its phases in order, plan, advise, confirm,
// lock, snapshot, edit, barrier, verify, keep or revert, record, and
// returns the run's Record with a typed outcome.
//
// The command line configures a Request, listens through an Observer and
// renders what Execute returns; every decision about the run is made
// here. Describe is the one place where errors become the stable outcome
// codes of docs/codes.md and their exit statuses.
//
// The guarantees rest on package txn (snapshot, journal, revert, recovery)
// and on one rule this package keeps at every destructive step: durable
// before destructive. A change that is about to be taken out of the tree
// (a failed or interrupted edit, a --worktree candidate, what a crashed
// run left behind) is written and fsynced first; if that write fails,
// nothing is taken out, the snapshot is kept, and the outcome says so.
package orket
