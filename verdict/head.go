package verdict

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/orket/orket/internal/rawjson"
)

// ReadHead reads what readers of the whole log need of an evaluation's
// line (State, the guardrails' signals and statistics): its identity, the
// run's task and agent, its verdict and how the run failed. It reads the
// line in place (internal/rawjson) and leaves the rest undecoded: the log
// holds a thousand lines at its bound, and decoding each whole was most
// of a run's learning. It reports false for a line that is not an
// evaluation (no run id) or whose fields do not hold their types.
func ReadHead(line []byte) (*Evaluation, bool) {
	e := &Evaluation{}
	ok := true
	str := func(dst *string, v []byte) {
		if string(v) == "null" {
			return
		}
		var good bool
		*dst, good = rawjson.String(v)
		ok = ok && good
	}
	flag := func(dst *bool, v []byte) {
		switch string(v) {
		case "true":
			*dst = true
		case "false", "null":
		default:
			ok = false
		}
	}
	list := func(dst *[]string, v []byte) {
		if len(v) > 2 {
			ok = ok && json.Unmarshal(v, dst) == nil
		}
	}
	if !rawjson.Object(line, func(k, v []byte) {
		switch string(k) {
		case "id":
			str(&e.ID, v)
		case "run_id":
			str(&e.RunID, v)
		case "task":
			str(&e.Task, v)
		case "agent":
			str(&e.Agent, v)
		case "edit_source":
			str(&e.EditSource, v)
		case "verdict":
			str(&e.Verdict, v)
		case "code":
			str(&e.Code, v)
		case "failed_step":
			str(&e.FailedStep, v)
		case "failed_command":
			str(&e.FailedCommand, v)
		case "first_error":
			str(&e.FirstError, v)
		case "summary":
			str(&e.Summary, v)
		case "escalation_report":
			str(&e.Report, v)
		case "excused":
			str(&e.Excused, v)
		case "counted":
			flag(&e.Counted, v)
		case "baseline_red":
			flag(&e.Red, v)
		case "tags":
			list(&e.Tags, v)
		case "notes":
			list(&e.Notes, v)
		case "score":
			n, err := strconv.Atoi(string(v))
			e.Score, ok = n, ok && err == nil
		case "time":
			var s string
			str(&s, v)
			t, err := time.Parse(time.RFC3339Nano, s)
			e.Time, ok = t, ok && err == nil
		}
	}) || !ok || e.RunID == "" {
		return nil, false
	}
	return e, true
}
