package memsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

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

// mergeOnce is one attempt of merge: it reads the inputs, takes the
// writers' locks, merges, makes the new objects durable and writes the
// result back, ending with the ref.
func (s *syncer) mergeOnce(ctx context.Context, remote plumbing.Hash) (plumbing.Hash, error) {
	s.startAttempt()
	in, err := s.readInputs(remote)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	unlock, err := s.lockAll(ctx, in)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer unlock()
	m, err := s.mergeAll(in)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	// Durable before the journal, the ref or a rewritten file names them.
	if err := s.objs.sync(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("sync the memory's objects: %w", err)
	}
	testhook.Point("sync:objects-synced")
	if err := s.writeBack(m); err != nil {
		return plumbing.ZeroHash, err
	}
	return m.next, nil
}

// startAttempt resets what one attempt counts and writes.
func (s *syncer) startAttempt() {
	// What is sent is counted against this attempt's remote; what was
	// received and pruned is in the local files once an attempt wrote
	// them back, and is not counted again.
	s.res.Sent = 0
	for _, c := range s.res.Logs {
		c.Sent = 0
	}
	s.objs = &objectLog{EncodedObjectStorer: s.store}
}

// readInputs reads what a merge with remote starts from: this clone's
// memory, the remote's, the one both last shared and that of an
// interrupted write-back, with the sync state when it can be trusted. It
// refuses a remote memory of another format.
func (s *syncer) readInputs(remote plumbing.Hash) (*inputs, error) {
	in := &inputs{base: s.localRef(), remote: remote, parsed: map[plumbing.Hash][]record{}, infos: map[string]shardInfo{}}
	s.readState(in)
	var err error
	if in.fBase, in.treeBase, err = flatten(s.store, in.base); err != nil {
		return nil, s.damaged(err, "", in.base)
	}
	if remote == in.base {
		in.fRemote, in.treeRemote = in.fBase, in.treeBase
	} else if in.fRemote, in.treeRemote, err = flatten(s.store, remote); err != nil {
		return nil, s.damaged(err, s.res.Remote, remote)
	}
	in.fShared = in.fBase
	if shared := s.sharedBase(in.base, remote); shared != in.base {
		if in.fShared, _, err = flatten(s.store, shared); err != nil {
			return nil, s.damaged(err, s.res.Remote, shared)
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
			return nil, err
		}
		if f := strings.TrimSpace(string(b)); f != store.MemoryFormat {
			return nil, &FormatError{Format: f}
		}
	}
	return in, nil
}

// readState sets in.st to the sync state when it describes the base, and
// in.journal to the commit an interrupted write-back was writing (then
// no state is trusted).
func (s *syncer) readState(in *inputs) {
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
}

// lockAll takes the locks the writers of the merged files take: each
// agent's guardrails, each log, the memory. It returns what releases
// them, last taken first; on an error it releases those it took.
func (s *syncer) lockAll(ctx context.Context, in *inputs) (_ func(), err error) {
	var unlocks []func()
	unlock := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	defer func() {
		if err != nil {
			unlock()
		}
	}()
	// Each agent's guardrails under the lock orket lessons approve and
	// orket guardrails rollback take, first: they take it before the
	// proposals log's, and so must a sync, or the two could wait on each
	// other.
	for _, agent := range s.guardrailAgents(in) {
		u, err := s.lockGuardrails(ctx, agent)
		if err != nil {
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	for _, l := range s.logs {
		u, err := flock.Acquire(ctx, store.Lock(l.Path), flock.Mode{Exclusive: true, Wait: true})
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", l.Name, err)
		}
		unlocks = append(unlocks, u)
	}
	u, err := flock.Acquire(ctx, store.Lock(store.Path(s.o.OrketDir, store.MemoryFile)), flock.Mode{Exclusive: true, Wait: true})
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", store.MemoryFile, err)
	}
	unlocks = append(unlocks, u)
	return unlock, nil
}

// lockGuardrails takes the lock of agent's guardrails directory, making
// the directory first.
func (s *syncer) lockGuardrails(ctx context.Context, agent string) (func(), error) {
	// Made through the root: never through a symlink.
	if err := s.root.MkdirAll(store.GuardrailsDir+"/"+agent, 0o755); err != nil {
		return nil, err
	}
	dir := filepath.Join(s.o.OrketDir, filepath.FromSlash(store.GuardrailsDir), agent)
	lock := store.DirLock(dir)
	if fi, err := os.Lstat(lock); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s/%s/.lock: %w", store.GuardrailsDir, agent, store.ErrSymlink)
	}
	u, err := flock.Acquire(ctx, lock, flock.Mode{Exclusive: true, Wait: true})
	if err != nil {
		return nil, fmt.Errorf("lock the guardrails of %s: %w", agent, err)
	}
	return u, nil
}

// merged is what one merge attempt computed: what it writes back, and
// the memory commit that holds the result.
type merged struct {
	in    *inputs
	gp    *guardPlan
	plans []*logPlan
	mp    *memPlan
	next  plumbing.Hash
}

// mergeAll merges the guardrails, the logs and the memory, keeps the
// files it does not know, and stores the merged tree and its commit.
func (s *syncer) mergeAll(in *inputs) (*merged, error) {
	out := flat{}
	m := &merged{in: in}
	var err error
	if m.gp, err = s.mergeGuardrails(in, out); err != nil {
		return nil, err
	}
	for i := range s.logs {
		l := &s.logs[i]
		var extra [][]byte
		if l.Name == store.ProposalsFile {
			extra = m.gp.clashRecords
		}
		p, err := s.mergeLog(in, l, extra, out)
		if err != nil {
			return nil, fmt.Errorf("merge %s: %w", l.Name, err)
		}
		m.plans = append(m.plans, p)
	}
	if m.mp, err = s.mergeMemory(in, out); err != nil {
		return nil, err
	}
	s.carryUnknown(in, out)
	if out[formatFile], err = writeObject(s.objs, plumbing.BlobObject, []byte(store.MemoryFormat+"\n")); err != nil {
		return nil, err
	}
	tree := in.treeBase
	if !sameFlat(out, in.fBase) {
		if tree, err = buildTree(s.objs, out, in.fBase); err != nil {
			return nil, err
		}
	}
	if m.next, err = s.commit(in, tree); err != nil {
		return nil, err
	}
	return m, nil
}

// writeBack writes the merge back: the memory first (a person may be
// saving it: if so, start over with nothing written), then the journal
// when a log is rewritten in place, the logs, the guardrails, the state,
// the ref; last it removes the journal.
func (s *syncer) writeBack(m *merged) error {
	in := m.in
	// What an earlier write-back killed mid-write left goes first.
	store.SweepTemps(s.root, path.Dir(store.MemoryFile), time.Minute, time.Now())
	if err := m.mp.write(s); err != nil {
		return err
	}
	testhook.Point("sync:memory-written")
	writes, inPlace := len(m.gp.writes) > 0, false
	for _, p := range m.plans {
		writes = writes || p.write_
		inPlace = inPlace || p.inPlace()
	}
	if inPlace {
		if err := saveJSON(s.root, journalFile, journal{Commit: m.next.String()}); err != nil {
			return fmt.Errorf("write the sync journal: %w", err)
		}
		testhook.Point("sync:journal-written")
	}
	nst, err := s.writeLogs(m)
	if err != nil {
		return err
	}
	if testHookAfterJournal != nil {
		if err := testHookAfterJournal(); err != nil {
			return err
		}
	}
	if err := m.gp.write(s); err != nil {
		return err
	}
	testhook.Point("sync:guardrails-written")
	// The state need not be durable: one that does not match costs a
	// slow sync, never a record.
	if in.st == nil || writes || m.next != in.base || !sameState(in.st, nst) {
		if err := saveState(s.root, nst); err != nil {
			return fmt.Errorf("write the sync state: %w", err)
		}
	}
	if m.next != in.base {
		if err := s.setRef(in.base, m.next); err != nil {
			return err
		}
	}
	if inPlace || !in.journal.IsZero() {
		if err := removeFile(s.root, journalFile); err != nil {
			return err
		}
	}
	return nil
}

// writeLogs writes each merged log back and returns the new sync state
// that describes them.
func (s *syncer) writeLogs(m *merged) (*state, error) {
	nst := &state{Version: stateVersion, Commit: m.next.String(), Logs: map[string]*logState{}, Infos: map[string]shardInfo{}}
	for _, p := range m.plans {
		ls, err := p.write(s)
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", p.log.Name, err)
		}
		nst.Logs[p.log.Name] = ls
		testhook.Point("sync:log-written")
		if s.o.Retention.Logs != (store.Retention{}) {
			for _, sh := range ls.Shards {
				if info, ok := m.in.infos[sh.Blob]; ok {
					nst.Infos[sh.Blob] = info
				}
			}
		}
	}
	return nst, nil
}

// setRef moves the memory ref from base (zero: none) to next, failing
// when another writer moved it meanwhile.
func (s *syncer) setRef(base, next plumbing.Hash) error {
	var old *plumbing.Reference
	if !base.IsZero() {
		old = plumbing.NewHashReference(plumbing.ReferenceName(RefName), base)
	}
	if err := s.store.CheckAndSetReference(plumbing.NewHashReference(plumbing.ReferenceName(RefName), next), old); err != nil {
		return fmt.Errorf("update %s: %w", RefName, err)
	}
	testhook.Point("sync:ref-updated")
	return nil
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
	m, err := s.newLogMerge(in, l)
	if err != nil {
		return nil, err
	}
	if err := m.readLocal(extra); err != nil {
		return nil, err
	}
	if err := m.gather(); err != nil {
		return nil, err
	}
	shards, err := m.prune(m.mergeShards())
	if err != nil {
		return nil, err
	}
	return m.plan(shards, out)
}

// logMerge is the merge of one log under way.
type logMerge struct {
	s  *syncer
	in *inputs
	l  *Log
	// The shards of the base, the remote and the journal, by day.
	bD, rD, jD map[string]plumbing.Hash
	ls         *logState // the file's state; nil unless it matches the base
	loc        *localLog
	have       map[string]map[string]bool // day → raw lines this clone holds
	local      map[string][]record        // day → this clone's records to merge
	days       map[string]bool            // every day the log holds
	queued     map[string]bool            // the days whose shard is merged
	sets       map[string][][]record      // day → the records its shard merges
	counts     *LogCounts
}

// newLogMerge starts the merge of log l: its shards in each input tree,
// its state when that still describes the base, and the local file.
func (s *syncer) newLogMerge(in *inputs, l *Log) (*logMerge, error) {
	dir := shardDir(l.Name)
	m := &logMerge{s: s, in: in, l: l, bD: in.gBase[dir], rD: in.gRemote[dir], jD: in.gJournal[dir]}
	if in.st != nil {
		m.ls = in.st.Logs[l.Name]
		if m.ls != nil && !sameShards(m.ls.Shards, m.bD) {
			m.ls = nil
		}
	}
	var err error
	if m.loc, err = readLocalLog(l.Path, m.ls); err != nil {
		return nil, err
	}
	return m, nil
}

// parse returns the records of blob h (zero: none), parsing each blob
// once per sync attempt.
func (m *logMerge) parse(h plumbing.Hash) ([]record, error) {
	if h.IsZero() {
		return nil, nil
	}
	if r, ok := m.in.parsed[h]; ok {
		return r, nil
	}
	b, err := readBlob(m.s.store, h)
	if err != nil {
		return nil, err
	}
	r := parseLines(m.l, b)
	m.in.parsed[h] = r
	return r, nil
}

// readLocal reads this clone's lines and the extra records into the
// records to merge, by day, redacting those the memory does not hold yet.
func (m *logMerge) readLocal(extra [][]byte) error {
	// This clone's lines. On the fast path all are new; on the slow path
	// those the base or the remote hold already are known.
	var localRecs []record
	if m.loc.fast {
		localRecs = parseLines(m.l, m.loc.appended)
	} else {
		localRecs = parseLines(m.l, m.loc.whole)
	}
	m.have = map[string]map[string]bool{}
	known, err := m.knownLines()
	if err != nil {
		return err
	}
	var fresh []record
	var buf bytes.Buffer
	for _, r := range localRecs {
		day := r.day()
		if m.have[day] == nil {
			m.have[day] = map[string]bool{}
		}
		m.have[day][string(r.raw)] = true
		if known[string(r.raw)] {
			fresh = append(fresh, r)
			continue
		}
		if red := redactRecord(r.raw, m.s.red); !bytes.Equal(red, r.raw) {
			if rr, ok := parseRecord(m.l, red, &buf); ok {
				r = rr
			}
		}
		fresh = append(fresh, r)
	}
	for _, raw := range extra {
		// A clash record holds both versions' text: shared, redacted.
		if r, ok := parseRecord(m.l, redactRecord(raw, m.s.red), &buf); ok {
			fresh = append(fresh, r)
		}
	}
	m.local = byDay(fresh)
	return nil
}

// knownLines returns, on the slow path, the raw lines the base or the
// remote hold; on the fast path, nil.
func (m *logMerge) knownLines() (map[string]bool, error) {
	if m.loc.fast {
		return nil, nil
	}
	known := map[string]bool{}
	for _, d := range []map[string]plumbing.Hash{m.bD, m.rD} {
		for _, h := range d {
			recs, err := m.parse(h)
			if err != nil {
				return nil, err
			}
			for _, r := range recs {
				known[string(r.raw)] = true
			}
		}
	}
	return known, nil
}

// gather finds the days whose shard may change, and what goes in each:
// the shards of the inputs and this clone's records of that day.
func (m *logMerge) gather() error {
	m.days = map[string]bool{}
	for _, g := range []map[string]plumbing.Hash{m.bD, m.rD, m.jD} {
		for d := range g {
			m.days[d] = true
		}
	}
	for d := range m.local {
		m.days[d] = true
	}
	pending := []string{}
	m.queued = map[string]bool{}
	queue := func(d string) {
		if !m.queued[d] {
			m.queued[d] = true
			pending = append(pending, d)
		}
	}
	for d := range m.days {
		if m.rD[d] != m.bD[d] || (!m.jD[d].IsZero() && m.jD[d] != m.bD[d]) || len(m.local[d]) > 0 {
			queue(d)
		}
	}
	m.sets = map[string][][]record{}
	for len(pending) > 0 {
		d := pending[0]
		pending = pending[1:]
		m.days[d] = true
		m.sets[d] = append(m.sets[d], m.local[d])
		for _, h := range []plumbing.Hash{m.bD[d], m.rD[d], m.jD[d]} {
			recs, err := m.parse(h)
			if err != nil {
				return err
			}
			var own []record
			for _, r := range recs {
				if rd := r.day(); rd != d {
					// A line in the wrong shard (not one orket
					// wrote): it goes to its own.
					m.sets[rd] = append(m.sets[rd], []record{r})
					queue(rd)
					continue
				}
				own = append(own, r)
			}
			m.sets[d] = append(m.sets[d], own)
		}
	}
	return nil
}

// mergeShards merges the changed shards and counts the records sent and
// received; the others stay as the base has them. The shards are in the
// order of their days.
func (m *logMerge) mergeShards() []*shard {
	names := make([]string, 0, len(m.days))
	for d := range m.days {
		names = append(names, d)
	}
	sort.Strings(names)
	m.counts = m.s.counts(m.l.Name)
	var shards []*shard
	for _, d := range names {
		if !m.queued[d] {
			sh := &shard{day: d}
			if info, ok := m.in.infos[m.bD[d].String()]; ok {
				sh.info = &info
			}
			shards = append(shards, sh)
			continue
		}
		recs := mergeRecords(m.l.Kind, m.sets[d]...)
		info := infoOf(recs)
		shards = append(shards, &shard{day: d, recs: recs, info: &info, dirty: true})
		m.count(d, recs)
	}
	return shards
}

// count counts the records of day d's merged shard that the remote lacks
// (sent) and that neither the base nor this clone held (received).
func (m *logMerge) count(d string, recs []record) {
	inRemote, inBase := m.rawLines(m.rD[d]), m.rawLines(m.bD[d])
	for _, r := range recs {
		if !inRemote[string(r.raw)] {
			m.counts.Sent++
			m.s.res.Sent++
		}
		if !inBase[string(r.raw)] && !m.have[d][string(r.raw)] {
			m.counts.Received++
			m.s.res.Received++
		}
	}
}

// rawLines returns the set of the raw lines of blob h; a blob that cannot
// be read has none.
func (m *logMerge) rawLines(h plumbing.Hash) map[string]bool {
	set := map[string]bool{}
	recs, _ := m.parse(h)
	for _, r := range recs {
		set[string(r.raw)] = true
	}
	return set
}

// prune applies the retention to the shards and counts what it dropped.
func (m *logMerge) prune(shards []*shard) ([]*shard, error) {
	shards, pruned, err := retain(m.l, shards, m.s.o.Retention, m.s.o.now(), m.load)
	if err != nil {
		return nil, err
	}
	m.counts.Pruned += pruned
	m.s.res.Pruned += pruned
	return shards, nil
}

// load reads the records of a shard the merge left as the base has it.
func (m *logMerge) load(sh *shard) error {
	if sh.recs != nil || sh.dirty {
		return nil
	}
	recs, err := m.parse(m.bD[sh.day])
	if err != nil {
		return err
	}
	sh.recs = recs
	info := infoOf(recs)
	sh.info = &info
	return nil
}

// plan stores the new shards, puts them in out, and compares them with
// what the file holds to plan what the write-back writes.
func (m *logMerge) plan(shards []*shard, out flat) (*logPlan, error) {
	p := &logPlan{log: m.l, loc: m.loc, data: map[string][]byte{}, s: m.s}
	for _, sh := range shards {
		var h plumbing.Hash
		var size int64
		var err error
		if sh.dirty {
			data := encodeRecords(sh.recs)
			if h, err = writeObject(m.s.objs, plumbing.BlobObject, data); err != nil {
				return nil, err
			}
			p.data[sh.day] = data
			size = int64(len(data))
		} else {
			h = m.bD[sh.day]
			if size, err = m.baseSize(sh.day, h); err != nil {
				return nil, err
			}
		}
		if sh.info != nil {
			m.in.infos[h.String()] = *sh.info
		}
		out[shardPath(m.l.Name, sh.day)] = h
		p.shards = append(p.shards, shardState{Day: sh.day, Blob: h.String(), Size: size})
	}
	if m.loc.fast {
		ls := m.ls
		i := 0
		for i < len(p.shards) && i < len(ls.Shards) && p.shards[i] == ls.Shards[i] {
			p.prefix += p.shards[i].Size
			i++
		}
		p.first = i
		p.write_ = i < len(p.shards) || i < len(ls.Shards) || len(m.loc.appended) > 0
	} else {
		var err error
		if p.whole, err = p.fullContent(); err != nil {
			return nil, err
		}
		p.write_ = !bytes.Equal(p.whole, m.loc.whole)
	}
	return p, nil
}

// baseSize is the size of the base's shard of day, blob h: as the state
// lists it, else as the object store has it.
func (m *logMerge) baseSize(day string, h plumbing.Hash) (int64, error) {
	size := int64(-1)
	if m.ls != nil {
		for _, b := range m.ls.Shards {
			if b.Day == day {
				size = b.Size
			}
		}
	}
	if size < 0 {
		o, err := m.s.store.EncodedObject(plumbing.BlobObject, h)
		if err != nil {
			return 0, err
		}
		size = o.Size()
	}
	return size, nil
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
	return slices.Sorted(maps.Keys(seen))
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
