package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/orket/orket"
	"github.com/orket/orket/learn"
)

// render writes the outcome of a command: the JSON object on stdout under
// --json, the one-line error on stderr otherwise. It returns the exit
// status. A run's record and a doctor's report, which carry their
// outcome, are the JSON object for failures too (a failed run still
// reports its plan and steps; a repository not ready, what it found).
func render(o *options, result any, err error) int {
	if err == nil {
		if o.json {
			if result == nil {
				result = map[string]any{"code": orket.OK}
			}
			writeJSON(o.stdout, result)
		}
		return 0
	}
	p := orket.Describe(err)
	fmt.Fprintln(o.stderr, "orket: "+p.Line())
	if o.json {
		if !carriesOutcome(result) {
			m := map[string]any{"code": p.Code, "exit_status": p.Exit, "error": p.Msg}
			if p.Hint != "" {
				m["hint"] = p.Hint
			}
			for k, v := range p.Fields {
				m[k] = v
			}
			result = m
		}
		writeJSON(o.stdout, result)
	}
	return p.Exit
}

func carriesOutcome(result any) bool {
	switch result.(type) {
	case *orket.Record, *learn.DoctorReport:
		return true
	}
	return false
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		// Every result type is plain data; failing here is a programming
		// error, but the stdout contract still asks for one object.
		fmt.Fprintf(w, "{\"code\":%q,\"error\":%q}\n", orket.EInternal, "encode result: "+err.Error())
	}
}
