// Package memsync shares orket's memory between clones through git: the
// logs, the agent memory and the guardrail versions of .orket travel as
// one commit, refs/orket/memory, fetched from and pushed to a remote of
// the repository (file, ssh, http(s), git), with the credentials git
// would use. See docs/sync.md.
//
// A sync (Sync):
//
//  1. fetches the remote's memory commit (only that ref's objects);
//  2. merges it with the memory this clone last synced (the base: its
//     own refs/orket/memory) and the working files, under the locks
//     orket's writers take: the logs as a union by record, shard by shard
//     (one UTC day each), reading only the lines appended since the last
//     sync and the days the remote changed; AGENT_MEMORY.md by a
//     three-way line merge that loses no person's line (Merge3); the
//     guardrail versions by number, a clash kept as a proposal;
//  3. applies retention, and redacts what this clone sends;
//  4. writes the merge back into .orket (new files aside and renamed; a
//     log's changed end in place, after a journal), commits it on top of
//     the remote's commit (and the local one when the remote lacks it),
//     moves the local ref;
//  5. pushes with a lease (the remote's ref moves only if it still is what
//     was fetched); when another clone pushed first, it fetches, merges
//     and tries again, with a randomised backoff, a bounded number of
//     times.
//
// Guarantees: the merge is a function of the set of records it is given,
// so clones that synced the same records hold byte-identical files; no
// record and no line of a person is lost, by a race with another clone,
// with a run appending during a sync, or by a crash (a journal names the
// merge an interrupted write-back was writing, and the next sync merges
// it in again); nothing leaves the clone unredacted; a remote that cannot
// be reached changes nothing and is an UnreachableError.
//
// Import merges JSON-lines files from elsewhere into the local logs by
// schema and id.
package memsync
