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
	so := Options{OrketDir: o.OrketDir, Logs: o.Logs, Redact: o.Redact}
	logs := so.logs()
	red := so.redactor()
	bySchema := map[string]*Log{}
	for i := range logs {
		for _, sc := range logs[i].Schemas {
			bySchema[sc] = &logs[i]
		}
	}
	res := &ImportResult{Added: map[string]int{}}
	type batch struct {
		log  *Log
		recs []json.RawMessage
	}
	known := map[string]map[string]bool{} // log → identities it holds
	identities := func(l *Log) (map[string]bool, error) {
		if m, ok := known[l.Name]; ok {
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
		known[l.Name] = m
		return m, nil
	}
	var buf bytes.Buffer
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return res, fmt.Errorf("import %s: %w", f, err)
		}
		fr := ImportedFile{Path: f, Added: map[string]int{}}
		batches := map[string]*batch{}
		var order []string
		for _, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			fr.Records++
			if len(line) > maxLine || line[0] != '{' || !json.Valid(line) {
				fr.Damaged++
				continue
			}
			var schema string
			rawjson.Object(line, func(k, v []byte) {
				if string(k) == "schema_version" {
					schema, _ = rawjson.String(v)
				}
			})
			l := bySchema[schema]
			if l == nil {
				fr.Unknown++
				continue
			}
			r, ok := parseRecord(l, line, &buf)
			if !ok {
				fr.Damaged++
				continue
			}
			ids, err := identities(l)
			if err != nil {
				return res, err
			}
			id := r.identity(l.Kind)
			if ids[id] {
				fr.Known++
				continue
			}
			ids[id] = true
			b := batches[l.Name]
			if b == nil {
				b = &batch{log: l}
				batches[l.Name] = b
				order = append(order, l.Name)
			}
			b.recs = append(b.recs, json.RawMessage(redactRecord(r.raw, red)))
		}
		for _, name := range order {
			b := batches[name]
			recs := make([]any, len(b.recs))
			for i, r := range b.recs {
				recs[i] = r
			}
			if err := os.MkdirAll(filepath.Dir(b.log.Path), 0o755); err != nil {
				return res, err
			}
			if err := (&store.Log{Path: b.log.Path}).Append(recs...); err != nil {
				return res, fmt.Errorf("append to %s: %w", b.log.Name, err)
			}
			fr.Added[name] += len(b.recs)
			res.Added[name] += len(b.recs)
		}
		res.Known += fr.Known
		res.Files = append(res.Files, fr)
	}
	return res, nil
}
