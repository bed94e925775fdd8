package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The score reads the traces' labels; the agent never does.
//
// A task has a relevant past failure when an earlier task of the same
// play met the same hazard and failed on it (a step, a refusal, a
// reviewer's rejection) or was flaky. What orket showed a task (its
// lesson advisories, then its earlier reviews) is about a hazard through
// the lessons and feedback entries it rests on: each was recorded by a
// task, whose hazard it is about.

// A tally is one row of the report.
type tally struct {
	tasks, relevant    int // tasks; those with a relevant past failure
	at1, at3           int // of those, the right advice first, among the first three
	shown, right       int // advice shown to the tasks, and about their hazard
	irrelevant, noise  int // tasks without a relevant past failure, advice shown to them
	preventable, saved int // repeats that failed with the memory wiped; of those, that did not with it
}

func (t tally) ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// scored is a trace's tally, overall and per hazard, with each task's line.
type scored struct {
	all      tally
	byHazard map[string]*tally
	lines    []string
}

func score(tr Trace, res *plays) scored {
	s := scored{byHazard: map[string]*tally{}}
	// What each lesson and feedback entry is about, from the task that
	// recorded it.
	about := map[string]string{}
	for i, r := range res.On {
		h := tr.Tasks[i].Hazard
		if h == "" {
			h = "none"
		}
		for _, id := range r.Lessons {
			about[id] = h
		}
		for _, id := range r.Recorded {
			about[id] = h
		}
		if r.Feedback != "" {
			about[r.Feedback] = h
		}
	}
	met := map[string]bool{}
	for i, t := range tr.Tasks {
		on, off := res.On[i], res.Wiped[i]
		h := t.Hazard
		key := h
		if key == "" {
			key = "(none)"
		}
		row := s.byHazard[key]
		if row == nil {
			row = &tally{}
			s.byHazard[key] = row
		}
		relevant := h != "" && met[h]
		var hazards []string
		for _, sh := range on.Shown {
			hazards = append(hazards, aboutOf(sh, about))
		}
		for _, c := range []*tally{&s.all, row} {
			c.tasks++
			c.shown += len(hazards)
			for _, x := range hazards {
				if h != "" && x == h {
					c.right++
				}
			}
			if !relevant {
				c.irrelevant++
				c.noise += len(hazards)
				continue
			}
			c.relevant++
			if len(hazards) > 0 && hazards[0] == h {
				c.at1++
			}
			for k := 0; k < len(hazards) && k < 3; k++ {
				if hazards[k] == h {
					c.at3++
					break
				}
			}
			if off.Failed {
				c.preventable++
				if !on.Failed {
					c.saved++
				}
			}
		}
		mark := ""
		if relevant {
			mark = "*"
		}
		s.lines = append(s.lines, fmt.Sprintf("%s\t%s%s\t%s\t%s\t%s\t%s\t%v", t.ID, orNone(h), mark, on.Code, off.Code,
			strings.Join(hazards, ","), shownTexts(on.Shown), on.Applied))
		if h != "" && (on.Failed || on.Flaky) {
			met[h] = true
		}
	}
	return s
}

func orNone(h string) string {
	if h == "" {
		return "-"
	}
	return h
}

// aboutOf is the hazard the advice is about: its latest entry's.
func aboutOf(sh shown, about map[string]string) string {
	for _, id := range sh.IDs {
		if h, ok := about[id]; ok {
			return h
		}
	}
	return "?"
}

func shownTexts(ss []shown) string {
	var out []string
	for _, s := range ss {
		why := ""
		if s.Why != "" {
			why = " (" + s.Why + ")"
		}
		out = append(out, s.Kind+why+": "+oneLine(s.Text, 90))
	}
	return strings.Join(out, " | ")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

// report is a trace's figures as markdown.
func report(tr Trace, res *plays, took time.Duration) string {
	s := score(tr, res)
	var b strings.Builder
	fmt.Fprintf(&b, "## Trace %s: %d tasks, played twice in %s\n\n", tr.Name, len(tr.Tasks), took.Round(time.Second))
	b.WriteString("| hazard | tasks | with a relevant past failure | recall@1 | recall@3 | precision | noise per irrelevant task | preventable repeats prevented |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var names []string
	for h := range s.byHazard {
		names = append(names, h)
	}
	sort.Strings(names)
	row := func(name string, t tally) {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s | %d/%d %s |\n", name, t.tasks, t.relevant,
			t.ratio(t.at1, t.relevant), t.ratio(t.at3, t.relevant), t.ratio(t.right, t.shown),
			t.ratio(t.noise, t.irrelevant), t.saved, t.preventable, t.ratio(t.saved, t.preventable))
	}
	for _, h := range names {
		row(h, *s.byHazard[h])
	}
	row("**all**", s.all)
	b.WriteString("\n")
	return b.String()
}

// taskTable is each task's line: id, hazard (* when a relevant past
// failure exists), outcome with and without memory, what the advice
// shown was about, its text, and the remedies the agent applied.
func taskTable(tr Trace, res *plays) string {
	s := score(tr, res)
	return "task\thazard\tmemory\twiped\tabout\tshown\tapplied\n" + strings.Join(s.lines, "\n") + "\n"
}

// wipedTable is each task's outcome with the memory wiped, and whether it
// is what its label says it must be (a hazard fails, or passes on retry
// when flaky; a clean task passes): what a new trace is checked by
// before its figures are read. It shows nothing orket's memory said.
func wipedTable(tr Trace, wiped []result) string {
	var b strings.Builder
	bad := 0
	b.WriteString("task\thazard\tcode\tas labelled\n")
	for i, t := range tr.Tasks {
		r := wiped[i]
		want := t.Hazard != ""
		got := r.Failed
		if t.Hazard == "flaky" {
			got = r.Flaky
		}
		ok := want == got
		if !ok {
			bad++
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%v\n", t.ID, orNone(t.Hazard), r.Code, ok)
	}
	fmt.Fprintf(&b, "%d of %d tasks not as labelled\n", bad, len(tr.Tasks))
	return b.String()
}
