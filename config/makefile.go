package config

import (
	"slices"
	"strings"

	"github.com/orket/orket/internal/lazyre"
)

// A makefile is what detection reads of a Makefile: its explicit rules'
// prerequisites and recipes, by target.
type makefile map[string]*makeRule

type makeRule struct {
	prereqs []string
	recipe  []string
}

var (
	makeRuleLine = lazyre.New(`^([A-Za-z0-9_./-]+(?:[ \t]+[A-Za-z0-9_./-]+)*)[ \t]*::?([^=].*)?$`)
	makeCall     = lazyre.New(`(?:^|[\s;&|(])(?:\$\(MAKE\)|\$\{MAKE\}|make)((?:\s+(?:-\S+|[A-Za-z0-9_./-]+))*)`)
)

// parseMakefile reads the rules of a Makefile (not its includes, nor
// pattern rules or variables).
func parseMakefile(src string) makefile {
	mk := makefile{}
	var cur []*makeRule
	var logical []string
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(strings.TrimRight(lines[i], "\r"))
		}
		logical = append(logical, line)
	}
	for _, line := range logical {
		if strings.HasPrefix(line, "\t") {
			cmd := strings.TrimLeft(strings.TrimSpace(line), "@-+")
			for _, r := range cur {
				r.recipe = append(r.recipe, strings.TrimSpace(cmd))
			}
			continue
		}
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		cur = nil
		m := makeRuleLine().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rest, inline, _ := strings.Cut(m[2], ";")
		rest, _, _ = strings.Cut(rest, "#")
		if strings.Contains(rest, "=") {
			continue // a target-specific variable
		}
		for _, target := range strings.Fields(m[1]) {
			if strings.HasPrefix(target, ".") {
				continue // .PHONY and the other special targets
			}
			r := mk[target]
			if r == nil {
				r = &makeRule{}
				mk[target] = r
			}
			r.prereqs = append(r.prereqs, strings.Fields(rest)...)
			if strings.TrimSpace(inline) != "" {
				r.recipe = append(r.recipe, strings.TrimSpace(inline))
			}
			cur = append(cur, r)
		}
	}
	return mk
}

func (mk makefile) has(target string) bool { return mk[target] != nil }

// reach returns the targets make target runs: itself, its prerequisites
// and the targets its recipes run through make, transitively.
func (mk makefile) reach(target string) []string {
	var out []string
	var walk func(string)
	walk = func(t string) {
		r := mk[t]
		if r == nil || slices.Contains(out, t) {
			return
		}
		out = append(out, t)
		for _, p := range r.prereqs {
			walk(p)
		}
		for _, line := range r.recipe {
			for _, m := range makeCall().FindAllStringSubmatch(line, -1) {
				for _, w := range strings.Fields(m[1]) {
					if !strings.HasPrefix(w, "-") {
						walk(w)
					}
				}
			}
		}
	}
	walk(target)
	return out
}

// runs reports whether make target runs other.
func (mk makefile) runs(target, other string) bool {
	return target != other && slices.Contains(mk.reach(target), other)
}

// recipe returns the recipe lines make target runs, its prerequisites'
// included.
func (mk makefile) recipe(target string) []string {
	var out []string
	for _, t := range mk.reach(target) {
		out = append(out, mk[t].recipe...)
	}
	return out
}

var scriptCall = lazyre.New(`(?:^|[\s;&|(])(?:npm|pnpm|yarn|bun)\s+(?:run(?:-script)?\s+)?([A-Za-z0-9_:.-]+)`)

// scriptRewriter returns the command of a package.json script that
// rewrites files (see rewriter), following its pre and post scripts and
// the scripts it runs through the package manager, or "".
func scriptRewriter(scripts map[string]string, name string, ruffFixes bool) string {
	seen := map[string]bool{}
	var walk func(string) string
	walk = func(n string) string {
		body, ok := scripts[n]
		if !ok || seen[n] {
			return ""
		}
		seen[n] = true
		for _, s := range []string{"pre" + n, n, "post" + n} {
			if s != n {
				if w := walk(s); w != "" {
					return w
				}
				continue
			}
			if w := rewriter(body, ruffFixes); w != "" {
				return w
			}
			for _, m := range scriptCall().FindAllStringSubmatch(body, -1) {
				if w := walk(m[1]); w != "" {
					return w
				}
			}
		}
		return ""
	}
	return walk(name)
}
