package txn

import (
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Ignored files are outside the transaction (git does not track them), but
// orket sees them where it scans: the ignored entries of every directory
// of the tree. A small ignored file (a .env) is cheap to keep, so the
// snapshot keeps it and a revert can put it back; a bigger one, or an
// ignored directory (node_modules), is only watched: a change to it is
// reported, and said to be beyond restoring.
const (
	maxIgnoredFile  = 64 << 10 // an ignored file kept whole is at most this big
	maxIgnoredTotal = 4 << 20  // and all of them together
)

// keepIgnored picks the small ignored files the snapshot keeps (sorted by
// path until the budget is spent) and sets their blob ids.
func (r *Repo) keepIgnored(pre *Tree) ([]string, error) {
	root, err := r.FS()
	if err != nil {
		return nil, err
	}
	var candidates []string
	for p, f := range pre.Ignored {
		if f.Mode != filemode.Dir && f.Size <= maxIgnoredFile {
			candidates = append(candidates, p)
		}
	}
	sort.Strings(candidates)
	var kept []string
	var total int64
	for _, p := range candidates {
		f := pre.Ignored[p]
		if total+f.Size > maxIgnoredTotal {
			break
		}
		id, err := hashFile(root, p, f.Mode)
		if err != nil {
			continue // gone since the scan: nothing to keep
		}
		f.OID = id
		total += f.Size
		kept = append(kept, p)
	}
	return kept, nil
}

// ignoredChanges compares the ignored entries of two scans: changed are
// those that existed and were deleted or rewritten, created the new ones.
func ignoredChanges(pre, cur *Tree) (changed, created []string) {
	for p, f := range pre.Ignored {
		c := cur.Ignored[p]
		switch {
		case c == nil && cur.Files[p] == nil:
			if f.Mode == filemode.Dir {
				p += "/"
			}
			changed = append(changed, p)
		case c != nil && f.Mode != filemode.Dir && !f.sameStat(c):
			changed = append(changed, p)
		}
	}
	for p, c := range cur.Ignored {
		if pre.Ignored[p] == nil && pre.Files[p] == nil {
			if c.Mode == filemode.Dir {
				p += "/"
			}
			created = append(created, p)
		}
	}
	sort.Strings(changed)
	sort.Strings(created)
	return changed, created
}

// restoreIgnored puts back the kept ignored files that were deleted or
// rewritten, and reports the others as beyond restoring.
func (r *Repo) restoreIgnored(pre, cur *Tree) []*MovedError {
	changed, _ := ignoredChanges(pre, cur)
	root, err := r.FS()
	if err != nil {
		return []*MovedError{{Key: "ignored files", Reason: err.Error()}}
	}
	var lost []*MovedError
	for _, p := range changed {
		f := pre.Ignored[p]
		if f == nil || f.Mode == filemode.Dir || f.OID.IsZero() {
			lost = append(lost, &MovedError{Key: p, Reason: "an ignored file or directory orket does not keep (over 64 KiB, or a directory); not restored"})
			continue
		}
		if err := r.writeBlob(root, p, f); err != nil {
			lost = append(lost, &MovedError{Key: p, Reason: fmt.Sprintf("an ignored file; restoring it failed: %v", err)})
		}
	}
	return lost
}
