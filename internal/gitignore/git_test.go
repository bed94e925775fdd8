package gitignore

// The oracle: throwaway repositories judged by the real git binary, and
// the reference walk that judges the same tree with this package and the
// scanner's rule.

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A world is a working tree with its ignore files.
type world struct {
	// Entries of the tree, slash paths: a file, a directory when the
	// path ends in "/", a symbolic link when it ends in "@". Parent
	// directories are made as needed.
	entries []string
	ignore  map[string]string // directory ("" for the root) → its .gitignore
	exclude string            // .git/info/exclude
	global  string            // core.excludesFile
	// globalXDG puts global at $XDG_CONFIG_HOME/git/ignore (git's
	// default) instead of naming it with -c core.excludesFile.
	globalXDG bool
}

// verdict is what a judge says of a tree.
type verdict struct {
	Ignored   []string // every ignored path, inside ignored directories too
	Untracked []string // files and links not ignored, what orket snapshots
}

// built is a world on disk.
type built struct {
	root     string   // the working tree
	home     string   // HOME for git
	excludes string   // the core.excludesFile path, or ""
	paths    []string // every path of the tree, sorted, without .git
}

// build writes w into a fresh temporary directory. The .git directory is
// made by hand (HEAD, objects, refs: what git needs to find a repository)
// because git init costs more than the rest of a case.
func build(t testing.TB, w world) *built {
	t.Helper()
	dir := t.TempDir()
	b := &built{root: filepath.Join(dir, "repo"), home: filepath.Join(dir, "home")}
	for _, d := range []string{".git/objects", ".git/refs", ".git/info"} {
		mkdirAll(t, filepath.Join(b.root, d))
	}
	writeFile(t, filepath.Join(b.root, ".git/HEAD"), "ref: refs/heads/main\n")
	mkdirAll(t, filepath.Join(b.home, ".config/git"))
	for _, e := range w.entries {
		abs := filepath.Join(b.root, filepath.FromSlash(strings.TrimRight(e, "/@")))
		switch {
		case strings.HasSuffix(e, "/"):
			mkdirAll(t, abs)
		case strings.HasSuffix(e, "@"):
			mkdirAll(t, filepath.Dir(abs))
			if err := os.Symlink("..", abs); err != nil { // a link to a directory
				t.Fatal(err)
			}
		default:
			writeFile(t, abs, "x\n")
		}
	}
	b.setIgnores(t, w)
	return b
}

// setIgnores writes the ignore files of w over those of the tree, which
// must already hold a .gitignore wherever a previous world had one.
func (b *built) setIgnores(t testing.TB, w world) {
	t.Helper()
	writeFile(t, filepath.Join(b.root, ".git/info/exclude"), w.exclude)
	xdg := ""
	b.excludes = ""
	if w.global != "" && w.globalXDG {
		xdg = w.global
	} else if w.global != "" {
		b.excludes = filepath.Join(b.home, "excludes")
		writeFile(t, b.excludes, w.global)
	}
	writeFile(t, filepath.Join(b.home, ".config/git/ignore"), xdg)
	for d, content := range w.ignore {
		writeFile(t, filepath.Join(b.root, filepath.FromSlash(d), ".gitignore"), content)
	}
	b.paths = b.paths[:0]
	err := filepath.WalkDir(b.root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(b.root, p)
		switch rel = filepath.ToSlash(rel); {
		case rel == ".git":
			return filepath.SkipDir
		case rel != ".":
			b.paths = append(b.paths, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(b.paths)
}

func mkdirAll(t testing.TB, p string) {
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, p, content string) {
	mkdirAll(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitEnv is the environment for git: the machine's config and any GIT_
// variable of the caller shut out.
func (b *built) gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") &&
			!strings.HasPrefix(kv, "XDG_CONFIG_HOME=") && !strings.HasPrefix(kv, "LC_ALL=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+b.home, "XDG_CONFIG_HOME="+filepath.Join(b.home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0")
}

// git runs git in the tree; exit status 1 is not an error if exit1 is
// set (check-ignore's "nothing is ignored").
func (b *built) git(t testing.TB, stdin []byte, exit1 bool, args ...string) []byte {
	t.Helper()
	if b.excludes != "" {
		args = append([]string{"-c", "core.excludesFile=" + b.excludes}, args...)
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = b.root
	cmd.Env = b.gitEnv()
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(exit1 && errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// gitVerdict asks git: check-ignore for each path (it reports a path
// inside an ignored directory as ignored), and ls-files for the untracked
// files it would show, walking the tree its own way.
func gitVerdict(t testing.TB, b *built) verdict {
	t.Helper()
	var in bytes.Buffer
	for _, p := range b.paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	return verdict{
		Ignored:   splitZ(b.git(t, in.Bytes(), true, "check-ignore", "--no-index", "-z", "--stdin")),
		Untracked: splitZ(b.git(t, nil, false, "ls-files", "-z", "--others", "--exclude-standard")),
	}
}

func splitZ(out []byte) []string {
	s := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(s) == 1 && s[0] == "" {
		return nil
	}
	slices.Sort(s)
	return s
}

// ourVerdict walks the tree as orket's scanner does: the patterns of
// core.excludesFile and info/exclude, then each directory's .gitignore
// (read only if it is a regular file) appended to its parent's list; a
// directory that is ignored is not entered and everything in it counts
// as ignored; a symbolic link is not a directory.
func ourVerdict(t testing.TB, b *built) verdict {
	t.Helper()
	global := b.excludes // core.excludesFile, else its XDG default
	if global == "" {
		global = filepath.Join(b.home, ".config/git/ignore")
	}
	var ps []Pattern
	for _, f := range []string{global, filepath.Join(b.root, ".git/info/exclude")} {
		content, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		ps = append(ps, ParsePatterns(content, "")...)
	}
	var v verdict
	var walk func(rel string, ps []Pattern, ignored bool)
	walk = func(rel string, ps []Pattern, ignored bool) {
		abs := filepath.Join(b.root, filepath.FromSlash(rel))
		entries, err := os.ReadDir(abs)
		if err != nil {
			t.Fatal(err)
		}
		if !ignored {
			if fi, err := os.Lstat(filepath.Join(abs, ".gitignore")); err == nil && fi.Mode().IsRegular() {
				content, err := os.ReadFile(filepath.Join(abs, ".gitignore"))
				if err != nil {
					t.Fatal(err)
				}
				ps = append(ps[:len(ps):len(ps)], ParsePatterns(content, rel)...)
			}
		}
		for _, e := range entries {
			p := path.Join(rel, e.Name())
			if p == ".git" {
				continue
			}
			ign := ignored || Ignored(ps, p, e.IsDir())
			if ign {
				v.Ignored = append(v.Ignored, p)
			}
			if e.IsDir() {
				walk(p, ps, ign)
			} else if !ign {
				v.Untracked = append(v.Untracked, p)
			}
		}
	}
	walk("", ps, false)
	slices.Sort(v.Ignored)
	slices.Sort(v.Untracked)
	return v
}
