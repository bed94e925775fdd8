package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/config"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/txn"
)

func lessonsCommand(o *options, result *any) *cli.Command {
	var tag, scope, since string
	var limit int
	// writers take the repository lock (shared, waiting), so that a
	// mutating run never sees .orket change under it.
	lockShared := func(c *cli.Context, r *txn.Repo) (func(), error) {
		unlock, err := r.Lock(c.Context, false, true, txn.Holder{RunID: "lessons", PID: os.Getpid(), Started: time.Now(), Command: "orket lessons"})
		if err != nil {
			return nil, &orket.Error{Code: orket.EInternal, Err: err, Msg: "take the repository lock: " + err.Error(), Hint: "check that .git is writable"}
		}
		return unlock, nil
	}
	open := func() (*txn.Repo, *config.Config, *lessons.Store, error) {
		r, err := openRepo(o)
		if err != nil {
			return nil, nil, nil, err
		}
		cfg, err := loadConfigQuiet(o, r)
		if err != nil {
			return nil, nil, nil, err
		}
		return r, cfg, &lessons.Store{Path: orket.LessonPath(r, cfg)}, nil
	}
	sub := []*cli.Command{
		{
			Name: "list", Usage: "list lessons, newest first", UsageText: "orket lessons list [--tag T] [--scope S] [--since D] [--limit N]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "tag", Usage: "only lessons with `TAG`", Destination: &tag},
				&cli.StringFlag{Name: "scope", Usage: "only lessons whose scope overlaps `PATH`", Destination: &scope},
				&cli.StringFlag{Name: "since", Usage: "only lessons newer than `AGE` (14d, 12h) or a date (2026-11-01)", Destination: &since},
				&cli.IntFlag{Name: "limit", Usage: "at most `N` lessons", Value: 50, Destination: &limit},
			},
			Action: func(*cli.Context) error {
				_, _, s, err := open()
				if err != nil {
					return err
				}
				cutoff, err := parseSince(since)
				if err != nil {
					return err
				}
				var list []lessonSummary
				damaged, err := s.Each(func(l *lessons.Lesson) error {
					if tag != "" && !contains(l.Classification.Tags, tag) || !cutoff.IsZero() && l.CreatedAt.Before(cutoff) ||
						scope != "" && !scopeHits(l.Request.Scope, scope) {
						return nil
					}
					list = append(list, summarize(l))
					return nil
				})
				if err != nil {
					return readError(err)
				}
				// Newest first; within a second, the later line is newer.
				for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
					list[i], list[j] = list[j], list[i]
				}
				sort.SliceStable(list, func(i, j int) bool { return list[i].CreatedAt.After(list[j].CreatedAt) })
				if limit > 0 && len(list) > limit {
					list = list[:limit]
				}
				if list == nil {
					list = []lessonSummary{}
				}
				*result = map[string]any{"code": orket.OK, "lessons": list, "damaged_lines": len(damaged)}
				if !o.json {
					for _, l := range list {
						fmt.Fprintf(o.stdout, "%.8s  %s  %-28s %-10s %s\n", l.ID, l.CreatedAt.Format("2006-01-02 15:04"), strings.Join(l.Tags, ","), l.FailedStep, l.Title)
					}
					warnDamaged(o, damaged)
				}
				return nil
			},
		},
		{
			Name: "show", Usage: "print one lesson whole", UsageText: "orket lessons show ID",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return orket.Errorf(orket.EUsage, "orket lessons list shows the ids", "lessons show needs one lesson id (or a unique prefix)")
				}
				_, _, s, err := open()
				if err != nil {
					return err
				}
				want := c.Args().First()
				var found []*lessons.Lesson
				if _, err := s.Each(func(l *lessons.Lesson) error {
					if strings.HasPrefix(l.ID, want) {
						found = append(found, l)
					}
					return nil
				}); err != nil {
					return readError(err)
				}
				switch len(found) {
				case 0:
					return orket.Errorf(orket.EUsage, "orket lessons list shows the ids", "no lesson %q", want)
				case 1:
				default:
					return orket.Errorf(orket.EUsage, "give more of the id", "%q names %d lessons", want, len(found))
				}
				*result = map[string]any{"code": orket.OK, "lesson": found[0]}
				if !o.json {
					b, _ := json.MarshalIndent(found[0], "", "  ")
					fmt.Fprintln(o.stdout, string(b))
				}
				return nil
			},
		},
		{
			Name: "stats", Usage: "count lessons per tag, scope and failed command", UsageText: "orket lessons stats",
			Action: func(*cli.Context) error {
				_, _, s, err := open()
				if err != nil {
					return err
				}
				tags, scopes, cmds := map[string]int{}, map[string]int{}, map[string]int{}
				total := 0
				damaged, err := s.Each(func(l *lessons.Lesson) error {
					total++
					if len(l.Classification.Tags) == 0 {
						tags["(none)"]++
					}
					for _, t := range l.Classification.Tags {
						tags[t]++
					}
					scopes[strings.Join(l.Request.Scope, ",")]++
					cmds[l.Verify.FailedCommand]++
					return nil
				})
				if err != nil {
					return readError(err)
				}
				*result = map[string]any{"code": orket.OK, "total": total, "damaged_lines": len(damaged), "tags": tags, "scopes": scopes, "failed_commands": cmds}
				if !o.json {
					fmt.Fprintf(o.stdout, "%d lessons\n", total)
					for _, sec := range []struct {
						name string
						m    map[string]int
					}{{"tags", tags}, {"scopes", scopes}, {"failed commands", cmds}} {
						fmt.Fprintf(o.stdout, "%s:\n", sec.name)
						for _, k := range byCount(sec.m) {
							fmt.Fprintf(o.stdout, "  %5d  %s\n", sec.m[k], k)
						}
					}
					warnDamaged(o, damaged)
				}
				return nil
			},
		},
		{
			Name: "prune", Usage: "apply retention (lessons.retention) now", UsageText: "orket lessons prune",
			Action: func(c *cli.Context) error {
				r, cfg, s, err := open()
				if err != nil {
					return err
				}
				unlock, err := lockShared(c, r)
				if err != nil {
					return err
				}
				defer unlock()
				n, err := s.Prune(cfg.Lessons.Retention.MaxEntries, cfg.Lessons.Retention.MaxAge, time.Now())
				if err != nil {
					return readError(err)
				}
				*result = map[string]any{"code": orket.OK, "removed": n}
				if !o.json {
					fmt.Fprintf(o.stdout, "removed %d lesson(s) (keeping at most %d, none older than %s)\n", n, cfg.Lessons.Retention.MaxEntries, cfg.Lessons.Retention.MaxAge)
				}
				return nil
			},
		},
		{
			Name: "reclassify", Usage: "apply the current rules to every stored lesson", UsageText: "orket lessons reclassify",
			Description: "Stored lessons keep their ids; their classification and advice are recomputed from their output tails.",
			Action: func(cc *cli.Context) error {
				r, cfg, s, err := open()
				if err != nil {
					return err
				}
				unlock, err := lockShared(cc, r)
				if err != nil {
					return err
				}
				defer unlock()
				c := classify.New(cfg.Classify.Rules)
				n, err := s.Rewrite(func(l *lessons.Lesson) bool {
					cl := c.Classify(l.Verify.OutputTail)
					next := lessons.Classification{Tags: cl.Tags, Confidence: cl.Confidence, Signals: cl.Signals, FirstError: cl.FirstError}
					before, _ := json.Marshal(l.Classification)
					after, _ := json.Marshal(next)
					if string(before) == string(after) {
						return false
					}
					l.Classification = next
					l.Advice = classify.AdviceFor(cl, l.Verify.FailedCommand)
					return true
				})
				if err != nil {
					return readError(err)
				}
				*result = map[string]any{"code": orket.OK, "reclassified": n}
				if !o.json {
					fmt.Fprintf(o.stdout, "reclassified %d lesson(s)\n", n)
				}
				return nil
			},
		},
	}
	for _, c := range sub {
		c.Flags = append(c.Flags, globalFlags()...)
		wrap(o, c)
	}
	return &cli.Command{
		Name:            "lessons",
		Usage:           "read and maintain the lesson log",
		UsageText:       "orket lessons list|show ID|stats|prune|reclassify",
		Subcommands:     sub,
		HideHelpCommand: true,
	}
}

type lessonSummary struct {
	ID            string    `json:"id"`
	CreatedAt     time.Time `json:"created_at"`
	Tags          []string  `json:"tags"`
	FailedStep    string    `json:"failed_step"`
	FailedCommand string    `json:"failed_command"`
	Title         string    `json:"title"`
	Scope         []string  `json:"scope"`
	RunID         string    `json:"run_id"`
}

func summarize(l *lessons.Lesson) lessonSummary {
	return lessonSummary{ID: l.ID, CreatedAt: l.CreatedAt, Tags: l.Classification.Tags, FailedStep: l.Verify.FailedStep,
		FailedCommand: l.Verify.FailedCommand, Title: l.Advice.Title, Scope: l.Request.Scope, RunID: l.Outcome.RunID}
}

func parseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := config.ParseDuration(s); err == nil {
		return time.Now().Add(-d), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, orket.Errorf(orket.EUsage, "write an age such as 14d or 12h, or a date such as 2026-11-01", "--since %q", s)
}

func scopeHits(lessonScope []string, s string) bool {
	for _, p := range lessonScope {
		if p == s || strings.HasPrefix(p, s+"/") || strings.HasPrefix(s, p+"/") || p == "**" {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func byCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

func warnDamaged(o *options, d []lessons.Damaged) {
	if len(d) > 0 {
		fmt.Fprintf(o.stderr, "orket: warning: skipped %d damaged line(s) of the lesson log (first: line %d: %s)\n", len(d), d[0].Line, d[0].Err)
	}
}

func readError(err error) error {
	return &orket.Error{Code: orket.EInternal, Err: err, Msg: "lesson log: " + err.Error(), Hint: "check the file's permissions"}
}
