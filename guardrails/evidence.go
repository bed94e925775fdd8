package guardrails

// Evidence is checked just before use: a guardrail line (or a proposal)
// that cites a path, a command or an environment variable is demoted,
// saying why, when what it cites is gone from the repository. A demoted
// line stays in the text (a person decides; ProposeRemovals proposes its
// removal); the agent is shown it marked as demoted.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/orket/orket/internal/fsroot"
)

// Citation kinds.
const (
	CitesPath    = "path"
	CitesCommand = "command"
	CitesEnvVar  = "env_var"
)

// A Citation is something a line names that must exist for it to apply.
type Citation struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// A Missing citation, and why it is missing.
type Missing struct {
	Citation
	Why string `json:"why"`
}

// Evidence is how a line's citations fared.
type Evidence struct {
	Line    Line       `json:"line"`
	Cites   []Citation `json:"cites"`
	Missing []Missing  `json:"missing,omitempty"`
	Demoted bool       `json:"demoted"`
}

// Why says why the line is demoted ("" when it is not).
func (e Evidence) Why() string {
	var w []string
	for _, m := range e.Missing {
		w = append(w, m.Why)
	}
	return strings.Join(w, "; ")
}

var (
	backquoted = regexp.MustCompile("`([^`\n]+)`")
	envVarWord = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)
	orketCode  = regexp.MustCompile(`^E_[A-Z_]+$`)
	pathToken  = regexp.MustCompile(`(?:^|[\s("'\[])((?:\./)?[\w@+-][\w.@+-]*(?:/[\w.@+-]+)+)`)
	fileExt    = regexp.MustCompile(`\.[a-z][a-z0-9]{0,9}$`)
	progWord   = regexp.MustCompile(`^(?:\./[\w./+-]+|[a-z0-9][a-z0-9._+-]*)$`)
)

// knownExt are the extensions that make a single backquoted word a file
// name (`go.mod`); with a slash any lower-case extension does.
var knownExt = map[string]bool{"go": true, "mod": true, "sum": true, "json": true, "yaml": true, "yml": true, "toml": true,
	"md": true, "txt": true, "py": true, "js": true, "mjs": true, "cjs": true, "ts": true, "tsx": true, "jsx": true, "rs": true,
	"java": true, "kt": true, "rb": true, "sh": true, "bash": true, "cfg": true, "ini": true, "lock": true, "env": true,
	"sql": true, "proto": true, "c": true, "h": true, "cc": true, "cpp": true, "hpp": true, "cs": true, "php": true,
	"swift": true, "xml": true, "html": true, "css": true, "scss": true, "gradle": true, "properties": true, "conf": true,
	"mk": true, "tf": true, "lua": true, "ex": true, "exs": true, "vue": true, "svelte": true, "csv": true}

// notPrograms start code, not command lines.
var notPrograms = map[string]bool{"return": true, "func": true, "if": true, "for": true, "var": true, "let": true,
	"const": true, "def": true, "class": true, "import": true, "from": true, "new": true, "throw": true, "raise": true,
	"await": true, "async": true, "nil": true, "null": true, "true": true, "false": true, "type": true, "struct": true,
	"interface": true, "else": true, "while": true, "switch": true, "case": true, "package": true, "public": true,
	"private": true, "static": true, "defer": true, "go.": true, "select": true, "not": true, "and": true, "or": true}

// Cites lists what a line cites. Backquoted: an upper-case name with an
// underscore is a variable; a word with a slash, or a file name with a
// known extension (go.mod), is a path; several words whose first looks
// like a program (not a keyword of code, no parentheses, braces or
// semicolons) are a command; anything else (an identifier, a snippet)
// cites nothing. Unquoted: upper-case names with an underscore
// (variables; orket's E_ codes aside) and relative paths with a slash
// whose last part has an extension or that start with "./". And the
// section's scopes. Module paths (github.com/x/y), URLs, absolute paths
// and paths with ".." are not repository paths and are not cited.
func Cites(text, section string) []Citation {
	var out []Citation
	seen := map[Citation]bool{}
	add := func(kind, v string) {
		c := Citation{kind, v}
		if v != "" && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	rest := backquoted.ReplaceAllStringFunc(text, func(m string) string {
		span := strings.TrimSpace(m[1 : len(m)-1])
		words := strings.Fields(span)
		switch {
		case len(words) == 0:
		case envVarWord.FindString(span) == span && !orketCode.MatchString(span):
			add(CitesEnvVar, span)
		case len(words) == 1 && isRepoPath(span) && (strings.Contains(span, "/") && !strings.Contains(span, "://") ||
			knownExt[strings.TrimPrefix(strings.ToLower(filepath.Ext(span)), ".")]):
			add(CitesPath, strings.TrimPrefix(span, "./"))
		case len(words) > 1 && progWord.MatchString(words[0]) && !notPrograms[words[0]] && !strings.ContainsAny(span, "(){};<>"):
			add(CitesCommand, strings.Join(words, " "))
		}
		return " "
	})
	for _, v := range envVarWord.FindAllString(rest, -1) {
		if !orketCode.MatchString(v) {
			add(CitesEnvVar, v)
		}
	}
	for _, m := range pathToken.FindAllStringSubmatchIndex(rest, -1) {
		p := strings.TrimRight(rest[m[2]:m[3]], ".,;:")
		if m[2] >= 3 && rest[m[2]-3:m[2]] == "://" || !isRepoPath(p) {
			continue
		}
		if fileExt.MatchString(p) || strings.HasPrefix(p, "./") {
			add(CitesPath, strings.TrimPrefix(p, "./"))
		}
	}
	if section != "" && section != Everywhere {
		for _, s := range strings.Split(section, ", ") {
			if sp := staticPrefix(s); sp != "" && isRepoPath(sp) {
				add(CitesPath, sp)
			}
		}
	}
	return out
}

// isRepoPath reports whether p can name a path in the repository: not
// absolute, no "..", no "...", not a module path (a first part with a
// dot, as github.com/x/y), not a URL.
func isRepoPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.Contains(p, "://") || strings.Contains(p, "...") {
		return false
	}
	parts := strings.Split(strings.TrimPrefix(p, "./"), "/")
	for _, c := range parts {
		if c == ".." {
			return false
		}
	}
	if len(parts) > 1 && strings.Contains(parts[0], ".") && !strings.HasPrefix(parts[0], ".") {
		return false
	}
	return true
}

// A Checker checks citations against a repository as it is now.
type Checker struct {
	Root     string   // the repository's root
	Commands []string // the verify profile's commands
	// LookPath finds a program (nil: exec.LookPath).
	LookPath func(string) (string, error)
	// Referenced says which of the names appear in the repository's files
	// (nil: git grep over tracked and untracked files, .orket aside, else
	// a walk of the tree).
	Referenced func(ctx context.Context, names []string) (map[string]bool, error)
	// Timeout bounds the search for variables (0: 5 s); past it,
	// variables count as referenced (nothing is demoted on a guess).
	Timeout time.Duration
}

// Check checks lines' citations: a path must exist (a symlink counts);
// a command must be in the profile, or its program on PATH or in the
// repository; a variable must appear in some file of the repository.
// Variables are searched for all at once.
func (c *Checker) Check(ctx context.Context, lines []Line) []Evidence {
	out := make([]Evidence, len(lines))
	var names []string
	seen := map[string]bool{}
	for i, l := range lines {
		out[i] = Evidence{Line: l, Cites: Cites(l.Text, l.Section)}
		for _, ct := range out[i].Cites {
			if ct.Kind == CitesEnvVar && !seen[ct.Value] {
				seen[ct.Value] = true
				names = append(names, ct.Value)
			}
		}
	}
	found := map[string]bool{}
	if len(names) > 0 {
		timeout := c.Timeout
		if timeout <= 0 {
			timeout = 5 * time.Second
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		ref := c.Referenced
		if ref == nil {
			ref = c.referenced
		}
		f, err := ref(cctx, names)
		cancel()
		if err != nil {
			for _, n := range names {
				found[n] = true
			}
		} else {
			found = f
		}
	}
	for i := range out {
		e := &out[i]
		for _, ct := range e.Cites {
			if why := c.missing(ct, found); why != "" {
				e.Missing = append(e.Missing, Missing{ct, why})
			}
		}
		e.Demoted = len(e.Missing) > 0
	}
	return out
}

// CheckProposal checks the line a proposal would add or write.
func (c *Checker) CheckProposal(ctx context.Context, p *Proposal) Evidence {
	cu := p.ConstraintUpdate
	text := cu.NewText
	if cu.Type == Removal {
		text = cu.OldText
	}
	return c.Check(ctx, []Line{{ID: p.ID, Section: cu.Section, Text: text}})[0]
}

func (c *Checker) missing(ct Citation, found map[string]bool) string {
	switch ct.Kind {
	case CitesPath:
		if _, err := os.Lstat(filepath.Join(c.Root, filepath.FromSlash(staticPrefix(ct.Value)))); errors.Is(err, fs.ErrNotExist) {
			return ct.Value + " no longer exists"
		}
	case CitesCommand:
		if c.inProfile(ct.Value) {
			return ""
		}
		prog := program(ct.Value)
		if prog == "" {
			return ""
		}
		if strings.Contains(prog, "/") {
			if !isRepoPath(prog) {
				return ""
			}
			if _, err := os.Lstat(filepath.Join(c.Root, filepath.FromSlash(strings.TrimPrefix(prog, "./")))); errors.Is(err, fs.ErrNotExist) {
				return prog + " no longer exists"
			}
			return ""
		}
		look := c.LookPath
		if look == nil {
			look = exec.LookPath
		}
		if _, err := look(prog); err != nil {
			return "`" + ct.Value + "` is not in the verify profile and " + prog + " is not on PATH"
		}
	case CitesEnvVar:
		if !found[ct.Value] {
			return ct.Value + " is not referenced anywhere in the repository"
		}
	}
	return ""
}

// inProfile reports whether cmd is one of the profile's commands, or the
// start of one ("go test" of "go test ./...").
func (c *Checker) inProfile(cmd string) bool {
	for _, p := range c.Commands {
		p = strings.Join(strings.Fields(p), " ")
		if p == cmd || strings.HasPrefix(p, cmd+" ") {
			return true
		}
	}
	return false
}

// program is a command line's program: its first word after variable
// assignments (X=1) and env/sudo/exec.
func program(cmd string) string {
	for _, w := range strings.Fields(cmd) {
		switch {
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "="), w == "env", w == "sudo", w == "exec", w == "command":
			continue
		}
		return strings.Trim(w, "'\"")
	}
	return ""
}

// referenced searches the repository for names: git grep (tracked and
// untracked files, not ignored, .orket aside), else a walk.
func (c *Checker) referenced(ctx context.Context, names []string) (map[string]bool, error) {
	found, err := gitGrep(ctx, c.Root, names)
	if err == nil {
		return found, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return walkGrep(ctx, c.Root, names)
}

func gitGrep(ctx context.Context, root string, names []string) (map[string]bool, error) {
	args := []string{"-C", root, "grep", "--untracked", "-I", "-F", "-w", "-o", "-h", "--no-color"}
	for _, n := range names {
		args = append(args, "-e", n)
	}
	args = append(args, "--", ".", ":(exclude).orket")
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	found := map[string]bool{}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		found[sc.Text()] = true
		if len(found) == len(names) {
			cmd.Process.Kill()
			break
		}
	}
	for sc.Scan() {
	}
	err = cmd.Wait()
	if len(found) == len(names) {
		return found, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0 {
		return found, nil // grep found no (more) match
	}
	if err != nil {
		return nil, errors.Join(err, errors.New(strings.TrimSpace(stderr.String())))
	}
	return found, nil
}

// walkGrep reads the tree's regular files (up to 1 MiB each; .git,
// .orket and node_modules aside) for the names as whole words.
func walkGrep(ctx context.Context, root string, names []string) (map[string]bool, error) {
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".orket", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 1<<20 {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, n := range names {
			if !found[n] && containsWord(b, n) {
				found[n] = true
			}
		}
		if len(found) == len(names) {
			return filepath.SkipAll
		}
		return nil
	})
	return found, err
}

func containsWord(b []byte, w string) bool {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(w))
		if j < 0 {
			return false
		}
		s, e := i+j, i+j+len(w)
		if (s == 0 || !isWordByte(b[s-1])) && (e == len(b) || !isWordByte(b[e])) {
			return true
		}
		i = s + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Annotate returns text with each demoted line marked for the agent that
// reads it: "- [demoted: <why>] <the line>". Other lines are unchanged.
func Annotate(text string, ev []Evidence) string {
	why := map[string]string{}
	for _, e := range ev {
		if e.Demoted {
			why[e.Line.Section+"\x00"+e.Line.Text] = e.Why()
		}
	}
	if len(why) == 0 {
		return text
	}
	lines := ParseDoc(text)
	raws := make([]string, len(lines))
	for i, l := range lines {
		raws[i] = l.Raw
		if w, ok := why[l.Section+"\x00"+l.Text]; ok && l.Item {
			raws[i] = leading(l.Raw) + itemLine("[demoted: "+w+"] "+l.Text, l.ID)
		}
	}
	return join(raws, text)
}

// Prepared is what a run is given: the guardrails' version, the path of
// the text to read (ORKET_GUARDRAILS) and the evidence of its lines.
type Prepared struct {
	Agent    string
	Version  *Version
	Path     string // v<N>.md, or current.md when lines are demoted
	Text     string
	Evidence []Evidence
	Demoted  int
}

// CurrentView is the file a run reads when some lines are demoted.
const CurrentView = "current.md"

// Prepare checks the agent's current guardrails just before a run: when
// a line is demoted it writes the annotated text to
// .orket/guardrails/<agent>/current.md (atomically) and returns that
// path, else the version's own file. It returns nil when the agent has
// no guardrails.
func (s *Store) Prepare(ctx context.Context, agent string, ck *Checker) (*Prepared, error) {
	cur, err := s.Current(agent)
	if err != nil || cur == nil {
		return nil, err
	}
	p := &Prepared{Agent: agent, Version: cur, Path: s.Path(agent, cur.Version), Text: cur.Text}
	if ck != nil {
		p.Evidence = ck.Check(ctx, cur.AllLines())
	}
	for _, e := range p.Evidence {
		if e.Demoted {
			p.Demoted++
		}
	}
	if p.Demoted == 0 {
		return p, nil
	}
	p.Text = Annotate(cur.Text, p.Evidence)
	root, err := s.root()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	rel := s.agentRel(agent) + "/" + CurrentView
	if err := regularOrMissing(root, rel); err != nil {
		return nil, err
	}
	if err := root.WriteFile(rel, []byte(p.Text), 0o644, fsroot.Options{}); err != nil {
		return nil, err
	}
	p.Path = filepath.Join(s.OrketDir, filepath.FromSlash(rel))
	return p, nil
}
