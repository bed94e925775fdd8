package memsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/orket/orket/internal/flock"
	"github.com/orket/orket/internal/testhook"
	"github.com/orket/orket/store"
)

// testHookAfterJournal, set by tests, runs once the logs are written
// back, before the state and the ref: an error there is a crash.
var testHookAfterJournal func() error

// errRetryMerge reports that a person saved the agent memory while the
// merge was computed: the merge starts over, nothing written.
var errRetryMerge = errors.New("agent memory changed during the merge")

// merge merges the remote's memory commit (zero: none) with this clone's
// last synced memory and its working files, writes the result back and
// returns the memory commit that holds it.
func (s *syncer) merge(ctx context.Context, remote plumbing.Hash) (plumbing.Hash, error) {
	for try := 0; ; try++ {
		next, err := s.mergeOnce(ctx, remote)
		if !errors.Is(err, errRetryMerge) || try == 5 {
			return next, err
		}
	}
}

// inputs are the three memory trees a merge reads.
type inputs struct {
	base, remote, journal    plumbing.Hash
	fBase, fRemote, fJournal flat
	// fShared is the memory both sides last had in common (the merge
	// base of base and remote): what the three-way merges of the memory
	// file and the guardrail versions start from. It is fBase unless the
	// local ref is a merge the remote never got (after --pull, or a push
	// that lost a race): then lines the remote lacks were not deleted
	// there, only never sent.
	fShared              flat
	treeBase, treeRemote plumbing.Hash
	// The shards of each tree, by log directory and day.
	gBase, gRemote, gJournal map[string]map[string]plumbing.Hash
	st                       *state // nil: not trusted
	parsed                   map[plumbing.Hash][]record
	infos                    map[string]shardInfo
}

// damaged makes a damaged tree found in commit c (of remote, or of this
// clone's own ref when remote is "") a DamagedError; other errors are
// returned as they are.
func (s *syncer) damaged(err error, remote string, c plumbing.Hash) error {
	var dt *damagedTree
	if !errors.As(err, &dt) {
		return err
	}
	e := &DamagedError{Remote: remote, Commit: c.String(), Path: dt.Path, What: dt.What}
	if remote != "" {
		e.URL = s.res.URL
	}
	return e
}

func (s *syncer) mergeOnce(ctx context.Context, remote plumbing.Hash) (plumbing.Hash, error) {
	// What is sent is counted against this attempt's remote; what was
	// received and pruned is in the local files once an attempt wrote
	// them back, and is not counted again.
	s.res.Sent = 0
	for _, c := range s.res.Logs {
		c.Sent = 0
	}
	s.objs = &objectLog{EncodedObjectStorer: s.store}
	in := &inputs{base: s.localRef(), remote: remote, parsed: map[plumbing.Hash][]record{}, infos: map[string]shardInfo{}}
	var err error
	var st state
	if loadJSON(s.root, stateFile, &st) && st.Version == stateVersion && st.Commit == in.base.String() {
		in.st = &st
		for k, v := range st.Infos {
			in.infos[k] = v
		}
	}
	var jr journal
	if loadJSON(s.root, journalFile, &jr) {
		// An interrupted write-back: trust no file, and merge what it
		// was writing too.
		in.st = nil
		if plumbing.IsHash(jr.Commit) && s.store.HasEncodedObject(plumbing.NewHash(jr.Commit)) == nil {
			in.journal = plumbing.NewHash(jr.Commit)
		}
	}
	if in.fBase, in.treeBase, err = flatten(s.store, in.base); err != nil {
		return plumbing.ZeroHash, s.damaged(err, "", in.base)
	}
	if remote == in.base {
		in.fRemote, in.treeRemote = in.fBase, in.treeBase
	} else if in.fRemote, in.treeRemote, err = flatten(s.store, remote); err != nil {
		return plumbing.ZeroHash, s.damaged(err, s.res.Remote, remote)
	}
	in.fShared = in.fBase
	if shared := s.sharedBase(in.base, remote); shared != in.base {
		if in.fShared, _, err = flatten(s.store, shared); err != nil {
			return plumbing.ZeroHash, s.damaged(err, s.res.Remote, shared)
		}
	}
	if in.fJournal, _, err = flatten(s.store, in.journal); err != nil {
		in.fJournal = flat{}
	}
	in.gBase, in.gJournal = groupShards(in.fBase), groupShards(in.fJournal)
	in.gRemote = in.gBase
	if remote != in.base {
		in.gRemote = groupShards(in.fRemote)
	}
	if h, ok := in.fRemote[formatFile]; ok {
		b, err := readBlob(s.store, h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if f := strings.TrimSpace(string(b)); f != store.MemoryFormat {
			return plumbing.ZeroHash, &FormatError{Format: f}
		}
	}

	// Every log, and the memory, under the lock their writers take.
	var unlocks []func()
	defer func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}()
	// Each agent's guardrails under the lock orket lessons approve and
	// orket guardrails rollback take, first: they take it before the
	// proposals log's, and so must a sync, or the two could wait on each
	// other.
	for _, agent := range s.guardrailAgents(in) {
		// Made through the root: never through a symlink.
		if err := s.root.MkdirAll(store.GuardrailsDir+"/"+agent, 0o755); err != nil {
			return plumbing.ZeroHash, err
		}
		dir := filepath.Join(s.o.OrketDir, filepath.FromSlash(store.GuardrailsDir), agent)
		lock := store.DirLock(dir)
		if fi, err := os.Lstat(lock); err == nil && !fi.Mode().IsRegular() {
			return plumbing.ZeroHash, fmt.Errorf("%s/%s/.lock: %w", store.GuardrailsDir, agent, store.ErrSymlink)
		}
		u, err := flock.Acquire(ctx, lock, flock.Mode{Exclusive: true, Wait: true})
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("lock the guardrails of %s: %w", agent, err)
		}
		unlocks = append(unlocks, u)
	}
	for _, l := range s.logs {
		u, err := flock.Acquire(ctx, store.Lock(l.Path), flock.Mode{Exclusive: true, Wait: true})
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("lock %s: %w", l.Name, err)
		}
		unlocks = append(unlocks, u)
	}
	u, err := flock.Acquire(ctx, store.Lock(store.Path(s.o.OrketDir, store.MemoryFile)), flock.Mode{Exclusive: true, Wait: true})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("lock %s: %w", store.MemoryFile, err)
	}
	unlocks = append(unlocks, u)

	out := flat{}
	gp, err := s.mergeGuardrails(in, out)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var plans []*logPlan
	for i := range s.logs {
		l := &s.logs[i]
		var extra [][]byte
		if l.Name == store.ProposalsFile {
			extra = gp.clashRecords
		}
		p, err := s.mergeLog(in, l, extra, out)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("merge %s: %w", l.Name, err)
		}
		plans = append(plans, p)
	}
	mp, err := s.mergeMemory(in, out)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	s.carryUnknown(in, out)
	if out[formatFile], err = writeObject(s.objs, plumbing.BlobObject, []byte(store.MemoryFormat+"\n")); err != nil {
		return plumbing.ZeroHash, err
	}
	tree := in.treeBase
	if !sameFlat(out, in.fBase) {
		if tree, err = buildTree(s.objs, out, in.fBase); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	next, err := s.commit(in, tree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	// Durable before the journal, the ref or a rewritten file names them.
	if err := s.objs.sync(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("sync the memory's objects: %w", err)
	}
	testhook.Point("sync:objects-synced")

	// Write back: the memory first (a person may be saving it: if so,
	// start over with nothing written), then the logs, the guardrails,
	// the state, the ref.
	if err := mp.write(s); err != nil {
		return plumbing.ZeroHash, err
	}
	testhook.Point("sync:memory-written")
	writes, inPlace := len(gp.writes) > 0, false
	for _, p := range plans {
		writes = writes || p.write_
		inPlace = inPlace || p.inPlace()
	}
	if inPlace {
		if err := saveJSON(s.root, journalFile, journal{Commit: next.String()}); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("write the sync journal: %w", err)
		}
		testhook.Point("sync:journal-written")
	}
	nst := &state{Version: stateVersion, Commit: next.String(), Logs: map[string]*logState{}, Infos: map[string]shardInfo{}}
	for _, p := range plans {
		ls, err := p.write(s)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("write %s: %w", p.log.Name, err)
		}
		nst.Logs[p.log.Name] = ls
		testhook.Point("sync:log-written")
		if s.o.Retention.Logs != (store.Retention{}) {
			for _, sh := range ls.Shards {
				if in, ok := in.infos[sh.Blob]; ok {
					nst.Infos[sh.Blob] = in
				}
			}
		}
	}
	if testHookAfterJournal != nil {
		if err := testHookAfterJournal(); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if err := gp.write(s); err != nil {
		return plumbing.ZeroHash, err
	}
	testhook.Point("sync:guardrails-written")
	// The state need not be durable: one that does not match costs a
	// slow sync, never a record.
	if in.st == nil || writes || next != in.base || !sameState(in.st, nst) {
		if err := saveState(s.root, nst); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("write the sync state: %w", err)
		}
	}
	if next != in.base {
		var old *plumbing.Reference
		if !in.base.IsZero() {
			old = plumbing.NewHashReference(plumbing.ReferenceName(RefName), in.base)
		}
		if err := s.store.CheckAndSetReference(plumbing.NewHashReference(plumbing.ReferenceName(RefName), next), old); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("update %s: %w", RefName, err)
		}
		testhook.Point("sync:ref-updated")
	}
	if inPlace || !in.journal.IsZero() {
		if err := removeFile(s.root, journalFile); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return next, nil
}

// commit returns the memory commit of tree: the remote's or the local one
// when it already holds it, else a new commit on top of the remote's and
// (when the remote does not have it yet) the local one.
func (s *syncer) commit(in *inputs, tree plumbing.Hash) (plumbing.Hash, error) {
	if !in.remote.IsZero() && tree == in.treeRemote {
		return in.remote, nil
	}
	if !in.base.IsZero() && tree == in.treeBase {
		if in.remote.IsZero() {
			return in.base, nil
		}
		if ps, err := parentsOf(s.store, in.base); err == nil {
			for _, p := range ps {
				if p == in.remote {
					return in.base, nil
				}
			}
		}
	}
	var parents []plumbing.Hash
	if !in.remote.IsZero() {
		parents = append(parents, in.remote)
	}
	if !in.base.IsZero() && in.base != in.remote && !isAncestor(s.store, in.base, in.remote) {
		parents = append(parents, in.base)
	}
	msg := "orket memory sync"
	if s.res.Sent > 0 {
		msg += ": " + strconv.Itoa(s.res.Sent) + " new records"
	}
	return writeCommit(s.objs, tree, parents, msg+"\n", s.o.now())
}

// carryUnknown keeps what the merge does not know (a newer orket's
// files): the remote's, else the base's.
func (s *syncer) carryUnknown(in *inputs, out flat) {
	known := func(p string) bool {
		if p == formatFile || p == store.MemoryFile {
			return true
		}
		for _, l := range s.logs {
			if strings.HasPrefix(p, shardDir(l.Name)+"/") {
				return true
			}
		}
		if rest, ok := strings.CutPrefix(p, store.GuardrailsDir+"/"); ok {
			agent, file, ok := strings.Cut(rest, "/")
			if _, _, vok := versionName(file); ok && vok && validAgent(agent) {
				return true
			}
		}
		return false
	}
	for _, f := range []flat{in.fRemote, in.fBase} {
		for p, h := range f {
			if _, done := out[p]; !done && !isDirKey(p) && !known(p) {
				out[p] = h
			}
		}
	}
}

// logPlan is what a log's merge will write back.
type logPlan struct {
	log    *Log
	loc    *localLog
	shards []shardState
	data   map[string][]byte // day → content, for the shards that were built or read
	s      *syncer
	prefix int64  // fast path: bytes kept as they are
	first  int    // fast path: index of the first shard written
	whole  []byte // slow path: the new content
	write_ bool
}

// inPlace reports whether the plan rewrites the file's end in place, the
// one write a crash can leave half done.
func (p *logPlan) inPlace() bool { return p.write_ && p.loc.fast && p.prefix > 0 }

// fullContent is the new content of the log: its shards, in order.
func (p *logPlan) fullContent() ([]byte, error) {
	var total int64
	for _, sh := range p.shards {
		total += sh.Size
	}
	b := make([]byte, 0, total)
	for _, sh := range p.shards {
		c, err := p.content(sh)
		if err != nil {
			return nil, err
		}
		b = append(b, c...)
	}
	return b, nil
}

// mergeLog merges one log: the shards of the base, the remote and the
// journal, and this clone's new lines (and extra records), shard by
// shard, reading only the shards that may have changed.
func (s *syncer) mergeLog(in *inputs, l *Log, extra [][]byte, out flat) (*logPlan, error) {
	dir := shardDir(l.Name)
	bD, rD, jD := in.gBase[dir], in.gRemote[dir], in.gJournal[dir]

	var ls *logState
	if in.st != nil {
		ls = in.st.Logs[l.Name]
		if ls != nil && !sameShards(ls.Shards, bD) {
			ls = nil
		}
	}
	loc, err := readLocalLog(l.Path, ls)
	if err != nil {
		return nil, err
	}

	parse := func(h plumbing.Hash) ([]record, error) {
		if h.IsZero() {
			return nil, nil
		}
		if r, ok := in.parsed[h]; ok {
			return r, nil
		}
		b, err := readBlob(s.store, h)
		if err != nil {
			return nil, err
		}
		r := parseLines(l, b)
		in.parsed[h] = r
		return r, nil
	}

	// This clone's lines. On the fast path all are new; on the slow path
	// those the base or the remote hold already are known.
	var localRecs []record
	if loc.fast {
		localRecs = parseLines(l, loc.appended)
	} else {
		localRecs = parseLines(l, loc.whole)
	}
	have := map[string]map[string]bool{} // day → raw lines this clone holds
	holds := func(day string, raw []byte) {
		if have[day] == nil {
			have[day] = map[string]bool{}
		}
		have[day][string(raw)] = true
	}
	var fresh []record
	var known map[string]bool
	if !loc.fast {
		known = map[string]bool{}
		for _, d := range []map[string]plumbing.Hash{bD, rD} {
			for _, h := range d {
				recs, err := parse(h)
				if err != nil {
					return nil, err
				}
				for _, r := range recs {
					known[string(r.raw)] = true
				}
			}
		}
	}
	var buf bytes.Buffer
	for _, r := range localRecs {
		holds(r.day(), r.raw)
		if known[string(r.raw)] {
			fresh = append(fresh, r)
			continue
		}
		if red := redactRecord(r.raw, s.red); !bytes.Equal(red, r.raw) {
			if rr, ok := parseRecord(l, red, &buf); ok {
				r = rr
			}
		}
		fresh = append(fresh, r)
	}
	for _, raw := range extra {
		// A clash record holds both versions' text: shared, redacted.
		if r, ok := parseRecord(l, redactRecord(raw, s.red), &buf); ok {
			fresh = append(fresh, r)
		}
	}
	localByDay := byDay(fresh)

	// The days whose shard may change, and what goes in each.
	all := map[string]bool{}
	for _, m := range []map[string]plumbing.Hash{bD, rD, jD} {
		for d := range m {
			all[d] = true
		}
	}
	for d := range localByDay {
		all[d] = true
	}
	pending := []string{}
	queued := map[string]bool{}
	queue := func(d string) {
		if !queued[d] {
			queued[d] = true
			pending = append(pending, d)
		}
	}
	for d := range all {
		if rD[d] != bD[d] || (!jD[d].IsZero() && jD[d] != bD[d]) || len(localByDay[d]) > 0 {
			queue(d)
		}
	}
	sets := map[string][][]record{}
	for len(pending) > 0 {
		d := pending[0]
		pending = pending[1:]
		all[d] = true
		sets[d] = append(sets[d], localByDay[d])
		for _, h := range []plumbing.Hash{bD[d], rD[d], jD[d]} {
			recs, err := parse(h)
			if err != nil {
				return nil, err
			}
			var own []record
			for _, r := range recs {
				if rd := r.day(); rd != d {
					// A line in the wrong shard (not one orket
					// wrote): it goes to its own.
					sets[rd] = append(sets[rd], []record{r})
					queue(rd)
					continue
				}
				own = append(own, r)
			}
			sets[d] = append(sets[d], own)
		}
	}

	// Merge the changed shards; the others stay as the base has them.
	names := make([]string, 0, len(all))
	for d := range all {
		names = append(names, d)
	}
	sort.Strings(names)
	counts := s.counts(l.Name)
	var shards []*shard
	remoteRaw := func(d string) map[string]bool {
		m := map[string]bool{}
		recs, _ := parse(rD[d])
		for _, r := range recs {
			m[string(r.raw)] = true
		}
		return m
	}
	baseRaw := func(d string) map[string]bool {
		m := map[string]bool{}
		recs, _ := parse(bD[d])
		for _, r := range recs {
			m[string(r.raw)] = true
		}
		return m
	}
	for _, d := range names {
		if !queued[d] {
			sh := &shard{day: d}
			if info, ok := in.infos[bD[d].String()]; ok {
				sh.info = &info
			}
			shards = append(shards, sh)
			continue
		}
		recs := mergeRecords(l.Kind, sets[d]...)
		info := infoOf(recs)
		shards = append(shards, &shard{day: d, recs: recs, info: &info, dirty: true})
		inRemote, inBase := remoteRaw(d), baseRaw(d)
		for _, r := range recs {
			if !inRemote[string(r.raw)] {
				counts.Sent++
				s.res.Sent++
			}
			if !inBase[string(r.raw)] && !have[d][string(r.raw)] {
				counts.Received++
				s.res.Received++
			}
		}
	}
	load := func(sh *shard) error {
		if sh.recs != nil || sh.dirty {
			return nil
		}
		recs, err := parse(bD[sh.day])
		if err != nil {
			return err
		}
		sh.recs = recs
		info := infoOf(recs)
		sh.info = &info
		return nil
	}
	shards, pruned, err := retain(l, shards, s.o.Retention, s.o.now(), load)
	if err != nil {
		return nil, err
	}
	counts.Pruned += pruned
	s.res.Pruned += pruned

	// The new shards: stored, and compared with what the file holds.
	p := &logPlan{log: l, loc: loc, data: map[string][]byte{}, s: s}
	for _, sh := range shards {
		var h plumbing.Hash
		var size int64
		if sh.dirty {
			data := encodeRecords(sh.recs)
			if h, err = writeObject(s.objs, plumbing.BlobObject, data); err != nil {
				return nil, err
			}
			p.data[sh.day] = data
			size = int64(len(data))
		} else {
			h = bD[sh.day]
			size = -1
			if ls != nil {
				for _, b := range ls.Shards {
					if b.Day == sh.day {
						size = b.Size
					}
				}
			}
			if size < 0 {
				o, err := s.store.EncodedObject(plumbing.BlobObject, h)
				if err != nil {
					return nil, err
				}
				size = o.Size()
			}
		}
		if sh.info != nil {
			in.infos[h.String()] = *sh.info
		}
		out[shardPath(l.Name, sh.day)] = h
		p.shards = append(p.shards, shardState{Day: sh.day, Blob: h.String(), Size: size})
	}
	if loc.fast {
		i := 0
		for i < len(p.shards) && i < len(ls.Shards) && p.shards[i] == ls.Shards[i] {
			p.prefix += p.shards[i].Size
			i++
		}
		p.first = i
		p.write_ = i < len(p.shards) || i < len(ls.Shards) || len(loc.appended) > 0
	} else {
		if p.whole, err = p.fullContent(); err != nil {
			return nil, err
		}
		p.write_ = !bytes.Equal(p.whole, loc.whole)
	}
	return p, nil
}

// sameFlat reports whether two trees list the same files.
func sameFlat(a, b flat) bool {
	n := 0
	for p, h := range a {
		if isDirKey(p) {
			continue
		}
		if b[p] != h {
			return false
		}
		n++
	}
	for p := range b {
		if !isDirKey(p) {
			n--
		}
	}
	return n == 0
}

// sameState reports whether two states say the same.
func sameState(a, b *state) bool {
	if a.Commit != b.Commit || len(a.Logs) != len(b.Logs) || len(a.Infos) != len(b.Infos) {
		return false
	}
	for n, la := range a.Logs {
		lb := b.Logs[n]
		if lb == nil || la.Dev != lb.Dev || la.Ino != lb.Ino || la.Size != lb.Size || la.Tail != lb.Tail || len(la.Shards) != len(lb.Shards) {
			return false
		}
		for i := range la.Shards {
			if la.Shards[i] != lb.Shards[i] {
				return false
			}
		}
	}
	return true
}

// sameShards reports whether the state's shard list is the base's.
func sameShards(st []shardState, base map[string]plumbing.Hash) bool {
	if len(st) != len(base) {
		return false
	}
	for _, s := range st {
		if base[s.Day].String() != s.Blob {
			return false
		}
	}
	return true
}

// content returns the bytes of a shard of the plan.
func (p *logPlan) content(sh shardState) ([]byte, error) {
	if b, ok := p.data[sh.Day]; ok {
		return b, nil
	}
	return readBlob(p.s.store, plumbing.NewHash(sh.Blob))
}

// write writes the merged log back and returns its new state.
func (p *logPlan) write(s *syncer) (*logState, error) {
	ls := &logState{Shards: p.shards}
	for _, sh := range p.shards {
		ls.Size += sh.Size
	}
	if !p.loc.fast {
		dev, ino, _, err := p.writeIf(func() ([]byte, error) { return p.whole, nil }, 0, nil)
		if err != nil {
			return nil, err
		}
		ls.Dev, ls.Ino, ls.Tail = dev, ino, tailHash(p.whole)
		return ls, nil
	}
	var tail []byte
	for _, sh := range p.shards[p.first:] {
		c, err := p.content(sh)
		if err != nil {
			return nil, err
		}
		tail = append(tail, c...)
	}
	dev, ino, _, err := p.writeIf(p.fullContent, p.prefix, tail)
	if err != nil {
		return nil, err
	}
	ls.Dev, ls.Ino = dev, ino
	// The hash of the last bytes: from the tail, else from the file.
	if int64(len(tail)) >= tailWindow || p.prefix == 0 {
		ls.Tail = tailHash(tail)
	} else {
		f, err := readRange(p.log.Path, ls.Size)
		if err != nil {
			return nil, err
		}
		ls.Tail = tailHash(f)
	}
	return ls, nil
}

// writeIf writes the log when the merge changed it, and returns the
// file's identity either way.
func (p *logPlan) writeIf(full func() ([]byte, error), prefix int64, tail []byte) (uint64, uint64, int64, error) {
	if p.write_ {
		return writeLocalLog(p.log.Path, p.loc, prefix, tail, full)
	}
	return statFile(p.log.Path)
}

// guardrailAgents names the agents whose guardrails the merge may write:
// those with a directory here, and those the remote's memory holds.
func (s *syncer) guardrailAgents(in *inputs) []string {
	seen := map[string]bool{}
	if es, err := os.ReadDir(filepath.Join(s.o.OrketDir, filepath.FromSlash(store.GuardrailsDir))); err == nil {
		for _, e := range es {
			if e.IsDir() && validAgent(e.Name()) {
				seen[e.Name()] = true
			}
		}
	}
	for p := range in.fRemote {
		if rest, ok := strings.CutPrefix(p, store.GuardrailsDir+"/"); ok {
			if agent, _, ok := strings.Cut(rest, "/"); ok && validAgent(agent) {
				seen[agent] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// sharedBase is the newest memory commit base and remote both hold: base
// when the remote descends from it, else the first of base's ancestors
// (nearest first, up to 64) that the remote holds; zero when none is.
func (s *syncer) sharedBase(base, remote plumbing.Hash) plumbing.Hash {
	if base.IsZero() || remote.IsZero() {
		return plumbing.ZeroHash
	}
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{base}
	for n := 0; len(queue) > 0 && n < 64; n++ {
		h := queue[0]
		queue = queue[1:]
		if seen[h] {
			continue
		}
		seen[h] = true
		if isAncestor(s.store, h, remote) {
			return h
		}
		ps, err := parentsOf(s.store, h)
		if err != nil {
			return plumbing.ZeroHash
		}
		queue = append(queue, ps...)
	}
	return plumbing.ZeroHash
}
