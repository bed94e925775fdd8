package memsync

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/orket/orket/internal/rawjson"
	"github.com/orket/orket/store"
)

// ImportOptions say where records are imported to.
type ImportOptions struct {
	// OrketDir is the main work tree's .orket directory.
	OrketDir string
	// Logs are the logs records may go to; nil is DefaultLogs().
	Logs []Log
	// Redact is applied to every string of every record imported, as to
	// what a sync sends; nil redacts the known shapes of secrets.
	Redact func(string) string
}

// An ImportResult says what an import did, file by file.
type ImportResult struct {
	Files []ImportedFile `json:"files"`
	// Added counts the records appended, by log.
	Added map[string]int `json:"added"`
	Known int            `json:"known"`
}

// An ImportedFile is one file's share.
type ImportedFile struct {
	Path    string         `json:"path"`
	Records int            `json:"records"`
	Added   map[string]int `json:"added"`
	// Known: records the logs (or an earlier line) held already.
	Known int `json:"known"`
	// Unknown: records of a schema no log takes.
	Unknown int `json:"unknown_schema"`
	// Damaged: lines that are not a JSON object with a string id.
	Damaged int `json:"damaged"`
}

// Import appends to the local logs the records of JSON-lines files from
// elsewhere (a CI job's artifact, the origin project's lessons) that they
// do not hold yet. Each record goes to the log its schema_version names
// (lessons of orket or of the origin project, evaluations, feedback, task
// events, proposals); a record whose id (for task events and proposals:
// id and time) the log knows is skipped. Records are appended whole,
// under the log's lock, fsynced (internal/jsonl); the next sync shares
// them.
func Import(ctx context.Context, o ImportOptions, files ...string) (*ImportResult, error) {
	im := newImporter(o)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return im.res, err
		}
		if err := im.importFile(f); err != nil {
			return im.res, err
		}
	}
	return im.res, nil
}

// importer is one Import under way.
type importer struct {
	bySchema map[string]*Log // schema_version → the log that takes it
	red      func(string) string
	known    map[string]map[string]bool // log → identities it holds
	buf      bytes.Buffer
	res      *ImportResult
}

// newImporter prepares an import to the logs of o.
func newImporter(o ImportOptions) *importer {
	so := Options{OrketDir: o.OrketDir, Logs: o.Logs, Redact: o.Redact}
	logs := so.logs()
	im := &importer{bySchema: map[string]*Log{}, red: so.redactor(),
		known: map[string]map[string]bool{}, res: &ImportResult{Added: map[string]int{}}}
	for i := range logs {
		for _, sc := range logs[i].Schemas {
			im.bySchema[sc] = &logs[i]
		}
	}
	return im
}

// identities returns the identities of the records log l holds, read
// once and then kept up to date as records are added.
func (im *importer) identities(l *Log) (map[string]bool, error) {
	if m, ok := im.known[l.Name]; ok {
		return m, nil
	}
	m := map[string]bool{}
	var buf bytes.Buffer
	_, err := (&store.Log{Path: l.Path}).Each(func(line []byte) error {
		if r, ok := parseRecord(l, line, &buf); ok {
			m[r.identity(l.Kind)] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", l.Name, err)
	}
	im.known[l.Name] = m
	return m, nil
}

// importBatch is the records one file adds to one log.
type importBatch struct {
	log  *Log
	recs []json.RawMessage
}

// fileImport is one file's import under way: its counts, and the records
// it adds by log name, in the order the logs first appear.
type fileImport struct {
	fr      ImportedFile
	batches map[string]*importBatch
	order   []string
}

// importFile imports the records of file f and adds its counts to the
// result.
func (im *importer) importFile(f string) error {
	data, err := os.ReadFile(f)
	if err != nil {
		return fmt.Errorf("import %s: %w", f, err)
	}
	fi := &fileImport{fr: ImportedFile{Path: f, Added: map[string]int{}}, batches: map[string]*importBatch{}}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if err := im.addLine(fi, line); err != nil {
			return err
		}
	}
	if err := im.appendBatches(fi); err != nil {
		return err
	}
	im.res.Known += fi.fr.Known
	im.res.Files = append(im.res.Files, fi.fr)
	return nil
}

// addLine counts one line of a file and, when it is a record new to the
// log its schema names, adds it redacted to that log's batch.
func (im *importer) addLine(fi *fileImport, line []byte) error {
	fr := &fi.fr
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	fr.Records++
	if len(line) > maxLine || line[0] != '{' || !json.Valid(line) {
		fr.Damaged++
		return nil
	}
	var schema string
	rawjson.Object(line, func(k, v []byte) {
		if string(k) == "schema_version" {
			schema, _ = rawjson.String(v)
		}
	})
	l := im.bySchema[schema]
	if l == nil {
		fr.Unknown++
		return nil
	}
	r, ok := parseRecord(l, line, &im.buf)
	if !ok {
		fr.Damaged++
		return nil
	}
	ids, err := im.identities(l)
	if err != nil {
		return err
	}
	id := r.identity(l.Kind)
	if ids[id] {
		fr.Known++
		return nil
	}
	ids[id] = true
	b := fi.batches[l.Name]
	if b == nil {
		b = &importBatch{log: l}
		fi.batches[l.Name] = b
		fi.order = append(fi.order, l.Name)
	}
	b.recs = append(b.recs, json.RawMessage(redactRecord(r.raw, im.red)))
	return nil
}

// appendBatches appends a file's batches to their logs, in order, and
// counts what each added.
func (im *importer) appendBatches(fi *fileImport) error {
	for _, name := range fi.order {
		b := fi.batches[name]
		recs := make([]any, len(b.recs))
		for i, r := range b.recs {
			recs[i] = r
		}
		if err := os.MkdirAll(filepath.Dir(b.log.Path), 0o755); err != nil {
			return err
		}
		if err := (&store.Log{Path: b.log.Path}).Append(recs...); err != nil {
			return fmt.Errorf("append to %s: %w", b.log.Name, err)
		}
		fi.fr.Added[name] += len(b.recs)
		im.res.Added[name] += len(b.recs)
	}
	return nil
}
