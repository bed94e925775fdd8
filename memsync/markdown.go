package memsync

// The agent memory is a person's file as much as orket's: people edit,
// reorder and delete its lines; orket only appends. Its merge is a
// three-way merge of lines against the version this clone last synced
// (the base), built so that no person's line is ever lost (see
// textmerge.Merge3 for its rules). Without a base (the first sync of a
// clone that has a memory of its own) nothing is deleted and each side's
// own lines are kept.

import "github.com/orket/orket/internal/textmerge"

// Merge3 merges the lines of two versions of a text that both descend from
// base (nil: no known base). It is symmetric: Merge3(base, a, b) equals
// Merge3(base, b, a).
func Merge3(base, a, b []byte) []byte { return textmerge.Merge3(base, a, b) }
