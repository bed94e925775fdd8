package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/scope"
	"github.com/orket/orket/store"
)

// An Error is a mistake in orket.yaml: where it is, what is wrong and what
// to write instead.
type Error struct {
	File string
	Line int // 1-based; 0 when the whole file is at fault
	Msg  string
	Hint string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	return loc + ": " + e.Msg
}

// MaxFileSize bounds orket.yaml: a configuration is a few kilobytes.
const MaxFileSize = 1 << 20

// Load reads and checks the configuration file at path. It refuses what
// is not a regular file (a FIFO would block, a device would never end)
// and a file over MaxFileSize, before reading anything.
func Load(file string) (*Config, error) {
	fi, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &Error{File: file, Msg: "is not a regular file (" + fileKind(fi.Mode()) + ")", Hint: "orket.yaml must be a plain file"}
	}
	if fi.Size() > MaxFileSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("is %d bytes, more than orket reads (%d)", fi.Size(), MaxFileSize), Hint: "a configuration is a few kilobytes; check the file"}
	}
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("is more than %d bytes", MaxFileSize), Hint: "a configuration is a few kilobytes; check the file"}
	}
	return Parse(data, file)
}

// maxSize bounds the file orket is willing to read as configuration.
const maxSize = 1 << 20

// Parse checks data as the contents of file and returns the configuration
// with defaults filled in. Every problem is an *Error.
func Parse(data []byte, file string) (*Config, error) {
	d := &decoder{file: file}
	if len(data) > maxSize {
		return nil, d.errf(nil, "keep orket.yaml under 1 MiB", "file is %d bytes", len(data))
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, d.errf(nil, "run orket init to write one, or see orket schema", "file is empty")
		}
		return nil, d.syntaxError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, d.errf(&extra, "keep one YAML document in orket.yaml", "a second YAML document")
	} else if !errors.Is(err, io.EOF) {
		return nil, d.syntaxError(err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, d.errf(nil, "run orket init to write one, or see orket schema", "file is empty")
		}
		root = root.Content[0]
	}
	c := Defaults()
	c.File = file
	if err := d.top(c, root); err != nil {
		return nil, err
	}
	return c, nil
}

var yamlLine = lazyre.New(`line (\d+)`)

func (d *decoder) syntaxError(err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	// yaml.v3 omits the line when it is the first, and reports parser
	// (not scanner) errors with a 0-based line: undo both.
	line := 1
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.TrimSpace(strings.Replace(msg, m[0]+":", "", 1))
		if strings.HasPrefix(msg, "did not find expected") || strings.HasPrefix(msg, "found undefined tag handle") {
			line++
		}
	}
	return &Error{File: d.file, Line: line, Msg: "YAML syntax: " + msg,
		Hint: "check indentation and quoting; strings holding ': ' or starting with '*', '&', '!', '{' or '[' need quotes"}
}

type decoder struct{ file string }

func (d *decoder) errf(n *yaml.Node, hint, format string, args ...any) *Error {
	e := &Error{File: d.file, Msg: fmt.Sprintf(format, args...), Hint: hint}
	if n != nil {
		e.Line = n.Line
	}
	return e
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "empty (null)"
		case "!!bool":
			return "a boolean"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		}
		return "a string"
	}
	return "something else"
}

// mapping walks a mapping node, refusing unknown and repeated keys.
func (d *decoder) mapping(n *yaml.Node, what string, known []string, fn func(key string, k, v *yaml.Node) error) error {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return d.errf(n, "write "+what+" as key: value pairs ("+strings.Join(known, ", ")+")",
			"%s must be a mapping, not %s", what, kindName(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return d.errf(k, "use plain names as keys", "%s has a key that is %s", what, kindName(k))
		}
		key := k.Value
		if !contains(known, key) {
			hint := "known keys: " + strings.Join(known, ", ")
			if s := suggest(key, known); s != "" {
				hint = fmt.Sprintf("did you mean %q? ", s) + hint
			}
			return d.errf(k, hint, "unknown key %q in %s", key, what)
		}
		if seen[key] {
			return d.errf(k, "remove one of them", "key %q appears twice in %s", key, what)
		}
		seen[key] = true
		if err := fn(key, k, v); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) str(n *yaml.Node, what string) (string, error) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Tag == "!!bool" {
		return "", d.errf(n, "quote it if it is meant as text", "%s must be a string, not %s", what, kindName(n))
	}
	return n.Value, nil
}

func (d *decoder) nonEmpty(n *yaml.Node, what string) (string, error) {
	s, err := d.str(n, what)
	if err == nil && strings.TrimSpace(s) == "" {
		err = d.errf(n, "give it a value or remove the key", "%s is empty", what)
	}
	return s, err
}

func (d *decoder) boolean(n *yaml.Node, what string) (bool, error) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		switch strings.ToLower(n.Value) {
		case "true", "yes", "on":
			return true, nil
		case "false", "no", "off":
			return false, nil
		}
	}
	return false, d.errf(n, "write true or false", "%s must be true or false, not %s", what, kindName(n))
}

func (d *decoder) integer(n *yaml.Node, what string, min, max int64) (int, error) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err == nil && v >= min && v <= max {
			return int(v), nil
		}
		return 0, d.errf(n, fmt.Sprintf("use a whole number from %d to %d", min, max), "%s is out of range: %s", what, n.Value)
	}
	return 0, d.errf(n, fmt.Sprintf("use a whole number from %d to %d", min, max), "%s must be an integer, not %s", what, kindName(n))
}

// fraction reads a number from 0 to 1 (a share: 0.1 is 10%).
func (d *decoder) fraction(n *yaml.Node, what string) (float64, error) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!float" || n.Tag == "!!int") {
		v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err == nil && v >= 0 && v < 1 {
			return v, nil
		}
	}
	return 0, d.errf(n, "write a share from 0 up to (not including) 1, such as 0.1 for 10%", "%s must be a number from 0 up to 1, not %s", what, n.Value)
}

func (d *decoder) duration(n *yaml.Node, what string) (time.Duration, error) {
	s, err := d.str(n, what)
	if err != nil {
		return 0, err
	}
	v, err := ParseDuration(s)
	if err != nil || v <= 0 {
		return 0, d.errf(n, `write a positive duration such as 90s, 5m, 2h or 14d`, "%s: bad duration %q", what, s)
	}
	return v, nil
}

// strings reads a list of strings; a single string is a list of one.
func (d *decoder) strings(n *yaml.Node, what string) ([]string, error) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode {
		s, err := d.nonEmpty(n, what)
		return []string{s}, err
	}
	if n.Kind != yaml.SequenceNode {
		return nil, d.errf(n, "write a list: [a, b]", "%s must be a list of strings, not %s", what, kindName(n))
	}
	out := make([]string, 0, len(n.Content))
	for _, e := range n.Content {
		s, err := d.nonEmpty(e, what+" entry")
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

var (
	topKeys       = []string{"version", "scope", "verify", "lessons", "classify", "preflight", "verdict", "escalation", "protect", "sandbox", "snapshot", "feedback", "memory", "guardrails", "stats"}
	feedbackKeys  = []string{"keywords"}
	memoryKeys    = []string{"summarizer", "summarizer_timeout", "sync", "remote"}
	guardKeys     = []string{"max_versions", "require_signed", "allowed_signers", "allowed_keys"}
	statsKeys     = []string{"sample_size"}
	snapshotKeys  = []string{"fsmonitor"}
	sandboxKeys   = []string{"mode", "write"}
	verdictKeys   = []string{"approve", "escalate_after"}
	escalateKeys  = []string{"notify"}
	verifyKeys    = []string{"default", "profiles", "writes", "baseline", "baseline_max"}
	profileKeys   = []string{"extends", "fail_fast", "parallel", "steps"}
	stepKeys      = []string{"name", "run", "timeout", "env", "dir", "required", "when", "weight", "retry"}
	lessonsKeys   = []string{"path", "top_k", "half_life", "retention", "tail", "min_samples", "min_cluster_size", "frequency_threshold", "extractor", "extractor_timeout"}
	retentionKeys = []string{"max_entries", "max_entries_per_agent", "max_age"}
	tailKeys      = []string{"max_lines", "max_bytes"}
	classifyKeys  = []string{"rules"}
	ruleKeys      = []string{"id", "tag", "pattern", "preflight"}
	preflightKeys = []string{"strict", "checks"}
)

// top reads the whole file: each top-level key into its part of c. A file
// without verify profiles is refused.
func (d *decoder) top(c *Config, n *yaml.Node) error {
	var verifyNode *yaml.Node
	err := d.mapping(n, "orket.yaml", topKeys, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "version":
			c.Version, err = d.version(v)
		case "scope":
			c.Scope, err = d.scope(v)
		case "verify":
			verifyNode = k
			err = d.verify(&c.Verify, v)
		case "lessons":
			err = d.lessons(&c.Lessons, v)
		case "classify":
			err = d.classify(&c.Classify, v)
		case "preflight":
			err = d.preflight(&c.Preflight, v)
		case "verdict":
			err = d.verdict(&c.Verdict, v)
		case "protect":
			c.Protect, err = d.globs(v, "protect", "repository-relative paths or doublestar globs such as '**/*_test.go' or '.github/workflows/**'")
		case "sandbox":
			err = d.sandbox(&c.Sandbox, v)
		case "feedback":
			err = d.feedback(&c.Feedback, v)
		case "memory":
			err = d.memory(&c.Memory, v)
		case "guardrails":
			err = d.mapping(v, "guardrails", guardKeys, func(key string, _, v *yaml.Node) error {
				var err error
				switch key {
				case "max_versions":
					c.Guardrails.MaxVersions, err = d.integer(v, "guardrails.max_versions", 1, 1000)
				case "require_signed":
					c.Guardrails.RequireSigned, err = d.boolean(v, "guardrails.require_signed")
				case "allowed_signers":
					c.Guardrails.AllowedSigners, err = d.repoPath(v, "guardrails.allowed_signers")
				case "allowed_keys":
					c.Guardrails.AllowedKeys, err = d.repoPath(v, "guardrails.allowed_keys")
				}
				return err
			})
		case "stats":
			err = d.mapping(v, "stats", statsKeys, func(key string, _, v *yaml.Node) error {
				var err error
				c.Stats.SampleSize, err = d.integer(v, "stats.sample_size", 1, 100000)
				return err
			})
		case "snapshot":
			err = d.mapping(v, "snapshot", snapshotKeys, func(key string, _, v *yaml.Node) error {
				var err error
				if key == "fsmonitor" {
					c.Snapshot.FSMonitor, err = d.nonEmpty(v, "snapshot.fsmonitor")
				}
				return err
			})
		case "escalation":
			err = d.escalation(&c.Escalation, v)
		}
		return err
	})
	if err != nil {
		return err
	}
	if verifyNode == nil || len(c.Verify.Profiles) == 0 {
		return d.errf(verifyNode, "add verify.profiles with at least one profile (orket init writes them)", "no verify profiles")
	}
	return nil
}

// version reads version:, which only 1 is.
func (d *decoder) version(n *yaml.Node) (int, error) {
	v, err := d.integer(n, "version", 0, 1<<31)
	if err == nil && v != 1 {
		err = d.errf(n, "write version: 1", "version %d is not supported by this orket", v)
	}
	return v, err
}

// verdict reads verdict: the score that approves, and the rejections
// that escalate.
func (d *decoder) verdict(vd *Verdict, n *yaml.Node) error {
	return d.mapping(n, "verdict", verdictKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "approve":
			vd.Approve, err = d.integer(v, "verdict.approve", 1, 100)
		case "escalate_after":
			vd.EscalateAfter, err = d.integer(v, "verdict.escalate_after", 0, 100)
		}
		return err
	})
}

// feedback reads feedback: the keywords that extend each category.
func (d *decoder) feedback(f *Feedback, n *yaml.Node) error {
	return d.mapping(n, "feedback", feedbackKeys, func(key string, _, v *yaml.Node) error {
		f.Keywords = map[string][]string{}
		return d.mapping(v, "feedback.keywords", feedbackCategories, func(cat string, _, v *yaml.Node) error {
			words, err := d.strings(v, "feedback.keywords."+cat)
			f.Keywords[cat] = words
			return err
		})
	})
}

// memory reads memory: the summariser, its timeout, and how the memory is
// synced.
func (d *decoder) memory(m *Memory, n *yaml.Node) error {
	return d.mapping(n, "memory", memoryKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "summarizer":
			m.Summarizer, err = d.strings(v, "memory.summarizer")
			if err == nil && len(m.Summarizer) == 0 {
				err = d.errf(v, "write the command as a list: [claude, -p]", "memory.summarizer is empty")
			}
		case "summarizer_timeout":
			m.SummarizerTimeout, err = d.duration(v, "memory.summarizer_timeout")
		case "sync":
			var s string
			if s, err = d.nonEmpty(v, "memory.sync"); err == nil {
				switch s {
				case "auto":
					m.Sync = "auto"
				case "off":
					m.Sync = ""
				default:
					err = d.errf(v, "write auto (sync at the start and end of each run) or off", "memory.sync is %q", s)
				}
			}
		case "remote":
			m.Remote, err = d.nonEmpty(v, "memory.remote")
		}
		return err
	})
}

// escalation reads escalation: notify, a shell command line or an argv
// list.
func (d *decoder) escalation(e *Escalation, n *yaml.Node) error {
	return d.mapping(n, "escalation", escalateKeys, func(key string, _, v *yaml.Node) error {
		var err error
		if rv := resolve(v); rv.Kind == yaml.SequenceNode {
			e.NotifyArgv, err = d.strings(rv, "escalation.notify")
		} else {
			e.NotifyShell, err = d.nonEmpty(v, "escalation.notify")
		}
		return err
	})
}

var envName = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// feedbackCategories are the categories feedback.keywords may extend
// (feedback.Categories, but for other).
var feedbackCategories = []string{"examples", "specificity", "clarity", "completeness", "relevance"}

// globs reads a list of repository-relative paths or doublestar globs.
func (d *decoder) globs(n *yaml.Node, what, hint string) ([]string, error) {
	pats, err := d.strings(n, what)
	if err != nil {
		return nil, err
	}
	for _, p := range pats {
		if err := scope.Check(p); err != nil {
			return nil, d.errf(n, hint, "%s: %v", what, err)
		}
	}
	return pats, nil
}

// sandbox reads sandbox: a mode alone (sandbox: required), or a mapping
// of mode and write.
func (d *decoder) sandbox(s *Sandbox, n *yaml.Node) error {
	mode := func(v *yaml.Node) (string, error) {
		m, err := d.nonEmpty(v, "sandbox.mode")
		if err == nil && m != "auto" && m != "required" && m != "off" {
			err = d.errf(v, "write auto, required or off", "sandbox mode %q is not auto, required or off", m)
		}
		return m, err
	}
	if rv := resolve(n); rv.Kind == yaml.ScalarNode {
		var err error
		s.Mode, err = mode(n)
		return err
	}
	return d.mapping(n, "sandbox", sandboxKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "mode":
			s.Mode, err = mode(v)
		case "write":
			s.Write, err = d.strings(v, "sandbox.write")
		}
		return err
	})
}

func (d *decoder) scope(n *yaml.Node) ([]string, error) {
	pats, err := d.strings(n, "scope")
	if err != nil {
		return nil, err
	}
	for _, p := range pats {
		if err := scope.Check(p); err != nil {
			return nil, d.errf(n, "scopes are repository-relative paths or globs such as pkg/api or pkg/**/*.go", "%v", err)
		}
	}
	return pats, nil
}

func (d *decoder) verify(v *Verify, n *yaml.Node) error {
	var defNode *yaml.Node
	err := d.mapping(n, "verify", verifyKeys, func(key string, k, val *yaml.Node) error {
		var err error
		switch key {
		case "default":
			defNode = val
			v.Default, err = d.nonEmpty(val, "verify.default")
		case "profiles":
			err = d.profiles(v, val)
		case "baseline":
			var mode string
			if mode, err = d.nonEmpty(val, "verify.baseline"); err == nil {
				if mode != "on_failure" && mode != "off" {
					err = d.errf(val, "write on_failure (the default) or off", "verify.baseline: %q is not on_failure or off", mode)
				}
				v.BaselineOff = mode == "off"
			}
		case "baseline_max":
			v.BaselineMax, err = d.duration(val, "verify.baseline_max")
		case "writes":
			v.Writes, err = d.strings(val, "verify.writes")
			for _, p := range v.Writes {
				if err == nil && scope.Check(p) != nil {
					err = d.errf(val, "repository-relative paths or doublestar globs such as coverage.out or 'gen/**'", "verify.writes: %v", scope.Check(p))
				}
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(v.Profiles) == 0 {
		return d.errf(n, "add verify.profiles with at least one profile", "verify has no profiles")
	}
	switch {
	case v.Default == "" && len(v.Order) == 1:
		v.Default = v.Order[0]
	case v.Default == "":
		return d.errf(n, "add default: <profile> under verify", "verify.default is required when there are several profiles (%s)", joinQuoted(v.Order))
	case v.Profiles[v.Default] == nil:
		hint := "defined profiles: " + joinQuoted(v.Order)
		if s := suggest(v.Default, v.Order); s != "" {
			hint = fmt.Sprintf("did you mean %q? ", s) + hint
		}
		return d.errf(defNode, hint, "verify.default names profile %q, which is not defined", v.Default)
	}
	return d.checkProfiles(v)
}

var profileName = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func (d *decoder) profiles(v *Verify, n *yaml.Node) error {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return d.errf(n, "write profiles as name: [steps]", "verify.profiles must be a mapping, not %s", kindName(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), resolve(n.Content[i+1])
		name, err := d.nonEmpty(k, "profile name")
		if err != nil {
			return err
		}
		if !profileName().MatchString(name) {
			return d.errf(k, "use letters, digits, '.', '_' and '-'", "profile name %q is not a plain name", name)
		}
		if v.Profiles[name] != nil {
			return d.errf(k, "remove or rename one of them", "profile %q is defined twice", name)
		}
		p := &Profile{Name: name, Line: k.Line}
		what := fmt.Sprintf("profile %q", name)
		switch val.Kind {
		case yaml.SequenceNode:
			p.Steps, err = d.steps(val, what)
		case yaml.MappingNode:
			err = d.mapping(val, what, profileKeys, func(key string, _, x *yaml.Node) error {
				var err error
				switch key {
				case "extends":
					p.Extends, err = d.nonEmpty(x, what+" extends")
				case "fail_fast":
					var b bool
					b, err = d.boolean(x, what+" fail_fast")
					p.FailFast = &b
				case "parallel":
					var b bool
					b, err = d.boolean(x, what+" parallel")
					p.Parallel = &b
				case "steps":
					p.Steps, err = d.steps(x, what)
				}
				return err
			})
		default:
			err = d.errf(val, "write a list of steps, or a mapping with steps: and extends:", "%s must be a list of steps or a mapping, not %s", what, kindName(val))
		}
		if err != nil {
			return err
		}
		v.Profiles[name] = p
		v.Order = append(v.Order, name)
	}
	return nil
}

// checkProfiles checks extends (known, acyclic) and that every resolved
// profile has steps with distinct names.
func (d *decoder) checkProfiles(v *Verify) error {
	for _, name := range v.Order {
		p := v.Profiles[name]
		seen := []string{name}
		for q := p; q.Extends != ""; {
			parent := v.Profiles[q.Extends]
			if parent == nil {
				hint := "defined profiles: " + joinQuoted(v.Order)
				if s := suggest(q.Extends, v.Order); s != "" {
					hint = fmt.Sprintf("did you mean %q? ", s) + hint
				}
				return &Error{File: d.file, Line: q.Line, Msg: fmt.Sprintf("profile %q extends %q, which is not defined", q.Name, q.Extends), Hint: hint}
			}
			if contains(seen, parent.Name) {
				return &Error{File: d.file, Line: p.Line, Msg: fmt.Sprintf("profile %q extends itself: %s -> %s", name, strings.Join(seen, " -> "), parent.Name),
					Hint: "remove one extends to break the cycle"}
			}
			seen = append(seen, parent.Name)
			q = parent
		}
	}
	c := &Config{Verify: *v}
	for _, name := range v.Order {
		r, _ := c.Profile(name)
		if len(r.Steps) == 0 {
			return &Error{File: d.file, Line: v.Profiles[name].Line, Msg: fmt.Sprintf("profile %q has no steps", name),
				Hint: "add steps (- name: test\n  run: go test ./...) or extends: <profile>"}
		}
		names := map[string]bool{}
		for _, s := range r.Steps {
			if names[s.Name] {
				return &Error{File: d.file, Line: s.Line, Msg: fmt.Sprintf("profile %q has two steps named %q", name, s.Name),
					Hint: "give every step of a profile (with those it extends) its own name"}
			}
			names[s.Name] = true
		}
	}
	return nil
}

func (d *decoder) steps(n *yaml.Node, what string) ([]Step, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, d.errf(n, "write steps as a list: - name: test", "%s steps must be a list, not %s", what, kindName(n))
	}
	var out []Step
	for i, e := range n.Content {
		s, err := d.step(e, fmt.Sprintf("%s step %d", what, i+1))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (d *decoder) step(n *yaml.Node, what string) (Step, error) {
	s := Step{Required: true, Line: resolve(n).Line}
	hasRun := false
	err := d.mapping(n, what, stepKeys, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "name":
			s.Name, err = d.nonEmpty(v, what+" name")
		case "run":
			hasRun = true
			if rv := resolve(v); rv.Kind == yaml.SequenceNode {
				s.Argv, err = d.strings(rv, what+" run")
				if err == nil && len(s.Argv) == 0 {
					err = d.errf(v, "give the program and its arguments", "%s run is an empty list", what)
				}
			} else {
				s.Shell, err = d.nonEmpty(v, what+" run")
			}
		case "timeout":
			s.Timeout, err = d.duration(v, what+" timeout")
		case "env":
			s.Env = map[string]string{}
			err = d.env(s.Env, v, what+" env")
		case "dir":
			s.Dir, err = d.nonEmpty(v, what+" dir")
			if err == nil {
				s.Dir, err = d.dir(v, s.Dir, what)
			}
		case "required":
			s.Required, err = d.boolean(v, what+" required")
		case "weight":
			s.Weight, err = d.integer(v, what+" weight", 1, 1000)
		case "retry":
			s.Retry, err = d.integer(v, what+" retry", 0, 10)
		case "when":
			s.When, err = d.strings(v, what+" when")
			for _, p := range s.When {
				if err == nil && !doublestar.ValidatePattern(p) {
					err = d.errf(v, "see doublestar syntax: *, **, ?, [abc], {a,b}", "%s when: %q is not a valid glob", what, p)
				}
			}
		}
		return err
	})
	if err != nil {
		return s, err
	}
	if !hasRun {
		return s, d.errf(n, "add run: <command> (a string for sh -c, or a list for an argv)", "%s has no run", what)
	}
	if s.Name == "" {
		s.Name = s.Command()
	}
	return s, nil
}

// repoPath reads a repository-relative file path (no "..", not
// absolute).
func (d *decoder) repoPath(n *yaml.Node, what string) (string, error) {
	s, err := d.nonEmpty(n, what)
	if err != nil {
		return "", err
	}
	clean := path.Clean(s)
	if strings.HasPrefix(s, "/") || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(s, `\`) {
		return "", d.errf(n, "use a repository-relative file such as .orket-allowed-signers", "%s %q is not a file of the repository", what, s)
	}
	return clean, nil
}

func (d *decoder) dir(n *yaml.Node, dir, what string) (string, error) {
	clean := path.Clean(dir)
	if strings.HasPrefix(dir, "/") || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(dir, `\`) {
		return "", d.errf(n, "use a repository-relative directory such as web or services/api", "%s dir %q leaves the repository", what, dir)
	}
	if clean == "." {
		clean = ""
	}
	return clean, nil
}

func (d *decoder) env(m map[string]string, n *yaml.Node, what string) error {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return d.errf(n, `write env as NAME: "value" pairs`, "%s must be a mapping, not %s", what, kindName(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		name, err := d.nonEmpty(k, what+" name")
		if err != nil {
			return err
		}
		if !envName().MatchString(name) {
			return d.errf(k, "use letters, digits and _, not starting with a digit", "%s: %q is not a variable name", what, name)
		}
		if _, dup := m[name]; dup {
			return d.errf(k, "remove one of them", "%s: %s is set twice", what, name)
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return d.errf(v, `quote the value: NAME: "value"`, "%s: %s must be a string, not %s", what, name, kindName(v))
		}
		m[name] = v.Value
	}
	return nil
}

func (d *decoder) lessons(l *Lessons, n *yaml.Node) error {
	return d.mapping(n, "lessons", lessonsKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "path":
			if l.Path, err = d.nonEmpty(v, "lessons.path"); err == nil {
				if p := path.Clean(l.Path); !strings.HasPrefix(p, store.Dir+"/") || strings.Contains(l.Path, "..") || path.IsAbs(l.Path) {
					err = d.errf(v, "keep it under .orket/, e.g. .orket/memory/failure_lessons.jsonl", "lessons.path %q is outside .orket/", l.Path)
				}
			}
		case "top_k":
			l.TopK, err = d.integer(v, "lessons.top_k", 0, 100)
		case "half_life":
			l.HalfLife, err = d.duration(v, "lessons.half_life")
		case "retention":
			err = d.mapping(v, "lessons.retention", retentionKeys, func(key string, _, v *yaml.Node) error {
				var err error
				switch key {
				case "max_entries":
					l.Retention.MaxEntries, err = d.integer(v, "lessons.retention.max_entries", 1, 1<<31)
				case "max_entries_per_agent":
					l.Retention.MaxEntriesPerAgent, err = d.integer(v, "lessons.retention.max_entries_per_agent", 1, 1<<31)
				default:
					l.Retention.MaxAge, err = d.duration(v, "lessons.retention.max_age")
				}
				return err
			})
		case "min_samples":
			l.MinSamples, err = d.integer(v, "lessons.min_samples", 1, 1<<31)
		case "min_cluster_size":
			l.MinClusterSize, err = d.integer(v, "lessons.min_cluster_size", 1, 1<<31)
		case "frequency_threshold":
			l.FrequencyThreshold, err = d.fraction(v, "lessons.frequency_threshold")
		case "extractor":
			l.Extractor, err = d.strings(v, "lessons.extractor")
			if err == nil && len(l.Extractor) == 0 {
				err = d.errf(v, "write the command as a list: [claude, -p]", "lessons.extractor is empty")
			}
		case "extractor_timeout":
			l.ExtractorTimeout, err = d.duration(v, "lessons.extractor_timeout")
		case "tail":
			err = d.mapping(v, "lessons.tail", tailKeys, func(key string, _, v *yaml.Node) error {
				var err error
				if key == "max_lines" {
					l.Tail.MaxLines, err = d.integer(v, "lessons.tail.max_lines", 1, 1_000_000)
				} else {
					l.Tail.MaxBytes, err = d.integer(v, "lessons.tail.max_bytes", 64, 16<<20)
				}
				return err
			})
		}
		return err
	})
}

var tagName = lazyre.New(`^[a-z][a-z0-9_.-]*$`)

func (d *decoder) classify(c *Classify, n *yaml.Node) error {
	return d.mapping(n, "classify", classifyKeys, func(_ string, _, v *yaml.Node) error {
		v = resolve(v)
		if v.Kind != yaml.SequenceNode {
			return d.errf(v, "write rules as a list: - id: ...", "classify.rules must be a list, not %s", kindName(v))
		}
		ids := map[string]bool{}
		for i, e := range v.Content {
			what := fmt.Sprintf("classify rule %d", i+1)
			r := Rule{Line: resolve(e).Line}
			var patNode *yaml.Node
			err := d.mapping(e, what, ruleKeys, func(key string, _, x *yaml.Node) error {
				var err error
				switch key {
				case "id":
					r.ID, err = d.nonEmpty(x, what+" id")
				case "tag":
					r.Tag, err = d.nonEmpty(x, what+" tag")
					if err == nil && !tagName().MatchString(r.Tag) {
						err = d.errf(x, "tags are lower-case words joined by _, such as missing_env_var", "%s tag %q is not a plain tag", what, r.Tag)
					}
				case "pattern":
					patNode = x
					r.Pattern, err = d.nonEmpty(x, what+" pattern")
				case "preflight":
					r.Preflight, err = d.checks(x, what+" preflight")
				}
				return err
			})
			if err != nil {
				return err
			}
			for _, req := range []struct{ v, k string }{{r.ID, "id"}, {r.Tag, "tag"}, {r.Pattern, "pattern"}} {
				if req.v == "" {
					return d.errf(e, "every rule needs id, tag and pattern", "%s has no %s", what, req.k)
				}
			}
			if ids[r.ID] {
				return d.errf(e, "give every rule its own id", "rule id %q is used twice", r.ID)
			}
			ids[r.ID] = true
			re, err := regexp.Compile(r.Pattern)
			if err != nil {
				msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
				return d.errf(patNode, "patterns use Go's RE2 syntax; quote them with single quotes in YAML", "rule %q: bad regular expression: %s", r.ID, msg)
			}
			r.Re = re
			c.Rules = append(c.Rules, r)
		}
		return nil
	})
}

func (d *decoder) preflight(p *Preflight, n *yaml.Node) error {
	return d.mapping(n, "preflight", preflightKeys, func(key string, _, v *yaml.Node) error {
		var err error
		if key == "strict" {
			p.Strict, err = d.boolean(v, "preflight.strict")
		} else {
			p.Checks, err = d.checks(v, "preflight.checks")
		}
		return err
	})
}

func (d *decoder) checks(n *yaml.Node, what string) ([]preflight.Check, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, d.errf(n, "write checks as a list: - {type: command_exists, command: go}", "%s must be a list, not %s", what, kindName(n))
	}
	var out []preflight.Check
	for i, e := range n.Content {
		e = resolve(e)
		cw := fmt.Sprintf("%s check %d", what, i+1)
		var c preflight.Check
		// The type decides which other key is allowed, so read it first.
		if e.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(e.Content); j += 2 {
				if resolve(e.Content[j]).Value == "type" {
					t, err := d.nonEmpty(e.Content[j+1], cw+" type")
					if err != nil {
						return nil, err
					}
					if preflight.Field(t) == "" {
						hint := "types: " + strings.Join(preflight.Types, ", ")
						if s := suggest(t, preflight.Types); s != "" {
							hint = fmt.Sprintf("did you mean %q? ", s) + hint
						}
						return nil, d.errf(e.Content[j+1], hint, "%s: unknown check type %q", cw, t)
					}
					c.Type = t
				}
			}
		}
		known := []string{"type"}
		if c.Type != "" {
			known = append(known, preflight.Field(c.Type))
		}
		err := d.mapping(e, cw, known, func(key string, _, v *yaml.Node) error {
			var err error
			switch key {
			case "name":
				c.Name, err = d.nonEmpty(v, cw+" name")
			case "command":
				c.Command, err = d.nonEmpty(v, cw+" command")
			case "path":
				c.Path, err = d.nonEmpty(v, cw+" path")
			case "port":
				c.Port, err = d.integer(v, cw+" port", 1, 65535)
			case "address":
				c.Address, err = d.nonEmpty(v, cw+" address")
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if err := c.Validate(); err != nil {
			return nil, d.errf(e, "for example {type: env_var_present, name: API_TOKEN} or {type: port_free, port: 8080}", "%s: %v", cw, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// ParseDuration is time.ParseDuration with a day unit: "14d", "1d12h".
func ParseDuration(s string) (time.Duration, error) {
	var days int64
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseInt(s[:i], 10, 32)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		days, s = n, s[i+1:]
		if s == "" {
			return time.Duration(days) * 24 * time.Hour, nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return time.Duration(days)*24*time.Hour + v, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func joinQuoted(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	sort.Strings(q)
	return strings.Join(q, ", ")
}

// suggest returns the known word closest to s, if it is close enough to be
// a likely typo.
func suggest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if dist := levenshtein(s, k); dist < bestD {
			best, bestD = k, dist
		}
	}
	return best
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// ShellQuote renders an argv as a line a POSIX shell would split back.
func ShellQuote(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			b.WriteString(a)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
	}
	return b.String()
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "not a plain file"
}
