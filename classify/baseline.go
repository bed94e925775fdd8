package classify

import (
	"strings"

	"github.com/orket/orket/internal/lazyre"
)

// maxBaseline bounds how much of the last passing output is compared:
// its tail, like the lesson's own output tail.
const maxBaseline = 256 << 10

// ClassifyWithBaseline classifies a failure's output with the evidence
// first: it looks at the lines of output that lastPassing (the output of
// the same step's last passing run) did not print, and keeps that result
// when those lines yield a tag; otherwise it classifies the whole output,
// as Classify does. Either way each Signal says whether its line was new.
// The conditions of a rule (Requires, Unless) are always read in the
// whole output. With an empty lastPassing it is Classify with every
// signal new. Both outputs are read as a terminal shows them (see Plain),
// so a coloured run compares with an uncoloured one.
func (c *Classifier) ClassifyWithBaseline(output, lastPassing string) *Result {
	return c.ClassifyStep(output, lastPassing, "")
}

// ClassifyStep classifies the output of a failed step as a run's lesson
// needs it: the evidence first, against the output of the step's last
// passing run (as ClassifyWithBaseline), with the step's command line for
// what the output does not say (as ClassifyCommand). An output no rule
// tags has Result.Unclassified: its cause line and the families it
// resembled.
func (c *Classifier) ClassifyStep(output, lastPassing, command string) *Result {
	output, lastPassing = Plain(output), Plain(lastPassing)
	lines := strings.SplitAfter(output, "\n")
	fresh := NewLines(output, lastPassing)
	var ev strings.Builder
	for _, i := range fresh {
		ev.WriteString(lines[i])
		if !strings.HasSuffix(lines[i], "\n") {
			ev.WriteByte('\n')
		}
	}
	evidence := ev.String()
	if evidence != "" {
		if hits, _ := c.runCommand(evidence, output, command, false); len(hits) > 0 {
			res := assemble(hits, evidence, func(int) bool { return true })
			if res.FirstError = FirstError(evidence); res.FirstError == "" {
				res.FirstError = FirstError(output)
			}
			finish(res, output, command)
			return res
		}
	}
	// Nothing in the new lines: the whole output, marking which matches
	// started on a new line.
	isNew := make([]bool, len(lines))
	for _, i := range fresh {
		isNew[i] = true
	}
	starts := make([]int, len(lines))
	off := 0
	for i, l := range lines {
		starts[i] = off
		off += len(l)
	}
	res, _, _ := c.classifyPlain(output, command, func(offset int) bool {
		// the last line starting at or before offset
		lo, hi := 0, len(starts)-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if starts[mid] <= offset {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return isNew[lo]
	}, false)
	return res
}

// NewLines returns the indexes (0-based, ascending) of the lines of
// output that lastPassing did not print. Lines are compared normalised
// (see LineKey), so a line that differs only in a number, a duration, a
// hex address, a timestamp or a temporary path is not new; a line printed
// n times in lastPassing covers n of its occurrences in output. Blank
// lines are never new. Only the last 256 KiB of lastPassing are read.
func NewLines(output, lastPassing string) []int {
	if len(lastPassing) > maxBaseline {
		lastPassing = lastPassing[len(lastPassing)-maxBaseline:]
	}
	seen := map[string]int{}
	for _, l := range strings.Split(lastPassing, "\n") {
		if k := LineKey(l); k != "" {
			seen[k]++
		}
	}
	var fresh []int
	for i, l := range strings.SplitAfter(output, "\n") {
		k := LineKey(l)
		if k == "" {
			continue
		}
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		fresh = append(fresh, i)
	}
	return fresh
}

// NewErrors returns the lines of output that look like errors (as
// FirstError reads them) and that baseline, the output of the same
// command on the tree without a change, did not print: the failures the
// change adds to a step that fails without it too.
func NewErrors(output, baseline string) []string {
	output, baseline = Plain(output), Plain(baseline)
	lines := strings.SplitAfter(output, "\n")
	var out []string
	for _, i := range NewLines(output, baseline) {
		if l := strings.TrimSpace(lines[i]); errorLine().MatchString(l) {
			out = append(out, clipAt(l, 200))
		}
	}
	return out
}

var digits = lazyre.New(`[0-9]+`)

// LineKey is a line as NewLines compares it: as a terminal shows it (see
// Plain), in Normalize's form, with every run of digits made one, and
// surrounding space trimmed; "" for a blank line.
func LineKey(line string) string {
	line = strings.TrimSpace(Plain(line))
	if line == "" {
		return ""
	}
	return digits().ReplaceAllString(Normalize(line), "0")
}
