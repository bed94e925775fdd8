package main

import (
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTraces: every embedded trace parses, and holds what the player
// and the score take for granted.
func TestTraces(t *testing.T) {
	all, err := loadTraces()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range strings.Split(defaultTraces, ",") {
		if _, ok := all[name]; !ok {
			t.Errorf("no trace %s, played by default", name)
		}
	}
	for _, name := range sortedKeys(all) {
		t.Run(name, func(t *testing.T) { checkTrace(t, all[name]) })
	}
}

func TestParseTraceRefuses(t *testing.T) {
	for what, text := range map[string]string{
		"an unknown field":   "name: x\ntasks:\n  - id: t01\n    hazzard: env\n",
		"another name":       "name: y\ntasks: []\n",
		"a second document":  "name: x\n---\nname: x\n",
		"a string for tasks": "name: x\ntasks: t01\n",
	} {
		if _, err := parseTrace([]byte(text), "x"); err == nil {
			t.Errorf("a trace with %s parsed", what)
		}
	}
}

// validID: a task's id names its commit and its flake file.
var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// reservedHazards are the score's words for no hazard and an unknown one.
var reservedHazards = map[string]bool{"none": true, "(none)": true, "-": true, "?": true}

func checkTrace(t *testing.T, tr Trace) {
	if len(tr.Tasks) == 0 {
		t.Fatal("no tasks")
	}
	checkPorts(t, tr.Ports)
	for p := range tr.Files {
		checkPath(t, "file", p)
	}
	seen := map[string]bool{}
	for _, task := range tr.Tasks {
		if !validID.MatchString(task.ID) {
			t.Errorf("task id %q", task.ID)
		}
		if seen[task.ID] {
			t.Errorf("task id %s twice", task.ID)
		}
		seen[task.ID] = true
		checkTask(t, tr, task)
	}
}

// checkPorts: the player listens on each port by number, so each is a
// distinct TCP port.
func checkPorts(t *testing.T, ports map[string]int) {
	byNumber := map[int]string{}
	for name, n := range ports {
		if n <= 0 || n > 65535 {
			t.Errorf("port %s: %d", name, n)
		}
		if other, ok := byNumber[n]; ok {
			t.Errorf("ports %s and %s are both %d", name, other, n)
		}
		byNumber[n] = name
	}
}

func checkTask(t *testing.T, tr Trace, task Task) {
	where := "task " + task.ID
	if reservedHazards[task.Hazard] {
		t.Errorf("%s: hazard %q is a word of the score's", where, task.Hazard)
	}
	// What a task meets is a hazard: the score counts a repeat by its label.
	if task.Hazard == "" && (len(task.Unset) > 0 || len(task.Busy) > 0 || len(task.Down) > 0 || task.Flaky) {
		t.Errorf("%s meets a hazard with no label", where)
	}
	// Busy holds a port tests listen on; Down stops a service they dial
	// (environment: a service is up unless down).
	checkEnvNames(t, tr, where+" (unset, busy, down)", task.Unset, task.Busy, task.Down)
	checkEdit(t, where, task.Edit)
	if isEmpty(task.Edit) {
		t.Errorf("%s: no edit", where)
	}
	planned := map[string]bool{}
	for _, p := range touchArgs(task) {
		planned[p] = true
	}
	for k, rem := range task.Remedies {
		checkRemedy(t, tr, where+": remedy "+strconv.Itoa(k), rem, planned)
	}
	if rv := task.Review; rv != nil {
		if len(rv.Paths) == 0 || rv.Reason == "" {
			t.Errorf("%s: a review needs paths and a reason", where)
		}
		for _, p := range rv.Paths {
			checkPath(t, where+": review", p)
		}
	}
}

func checkRemedy(t *testing.T, tr Trace, where string, rem Remedy, planned map[string]bool) {
	// The agent compiles the trigger with MustCompile; an empty one never
	// matches.
	if rem.Trigger == "" {
		t.Errorf("%s: no trigger", where)
	} else if _, err := regexp.Compile(rem.Trigger); err != nil {
		t.Errorf("%s: trigger: %v", where, err)
	}
	if len(rem.SetEnv)+len(rem.Free)+len(rem.Start)+len(rem.Skip) == 0 && isEmpty(rem.Edit) {
		t.Errorf("%s does nothing", where)
	}
	checkEnvNames(t, tr, where+" (set_env, free, start)", rem.SetEnv, rem.Free, rem.Start)
	checkEdit(t, where, rem.Edit)
	// Skip leaves out paths of the task's own edit.
	for _, p := range rem.Skip {
		if !planned[p] {
			t.Errorf("%s: skip %s, which the task's edit does not touch", where, p)
		}
	}
}

func checkEdit(t *testing.T, where string, e Edit) {
	for _, p := range append(sortedKeys(e.Write), sortedKeys(e.Append)...) {
		checkPath(t, where, p)
	}
	for _, r := range e.Replace {
		checkPath(t, where+": replace", r.Path)
		// The agent replaces the first Old: an empty one would insert New
		// at the top.
		if r.Old == "" {
			t.Errorf("%s: replace in %s with no old text", where, r.Path)
		}
	}
	for _, c := range e.Run {
		if strings.TrimSpace(c) == "" {
			t.Errorf("%s: an empty command", where)
		}
	}
}

// checkPath: the player and the agent write paths below the project.
func checkPath(t *testing.T, where, p string) {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
		t.Errorf("%s: path %q is not a clean path in the project", where, p)
	}
}

// checkEnvNames: vars are variables of the vault; listened, ports tests
// listen on; services, ports they dial.
func checkEnvNames(t *testing.T, tr Trace, where string, vars, listened, services []string) {
	for _, v := range vars {
		checkVault(t, tr, where, v)
	}
	for _, p := range listened {
		checkPort(t, tr, where, p, false)
	}
	for _, p := range services {
		checkPort(t, tr, where, p, true)
	}
}

// checkVault: the player sets a variable of the vault by its name.
func checkVault(t *testing.T, tr Trace, where, v string) {
	if _, ok := tr.Vault[v]; !ok {
		t.Errorf("%s: %s is not in the vault (%s)", where, v, strings.Join(sortedKeys(tr.Vault), ", "))
	}
}

// checkPort: the player holds a port by its name, and its name says
// whether tests dial it (a service) or listen on it.
func checkPort(t *testing.T, tr Trace, where, name string, service bool) {
	if _, ok := tr.Ports[name]; !ok {
		t.Errorf("%s: no port %s (%s)", where, name, strings.Join(sortedKeys(tr.Ports), ", "))
		return
	}
	if isService(name) != service {
		t.Errorf("%s: port %s is a service: %v", where, name, isService(name))
	}
}
