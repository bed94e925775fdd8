package gitrepo

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	git "github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"

	"github.com/orket/orket/internal/gitignore"
)

// MaxIgnoreFile bounds what is read of one ignore file.
const MaxIgnoreFile = 16 << 20

// ExcludesFile is the global ignore file of the repository r, whose work
// tree's top is top: core.excludesFile from its local, global and system
// configuration, or git's default for it (see gitignore.ExcludesFile);
// "" when there is none to read. A nil r reads no configuration.
func ExcludesFile(r *git.Repository, top string) string {
	configured := ""
	if r != nil {
		if cfg, err := r.ConfigScoped(gitconfig.SystemScope); err == nil && cfg.Raw != nil {
			configured = cfg.Raw.Section("core").Option("excludesfile")
		}
	}
	return gitignore.ExcludesFile(configured, top)
}

// Excludes returns the repository-wide ignore patterns, lowest
// precedence first: core.excludesFile's (see ExcludesFile), then those of
// info/exclude in the common directory commonDir. With an error (a file
// that exists but cannot be read) it returns the patterns of the files
// it could read.
func Excludes(r *git.Repository, top, commonDir string) ([]gitignore.Pattern, error) {
	global, gerr := ReadIgnoreFile(ExcludesFile(r, top), "")
	info, ierr := ReadIgnoreFile(filepath.Join(commonDir, "info", "exclude"), "")
	return append(global, info...), errors.Join(gerr, ierr)
}

// ReadIgnoreFile reads the patterns of the ignore file at file; base is
// the slash path of its directory below the work tree's top ("" for the
// top and for files outside the tree). A missing file, or "", has none.
func ReadIgnoreFile(file, base string) ([]gitignore.Pattern, error) {
	if file == "" {
		return nil, nil
	}
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadIgnore(f, base)
}

// ReadIgnore reads an ignore file's patterns from rd (at most
// MaxIgnoreFile bytes); base is as for ReadIgnoreFile.
func ReadIgnore(rd io.Reader, base string) ([]gitignore.Pattern, error) {
	b, err := io.ReadAll(io.LimitReader(rd, MaxIgnoreFile))
	if err != nil {
		return nil, err
	}
	return gitignore.ParsePatterns(b, base), nil
}
