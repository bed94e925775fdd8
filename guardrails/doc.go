// Package guardrails turns an agent's repeated failures and reviews into a
// short list of rules a person approved, versioned and measured
// (docs/guardrails.md). It is a library; the commands (orket lessons
// propose|review|approve|reject, orket guardrails show|diff|log|rollback,
// orket stats) and the run wire it.
//
// The loop:
//
//   - Signals (signal.go, gather.go): lessons, feedback entries and
//     evaluations normalised into feedback entries (type, severity by
//     SeverityRules, context, details), with the fold of a failure and
//     the category of a review.
//   - Proposals (propose.go): an agent's signals clustered by fold and by
//     category and scope; a cluster of MinClusterSize among MinSamples
//     signals, more than FrequencyThreshold of them, is a proposal with a
//     deterministic id and text. The optional extractor command rewrites
//     the text (extractor.go). The proposals store (proposals.go) is
//     append-only: a proposal is a line, each status change another, and
//     the latest status by time wins, so logs of clones merge by id.
//   - The gate (gate.go): the approval box, the full sources, the keys
//     a/r/v/q; approve, reject (with a reason) and defer.
//   - Versions (versions.go, markdown.go): approving writes
//     .orket/guardrails/<agent>/v<N>.md and v<N>.json, the previous text
//     with one line added, replaced or removed; rollback writes a new
//     version with an old text; at most MaxVersions are kept. Writes are
//     atomic and fsynced, never through a symlink, under the agent's lock.
//   - Evidence (evidence.go): just before a run, lines citing a path, a
//     command or a variable that is gone are demoted and say why
//     (Store.Prepare gives the file for ORKET_GUARDRAILS).
//   - Votes (votes.go): a run's Exposure (what it was told) and its
//     Outcome give each line +1 (avoided) or -1 (recurred).
//   - Stats (stats.go): error rate, mean score, repeat-failure rate and
//     task completion per agent and before/after each version; a worse
//     version is flagged with a suggested rollback, never an automatic
//     one.
//
// Memory is advisory: nothing here widens a scope, skips a step or
// changes code. docs/guardrails.md is the guide for people and agent
// authors.
package guardrails
