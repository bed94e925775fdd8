package txn

import (
	"sort"
	"strings"

	"github.com/orket/orket/internal/gitignore"
)

// IgnoredPath reports whether p, a repository-relative slash path that
// need not exist, is one git leaves alone: p or one of its directories is
// ignored by the rules the snapshot read (info/exclude, core.excludesFile
// and the .gitignore files as they were before the edit), and the index
// tracks nothing at p or below it. dir says whether p is a directory.
//
// The kernel sandbox opens such directories to build tools (target/,
// .pytest_cache/), and a refused write there is not the edit's fault.
func (s *Snapshot) IgnoredPath(p string, dir bool) bool {
	if p == "" || p == "." || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "../") || p == ".." {
		return false
	}
	if s.tracks(p) {
		return false
	}
	parts := strings.Split(p, "/")
	for i := range parts {
		if parts[i] == "" || parts[i] == "." || parts[i] == ".." || parts[i] == ".git" {
			return false
		}
		sub := strings.Join(parts[:i+1], "/")
		isDir := dir || i < len(parts)-1
		ps := jobPatterns(s.Pre, s.excludes, parentDir(sub))
		if own := s.Pre.Ignores[parentDir(sub)]; own != nil {
			ps = append(ps[:len(ps):len(ps)], own...)
		}
		if gitignore.Ignored(ps, sub, isDir) {
			return true
		}
	}
	return false
}

// tracks reports whether the snapshot's index names p or a path below it.
func (s *Snapshot) tracks(p string) bool {
	ii := s.idx
	if ii == nil {
		return false
	}
	if ii.dirs[p] || ii.gitlinks[p] {
		return true
	}
	at := ii.byDir[parentDir(p)]
	i := sort.Search(len(at), func(k int) bool { return ii.list[at[k]].Name >= p })
	return i < len(at) && ii.list[at[i]].Name == p
}
