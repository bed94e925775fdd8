package memsync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/store"
)

// statFile returns a file's identity and size (zeros when it is absent).
func statFile(path string) (uint64, uint64, int64, error) {
	var st unix.Stat_t
	err := unix.Lstat(path, &st)
	if errors.Is(err, unix.ENOENT) {
		return 0, 0, 0, nil
	}
	if err != nil {
		return 0, 0, 0, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return uint64(st.Dev), st.Ino, st.Size, nil
}

// readRange returns the last bytes (at most tailWindow) of a file's first
// end bytes.
func readRange(path string, end int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	from := end - tailWindow
	if from < 0 {
		from = 0
	}
	b := make([]byte, end-from)
	_, err = f.ReadAt(b, from)
	return b, err
}

// memPlan is what the agent memory's merge will write back.
type memPlan struct {
	merged []byte // nil: nothing to write
	before unix.Stat_t
	exists bool
}

// readRegularAt reads the regular file rel below root, refusing symlinks
// and anything that is not a regular file.
func readRegularAt(root *fsroot.Root, rel string) ([]byte, unix.Stat_t, error) {
	b, more, st, err := store.ReadRegular(root, rel, maxFile)
	if err == nil && more {
		err = fmt.Errorf("%s: larger than %d MiB", rel, maxFile>>20)
	}
	return b, st, err
}

// maxFile bounds a file of .orket a sync reads (the agent memory, a
// guardrails version).
const maxFile = 64 << 20

func notExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOENT)
}

// mergeMemory merges AGENT_MEMORY.md (see Merge3): the tree gets the
// merge redacted; the local file gets the merge, a person's lines as they
// wrote them.
func (s *syncer) mergeMemory(in *inputs, out flat) (*memPlan, error) {
	p := &memPlan{}
	local, st, err := readRegularAt(s.root, store.MemoryFile)
	switch {
	case err == nil:
		p.exists, p.before = true, st
	case notExist(err):
		local = nil
	default:
		return nil, fmt.Errorf("read %s: %w", store.MemoryFile, err)
	}
	blob := func(f flat) ([]byte, error) {
		h, ok := f[store.MemoryFile]
		if !ok {
			return nil, nil
		}
		return readBlob(s.store, h)
	}
	base, err := blob(in.fShared)
	if err != nil {
		return nil, err
	}
	remote, err := blob(in.fRemote)
	if err != nil {
		return nil, err
	}
	var merged []byte
	switch {
	case local == nil && remote == nil:
		return p, nil
	case local == nil:
		merged = remote
	case remote == nil:
		merged = local
	default:
		merged = Merge3(base, local, remote)
	}
	shared := redactText(merged, s.red)
	h, err := writeObject(s.objs, plumbing.BlobObject, shared)
	if err != nil {
		return nil, err
	}
	out[store.MemoryFile] = h
	if remote == nil || !bytes.Equal(shared, remote) {
		if local != nil && !bytes.Equal(merged, local) {
			s.res.Memory = "merged"
		} else if h != in.fRemote[store.MemoryFile] {
			s.res.Memory = "sent"
		}
	} else if local == nil || !bytes.Equal(merged, local) {
		s.res.Memory = "received"
	}
	if local == nil || !bytes.Equal(merged, local) {
		p.merged = merged
	}
	return p, nil
}

// write writes the merged memory unless a person saved the file since it
// was read: then errRetryMerge, and the merge starts over.
func (p *memPlan) write(s *syncer) error {
	if p.merged == nil {
		return nil
	}
	err := store.WriteIfSame(s.root, store.MemoryFile, p.merged, p.exists, p.before)
	if errors.Is(err, store.ErrChanged) {
		return errRetryMerge
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", store.MemoryFile, err)
	}
	return nil
}

// guardPlan is what the guardrails' merge will write back.
type guardPlan struct {
	writes       map[string][]byte // path below .orket → content
	clashRecords [][]byte
}

// localVersions reads .orket/guardrails/<agent>/v<N>.{md,json}.
func (s *syncer) localVersions() (map[versionKey]*version, error) {
	out := map[versionKey]*version{}
	agents, err := s.root.ReadDirNames(store.GuardrailsDir)
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		if !validAgent(a) {
			continue
		}
		ad, err := s.root.OpenDir(store.GuardrailsDir + "/" + a)
		if err != nil {
			continue // a file, or a symlink: not a version directory
		}
		names, err := ad.Readdirnames(-1)
		ad.Close()
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			num, ext, ok := versionName(n)
			if !ok {
				continue
			}
			b, _, err := readRegularAt(s.root, store.GuardrailsDir+"/"+a+"/"+n)
			if err != nil {
				continue
			}
			putVersionFile(out, versionKey{a, num}, ext, b)
		}
	}
	return out, nil
}

// treeVersions reads the versions of a memory tree.
func (s *syncer) treeVersions(f flat) (map[versionKey]*version, error) {
	out := map[versionKey]*version{}
	for p, h := range f {
		rest, ok := strings.CutPrefix(p, store.GuardrailsDir+"/")
		if !ok {
			continue
		}
		agent, file, ok := strings.Cut(rest, "/")
		num, ext, vok := versionName(file)
		if !ok || !vok || !validAgent(agent) {
			continue
		}
		b, err := readBlob(s.store, h)
		if err != nil {
			return nil, err
		}
		putVersionFile(out, versionKey{agent, num}, ext, b)
	}
	return out, nil
}

// putVersionFile keeps b as the text (ext md) or the json of version k.
func putVersionFile(out map[versionKey]*version, k versionKey, ext string, b []byte) {
	v := out[k]
	if v == nil {
		v = &version{}
		out[k] = v
	}
	if ext == "md" {
		v.md = b
	} else {
		v.js = b
	}
}

// mergeGuardrails merges the guardrail versions by number.
func (s *syncer) mergeGuardrails(in *inputs, out flat) (*guardPlan, error) {
	p := &guardPlan{writes: map[string][]byte{}}
	local, err := s.localVersions()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", store.GuardrailsDir, err)
	}
	base, err := s.treeVersions(in.fShared)
	if err != nil {
		return nil, err
	}
	remote, err := s.treeVersions(in.fRemote)
	if err != nil {
		return nil, err
	}
	if len(local) == 0 && len(remote) == 0 {
		return p, nil
	}
	merged, clashes, recs := mergeVersions(base, local, remote)
	s.res.Clashes = append(s.res.Clashes, clashes...)
	p.clashRecords = recs
	keep := newestVersions(merged, s.o.Retention.MaxVersions)
	keys := make([]versionKey, 0, len(keep))
	for k := range keep {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].Agent < keys[j].Agent || keys[i].Agent == keys[j].Agent && keys[i].N < keys[j].N
	})
	for _, k := range keys {
		v := merged[k]
		for _, part := range []struct {
			ext  string
			data []byte
			loc  []byte
		}{{"md", v.md, nil}, {"json", v.js, nil}} {
			if part.data == nil {
				continue
			}
			shared := part.data
			if part.ext == "md" {
				shared = redactText(shared, s.red)
			} else if t := bytes.TrimSpace(shared); json.Valid(t) && len(t) > 0 && t[0] == '{' {
				if r := redactRecord(t, s.red); !bytes.Equal(r, t) {
					shared = append(r, '\n')
				}
			}
			h, err := writeObject(s.objs, plumbing.BlobObject, shared)
			if err != nil {
				return nil, err
			}
			rel := guardrailPath(k.Agent, k.N, part.ext)
			out[rel] = h
			lv := local[k]
			var have []byte
			if lv != nil {
				if part.ext == "md" {
					have = lv.md
				} else {
					have = lv.js
				}
			}
			if have == nil || !bytes.Equal(have, part.data) {
				p.writes[rel] = part.data
			}
		}
		if !local[k].present() {
			s.res.Versions++
		}
	}
	return p, nil
}

// write writes the guardrail files the merge changed (the .json before
// the .md of a version).
func (p *guardPlan) write(s *syncer) error {
	paths := make([]string, 0, len(p.writes))
	for rel := range p.writes {
		paths = append(paths, rel)
	}
	sort.Slice(paths, func(i, j int) bool {
		ai, aj := strings.HasSuffix(paths[i], ".json"), strings.HasSuffix(paths[j], ".json")
		if ai != aj {
			return ai
		}
		return paths[i] < paths[j]
	})
	for _, rel := range paths {
		if err := s.root.WriteFile(rel, p.writes[rel], 0o644, fsroot.Options{Sync: true}); err != nil {
			return fmt.Errorf("write %s: %w", rel, err)
		}
	}
	return nil
}
