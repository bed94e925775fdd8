package learn

import (
	"bytes"
	"io"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/orket/orket/internal/gitrepo"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/txn"
)

// A lesson's check stops a strict preflight only when the tree it would
// stop gives evidence for it (docs/lessons.md, Preflight checks): a
// tracked file names what the check is about. A lesson from an attempt
// that was reverted (an agent once read WALKDIR_FIXTURES) still advises,
// but it does not stop a tree that never reads the variable.

// Bounds of the search for evidence: a file larger than maxEvidenceFile
// is not read (generated data, vendored bundles), nor one that looks
// binary (a NUL in its first binarySniff bytes), and the search stops
// after maxEvidenceBytes; the needles it has not found by then count as
// found (the check stops, as it would have without the search).
const (
	maxEvidenceFile  = 1 << 20
	maxEvidenceBytes = 256 << 20
	binarySniff      = 8000
)

// evidenceNeedle is what a tracked file must name for a check to be
// required by the tree, and how its absence is said.
func evidenceNeedle(c preflight.Check) (needle, absent string) {
	switch c.Type {
	case preflight.EnvVarPresent:
		return c.Name, "no tracked file reads " + c.Name
	case preflight.CommandExists:
		return c.Command, "no tracked file names the command " + c.Command
	case preflight.FileExists:
		return c.Path, "no tracked file names " + c.Path
	case preflight.PortFree:
		p := strconv.Itoa(c.Port)
		return p, "no tracked file names port " + p
	case preflight.TCPReachable:
		if i := bytes.LastIndexByte([]byte(c.Address), ':'); i >= 0 {
			p := c.Address[i+1:]
			return p, "no tracked file names port " + p
		}
	}
	return "", ""
}

// evidenceSearchStopped is the file named for needles the bounded search
// did not reach.
const evidenceSearchStopped = "(not searched past 256 MiB of tracked files)"

// treeEvidence returns, for each needle, the first tracked file (in index
// order) whose content in the work tree names it as a whole word; a
// needle no file names is absent from the map. Tracked files are the
// index's (gitrepo.ReadIndex), read from the work tree through the
// repository's root; git is not run. An unreadable index finds nothing
// it could search: every needle is reported as found by
// evidenceSearchStopped, so that strict mode keeps stopping.
func treeEvidence(r *txn.Repo, needles []string) map[string]string {
	found := map[string]string{}
	if len(needles) == 0 {
		return found
	}
	stop := func() map[string]string {
		for _, n := range needles {
			if _, ok := found[n]; !ok {
				found[n] = evidenceSearchStopped
			}
		}
		return found
	}
	entries, err := gitrepo.ReadIndex(r.GitDir)
	if err != nil {
		return stop()
	}
	root, err := r.FS()
	if err != nil {
		return stop()
	}
	var total int64
	buf := make([]byte, maxEvidenceFile+1)
	for i := range entries {
		e := &entries[i]
		if !e.IsFile() || e.SkipWorktree || e.Mode != filemode.Regular && e.Mode != filemode.Executable || e.Size > maxEvidenceFile {
			continue
		}
		if total > maxEvidenceBytes {
			return stop()
		}
		f, err := root.Open(e.Name)
		if err != nil {
			continue // deleted in the work tree, or replaced by a link
		}
		n, _ := io.ReadFull(f, buf)
		f.Close()
		total += int64(n)
		if n > maxEvidenceFile {
			continue // grew past the bound since it was staged
		}
		b := buf[:n]
		if bytes.IndexByte(b[:min(n, binarySniff)], 0) >= 0 {
			continue
		}
		for _, needle := range needles {
			if _, ok := found[needle]; !ok && namesWord(b, needle) {
				found[needle] = e.Name
			}
		}
		if len(found) == len(needles) {
			break
		}
	}
	return found
}

// namesWord reports whether b holds w with no letter, digit or
// underscore on either side: WALKDIR_FIXTURES is not named by
// WALKDIR_FIXTURES_DIR, nor port 5432 by 15432.
func namesWord(b []byte, w string) bool {
	if w == "" {
		return false
	}
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte(w))
		if i < 0 {
			return false
		}
		start, end := off+i, off+i+len(w)
		if (start == 0 || !wordByte(b[start-1])) && (end == len(b) || !wordByte(b[end])) {
			return true
		}
		off = start + 1
	}
}

func wordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
