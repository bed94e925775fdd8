// Package textmerge is orket's one line diff and three-way line merge:
// the agent memory's merge between clones (memsync), the diff of two
// guardrails versions (guardrails) and the hunks of the patches orket
// writes (patch) all pair lines the same way.
//
// Lines are compared whole, line ending included where the caller keeps
// it (SplitLines does). The pairing is a longest common subsequence found
// by Myers' O(ND) algorithm after the common prefix and suffix are taken
// off; past MaxEdit differences the middle of the two texts counts as
// changed whole, so time and memory stay bounded whatever the input.
package textmerge
