package feedback

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/store"
)

var (
	learnA = Learning{Time: t0, Context: "Rejected run r1 (pkg/api)", Text: "Validate all code examples"}
	learnB = Learning{Time: t0.Add(time.Hour), Context: `Rejected file "plan.md"`, Text: "Never promise dates."}
	rowA   = Row{Date: t0, Type: "code", Item: "pkg/api", Reason: "Examples don't work", Category: Examples, Action: "Validate all code examples"}
)

const (
	lineA = "- **2026-02-03T16:45:00Z** — Rejected run r1 (pkg/api): Validate all code examples"
	lineB = `- **2026-02-03T17:45:00Z** — Rejected file "plan.md": Never promise dates.`
	rowAl = `| 2026-02-03 | code | pkg/api | "Examples don't work" | examples | Validate all code examples |`
)

func TestLineShapes(t *testing.T) {
	e := &Entry{Time: t0, RunID: "r1", Item: "pkg/api", Action: "Validate all code examples"}
	if got := LearningOf(e, "").Line(); got != lineA {
		t.Errorf("learning of an entry %q", got)
	}
	if got := LearningOf(&Entry{Time: t0, Item: "x"}, "Keep it short.").Line(); got != "- **2026-02-03T16:45:00Z** — Rejected x: Keep it short." {
		t.Errorf("learning of an entry %q", got)
	}
	if got := learnA.Line(); got != lineA {
		t.Errorf("learning line %q", got)
	}
	if got := (Learning{Time: t0, Text: "a\nb"}).Line(); got != "- **2026-02-03T16:45:00Z** — a b" {
		t.Errorf("learning without context %q", got)
	}
	if got := rowA.Line(); got != rowAl {
		t.Errorf("row %q", got)
	}
	r := Row{Date: t0, Type: "docs", Item: "a|b", Reason: "use `x | y`\nnot \\| \"z\"", Category: Other, Action: "Review: a | b"}
	want := `| 2026-02-03 | docs | a\|b | "use ` + "`x \\| y`" + ` not \\\| "z"" | other | Review: a \| b |`
	if got := r.Line(); got != want {
		t.Errorf("escaped row\n got %s\nwant %s", got, want)
	}
	if n := len(cellsOf(want)); n != 6 {
		t.Errorf("escaped row has %d cells, want 6", n)
	}
	long := Row{Date: t0, Reason: strings.Repeat("é", 800)}.Line()
	if n := strings.Count(long, "é"); n != 499 {
		t.Errorf("long reason kept %d characters, want 499 and an ellipsis", n)
	}
}

// cellsOf splits a table row as GFM does: on pipes not escaped by a
// backslash (a backslash escapes the next character).
func cellsOf(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row):
			cur.WriteByte(row[i])
			cur.WriteByte(row[i+1])
			i++
		case row[i] == '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		cells = append(cells, cur.String())
	}
	return cells
}

// onlyInserted checks that after is before with whole lines inserted, and
// returns those lines (without their line endings). A final line of
// before without its newline may have gained one.
func onlyInserted(before, after []byte) ([]string, error) {
	var ins []string
	pos := 0
	for len(after) > 0 {
		end := bytes.IndexByte(after, '\n') + 1
		if end == 0 {
			end = len(after)
		}
		line := after[:end]
		after = after[end:]
		switch {
		case bytes.HasPrefix(before[pos:], line):
			pos += len(line)
		case pos < len(before) && !bytes.HasSuffix(before, []byte("\n")) &&
			(bytes.Equal(before[pos:], bytes.TrimSuffix(line, []byte("\n"))) || bytes.Equal(before[pos:], bytes.TrimSuffix(line, []byte("\r\n")))):
			pos = len(before)
		default:
			ins = append(ins, strings.TrimRight(string(line), "\r\n"))
		}
	}
	if pos != len(before) {
		return ins, fmt.Errorf("lost %q of the original", before[pos:])
	}
	return ins, nil
}

// TestInsertMemory: where orket's lines go, whatever a person did to the
// file; and that they are the only change.
func TestInsertMemory(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
	}{
		{"the template", MemoryTemplate, strings.Replace(strings.Replace(MemoryTemplate,
			"<!-- New learnings are appended here automatically -->\n",
			"<!-- New learnings are appended here automatically -->\n"+lineA+"\n"+lineB+"\n", 1),
			"|----------------|\n", "|----------------|\n"+rowAl+"\n", 1)},

		{"a person's notes, title and own section", `# Memory of the payments team

Read this first. (Edited by Ana.)

## Patterns
<!-- New learnings are appended here automatically -->
- **2026-01-01T00:00:00Z** — old: kept
- Our own rule: never touch vendor/.


## Rejection log

| Date | Type | Item | Reason | Category | Learned action |
|:-----|------|------|--------|----------|---------------:|
| 2026-01-01 | code | x | "y" | other | Review: y |

Rows above are pruned monthly.

## Our section
Anything.
`, `# Memory of the payments team

Read this first. (Edited by Ana.)

## Patterns
<!-- New learnings are appended here automatically -->
- **2026-01-01T00:00:00Z** — old: kept
- Our own rule: never touch vendor/.
` + lineA + "\n" + lineB + `


## Rejection log

| Date | Type | Item | Reason | Category | Learned action |
|:-----|------|------|--------|----------|---------------:|
| 2026-01-01 | code | x | "y" | other | Review: y |
` + rowAl + `

Rows above are pruned monthly.

## Our section
Anything.
`},

		{"sections reordered, Patterns last and at level 3", `# M

## Rejection log
| Date | Type | Item | Reason | Category | Learned action |
|---|---|---|---|---|---|

### Patterns
- a person's note`, `# M

## Rejection log
| Date | Type | Item | Reason | Category | Learned action |
|---|---|---|---|---|---|
` + rowAl + `

### Patterns
- a person's note
` + lineA + "\n" + lineB + "\n"},

		{"both sections deleted", "# Just a title\n\nSome text.\n", "# Just a title\n\nSome text.\n\n## Patterns\n\n" + lineA + "\n" + lineB +
			"\n\n## Rejection log\n\n" + tableHeader + "\n" + tableDelimiter + "\n" + rowAl + "\n"},

		{"an empty file", "", "## Patterns\n\n" + lineA + "\n" + lineB + "\n\n## Rejection log\n\n" + tableHeader + "\n" + tableDelimiter + "\n" + rowAl + "\n"},

		{"the table header deleted, rows left", `## Patterns

## Rejection log
| 2026-01-01 | code | x | "y" | other | Review: y |
| 2026-01-02 | code | x | "z" | other | Review: z |

## Notes
`, `## Patterns
` + lineA + "\n" + lineB + `

## Rejection log
| 2026-01-01 | code | x | "y" | other | Review: y |
| 2026-01-02 | code | x | "z" | other | Review: z |

` + tableHeader + "\n" + tableDelimiter + "\n" + rowAl + `

## Notes
`},

		{"the whole table deleted", "## Patterns\n\n## Rejection log\n\n## Notes\n", "## Patterns\n" + lineA + "\n" + lineB +
			"\n\n## Rejection log\n" + tableHeader + "\n" + tableDelimiter + "\n" + rowAl + "\n\n## Notes\n"},

		{"headings in code and comments do not count", "# M\n\n```md\n## Patterns\n## Rejection log\n| a | b |\n|---|---|\n```\n<!--\n## Patterns\n-->\n",
			"# M\n\n```md\n## Patterns\n## Rejection log\n| a | b |\n|---|---|\n```\n<!--\n## Patterns\n-->\n\n## Patterns\n\n" + lineA + "\n" + lineB +
				"\n\n## Rejection log\n\n" + tableHeader + "\n" + tableDelimiter + "\n" + rowAl + "\n"},

		{"a fence left open at the end is closed first", "## Patterns\n- x\n\n## Rejection log\n\n~~~~\n| a |\n",
			"## Patterns\n- x\n" + lineA + "\n" + lineB + "\n\n## Rejection log\n\n~~~~\n| a |\n~~~~\n\n" + tableHeader + "\n" + tableDelimiter + "\n" + rowAl + "\n"},

		{"no final newline", "## Patterns\n- x", "## Patterns\n- x\n" + lineA + "\n" + lineB + "\n\n## Rejection log\n\n" +
			tableHeader + "\n" + tableDelimiter + "\n" + rowAl + "\n"},

		{"CRLF line endings", "## Patterns\r\n- x\r\n\r\n## Rejection log\r\n" + tableHeader + "\r\n" + tableDelimiter + "\r\n",
			"## Patterns\r\n- x\r\n" + lineA + "\r\n" + lineB + "\r\n\r\n## Rejection log\r\n" + tableHeader + "\r\n" + tableDelimiter + "\r\n" + rowAl + "\r\n"},

		{"seed 000's Portuguese heading", "## Padrões\n\n## Log de Rejeicoes\n\n| Data | Tipo | Item | Motivo | Categoria | Aprendizado |\n|---|---|---|---|---|---|\n",
			"## Padrões\n" + lineA + "\n" + lineB + "\n\n## Log de Rejeicoes\n\n| Data | Tipo | Item | Motivo | Categoria | Aprendizado |\n|---|---|---|---|---|---|\n" + rowAl + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := InsertMemory([]byte(tc.before), []Learning{learnA, learnB}, []Row{rowA})
			if string(got) != tc.after {
				t.Errorf("got\n%s\nwant\n%s", got, tc.after)
			}
			if _, err := onlyInserted([]byte(tc.before), got); err != nil {
				t.Error(err)
			}
			if n, m := CountLearnings(got), CountLearnings([]byte(tc.before)); n != m+2 {
				t.Errorf("%d learnings after, %d before", n, m)
			}
		})
	}
}

func TestMemoryAppend(t *testing.T) {
	dir := t.TempDir()
	m := OpenMemory(dir)
	if _, err := m.Read(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read of a missing memory: %v", err)
	}
	st, err := m.Append(context.Background(), []Learning{learnA}, []Row{rowA})
	if err != nil || !st.Created || st.Learnings != 1 || st.WantsPruning {
		t.Fatalf("status %+v, %v", st, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "memory", "AGENT_MEMORY.md"))
	if string(b) != string(InsertMemory([]byte(MemoryTemplate), []Learning{learnA}, []Row{rowA})) {
		t.Errorf("created memory:\n%s", b)
	}
	// A person edits: their edit stays, and orket's mode is theirs.
	edited := strings.Replace(string(b), "# Agent Memory", "# Our agents' memory\n\nAsk Ana before pruning.", 1)
	os.WriteFile(m.Path(), []byte(edited), 0o600)
	os.Chmod(m.Path(), 0o600)
	st, err = m.Append(context.Background(), []Learning{learnB}, nil)
	if err != nil || st.Created || st.Learnings != 2 {
		t.Fatalf("status %+v, %v", st, err)
	}
	after, _ := m.Read()
	if ins, err := onlyInserted([]byte(edited), after); err != nil || len(ins) != 1 || ins[0] != lineB {
		t.Errorf("inserted %q, %v", ins, err)
	}
	if fi, _ := os.Stat(m.Path()); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	// No temporary file is left beside it.
	names, _ := os.ReadDir(filepath.Dir(m.Path()))
	for _, n := range names {
		if strings.HasPrefix(n.Name(), ".orket-tmp") {
			t.Errorf("left %s", n.Name())
		}
	}
}

// TestMemoryWantsPruning: past 50 learnings the status says so, and the
// learning is still appended.
func TestMemoryWantsPruning(t *testing.T) {
	m := OpenMemory(t.TempDir())
	var ls []Learning
	for i := 0; i < MaxLearnings; i++ {
		ls = append(ls, Learning{Time: t0.Add(time.Duration(i) * time.Second), Context: "c", Text: fmt.Sprint("t", i)})
	}
	st, err := m.Append(context.Background(), ls, nil)
	if err != nil || st.Learnings != 50 || st.WantsPruning {
		t.Fatalf("at 50: %+v, %v", st, err)
	}
	st, err = m.Append(context.Background(), []Learning{learnA}, nil)
	if err != nil || st.Learnings != 51 || !st.WantsPruning {
		t.Fatalf("at 51: %+v, %v", st, err)
	}
	b, _ := m.Read()
	if !strings.Contains(string(b), lineA) {
		t.Error("the 51st learning was not appended")
	}
}

// TestMemoryPersonSaves: a person saving the file between orket's read and
// its write loses nothing, and neither does orket.
func TestMemoryPersonSaves(t *testing.T) {
	m := OpenMemory(t.TempDir())
	if _, err := m.Append(context.Background(), nil, []Row{rowA}); err != nil {
		t.Fatal(err)
	}
	saves := 0
	testHookMemoryRead = func() {
		if saves < 3 { // three saves in a row: orket retries each time
			saves++
			b, _ := os.ReadFile(m.Path())
			os.WriteFile(m.Path()+".tmp", append(b, fmt.Sprintf("A person's line %d.\n", saves)...), 0o644)
			os.Rename(m.Path()+".tmp", m.Path())
		}
	}
	defer func() { testHookMemoryRead = nil }()
	if _, err := m.Append(context.Background(), []Learning{learnA}, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := m.Read()
	for _, want := range []string{"A person's line 1.", "A person's line 2.", "A person's line 3.", lineA, rowAl} {
		if !strings.Contains(string(b), want) {
			t.Errorf("lost %q:\n%s", want, b)
		}
	}
}

// TestMemoryConcurrentGoroutines: appends at once lose nothing.
func TestMemoryConcurrentGoroutines(t *testing.T) {
	m := OpenMemory(t.TempDir())
	const writers, each = 8, 10
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				l := Learning{Time: t0, Context: fmt.Sprint("w", w), Text: fmt.Sprint("learning ", i)}
				r := Row{Date: t0, Item: fmt.Sprintf("w%d-%d", w, i), Reason: "r", Category: Other}
				if _, err := m.Append(context.Background(), []Learning{l}, []Row{r}); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	checkMemoryHolds(t, m, writers, each)
}

func checkMemoryHolds(t *testing.T, m *Memory, writers, each int) {
	t.Helper()
	b, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if n := CountLearnings(b); n != writers*each {
		t.Errorf("%d learnings, want %d", n, writers*each)
	}
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			if !strings.Contains(string(b), fmt.Sprintf("| w%d-%d |", w, i)) || !strings.Contains(string(b), fmt.Sprintf("w%d: learning %d\n", w, i)) {
				t.Fatalf("lost writer %d's append %d", w, i)
			}
		}
	}
	// Still one table, all rows in it.
	lines := parseMemory(b)
	h, end := section(lines, rejectionHeadings)
	if at := lastTable(lines, h+1, end); at < 0 || at-h-4 != writers*each {
		t.Errorf("table ends at %d after heading %d: rows not in one table", at, h)
	}
}

// TestHelperProcess is a separate orket appending to the feedback log and
// the memory (run by TestConcurrentProcesses).
func TestHelperProcess(t *testing.T) {
	dir, id := os.Getenv("FEEDBACK_HELPER_DIR"), os.Getenv("FEEDBACK_HELPER_ID")
	if dir == "" {
		t.Skip("a helper for TestConcurrentProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv("FEEDBACK_HELPER_N"))
	l, m := OpenLog(dir), OpenMemory(dir)
	for i := 0; i < n; i++ {
		e := Default().Entry(Rejection{Agent: "w" + id, Item: fmt.Sprintf("w%s-%d", id, i), Reason: "examples are wrong"})
		if err := l.Record(e, nil); err != nil {
			t.Fatal(err)
		}
		r := RowOf(e)
		if _, err := m.Append(context.Background(), []Learning{{Time: e.Time, Context: "w" + id, Text: fmt.Sprint("learning ", i)}}, []Row{r}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcurrentProcesses: separate processes appending to the log and the
// memory at once lose nothing.
func TestConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	const procs, each = 4, 15
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "FEEDBACK_HELPER_DIR="+dir, "FEEDBACK_HELPER_ID="+strconv.Itoa(p), "FEEDBACK_HELPER_N="+strconv.Itoa(each))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Log(out.String())
			}
		})
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	all, damaged, err := OpenLog(dir).Entries(Filter{})
	if err != nil || len(damaged) > 0 || len(all) != procs*each {
		t.Fatalf("%d entries, want %d; damaged %v, %v", len(all), procs*each, damaged, err)
	}
	checkMemoryHolds(t, OpenMemory(dir), procs, each)
}

// TestMemoryRefusesOddFiles: a symlinked memory or memory directory, or a
// FIFO, is refused; nothing outside .orket is written, nothing blocks.
func TestMemoryRefusesOddFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "elsewhere.md")
	os.WriteFile(outside, []byte("not orket's\n"), 0o644)

	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "memory"), 0o755)
	os.Symlink(outside, filepath.Join(dir, "memory", "AGENT_MEMORY.md"))
	if _, err := OpenMemory(dir).Append(context.Background(), []Learning{learnA}, nil); !errors.Is(err, fsroot.ErrEscapes) {
		t.Errorf("symlinked memory: %v", err)
	}

	dir2 := t.TempDir()
	os.Symlink(filepath.Dir(outside), filepath.Join(dir2, "memory"))
	if _, err := OpenMemory(dir2).Append(context.Background(), []Learning{learnA}, nil); !errors.Is(err, fsroot.ErrEscapes) {
		t.Errorf("symlinked memory directory: %v", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "not orket's\n" {
		t.Errorf("wrote outside: %q", b)
	}
	if names, _ := os.ReadDir(filepath.Dir(outside)); len(names) != 1 {
		t.Errorf("created files outside: %v", names)
	}

	dir3 := t.TempDir()
	os.MkdirAll(filepath.Join(dir3, "memory"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir3, "memory", "AGENT_MEMORY.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := OpenMemory(dir3).Append(context.Background(), []Learning{learnA}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrNotRegular) {
			t.Errorf("FIFO memory: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocked on a FIFO")
	}
}
