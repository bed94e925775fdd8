package guardrails

// Evidence is checked just before use: a guardrail line (or a proposal)
// that cites a path, a command or an environment variable is demoted,
// saying why, when what it cites is gone from the repository. A demoted
// line stays in the text (a person decides; ProposeRemovals proposes its
// removal); the agent is shown it marked as demoted.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/orket/orket/internal/gitdir"
	"github.com/orket/orket/internal/gitignore"
	"github.com/orket/orket/internal/gitrepo"
	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/store"
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
	backquoted = lazyre.New("`([^`\n]+)`")
	envVarWord = lazyre.New(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)
	orketCode  = lazyre.New(`^E_[A-Z_]+$`)
	pathToken  = lazyre.New(`(?:^|[\s("'\[])((?:\./)?[\w@+-][\w.@+-]*(?:/[\w.@+-]+)+)`)
	fileExt    = lazyre.New(`\.[a-z][a-z0-9]{0,9}$`)
	progWord   = lazyre.New(`^(?:\./[\w./+-]+|[a-z0-9][a-z0-9._+-]*)$`)
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
	rest := backquoted().ReplaceAllStringFunc(text, func(m string) string {
		span := strings.TrimSpace(m[1 : len(m)-1])
		words := strings.Fields(span)
		switch {
		case len(words) == 0:
		case envVarWord().FindString(span) == span && !orketCode().MatchString(span):
			add(CitesEnvVar, span)
		case len(words) == 1 && isRepoPath(span) && (strings.Contains(span, "/") && !strings.Contains(span, "://") ||
			knownExt[strings.TrimPrefix(strings.ToLower(filepath.Ext(span)), ".")]):
			add(CitesPath, strings.TrimPrefix(span, "./"))
		case len(words) > 1 && progWord().MatchString(words[0]) && !notPrograms[words[0]] && !strings.ContainsAny(span, "(){};<>"):
			add(CitesCommand, strings.Join(words, " "))
		}
		return " "
	})
	for _, v := range envVarWord().FindAllString(rest, -1) {
		if !orketCode().MatchString(v) {
			add(CitesEnvVar, v)
		}
	}
	for _, m := range pathToken().FindAllStringSubmatchIndex(rest, -1) {
		p := strings.TrimRight(rest[m[2]:m[3]], ".,;:")
		if m[2] >= 3 && rest[m[2]-3:m[2]] == "://" || !isRepoPath(p) {
			continue
		}
		if fileExt().MatchString(p) || strings.HasPrefix(p, "./") {
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
	// (nil: a search in Go, git not run, of the files git grep --untracked
	// reads: tracked files, ignored or not, and untracked ones that are not
	// ignored, binary ones and .orket aside; outside a git work tree, a
	// walk of the whole tree; see treeSearch).
	Referenced func(ctx context.Context, names []string) (map[string]bool, error)
	// Timeout bounds the search for variables (0: 5 s); past it,
	// variables count as referenced (nothing is demoted on a guess).
	Timeout time.Duration

	// Remember keeps the answers of the searches (a search reads the
	// whole tree): checking the same lines twice searches once, and sees
	// the repository as it was then (a run checks before and after its
	// lock, before its edit).
	Remember bool

	mu   sync.Mutex
	memo map[string]map[string]bool
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
	key := strings.Join(names, "\x00")
	c.mu.Lock()
	known, ok := c.memo[key]
	c.mu.Unlock()
	if ok && c.Remember {
		found, names = known, nil
	}
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
			c.mu.Lock()
			if c.memo == nil {
				c.memo = map[string]map[string]bool{}
			}
			c.memo[key] = f
			c.mu.Unlock()
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

// referenced says which of names some file of the repository mentions
// as a whole word: the answer of `git grep --untracked -I -F -w` run at
// the root (but for ignored tracked files, which it reads), found
// without running git (see treeSearch).
func (c *Checker) referenced(ctx context.Context, names []string) (map[string]bool, error) {
	s, err := newTreeSearch(c.Root)
	if err != nil {
		return nil, err
	}
	return s.search(ctx, names)
}

// A treeSearch reads the files `git grep --untracked -I -F -w -- .
// ':(exclude).orket'` reads at a root, in the git work tree that holds
// it (the nearest ancestor with a .git, as git finds it): below the
// root, the tracked files (the index's regular files, as regular files
// in the tree) and the untracked files that are not ignored. Tracked
// files are never ignored: one an ignore rule matches is read too, which
// git grep --untracked does not do (it lists the tree as for untracked
// files and passes over ignored ones, tracked or not; plain git grep
// reads them). Ignore rules are git's: core.excludesFile (or its XDG
// default), $GIT_DIR/info/exclude, then each directory's .gitignore (a
// regular file), read as the walk descends; an ignored directory is not
// entered unless it holds tracked files, and then only those count.
// Symbolic links, submodules and nested repositories are not read; nor
// is .git, anywhere, nor the root's .orket. A file with a NUL byte in
// its first 8000 bytes is binary and skipped, as git's -I does
// (.gitattributes are not read). Files of any size are searched,
// streamed (the walk this replaced skipped those over 1 MiB). Outside a
// work tree every regular file below the root is read (.git,
// node_modules and the root's .orket aside).
type treeSearch struct {
	top    string // the work tree's top, or the root outside one
	prefix string // the root, as a slash path below top ("": top)
	git    bool
	// regular says, for each index path, whether git grep reads it (a
	// regular file in the index; a symbolic link or a submodule is not).
	regular map[string]bool
	// dirs are the directories holding index paths.
	dirs     map[string]bool
	excludes []gitignore.Pattern
}

func newTreeSearch(root string) (*treeSearch, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	for d := abs; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Lstat(dotgit); err == nil {
			rel, err := filepath.Rel(d, abs)
			if err != nil {
				return nil, err
			}
			s := &treeSearch{top: d, prefix: filepath.ToSlash(rel), git: true}
			if s.prefix == "." {
				s.prefix = ""
			}
			return s, s.readGit(dotgit, fi)
		}
		if filepath.Dir(d) == d {
			return &treeSearch{top: abs}, nil
		}
	}
}

// readGit reads the index and the repository-wide ignore rules of the
// work tree whose .git is dotgit (a directory, or a file naming the git
// directory of a linked worktree or a submodule).
func (s *treeSearch) readGit(dotgit string, fi fs.FileInfo) error {
	gitDir, common, err := gitdir.Dirs(s.top, dotgit, fi.IsDir())
	if err != nil {
		return fmt.Errorf("%s: %w", dotgit, err)
	}
	s.regular, s.dirs = map[string]bool{}, map[string]bool{}
	entries, err := gitrepo.ReadIndex(gitDir) // none: nothing added yet
	if err != nil {
		return fmt.Errorf("read the index: %w", err)
	}
	for _, e := range entries {
		m := e.Mode
		s.regular[e.Name] = s.regular[e.Name] || m == filemode.Regular || m == filemode.Executable || m == filemode.Deprecated
		for d := path.Dir(e.Name); d != "." && !s.dirs[d]; d = path.Dir(d) {
			s.dirs[d] = true
		}
	}
	// An ignore file that cannot be read has no patterns: git only warns
	// of it.
	// A repository go-git cannot open has no configuration to read:
	// core.excludesFile takes its default.
	r, _ := git.PlainOpenWithOptions(s.top, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	s.excludes, _ = gitrepo.Excludes(r, s.top, common)
	return nil
}

// inRoot reports whether rel (a slash path below top) is the root or
// below it; onPath whether it is, or is a directory on the way to it.
func (s *treeSearch) inRoot(rel string) bool {
	return s.prefix == "" || rel == s.prefix || strings.HasPrefix(rel, s.prefix+"/")
}

func (s *treeSearch) onPath(rel string) bool {
	return s.inRoot(rel) || strings.HasPrefix(s.prefix, rel+"/")
}

// search reads the files for names, several at once, and stops once all
// are found.
func (s *treeSearch) search(ctx context.Context, names []string) (map[string]bool, error) {
	g := &grepper{found: map[string]bool{}}
	for _, n := range names {
		if n != "" && !slices.Contains(g.names, n) {
			g.names = append(g.names, n)
			g.keep = max(g.keep, len(n))
		}
	}
	if len(g.names) == 0 {
		return g.found, nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	files := make(chan string, 256)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 8) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, g.keep+max(64<<10, 4*g.keep))
			for p := range files {
				if wctx.Err() == nil && g.file(wctx, p, buf) {
					cancel() // all found
				}
			}
		}()
	}
	err := s.walk(wctx, "", s.excludes, false, files)
	close(files)
	wg.Wait()
	if g.done() {
		return g.found, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return g.found, err
}

// walk sends the files to read in the directory dir (a slash path below
// top, "" for top) and below it to files. ps are the ignore patterns that
// apply in dir, ignored says dir is ignored (only tracked files count).
// A directory or file that cannot be read is passed over, as git grep
// does.
func (s *treeSearch) walk(ctx context.Context, dir string, ps []gitignore.Pattern, ignored bool, files chan<- string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ents, err := os.ReadDir(filepath.Join(s.top, filepath.FromSlash(dir)))
	if err != nil {
		return nil
	}
	if s.git && dir != "" && !s.dirs[dir] && slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return e.Name() == ".git" }) {
		return nil // a nested repository: git grep sees a directory
	}
	if s.git && !ignored {
		for _, e := range ents {
			if e.Name() == ".gitignore" && e.Type().IsRegular() {
				own, _ := gitrepo.ReadIgnoreFile(filepath.Join(s.top, filepath.FromSlash(dir), ".gitignore"), dir)
				ps = append(ps[:len(ps):len(ps)], own...)
			}
		}
	}
	for _, e := range ents {
		name := e.Name()
		rel := path.Join(dir, name)
		if name == ".git" || rel == path.Join(s.prefix, store.Dir) || !s.onPath(rel) {
			continue
		}
		if e.IsDir() {
			childIgnored := ignored
			if s.git {
				if _, ok := s.regular[rel]; ok {
					continue // a submodule: git grep does not enter it
				}
				childIgnored = ignored || gitignore.Ignored(ps, rel, true)
				if childIgnored && !s.dirs[rel] {
					continue
				}
			} else if name == "node_modules" {
				continue
			}
			if err := s.walk(ctx, rel, ps, childIgnored, files); err != nil {
				return err
			}
			continue
		}
		if !e.Type().IsRegular() || !s.inRoot(rel) {
			continue
		}
		if s.git {
			if reg, tracked := s.regular[rel]; tracked && !reg || !tracked && (ignored || gitignore.Ignored(ps, rel, false)) {
				continue
			}
		}
		select {
		case files <- filepath.Join(s.top, filepath.FromSlash(rel)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// A grepper looks for names in files, for several goroutines at once.
type grepper struct {
	names []string
	keep  int // the longest name's length: what a window keeps of the last
	mu    sync.Mutex
	found map[string]bool
}

func (g *grepper) done() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.found) == len(g.names)
}

// file reads the file at p, streamed through buf, for the names not yet
// found, and reports whether all are found now. A binary file (a NUL
// byte in its first 8000 bytes) is skipped.
func (g *grepper) file(ctx context.Context, p string, buf []byte) bool {
	g.mu.Lock()
	var want []string
	for _, n := range g.names {
		if !g.found[n] {
			want = append(want, n)
		}
	}
	g.mu.Unlock()
	if len(want) == 0 {
		return true
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	chunk := len(buf) - g.keep
	n, err := io.ReadFull(f, buf[:chunk])
	if bytes.IndexByte(buf[:min(n, 8000)], 0) >= 0 {
		return false
	}
	var hits []string
	window, before := buf[:n], -1
	for {
		eof := err != nil
		for i := 0; i < len(want); i++ {
			if hasWord(window, want[i], before, !eof) {
				hits = append(hits, want[i])
				want = slices.Delete(want, i, i+1)
				i--
			}
		}
		if eof || len(want) == 0 || ctx.Err() != nil {
			break
		}
		// Keep the window's end: a name cut there is judged in the next.
		k := min(g.keep, len(window))
		if k < len(window) {
			before = int(window[len(window)-k-1])
		}
		copy(buf, window[len(window)-k:])
		n, err = io.ReadFull(f, buf[k:k+chunk])
		window = buf[:k+n]
	}
	if len(hits) == 0 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, h := range hits {
		g.found[h] = true
	}
	return len(g.found) == len(g.names)
}

// hasWord reports whether b holds w as a whole word: not next to a
// letter, a digit or '_' (git grep -w). b is a window of a file: before
// is the byte before it (-1: the file's start); with cut, a match at its
// end is passed over (the next window, which starts before the match,
// judges it).
func hasWord(b []byte, w string, before int, cut bool) bool {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(w))
		if j < 0 {
			return false
		}
		s, e := i+j, i+j+len(w)
		left := s == 0 && (before < 0 || !isWordByte(byte(before))) || s > 0 && !isWordByte(b[s-1])
		right := e == len(b) && !cut || e < len(b) && !isWordByte(b[e])
		if left && right {
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
