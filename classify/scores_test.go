package classify

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The targets the held-out set must meet.
const (
	targetMacroF1      = 0.95
	targetExactMatch   = 0.90
	targetNoTagFP      = 0.05 // at least 95% of no-tag outputs stay untagged
	targetPrecision    = 0.98 // every tag
	targetCheckRecall  = 0.95 // checks extracted where the evidence names one
	targetCheckPrecise = 0.98
)

const (
	lessonsDoc  = "../docs/lessons.md"
	scoresBegin = "<!-- classify-scores:begin -->"
	scoresEnd   = "<!-- classify-scores:end -->"
)

// TestScores measures the built-in rules on both sets of the corpus, fails
// when the held-out set misses a target, and checks that the table in
// docs/lessons.md is current. Refresh the table with
//
//	ORKET_WRITE_SCORES=1 go test ./classify -run TestScores
func TestScores(t *testing.T) {
	c := New(nil)
	scorers := map[string]*Scorer{"train": {}, "held-out": {}}
	// A batch is a set of captures made together after the rules they are
	// first measured against (round2-..., round3-...): checked out at the
	// commit that added a batch, this log is the batch's blind score.
	batches := map[string]*Scorer{}
	for _, cp := range loadCorpus(t) {
		// The step's command line, as a run passes it (ClassifyCommand).
		got := c.ClassifyCommand(cp.output, stepCommand(cp.meta["command"]))
		scorers[cp.set].Add(cp.want, got)
		if b := batchOf(cp.name); b != "" {
			if batches[b] == nil {
				batches[b] = &Scorer{}
			}
			batches[b].Add(cp.want, got)
		}
		if w, g := set(cp.want.Tags), set(got.Tags); !sameSet(w, g) || !sameChecks(cp.want.Checks, got.Checks) {
			t.Logf("%s %s: want %v %v, got %v %v", cp.set, cp.name, cp.want.Tags, cp.want.Checks, got.Tags, got.Checks)
		}
	}
	train, held := scorers["train"].Scores(), scorers["held-out"].Scores()
	// round2 ... round10 in their order, not the text's.
	names := slices.SortedFunc(maps.Keys(batches), func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	for _, b := range names {
		sc := batches[b].Scores()
		t.Logf("batch %s: %s; precision below 1: %s", b, sc.Summary(), imprecise(sc))
	}
	t.Logf("train:\n%s", train.Table())
	t.Logf("held-out:\n%s", held.Table())

	if held.MacroF1 < targetMacroF1 {
		t.Errorf("held-out macro-F1 %.3f < %.2f", held.MacroF1, targetMacroF1)
	}
	if held.ExactMatch < targetExactMatch {
		t.Errorf("held-out exact match %.3f < %.2f", held.ExactMatch, targetExactMatch)
	}
	if held.NoTagFalsePositiveRate > targetNoTagFP {
		t.Errorf("held-out: %.3f of no-tag outputs got a tag (> %.2f)", held.NoTagFalsePositiveRate, targetNoTagFP)
	}
	for _, ts := range held.Tags {
		if ts.Precision < targetPrecision {
			t.Errorf("held-out precision of %s %.3f < %.2f", ts.Tag, ts.Precision, targetPrecision)
		}
	}
	if held.CheckRecall < targetCheckRecall || held.CheckPrecision < targetCheckPrecise {
		t.Errorf("held-out checks: recall %.3f (want %.2f), precision %.3f (want %.2f)",
			held.CheckRecall, targetCheckRecall, held.CheckPrecision, targetCheckPrecise)
	}

	block := scoresBlock(train, held)
	doc, err := os.ReadFile(lessonsDoc)
	if err != nil {
		t.Fatalf("read %s: %v", lessonsDoc, err)
	}
	i, j := strings.Index(string(doc), scoresBegin), strings.Index(string(doc), scoresEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s ... %s block", lessonsDoc, scoresBegin, scoresEnd)
	}
	current := string(doc[i+len(scoresBegin) : j])
	if current == block {
		return
	}
	if os.Getenv("ORKET_WRITE_SCORES") == "1" {
		next := string(doc[:i+len(scoresBegin)]) + block + string(doc[j:])
		if err := os.WriteFile(lessonsDoc, []byte(next), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote the scores into %s", lessonsDoc)
		return
	}
	t.Errorf("the scores in %s are stale; refresh them with\n\tORKET_WRITE_SCORES=1 go test ./classify -run TestScores", lessonsDoc)
}

// scoresBlock is what stands between the markers in docs/lessons.md.
func scoresBlock(train, held Scores) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Measured on real output\n\n")
	fmt.Fprintf(&b, "The built-in rules against the %d real failure outputs of the corpus\n", train.Outputs+held.Outputs)
	b.WriteString("(`classify/testdata/outputs`, made by `classify/testdata/capture.sh`, each\n")
	b.WriteString("with the command, the tool's version and the expected tags and checks\n")
	b.WriteString("beside it). The rules are written against the train set and measured on\n")
	b.WriteString("the held-out set, which a fixed rule on the capture's name picks\n")
	b.WriteString("(`classify/corpus_test.go`). `go test ./classify` fails when the\n")
	b.WriteString("held-out set falls below macro-F1 0.95, exact match 0.90, 95% of no-tag\n")
	b.WriteString("outputs untagged, precision 0.98 for every tag, or 95% of the checks the\n")
	b.WriteString("evidence names; and when this table is stale. Refresh it with\n")
	b.WriteString("`ORKET_WRITE_SCORES=1 go test ./classify -run TestScores`.\n\n")
	fmt.Fprintf(&b, "**Held-out set** (%d outputs, %d expected to get no tag):\n\n%s\n", held.Outputs, held.Untagged, held.Table())
	fmt.Fprintf(&b, "**Train set** (%d outputs, %d expected to get no tag):\n\n%s\n", train.Outputs, train.Untagged, train.Table())
	return b.String()
}

// harnessHold is capture.sh's "hold PORT" in front of a command: the
// harness's way of taking the port, not part of the step. A step's
// command line never has it, so the port it names is not evidence.
var harnessHold = regexp.MustCompile(`^hold \d+ `)

// stepCommand is the command line of a capture as a step would have run
// it: without the harness's hold, and without the backslashes of the
// sidecar's shell quoting (printf %q), roughly as the shell reads it.
func stepCommand(meta string) string {
	return strings.ReplaceAll(harnessHold.ReplaceAllString(meta, ""), "\\", "")
}

var batchName = regexp.MustCompile(`^(round\d+)-`)

// batchOf returns the batch a capture was made in, or "" for the captures
// made before batches were kept apart.
func batchOf(name string) string {
	if m := batchName.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

// imprecise names the tags a batch's precision is below 1 for, or "none".
func imprecise(s Scores) string {
	var out []string
	for _, t := range s.Tags {
		if t.Precision < 1 {
			out = append(out, fmt.Sprintf("%s %.2f", t.Tag, t.Precision))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
