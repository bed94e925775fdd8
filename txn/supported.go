package txn

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/config"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// CheckSupported refuses repositories whose settings orket cannot honour
// exactly: line-ending or content filters would make the bytes in the
// working tree differ from the blobs orket restores.
func (r *Repo) CheckSupported() error {
	// Local settings over global over system, as git reads them.
	cfg, err := r.Git.ConfigScoped(gitconfig.SystemScope)
	if err != nil {
		return &UnsupportedError{Path: ".git/config", Reason: "cannot read: " + err.Error()}
	}
	raw := cfg.Raw
	if err := checkConfig(raw); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(r.GitDir, "sharedindex")); err == nil {
		return &UnsupportedError{Path: ".git/index", Reason: "split index (core.splitIndex) is not supported; run git update-index --no-split-index"}
	}
	return checkAttributes(filepath.Join(r.CommonDir, "info", "attributes"), ".git/info/attributes")
}

func checkConfig(raw *format.Config) error {
	core := raw.Section("core")
	opt := func(name string) string { return strings.ToLower(core.Option(name)) }
	switch {
	case opt("autocrlf") == "true" || opt("autocrlf") == "input":
		return &UnsupportedError{Path: ".git/config", Reason: "core.autocrlf=" + opt("autocrlf") + " rewrites line endings; orket needs core.autocrlf=false"}
	case opt("filemode") == "false":
		return &UnsupportedError{Path: ".git/config", Reason: "core.filemode=false hides mode changes; orket needs core.filemode=true"}
	case opt("symlinks") == "false":
		return &UnsupportedError{Path: ".git/config", Reason: "core.symlinks=false checks symlinks out as files; orket needs core.symlinks=true"}
	case opt("ignorecase") == "true":
		return &UnsupportedError{Path: ".git/config", Reason: "core.ignorecase=true is not supported"}
	case opt("eol") == "crlf":
		return &UnsupportedError{Path: ".git/config", Reason: "core.eol=crlf rewrites line endings"}
	case strings.ToLower(raw.Section("extensions").Option("objectformat")) == "sha256":
		return &UnsupportedError{Path: ".git/config", Reason: "SHA-256 repositories are not supported"}
	case opt("sparsecheckout") == "true":
		return &UnsupportedError{Path: ".git/config", Reason: "sparse checkout is not supported"}
	}
	return nil
}

// checkAttributes refuses attributes that transform content between the
// index and the working tree.
func checkAttributes(file, name string) error {
	f, err := os.Open(file)
	if err != nil {
		return nil // no attributes file: nothing to refuse
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		for _, field := range strings.Fields(sc.Text()) {
			if strings.HasPrefix(field, "#") {
				break
			}
			switch {
			case strings.HasPrefix(field, "filter="), field == "ident", strings.HasPrefix(field, "working-tree-encoding="),
				field == "eol=crlf":
				return &UnsupportedError{Path: name, Reason: "attribute " + field + " (line " + itoa(line) + ") transforms file content; orket cannot restore such files exactly"}
			}
		}
	}
	return nil
}

func itoa(i int) string {
	return strconv.Itoa(i)
}
