package feedback

// The agent memory file is a person's as much as orket's. The invariant
// this file keeps: orket only inserts whole lines; every byte of the file
// as it was read is still there, in order, after a write (the one
// exception: a final line without its newline gets one before orket
// appends below it). Writes are atomic (a temporary file, fsynced,
// renamed) and happen under a lock, and a write is retried, never
// forced, when the file changed between the read and the rename.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/store"
)

// MemoryTemplate is the agent memory as orket first writes it
// (docs/feedback.md, The agent memory).
const MemoryTemplate = `# Agent Memory

Learnings from past reviews of changes in this repository, for agents to read before they plan. Edit or prune anything here: orket only appends.

## Patterns
<!-- New learnings are appended here automatically -->

## Rejection log

| Date | Type | Item | Reason | Category | Learned action |
|------|------|------|--------|----------|----------------|
`

// MaxLearnings is how many learnings the memory holds before orket warns
// (once per run) that it wants pruning; it still appends.
const MaxLearnings = 50

// maxMemoryRead bounds the memory file orket reads (16 MiB).
const maxMemoryRead = 16 << 20

// A Learning is one line of the memory's Patterns section:
// "- **<time>** — <context>: <text>".
type Learning struct {
	Time    time.Time
	Context string // what was rejected: `Rejected run 2026…-a1b2c3 (pkg/api)`
	Text    string
}

// Line returns the learning as the memory holds it, on one line.
func (l Learning) Line() string {
	ctx := oneLine(l.Context, 300)
	text := oneLine(l.Text, 1000)
	if ctx == "" {
		return fmt.Sprintf("- **%s** — %s", l.Time.UTC().Format(time.RFC3339), text)
	}
	return fmt.Sprintf("- **%s** — %s: %s", l.Time.UTC().Format(time.RFC3339), ctx, text)
}

// A Row is one rejection in the memory's Rejection log table.
type Row struct {
	Date     time.Time
	Type     string
	Item     string
	Reason   string // quoted in the table; the log keeps it whole
	Category Category
	Action   string
}

// LearningOf returns the memory learning of a rejection: text (the
// summariser's learning, or the entry's learned action when text is
// empty) in the context "Rejected run <run-id> (<item>)".
func LearningOf(e *Entry, text string) Learning {
	if text == "" {
		text = e.Action
	}
	ctx := "Rejected " + e.Item
	if e.RunID != "" {
		ctx = "Rejected run " + e.RunID + " (" + e.Item + ")"
	}
	return Learning{Time: e.Time, Context: ctx, Text: text}
}

// RowOf returns the table row of a feedback entry.
func RowOf(e *Entry) Row {
	return Row{Date: e.Time, Type: e.ArtifactType, Item: e.Item, Reason: e.Reason, Category: e.Category, Action: e.Action}
}

// Line returns the row as a table line: cells on one line, pipes escaped,
// the reason quoted (at most 500 characters of it).
func (r Row) Line() string {
	cells := []string{
		r.Date.UTC().Format("2006-01-02"),
		cell(r.Type, 40),
		cell(r.Item, 200),
		`"` + cell(r.Reason, 500) + `"`,
		cell(string(r.Category), 40),
		cell(r.Action, 500),
	}
	return "| " + strings.Join(cells, " | ") + " |"
}

// cell makes text a table cell: one line, at most n characters, a pipe
// escaped (and a backslash before a pipe, so it cannot unescape it).
func cell(s string, n int) string {
	s = oneLine(s, n)
	if !strings.Contains(s, "|") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '|':
			b.WriteString(`\|`)
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '|':
			b.WriteString(`\\`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

const (
	tableHeader    = "| Date | Type | Item | Reason | Category | Learned action |"
	tableDelimiter = "|------|------|------|--------|----------|----------------|"
)

// The headings orket looks for, normalised: also the Portuguese ones
// some memory files use ("Padrões", "Log de Rejeicoes").
var (
	patternsHeadings  = []string{"patterns", "padroes"}
	rejectionHeadings = []string{"rejection log", "log de rejeicoes", "rejections"}
)

// A line of the memory, as parsed.
type mdLine struct {
	start, end int    // byte offsets; end includes the newline
	text       string // without the line ending
	level      int    // an ATX heading's level outside code and comments; 0 otherwise
	heading    string // its text, normalised
	hidden     bool   // inside (or delimiting) a fence or an HTML comment
	open       string // after this line: the closer of an open fence or comment, or ""
}

var (
	atxRe   = lazyre.New(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$`)
	fenceRe = lazyre.New("^ {0,3}(```+|~~~+)")
	delimRe = lazyre.New(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)
	learnRe = lazyre.New(`^ {0,3}[-*+] \*\*[^*]+\*\* — `)
)

func parseMemory(doc []byte) []mdLine {
	var lines []mdLine
	open := "" // the closer of the open block: a fence run, or "-->"
	for start := 0; start < len(doc); {
		end := bytes.IndexByte(doc[start:], '\n')
		if end < 0 {
			end = len(doc)
		} else {
			end += start + 1
		}
		text := strings.TrimRight(string(doc[start:end]), "\r\n")
		l := mdLine{start: start, end: end, text: text}
		switch {
		case open == "-->":
			l.hidden = true
			if strings.Contains(text, "-->") {
				open = ""
			}
		case open != "":
			l.hidden = true
			t := strings.TrimLeft(text, " ")
			if len(text)-len(t) <= 3 && strings.HasPrefix(t, open) && strings.Trim(t, open[:1]+" \t") == "" {
				open = ""
			}
		default:
			if m := fenceRe().FindStringSubmatch(text); m != nil && !(m[1][0] == '`' && strings.Contains(text[len(m[0]):], "`")) {
				l.hidden, open = true, m[1]
			} else if t := strings.TrimLeft(text, " "); len(text)-len(t) <= 3 && strings.HasPrefix(t, "<!--") {
				l.hidden = true
				if !strings.Contains(t[4:], "-->") {
					open = "-->"
				}
			} else if m := atxRe().FindStringSubmatch(text); m != nil {
				l.level = len(m[1])
				l.heading = Normalize(strings.TrimRight(m[2], "# \t"))
			}
		}
		l.open = open
		lines = append(lines, l)
		start = end
	}
	return lines
}

// section finds the first heading named one of names and returns its
// line index and the index where its section ends (the next heading of
// its level or above, or len(lines)); -1 when there is none.
func section(lines []mdLine, names []string) (int, int) {
	for i, l := range lines {
		if l.level == 0 || !contains(names, l.heading) {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if lines[j].level > 0 && lines[j].level <= l.level {
				return i, j
			}
		}
		return i, len(lines)
	}
	return -1, -1
}

// lastContent returns the index after the last non-blank line in
// [from, to), or from when all are blank.
func lastContent(lines []mdLine, from, to int) int {
	for j := to - 1; j >= from; j-- {
		if strings.TrimSpace(lines[j].text) != "" {
			return j + 1
		}
	}
	return from
}

// InsertMemory returns doc with the learnings added at the end of its
// Patterns section and the rows at the end of its Rejection log table.
// It only inserts lines:
//
//   - a heading a person renamed or deleted is added again, at the end
//     of the file, with what orket appends below it;
//   - a Rejection log section whose table lost its header (or never had
//     one) gets a new header and delimiter row, after a blank line, at
//     the end of the section; rows a person left without a header stay
//     where they are;
//   - headings inside code fences and HTML comments do not count, and
//     a fence or comment left open at the end of the file is closed
//     before orket appends below it;
//   - the file's line endings (CRLF or LF) are kept.
func InsertMemory(doc []byte, learnings []Learning, rows []Row) []byte {
	nl := "\n"
	if i := bytes.IndexByte(doc, '\n'); i > 0 && doc[i-1] == '\r' {
		nl = "\r\n"
	}
	if len(learnings) > 0 {
		var add []string
		for _, l := range learnings {
			add = append(add, l.Line())
		}
		lines := parseMemory(doc)
		if h, end := section(lines, patternsHeadings); h >= 0 {
			doc = insertAt(doc, lines, lastContent(lines, h+1, end), add, false, nl)
		} else {
			doc = insertAt(doc, lines, len(lines), append([]string{"## Patterns", ""}, add...), true, nl)
		}
	}
	if len(rows) > 0 {
		var add []string
		for _, r := range rows {
			add = append(add, r.Line())
		}
		lines := parseMemory(doc)
		h, end := section(lines, rejectionHeadings)
		if h < 0 {
			add = append([]string{"## Rejection log", "", tableHeader, tableDelimiter}, add...)
			doc = insertAt(doc, lines, len(lines), add, true, nl)
		} else if at := lastTable(lines, h+1, end); at >= 0 {
			doc = insertAt(doc, lines, at, add, false, nl)
		} else {
			at := lastContent(lines, h+1, end)
			add = append([]string{tableHeader, tableDelimiter}, add...)
			doc = insertAt(doc, lines, at, add, at > h+1, nl)
		}
	}
	return doc
}

// lastTable returns the index after the last row of the last table in
// [from, to) outside code and comments: a run of lines starting with "|"
// whose second line is a delimiter row; -1 when there is none.
func lastTable(lines []mdLine, from, to int) int {
	found := -1
	for i := from; i < to; {
		if lines[i].hidden || !strings.HasPrefix(strings.TrimSpace(lines[i].text), "|") {
			i++
			continue
		}
		j := i
		for j < to && !lines[j].hidden && strings.HasPrefix(strings.TrimSpace(lines[j].text), "|") {
			j++
		}
		if j-i >= 2 && delimRe().MatchString(lines[i+1].text) {
			found = j
		}
		i = j
	}
	return found
}

// insertAt inserts add as lines before line index at. blank asks for a
// blank line before them when the line above is not blank. An open fence
// or comment above is closed first, so the new lines are not swallowed.
func insertAt(doc []byte, lines []mdLine, at int, add []string, blank bool, nl string) []byte {
	pos := len(doc)
	if at < len(lines) {
		pos = lines[at].start
	}
	var b bytes.Buffer
	b.Grow(len(doc) + 256)
	b.Write(doc[:pos])
	above := ""
	if at > 0 {
		above = lines[at-1].text
		if pos == len(doc) && !bytes.HasSuffix(doc, []byte("\n")) {
			b.WriteString(nl)
		}
		if closer := lines[at-1].open; closer != "" {
			b.WriteString(closer + nl)
			above = closer
		}
	}
	if blank && strings.TrimSpace(above) != "" {
		b.WriteString(nl)
	}
	for _, l := range add {
		b.WriteString(l)
		b.WriteString(nl)
	}
	b.Write(doc[pos:])
	return b.Bytes()
}

// CountLearnings counts the learnings in a memory: lines in orket's
// learning shape ("- **<time>** — ..."), outside code and comments.
func CountLearnings(doc []byte) int {
	n := 0
	for _, l := range parseMemory(doc) {
		if !l.hidden && learnRe().MatchString(l.text) {
			n++
		}
	}
	return n
}

// A Memory is a repository's agent memory file.
type Memory struct {
	orketDir string
}

// OpenMemory returns the agent memory of the .orket directory orketDir.
func OpenMemory(orketDir string) *Memory { return &Memory{orketDir: orketDir} }

// Path returns the memory file's path.
func (m *Memory) Path() string { return m.orketDir + "/" + store.MemoryFile }

// Read returns the memory's content; a missing file is an error that
// errors.Is fs.ErrNotExist. A symlink is refused (fsroot.ErrEscapes).
func (m *Memory) Read() ([]byte, error) {
	root, err := fsroot.Open(m.orketDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	b, _, _, err := store.ReadRegular(root, store.MemoryFile, maxMemoryRead)
	return b, err
}

// A MemoryStatus is the memory after a write.
type MemoryStatus struct {
	Created   bool `json:"created,omitempty"` // written from the template
	Learnings int  `json:"learnings"`
	// WantsPruning: more than MaxLearnings learnings (the caller warns,
	// once per run).
	WantsPruning bool `json:"wants_pruning,omitempty"`
}

// testHookMemoryRead, set by tests, runs between the read of the memory
// and its write: where a person's save would race orket's.
var testHookMemoryRead func()

// Append adds learnings and rejection rows to the memory (see
// InsertMemory), creating it from MemoryTemplate when missing. It holds
// the memory's lock, writes atomically, and when the file changed since
// it was read (a person saving it), reads it again and retries, so
// neither side loses a line.
func (m *Memory) Append(ctx context.Context, learnings []Learning, rows []Row) (MemoryStatus, error) {
	root, err := fsroot.Open(m.orketDir)
	if err != nil {
		return MemoryStatus{}, err
	}
	defer root.Close()
	unlock, err := store.LockAt(ctx, root, store.Lock(store.MemoryFile), true)
	if err != nil {
		return MemoryStatus{}, fmt.Errorf("lock %s: %w", store.MemoryFile, err)
	}
	defer unlock()
	for try := 0; ; try++ {
		st, err := m.append(root, learnings, rows)
		if !errors.Is(err, store.ErrChanged) || try == 20 {
			if err != nil {
				err = fmt.Errorf("write %s: %w", store.MemoryFile, err)
			}
			return st, err
		}
		select {
		case <-ctx.Done():
			return MemoryStatus{}, ctx.Err()
		case <-time.After(time.Duration(try+1) * 5 * time.Millisecond):
		}
	}
}

func (m *Memory) append(root *fsroot.Root, learnings []Learning, rows []Row) (MemoryStatus, error) {
	var status MemoryStatus
	doc, more, before, err := store.ReadRegular(root, store.MemoryFile, maxMemoryRead)
	existed := err == nil
	if testHookMemoryRead != nil {
		testHookMemoryRead()
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		doc, status.Created = []byte(MemoryTemplate), true
	case err != nil:
		return status, err
	case more:
		return status, fmt.Errorf("larger than %d MiB: prune it", maxMemoryRead>>20)
	}
	out := InsertMemory(doc, learnings, rows)
	if err := store.WriteIfSame(root, store.MemoryFile, out, existed, before); err != nil {
		return status, err
	}
	status.Learnings = CountLearnings(out)
	status.WantsPruning = status.Learnings > MaxLearnings
	return status, nil
}
