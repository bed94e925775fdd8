package memsync

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/feedback"
	"github.com/orket/orket/internal/flock"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/store"
)

// TestTwoClones: what one clone learns, the other has after a sync each,
// over a bare repository reached by file:// and by path.
func TestTwoClones(t *testing.T) {
	for _, form := range []string{"file://", "path"} {
		t.Run(form, func(t *testing.T) {
			remote := newBare(t)
			u := remote
			if form == "file://" {
				u = "file://" + remote
			}
			a, b := newClone(t, u), newClone(t, u)
			idsA := addRecords(a, "alice", 40, t0)
			res := a.sync()
			if !res.Pushed || res.Sent != 40 || res.Received != 0 {
				t.Fatalf("first push: %+v", res)
			}
			idsB := addRecords(b, "bob", 40, t0.Add(time.Hour))
			res = b.sync()
			if res.Received != 40 || res.Sent != 40 || !res.Pushed {
				t.Fatalf("second clone: %+v", res)
			}
			res = a.sync()
			if res.Received != 40 || res.Sent != 0 || res.Pushed {
				t.Fatalf("back to the first: %+v", res)
			}
			want := append(idsA, idsB...)
			sort.Strings(want)
			for _, c := range []*clone{a, b} {
				got := allIDs(c)
				sort.Strings(got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", c.dir, diff)
				}
			}
			sameFiles(t, a, b)
			// Nothing new: nothing written, nothing pushed.
			before := a.snapshot()
			res = a.sync()
			if res.Received != 0 || res.Sent != 0 || res.Pushed || !res.Published {
				t.Errorf("idle sync: %+v", res)
			}
			if diff := cmp.Diff(before, a.snapshot()); diff != "" {
				t.Errorf("idle sync changed files:\n%s", diff)
			}
		})
	}
}

// TestEightClones: eight clones syncing at once to one remote, each with
// its own 100 new records (25 under -short), hold all 800 after one more
// sync each, none twice, byte for byte the same files, whatever the order
// of the syncs.
func TestEightClones(t *testing.T) {
	remote := newBare(t)
	n, each := 8, 100
	if testing.Short() {
		each = 25
	}
	clones := make([]*clone, n)
	var want []string
	for i := range clones {
		clones[i] = newClone(t, "file://"+remote)
		clones[i].opts.MaxAttempts = 40
		want = append(want, addRecords(clones[i], fmt.Sprintf("agent%d", i), each, t0.Add(time.Duration(i)*3*time.Minute))...)
	}
	sort.Strings(want)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, c := range clones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.trySync()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("clone %d: %v", i, err)
		}
	}
	order := rand.Perm(n)
	for _, i := range order {
		clones[i].sync()
	}
	for i, c := range clones {
		got := allIDs(c)
		if d := countDup(got); len(d) > 0 {
			t.Errorf("clone %d holds %d records twice: %v", i, len(d), d[:min(3, len(d))])
		}
		sort.Strings(got)
		if len(got) != n*each || !cmp.Equal(want, got) {
			t.Errorf("clone %d holds %d records, want %d", i, len(got), n*each)
		}
	}
	sameFiles(t, clones...)

	// The same records merged in another order give the same bytes.
	other := newClone(t, "")
	for _, i := range rand.Perm(n) {
		for _, l := range []string{"memory/evaluations.jsonl", "memory/failure_lessons.jsonl", "memory/feedback.jsonl", "memory/tasks.jsonl"} {
			lines := strings.Split(strings.TrimSpace(clones[i].read(l)), "\n")
			rand.Shuffle(len(lines), func(a, b int) { lines[a], lines[b] = lines[b], lines[a] })
			var recs [][]byte
			for _, line := range lines {
				recs = append(recs, []byte(line))
			}
			other.appendLines(l, recs...)
		}
	}
	for _, l := range []string{"memory/evaluations.jsonl", "memory/failure_lessons.jsonl", "memory/feedback.jsonl", "memory/tasks.jsonl"} {
		merged := MergeLog(logNamed(l), []byte(other.read(l)))
		if string(merged) != clones[0].read(l) {
			t.Errorf("%s: the merge of the shuffled records differs from the synced file", l)
		}
	}
}

// TestUnreachable: a remote that is not there is an UnreachableError of
// one line, and nothing local changes.
func TestUnreachable(t *testing.T) {
	c := newClone(t, "file:///nonexistent/orket-remote.git")
	addRecords(c, "alice", 4, t0)
	before := c.snapshot()
	for _, remote := range []string{"origin", "/nonexistent/x.git", "ssh://git@127.0.0.1:1/x.git", "https://127.0.0.1:1/x.git"} {
		_, err := c.trySync(func(o *Options) { o.Remote = remote; o.Auth.DialTimeout = 2 * time.Second })
		var ue *UnreachableError
		if !errors.As(err, &ue) {
			t.Errorf("%s: %T %v, want an UnreachableError", remote, err, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "unreachable") {
			t.Errorf("%s: message %q", remote, msg)
		}
	}
	if diff := cmp.Diff(before, c.snapshot()); diff != "" {
		t.Errorf("files changed:\n%s", diff)
	}
	_, err := c.trySync(func(o *Options) { o.Remote = "upstream" })
	var nr *NoRemoteError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "origin") {
		t.Errorf("unknown remote: %v", err)
	}
}

// TestDisplayURL: a token in a remote's URL is never shown.
func TestDisplayURL(t *testing.T) {
	got := displayURL("https://x-access-token:ghs_secret@github.com/o/r.git")
	if strings.Contains(got, "ghs_secret") {
		t.Errorf("%s", got)
	}
	err := classifyErr("origin", got, errors.New("dial tcp: connection refused"))
	if strings.Contains(err.Error(), "ghs_secret") {
		t.Errorf("%v", err)
	}
}

// TestMemoryEdits: a person's edits on one clone and orket's appends on
// the other both survive, on both sides.
func TestMemoryEdits(t *testing.T) {
	remote := newBare(t)
	a, b := newClone(t, remote), newClone(t, remote)
	a.write(store.MemoryFile, feedback.MemoryTemplate)
	a.sync()
	b.sync()
	if b.read(store.MemoryFile) != feedback.MemoryTemplate {
		t.Fatalf("the memory did not travel")
	}
	// On a, a person rewrites the intro and adds a note; orket appends a
	// learning. On b, orket appends a rejection row, and a person deletes
	// the comment line.
	edited := strings.Replace(a.read(store.MemoryFile), "Edit or prune anything here: orket only appends.", "Team rule: keep examples runnable.", 1)
	edited = strings.Replace(edited, "## Rejection log", "Note from Ana: ask before touching pkg/api.\n\n## Rejection log", 1)
	a.write(store.MemoryFile, edited)
	st, err := feedback.OpenMemory(a.orket).Append(context.Background(), []feedback.Learning{{Time: t0, Context: "Rejected run r1 (pkg/api)", Text: "Validate all code examples"}}, nil)
	if err != nil || st.Created {
		t.Fatal(err, st)
	}
	if _, err := feedback.OpenMemory(b.orket).Append(context.Background(), nil, []feedback.Row{{Date: t0, Type: "code", Item: "pkg/api", Reason: "no tests", Category: "completeness", Action: "Add tests"}}); err != nil {
		t.Fatal(err)
	}
	b.write(store.MemoryFile, strings.Replace(b.read(store.MemoryFile), "<!-- New learnings are appended here automatically -->\n", "", 1))
	a.sync()
	b.sync()
	a.sync()
	for _, c := range []*clone{a, b} {
		m := c.read(store.MemoryFile)
		for _, want := range []string{"Team rule: keep examples runnable.", "Note from Ana: ask before touching pkg/api.", "Validate all code examples", `| "no tests" |`} {
			if !strings.Contains(m, want) {
				t.Errorf("%s lost %q:\n%s", c.dir, want, m)
			}
		}
		if strings.Contains(m, "orket only appends.") || strings.Contains(m, "<!-- New learnings") {
			t.Errorf("%s: a person's deletion came back:\n%s", c.dir, m)
		}
	}
	sameFiles(t, a, b)
}

// TestRedaction: a secret in a local record or in the memory never
// reaches the remote; a record redacted here wins over the remote's
// unredacted version of it.
func TestRedaction(t *testing.T) {
	remote := newBare(t)
	a, b := newClone(t, remote), newClone(t, remote)
	const secret = "hunter2-" + "s3cr3t-value"
	red := redact.New(redact.Options{Values: []string{secret}})
	a.opts.Redact = red.Redact
	clear := feedbackLine("alice", t0, "the deploy failed with password "+secret)
	a.appendLines("memory/feedback.jsonl", clear)
	a.write(store.MemoryFile, "# Agent Memory\n\n- the staging password is "+secret+"\n")
	a.sync()
	if got := gitGrep(t, remote, secret); got != "" {
		t.Fatalf("the secret reached the remote in %s", got)
	}
	// The person's own file keeps what they wrote; what travelled does not.
	if !strings.Contains(a.read(store.MemoryFile), secret) {
		t.Errorf("the local memory was rewritten")
	}
	b.sync()
	if strings.Contains(b.read("memory/feedback.jsonl"), secret) || strings.Contains(b.read(store.MemoryFile), secret) {
		t.Errorf("the secret reached the other clone")
	}
	if !strings.Contains(b.read("memory/feedback.jsonl"), redact.Redacted) {
		t.Errorf("the record did not travel redacted:\n%s", b.read("memory/feedback.jsonl"))
	}

	// Another clone with a weaker redactor pushes the record unredacted
	// (as if written before the secret was known); a's redacted version
	// wins.
	c := newClone(t, remote)
	c.opts.Redact = func(s string) string { return s }
	c.appendLines("memory/feedback.jsonl", clear)
	c.sync()
	a.sync()
	c.sync()
	if strings.Contains(c.read("memory/feedback.jsonl"), secret) {
		t.Errorf("the unredacted version won:\n%s", c.read("memory/feedback.jsonl"))
	}
}

// gitGrep returns the first object of a bare repository holding s.
func gitGrep(t *testing.T, gitDir, s string) string {
	t.Helper()
	c := newClone(t, "")
	st, dir, err := (&fileRemote{dir: gitDir}).open()
	if err != nil {
		t.Fatal(err)
	}
	_ = c
	h, err := readRef(dir, RefName)
	if err != nil || h.IsZero() {
		t.Fatalf("no memory ref: %v", err)
	}
	objs, err := missing(st, h, func(plumbing.Hash) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		obj, err := st.EncodedObject(plumbing.AnyObject, o)
		if err != nil {
			t.Fatal(err)
		}
		if obj.Type() != plumbing.BlobObject {
			continue
		}
		b, _ := readBlob(st, o)
		if strings.Contains(string(b), s) {
			return o.String()
		}
	}
	return ""
}

// TestGuardrails: versions travel by number; two texts for one number are
// a clash kept as a proposal, the same on both clones.
func TestGuardrails(t *testing.T) {
	remote := newBare(t)
	a, b := newClone(t, remote), newClone(t, remote)
	a.write("guardrails/claude/v1.md", "# Guardrails of claude\n\n- run go generate before go test\n")
	a.write("guardrails/claude/v1.json", `{"version":1,"created_at":"2026-07-14T09:00:00Z","approved_by":"ana"}`+"\n")
	b.write("guardrails/claude/v1.md", "# Guardrails of claude\n\n- never edit testdata\n")
	b.write("guardrails/claude/v1.json", `{"version":1,"created_at":"2026-07-14T10:00:00Z","approved_by":"bo"}`+"\n")
	b.write("guardrails/codex/v1.md", "# Guardrails of codex\n")
	a.write("guardrails/claude/notes.txt", "not a version")
	a.sync()
	res := b.sync()
	if len(res.Clashes) != 1 || res.Clashes[0].Version != 1 {
		t.Fatalf("clashes %+v", res.Clashes)
	}
	a.sync()
	for _, c := range []*clone{a, b} {
		if !strings.Contains(c.read("guardrails/claude/v1.md"), "go generate") {
			t.Errorf("%s: the first version did not keep the number", c.dir)
		}
		if c.read("guardrails/codex/v1.md") == "" {
			t.Errorf("%s: codex's version did not travel", c.dir)
		}
		p := c.read(store.ProposalsFile)
		if strings.Count(p, "\n") != 1 || !strings.Contains(p, `"type":"version_clash"`) || !strings.Contains(p, "never edit testdata") {
			t.Errorf("%s: proposals:\n%s", c.dir, p)
		}
	}
	if b.read("guardrails/claude/notes.txt") != "" {
		t.Errorf("a file that is not a version travelled")
	}
	os.Remove(a.path("guardrails/claude/notes.txt"))
	sameFiles(t, a, b)
	// Another sync finds no new clash.
	if res := b.sync(); len(res.Clashes) != 0 {
		t.Errorf("clash found again: %+v", res.Clashes)
	}
}

// TestRetention: what travels keeps each agent's newest records and none
// past the age bound.
func TestRetention(t *testing.T) {
	remote := newBare(t)
	a := newClone(t, remote)
	now := t0.Add(100 * 24 * time.Hour)
	var lines [][]byte
	for i := 0; i < 60; i++ {
		lines = append(lines, evaluationLine("alice", fmt.Sprintf("r%03d", i), t0.Add(time.Duration(i)*48*time.Hour), "REJECT"))
	}
	a.appendLines("memory/evaluations.jsonl", lines...)
	a.appendLines("memory/tasks.jsonl", taskLine("alice", t0, "reset"))
	keepRun := "r010"
	a.sync(func(o *Options) {
		o.Retention = Retention{Logs: store.Retention{MaxPerAgent: 20, MaxAge: 90 * 24 * time.Hour},
			Keep: func(log string, rec []byte) bool { return strings.Contains(string(rec), `"run_id":"`+keepRun+`"`) }}
		o.Now = func() time.Time { return now }
	})
	ids := a.ids("memory/evaluations.jsonl")
	if len(ids) != 21 || ids[0] != "ev-"+keepRun || ids[len(ids)-1] != "ev-r059" {
		t.Errorf("kept %d: %v", len(ids), ids)
	}
	if len(a.ids("memory/tasks.jsonl")) != 1 {
		t.Errorf("a task event was aged out")
	}
	b := newClone(t, remote)
	b.sync()
	if got := b.ids("memory/evaluations.jsonl"); !cmp.Equal(got, ids) {
		t.Errorf("the remote holds %d", len(got))
	}
}

// TestSlowPathSame: without the sync state (a prune rewrote the file, the
// state was lost), the result is the same as with it.
func TestSlowPathSame(t *testing.T) {
	remote := newBare(t)
	a, b := newClone(t, remote), newClone(t, remote)
	addRecords(a, "alice", 50, t0)
	addRecords(b, "bob", 50, t0.Add(30*time.Minute))
	a.sync()
	b.sync()
	a.sync()
	addRecords(a, "alice", 10, t0.Add(48*time.Hour))
	os.Remove(a.path(stateFile))
	a.sync()
	b.sync()
	sameFiles(t, a, b)
	// A file rewritten by a prune (lines dropped) gets them back.
	os.WriteFile(a.path("memory/tasks.jsonl"), nil, 0o644)
	a.sync()
	sameFiles(t, a, b)
}

// TestInterruptedWriteBack: a sync killed while it rewrote a log in place
// loses nothing: the next sync finds the journal and the lines.
func TestInterruptedWriteBack(t *testing.T) {
	remote := newBare(t)
	a, b := newClone(t, remote), newClone(t, remote)
	addRecords(a, "alice", 40, t0.Add(-72*time.Hour)) // earlier days: the file's start stays
	a.sync()
	b.sync()
	addRecords(b, "bob", 20, t0.Add(time.Hour))
	b.sync()
	addRecords(a, "alice", 20, t0.Add(2*time.Hour))
	want := append(allIDs(a), allIDs(b)...)
	sort.Strings(want)
	want = uniq(want)
	// Simulate the crash: the merge commit and the journal exist, the
	// log was cut short mid-write, the state and the ref are the old ones.
	crash := errors.New("crash")
	testHookAfterJournal = func() error { return crash }
	_, err := a.trySync(pull)
	testHookAfterJournal = nil
	if !errors.Is(err, crash) {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(a.path(journalFile)); err != nil {
		t.Fatalf("no journal before an in-place write: %v", err)
	}
	p := a.path("memory/evaluations.jsonl")
	b2, _ := os.ReadFile(p)
	os.WriteFile(p, b2[:len(b2)/3], 0o644) // torn
	a.sync()
	got := allIDs(a)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := os.Stat(a.path(journalFile)); !os.IsNotExist(err) {
		t.Errorf("the journal is still there")
	}
}

func uniq(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// TestAppendDuringSync: lines a run appends while a sync runs are never
// lost: the sync holds the log's lock while it merges and writes.
func TestAppendDuringSync(t *testing.T) {
	remote := newBare(t)
	a := newClone(t, remote)
	addRecords(a, "alice", 20, t0)
	done := make(chan struct{})
	var appended []string
	go func() {
		defer close(done)
		for i := 0; i < 30; i++ {
			at := t0.Add(time.Duration(i) * time.Minute)
			line := evaluationLine("runner", fmt.Sprintf("live-%d", i), at, "APPROVE")
			a.appendLines("memory/evaluations.jsonl", line)
			appended = append(appended, "ev-live-"+fmt.Sprint(i))
			time.Sleep(time.Millisecond)
		}
	}()
	for i := 0; i < 5; i++ {
		a.sync()
	}
	<-done
	a.sync()
	have := map[string]bool{}
	for _, id := range a.ids("memory/evaluations.jsonl") {
		have[id] = true
	}
	for _, id := range appended {
		if !have[id] {
			t.Errorf("lost %s", id)
		}
	}
	b := newClone(t, remote)
	b.sync()
	sameFiles(t, a, b)
}

// TestPullOnly: --pull merges into the local files and publishes nothing;
// a later sync publishes.
func TestPullOnly(t *testing.T) {
	remote := newBare(t)
	a, b := newClone(t, remote), newClone(t, remote)
	addRecords(a, "alice", 8, t0)
	a.sync()
	addRecords(b, "bob", 8, t0)
	res := b.sync(pull)
	if res.Pushed || res.Published || res.Received != 8 {
		t.Errorf("pull: %+v", res)
	}
	if got, _ := readRef(remote, RefName); got.String() != a.sync().Commit {
		t.Errorf("the pull published")
	}
	b.sync()
	a.sync()
	sameFiles(t, a, b)
}

// TestForeignRemote: a memory tree of a newer format is refused; files a
// newer orket adds are kept.
func TestForeignRemote(t *testing.T) {
	remote := newBare(t)
	a := newClone(t, remote)
	addRecords(a, "alice", 4, t0)
	a.sync()
	// Add an unknown file to the remote's tree, as a newer orket might.
	st, dir, _ := (&fileRemote{dir: remote}).open()
	h, _ := readRef(dir, RefName)
	files, _, _ := flatten(st, h)
	files["memory/newlog.jsonl.d/2026-07/2026-07-14.jsonl"], _ = writeObject(st, plumbing.BlobObject, []byte(`{"id":"n"}`+"\n"))
	tree, _ := buildTree(st, files, nil)
	c, _ := writeCommit(st, tree, []plumbing.Hash{h}, "newer\n", t0)
	if err := casRef(context.Background(), dir, RefName, h, c); err != nil {
		t.Fatal(err)
	}
	addRecords(a, "alice", 4, t0.Add(time.Hour))
	a.sync()
	h2, _ := readRef(dir, RefName)
	files2, _, _ := flatten(st, h2)
	if _, ok := files2["memory/newlog.jsonl.d/2026-07/2026-07-14.jsonl"]; !ok {
		t.Errorf("the newer orket's file was dropped")
	}
	files2[formatFile], _ = writeObject(st, plumbing.BlobObject, []byte("orket.memory/v2\n"))
	tree, _ = buildTree(st, files2, nil)
	c, _ = writeCommit(st, tree, []plumbing.Hash{h2}, "v2\n", t0)
	casRef(context.Background(), dir, RefName, h2, c)
	_, err := a.trySync()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Errorf("err %v, want a FormatError", err)
	}
}

// TestImport: records of other files go to the log their schema names,
// known ids skipped.
func TestImport(t *testing.T) {
	a := newClone(t, "")
	ev := evaluationLine("alice", "r1", t0, "REJECT")
	a.appendLines("memory/evaluations.jsonl", ev)
	dir := t.TempDir()
	origin := `{"schema_version":"core_pillars/failure_lesson/v1","id":"origin-1","created_at":"2026-02-24T10:00:00Z","command":"run"}`
	artifact := strings.Join([]string{
		string(ev), // known
		string(evaluationLine("ci", "r2", t0, "APPROVE")),
		string(lessonLine("ci", t0, 1)),
		string(feedbackLine("ci", t0, "missing docs")),
		string(taskLine("ci", t0, "reset")),
		origin,
		`{"schema_version":"someone.else/v1","id":"x"}`,
		`{"schema_version":"orket.evaluation/v1"}`,
		`not json`,
		string(evaluationLine("ci", "r2", t0, "APPROVE")), // twice in the file
	}, "\n")
	f := filepath.Join(dir, "artifact.jsonl")
	os.WriteFile(f, []byte(artifact), 0o644)
	res, err := Import(context.Background(), ImportOptions{OrketDir: a.orket}, f)
	if err != nil {
		t.Fatal(err)
	}
	fr := res.Files[0]
	if fr.Records != 10 || fr.Known != 2 || fr.Unknown != 1 || fr.Damaged != 2 {
		t.Errorf("%+v", fr)
	}
	want := map[string]int{"memory/evaluations.jsonl": 1, "memory/failure_lessons.jsonl": 2, "memory/feedback.jsonl": 1, "memory/tasks.jsonl": 1}
	if diff := cmp.Diff(want, res.Added); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
	if ids := a.ids("memory/failure_lessons.jsonl"); len(ids) != 2 || ids[1] != "origin-1" {
		t.Errorf("lessons %v", ids)
	}
	// Again: everything known.
	res, _ = Import(context.Background(), ImportOptions{OrketDir: a.orket}, f)
	if len(res.Added) != 0 || res.Known != 7 {
		t.Errorf("second import: %+v", res)
	}
}

// TestGuardrailsLockedDuringMerge: a sync writes an agent's guardrail
// versions under the lock orket lessons approve takes, so an approval
// and a sync never write one version number at once.
func TestGuardrailsLockedDuringMerge(t *testing.T) {
	remote := newBare(t)
	a, b := newClone(t, remote), newClone(t, remote)
	a.write("guardrails/claude/v1.md", "# Guardrails of claude\n\n- run go generate before go test\n")
	a.write("guardrails/claude/v1.json", `{"version":1,"created_at":"2026-07-14T09:00:00Z","approved_by":"ana"}`+"\n")
	a.sync()
	if err := os.MkdirAll(b.path("guardrails/claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := flock.Acquire(context.Background(), b.path("guardrails/claude/.lock"), flock.Mode{Exclusive: true, Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.trySync()
		done <- err
	}()
	select {
	case err := <-done:
		unlock()
		t.Fatalf("the sync did not wait for the agent's lock (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := os.Stat(b.path("guardrails/claude/v1.md")); err == nil {
		t.Error("v1.md was written while the agent's lock was held")
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.read("guardrails/claude/v1.md"), "go generate") {
		t.Error("the version did not arrive once the lock was released")
	}
}

// TestClashRedacted: the proposal a version clash becomes holds both
// texts, and travels redacted like everything else.
func TestClashRedacted(t *testing.T) {
	remote := newBare(t)
	a, b := newClone(t, remote), newClone(t, remote)
	const secret = "hunter2-" + "clash-value"
	b.opts.Redact = redact.New(redact.Options{Values: []string{secret}}).Redact
	a.write("guardrails/claude/v1.md", "# Guardrails of claude\n\n- run go generate before go test\n")
	a.write("guardrails/claude/v1.json", `{"version":1,"created_at":"2026-07-14T09:00:00Z","approved_by":"ana"}`+"\n")
	b.write("guardrails/claude/v1.md", "# Guardrails of claude\n\n- log in with "+secret+"\n")
	b.write("guardrails/claude/v1.json", `{"version":1,"created_at":"2026-07-14T10:00:00Z","approved_by":"bo"}`+"\n")
	a.sync()
	if res := b.sync(); len(res.Clashes) != 1 {
		t.Fatalf("clashes %+v", res.Clashes)
	}
	if got := gitGrep(t, remote, secret); got != "" {
		t.Fatalf("the secret reached the remote in %s", got)
	}
	a.sync()
	if p := a.read(store.ProposalsFile); strings.Contains(p, secret) || !strings.Contains(p, redact.Redacted) {
		t.Errorf("the clash travelled unredacted:\n%s", p)
	}
}

// TestMemoryAfterPull: a clone that pulled (its memory ref is a merge the
// remote never got) and then syncs after another clone pushed keeps its
// own new memory lines, and so does the other: the three-way merge's base
// is what both sides share, not the unpublished merge.
func TestMemoryAfterPull(t *testing.T) {
	remote := newBare(t)
	a, b := newClone(t, remote), newClone(t, remote)
	a.write(store.MemoryFile, "# Agent Memory\n\n- shared line\n")
	a.sync()
	b.sync()
	b.write(store.MemoryFile, b.read(store.MemoryFile)+"- learned on b\n")
	b.sync(pull)
	a.write(store.MemoryFile, a.read(store.MemoryFile)+"- learned on a\n")
	a.sync()
	b.sync()
	a.sync()
	for _, c := range []*clone{a, b} {
		m := c.read(store.MemoryFile)
		for _, want := range []string{"shared line", "learned on a", "learned on b"} {
			if !strings.Contains(m, want) {
				t.Errorf("%s lost %q:\n%s", c.dir, want, m)
			}
		}
	}
}

// TestLostRace: a sync whose push loses a race to another clone merges
// again and pushes; it counts what it sent once, and neither clone loses
// a record or a memory line.
func TestLostRace(t *testing.T) {
	remote := newBare(t)
	a, b := newClone(t, remote), newClone(t, remote)
	addRecords(a, "alice", 40, t0.Add(-72*time.Hour))
	a.write(store.MemoryFile, "# Agent Memory\n\n- shared line\n")
	a.sync()
	b.sync()
	addRecords(b, "bob", 20, t0.Add(time.Hour))
	b.sync()
	addRecords(a, "alice", 10, t0.Add(2*time.Hour))
	a.write(store.MemoryFile, a.read(store.MemoryFile)+"- learned on a\n")
	raced := false
	testHookAfterJournal = func() error {
		if !raced {
			raced = true
			addRecords(b, "bob", 5, t0.Add(3*time.Hour))
			b.write(store.MemoryFile, b.read(store.MemoryFile)+"- learned on b\n")
			b.sync()
		}
		return nil
	}
	res := a.sync()
	testHookAfterJournal = nil
	if !raced || res.Attempts < 2 {
		t.Fatalf("no race: hook ran %v, %d attempts", raced, res.Attempts)
	}
	if res.Sent != 10 {
		t.Errorf("sent %d, want the 10 new records once", res.Sent)
	}
	b.sync()
	want := allIDs(a)
	sort.Strings(want)
	got := allIDs(b)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" || len(want) != 75 {
		t.Errorf("%d records; a and b differ (-a +b):\n%s", len(want), diff)
	}
	for _, c := range []*clone{a, b} {
		for _, line := range []string{"learned on a", "learned on b"} {
			if !strings.Contains(c.read(store.MemoryFile), line) {
				t.Errorf("%s lost %q", c.dir, line)
			}
		}
	}
}

// TestSymlinkedGuardrailsLock: a sync never takes a lock through a
// symlink; it says why, as the guardrails store does.
func TestSymlinkedGuardrailsLock(t *testing.T) {
	remote := newBare(t)
	a := newClone(t, remote)
	a.write("guardrails/claude/v1.md", "# Guardrails of claude\n")
	if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), a.path("guardrails/claude/.lock")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.trySync(); !errors.Is(err, store.ErrSymlink) {
		t.Fatalf("err %v, want store.ErrSymlink", err)
	}
}
