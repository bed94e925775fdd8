// Package txn makes a change to a git work tree a transaction: it finds the
// repository, snapshots the working tree durably, measures what an edit
// changed, and restores the tree bit for bit.
//
// # The journal protocol
//
// A transaction (Repo.Begin) keeps one small file, the journal, in the work
// tree's git directory (.git/orket/txn.json, or .git/worktrees/<name>/orket
// for a linked worktree), written atomically before each phase begins, and
// fsynced where recovery depends on it (phase edit, the saved files):
//
//	snapshot  the journal names the snapshot ref before the snapshot is taken
//	edit      the snapshot is durable: its objects fsynced, then its ref
//	          refs/orket/snapshots/<run-id> published; the edit may write
//	verify    verify steps run
//	commit    a passed change is being committed (--commit)
//	revert    the tree is being put back; Save has already written, fsynced
//	          and listed in the journal whatever the revert destroys
//	takeout   a failed --worktree candidate is being taken out (saved first)
//
// End drops the ref and removes the journal: only then is the transaction
// over. A crash at any point leaves the journal and the ref; the next run
// refuses to start, and recovery (Repo.Resume, then Txn.Revert) restores the
// snapshot, which is idempotent, so a crash during recovery is recovered
// the same way. A journal in phase snapshot whose ref does not resolve
// stopped before anything was written. Only this package writes the
// journal.
//
// Durable before destructive: nothing is taken out of a tree (a revert, a
// take-out) before what it destroys is in the object store or saved by
// Txn.Save, and a failure to save stops the destruction.
//
// # Why the hot path does not use go-git
//
// The snapshot, the measurement and the revert run on every orket run, on
// trees of a million files, and must cost about what git status costs.
// go-git's Worktree.Status hashes files git would trust by their stat
// data, reads no global excludes and is slow on large ignored
// directories; its index decoder allocates per entry; asking it whether
// an object exists loads every pack index whole. So this package reads the index itself, in
// place (index.go); walks the tree as git status does, one getdents per
// directory and one fstatat per file, in parallel, trusting the index's
// stat data as git does (scan.go); watches the directories it read with
// inotify so that measuring rescans only where something happened
// (inotify.go, rescan.go); remembers what it had to read in a scan cache
// (cache.go); asks an fsmonitor hook, when one is configured, what changed
// since the last snapshot, so that a snapshot costs the change rather
// than the tree (fsmonitor.go); reads pack indexes itself (packidx.go);
// keeps the index by a hard link rather than a copy; and writes git's
// files with git's lock-file protocol, fsyncing what it wrote and nothing
// else. go-git is used where it is neither hot nor subtle: the object
// store (blobs, trees, commits), revisions and configuration.
//
// # What is in the snapshot
//
// Every tracked and untracked, not ignored, file and everything under
// .orket, by content and mode; the index; HEAD, every local branch and tag,
// packed-refs and an operation in progress (merge, rebase); git's
// configuration, hooks and info files, which an edit may never change.
// Ignored files are outside it.
package txn
