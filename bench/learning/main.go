// Command learning measures whether orket's memory teaches: it plays
// traces of agent tasks in real projects (Go, Python, Node) through the
// real orket, twice: with the memory kept, and with it wiped before every
// run. The agent is scripted and acts only on the text orket gives it
// (orket preflight --json, ORKET_ADVISORIES, ORKET_GUARDRAILS); the
// traces' hazard labels are read only to score. It prints, per trace and
// per hazard: recall@1 and recall@3 (the lesson about the task's hazard is
// the first advisory, or among them), precision (the advisories shown that
// are about the task's hazard), noise (advisories shown to a task with no
// relevant past failure) and the share of preventable repeats prevented.
//
//	go run ./bench/learning -orket bin/orket [-trace go,python,node] [-out DIR]
//
// The traces are data, traces/NAME.yaml, embedded in the program (see
// traces.go and trace.go).
//
// A person is played too: after each task they approve every pending
// guardrails proposal, and a reviewer rejects kept changes a trace says
// they reject.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// defaultTraces are the traces played when -trace is not given.
const defaultTraces = "go,python,node"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "agent" {
		os.Exit(agentMain(os.Args[2:]))
	}
	orket := flag.String("orket", "bin/orket", "the orket binary")
	names := flag.String("trace", defaultTraces, "the traces to play, comma-separated")
	out := flag.String("out", "", "write each trace's report (markdown) and its per-task results in `DIR`")
	keep := flag.Bool("keep", false, "keep the work directories")
	verbose := flag.Bool("v", false, "print each task as it is played")
	wiped := flag.Bool("wiped", false, "play only with the memory wiped before every run, and print each task's outcome: how a new trace is checked before its figures are read")
	flag.Parse()
	bin, err := filepath.Abs(*orket)
	if err != nil {
		fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	all, err := loadTraces()
	if err != nil {
		fatal(err)
	}
	var reports []string
	failed := false
	for _, name := range strings.Split(*names, ",") {
		tr, ok := all[strings.TrimSpace(name)]
		if !ok {
			fatal(fmt.Errorf("no trace %q (known: %s)", name, strings.Join(sortedKeys(all), ", ")))
		}
		if why := missing(tr.Need); why != "" {
			fmt.Printf("trace %s skipped: %s\n", tr.Name, why)
			failed = true
			continue
		}
		start := time.Now()
		res, err := play(tr, bin, self, *keep, *verbose, *wiped)
		if err != nil {
			fatal(fmt.Errorf("trace %s: %w", tr.Name, err))
		}
		if *wiped {
			fmt.Print(wipedTable(tr, res.Wiped))
			continue
		}
		rep := report(tr, res, time.Since(start))
		fmt.Print(rep)
		reports = append(reports, rep)
		if *out != "" {
			if err := os.MkdirAll(*out, 0o755); err != nil {
				fatal(err)
			}
			if err := os.WriteFile(filepath.Join(*out, "learning-"+tr.Name+".md"), []byte(rep), 0o644); err != nil {
				fatal(err)
			}
			if err := os.WriteFile(filepath.Join(*out, "learning-"+tr.Name+".tsv"), []byte(taskTable(tr, res)), 0o644); err != nil {
				fatal(err)
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

// missing says which of the programs a trace needs is not on PATH.
func missing(need []string) string {
	var miss []string
	for _, n := range need {
		if _, err := exec.LookPath(n); err != nil {
			miss = append(miss, n)
		}
	}
	if len(miss) == 0 {
		return ""
	}
	return "not on PATH: " + strings.Join(miss, ", ")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "learning:", err)
	os.Exit(2)
}
