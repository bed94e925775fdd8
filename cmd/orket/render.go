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
			result = errorObject(p)
		}
		writeJSON(o.stdout, result)
	}
	return p.Exit
}

// errorObject is an outcome's JSON object when the command has no result
// of its own to carry it: its code, exit status, message, hint and fields.
func errorObject(p orket.Problem) map[string]any {
	m := map[string]any{"code": p.Code, "exit_status": p.Exit, "error": p.Msg}
	if p.Hint != "" {
		m["hint"] = p.Hint
	}
	for k, v := range p.Fields {
		m[k] = v
	}
	return m
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
