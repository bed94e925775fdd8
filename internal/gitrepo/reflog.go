package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
)

// A RefLog is the reflog entry a ref's move writes, as git writes one:
// to logs/<ref> when git would create that log (core.logAllRefUpdates:
// unset in a repository that is not bare, or true, logs branches,
// remote-tracking refs, notes and HEAD; always logs every ref) or when it
// exists already, and to logs/HEAD as well when HEAD points at the ref.
type RefLog struct {
	// Msg says why the ref moved ("orket reject: <run-id>").
	Msg string
	// GitDir is the git directory of the work tree that moves the ref
	// (a linked worktree's own): its HEAD is the one whose log also gets
	// the entry. Empty: the common directory's HEAD.
	GitDir string
}

// logMode is core.logAllRefUpdates as git reads it.
type logMode int

const (
	logNone   logMode = iota // false, or unset in a bare repository
	logNormal                // branches, remote-tracking refs, notes, HEAD
	logAlways                // every ref
)

// autocreates reports whether git creates the log of ref name under m.
func (m logMode) autocreates(name string) bool {
	switch m {
	case logAlways:
		return true
	case logNormal:
		return name == "HEAD" || strings.HasPrefix(name, "refs/heads/") || strings.HasPrefix(name, "refs/remotes/") ||
			strings.HasPrefix(name, "refs/notes/")
	}
	return false
}

// gitConfig is the configuration git reads for the repository whose
// common directory is commonDir: system, global (XDG, then ~/.gitconfig)
// and the repository's own, later files overriding earlier ones.
type gitConfig []*gitconfig.Config

func readGitConfig(commonDir string) gitConfig {
	var files []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, orDefault(os.Getenv("GIT_CONFIG_SYSTEM"), "/etc/gitconfig"))
	}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		home, _ := os.UserHomeDir()
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	files = append(files, filepath.Join(commonDir, "config"))
	var out gitConfig
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if c, err := gitconfig.ReadConfig(bytes.NewReader(b)); err == nil && c.Raw != nil {
			out = append(out, c)
		}
	}
	return out
}

// get returns section.key's value from the last file that sets it.
func (g gitConfig) get(section, key string) (string, bool) {
	for i := len(g) - 1; i >= 0; i-- {
		s := g[i].Raw.Section(section)
		if s.HasOption(key) {
			return s.Option(key), true
		}
	}
	return "", false
}

func (g gitConfig) mode() logMode {
	v, ok := g.get("core", "logallrefupdates")
	switch v = strings.ToLower(strings.TrimSpace(v)); {
	case !ok:
		if b, _ := g.get("core", "bare"); isTrue(b) {
			return logNone
		}
		return logNormal
	case v == "always":
		return logAlways
	case isTrue(v) || v == "":
		return logNormal
	}
	return logNone
}

func isTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// committer is git's committer identity with its date, as a reflog line
// carries it: GIT_COMMITTER_NAME and _EMAIL, else committer.name and
// .email, user.name and .email, EMAIL, the login and the host;
// GIT_COMMITTER_DATE, else now.
func (g gitConfig) committer() string {
	name := os.Getenv("GIT_COMMITTER_NAME")
	if name == "" {
		name, _ = g.get("committer", "name")
	}
	if name == "" {
		name, _ = g.get("user", "name")
	}
	email := os.Getenv("GIT_COMMITTER_EMAIL")
	if email == "" {
		email, _ = g.get("committer", "email")
	}
	if email == "" {
		email, _ = g.get("user", "email")
	}
	if email == "" {
		email = os.Getenv("EMAIL")
	}
	if name == "" || email == "" {
		login, full := "unknown", ""
		if u, err := user.Current(); err == nil {
			login, full = u.Username, strings.SplitN(u.Name, ",", 2)[0]
		}
		if name == "" {
			name = orDefault(full, login)
		}
		if email == "" {
			host, _ := os.Hostname()
			email = login + "@" + orDefault(host, "localhost")
		}
	}
	when := time.Now()
	if d, ok := parseGitDate(os.Getenv("GIT_COMMITTER_DATE")); ok {
		when = d
	}
	return fmt.Sprintf("%s <%s> %d %s", identPart(name), identPart(email), when.Unix(), when.Format("-0700"))
}

// identPart is a name or an e-mail address as git writes it in an
// identity: without angle brackets and newlines, trimmed.
func identPart(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '<' || r == '>' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	return strings.Trim(s, " .,:;\"'\\")
}

// parseGitDate reads the forms of GIT_COMMITTER_DATE that git's own
// tools write: its internal "[@]SECONDS +ZZZZ", ISO 8601 and RFC 2822.
func parseGitDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	if secs, tz, ok := strings.Cut(strings.TrimPrefix(s, "@"), " "); ok {
		n, err := strconv.ParseInt(secs, 10, 64)
		z, zerr := time.Parse("-0700", tz)
		if err == nil && zerr == nil {
			return time.Unix(n, 0).In(z.Location()), true
		}
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05", time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 -0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// logRefUpdate appends the entry of ref name's move from old to next to
// its log, and to HEAD's when HEAD points at it, where git would write
// them (see RefLog).
func logRefUpdate(commonDir, name string, old, next plumbing.Hash, l RefLog) error {
	cfg := readGitConfig(commonDir)
	mode := cfg.mode()
	line := ""
	entry := func() string {
		if line == "" {
			msg := strings.Join(strings.Fields(l.Msg), " ")
			line = old.String() + " " + next.String() + " " + cfg.committer() + "\t" + msg + "\n"
		}
		return line
	}
	if err := appendLog(commonDir, "logs/"+name, mode.autocreates(name), entry); err != nil {
		return err
	}
	gitDir := orDefault(l.GitDir, commonDir)
	if head, err := os.ReadFile(filepath.Join(gitDir, "HEAD")); err == nil && strings.TrimSpace(string(head)) == "ref: "+name {
		return appendLog(gitDir, "logs/HEAD", mode.autocreates("HEAD"), entry)
	}
	return nil
}

// appendLog appends entry() to the log file rel beneath dir, creating it
// (and its directories) only when create is set; never through a
// symlink.
func appendLog(dir, rel string, create bool, entry func() string) error {
	root, err := fsroot.Open(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	parent, base := path.Split(rel)
	parent = strings.TrimSuffix(parent, "/")
	if create {
		if err := root.MkdirAll(parent, 0o755); err != nil {
			return err
		}
	}
	d, err := root.OpenDir(parent)
	if errors.Is(err, os.ErrNotExist) && !create {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	flags := unix.O_WRONLY | unix.O_APPEND | unix.O_NOFOLLOW | unix.O_CLOEXEC
	if create {
		flags |= unix.O_CREAT
	}
	fd, err := unix.Openat(int(d.Fd()), base, flags, 0o666)
	if errors.Is(err, unix.ENOENT) && !create {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: filepath.Join(dir, rel), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, rel))
	_, err = f.WriteString(entry())
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// deleteLog removes ref name's log, as git does when it deletes a ref.
func deleteLog(commonDir, name string) error {
	err := os.Remove(filepath.Join(commonDir, "logs", filepath.FromSlash(name)))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
