// Package feedback learns from people: a reviewer who rejects a change a
// run kept (docs/feedback.md), and the agent memory that people read and edit
// (docs/feedback.md). It is a library; the commands (orket reject, feedback,
// memory) and the run wire it.
//
// What it provides:
//
//   - Categorising a reason: keyword matching on the normalised reason
//     (lower case, accents and apostrophes gone, other punctuation a
//     space; whole words and phrases; a keyword also matches its plural)
//     with the built-in English and Portuguese lists (docs/feedback.md),
//     in the priority order examples > specificity > clarity >
//     completeness > relevance, else other (Categorizer, Normalize).
//   - The learned action of a rejection, a template per category with
//     the run's environment and the technologies the reason names
//     (Categorizer.Learn).
//   - The feedback log, .orket/memory/feedback.jsonl (orket.feedback/v1):
//     appended whole under a lock and fsynced by internal/jsonl, read
//     back skipping damaged lines, pruned per agent (Log).
//   - Patterns: a category holding more than 30% of an agent's
//     rejections, with at least 3 in it; per-item and per-area counts;
//     the advisories a later run is given (Analyze, Advise), and the
//     JSON objects of orket reject --json and orket feedback patterns
//     --json (Logged, PatternObject, NoPatternObject).
//   - The agent memory, .orket/memory/AGENT_MEMORY.md: orket only inserts
//     lines (a learning under "## Patterns", a row at the end of the
//     "## Rejection log" table); every byte a person wrote stays where it
//     was. Writes are atomic and locked (Memory, InsertMemory).
//   - The summariser: an optional command given a review prompt (the
//     rejected change, the reason and the memory) on stdin, bounded in
//     time and output, whose process group is killed when it overruns
//     (Summarizer).
//   - The rejected folder, .orket/rejected/: files a person or a tool
//     drops there are reviewed into a learning and moved to done/ with a
//     note saying how the review went (Reviewer).
//
// Every path below .orket is opened without following a symlink
// (internal/fsroot), so nothing a person or an edit put there makes orket
// write outside .orket.
package feedback
