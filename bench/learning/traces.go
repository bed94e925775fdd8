package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The traces are data: traces/NAME.yaml is the trace NAME, its fields
// named by trace.go's yaml tags; a header comment in each file says what
// project it models and where its hazards show. go, python and node came
// with the benchmark. blindgo and blindpy were written after the learning
// rules were frozen, not tuned to them. blind2go and blind2node were written after
// the rules were frozen too, by someone who did not read the rules (nor
// orket's retrieval and learning code): only the benchmark's own code,
// for the format. blind3py was written the same way: after the rules were
// frozen, by someone who did not read them. blind4node too, checked with
// -wiped alone (nothing orket's memory said was seen).

// traceFiles are the traces, one YAML file a trace named after it.
//
//go:embed traces/*.yaml
var traceFiles embed.FS

// loadTraces reads the embedded traces, by name.
func loadTraces() (map[string]Trace, error) {
	paths, err := fs.Glob(traceFiles, "traces/*.yaml")
	if err != nil {
		return nil, err
	}
	out := map[string]Trace{}
	for _, p := range paths {
		b, err := traceFiles.ReadFile(p)
		if err != nil {
			return nil, err
		}
		tr, err := parseTrace(b, strings.TrimSuffix(path.Base(p), ".yaml"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out[tr.Name] = tr
	}
	return out, nil
}

// parseTrace reads a trace named name: one YAML document with no field
// the types do not have.
func parseTrace(b []byte, name string) (Trace, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var tr Trace
	if err := dec.Decode(&tr); err != nil {
		return tr, err
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return tr, fmt.Errorf("more than one YAML document")
	}
	if tr.Name != name {
		return tr, fmt.Errorf("trace named %q in the file of %q", tr.Name, name)
	}
	return tr, nil
}
