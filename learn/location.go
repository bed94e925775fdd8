package learn

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/lessons"
)

// locate turns where a cause says a failure is (files as the tool printed
// them) into a lesson's location: repository-relative files that exist
// in the tree or that the failing run touched, in the cause's order. A
// file is looked for as printed (absolute under the root, or relative to
// the root), relative to the step's directory, and, for Go, in the
// directory of the failing package (go test prints a test's file by its
// base name).
func locate(root, stepDir string, c *classify.Cause, touched []string) *lessons.Location {
	if c == nil || c.Test == "" && len(c.Files) == 0 {
		return nil
	}
	loc := &lessons.Location{Test: c.Test}
	pkgDir := goPackageDir(root, stepDir, c.Package)
	seen := map[string]bool{}
	for _, f := range c.Files {
		if p := resolveFile(root, stepDir, pkgDir, f, touched); p != "" && !seen[p] {
			seen[p] = true
			loc.Files = append(loc.Files, p)
		}
	}
	return loc
}

// resolveFile is resolve's answer for one file, "" when it is none of the
// repository's.
func resolveFile(root, stepDir, pkgDir, f string, touched []string) string {
	f = filepath.ToSlash(filepath.Clean(f))
	var candidates []string
	if path.IsAbs(f) {
		rel, err := filepath.Rel(root, filepath.FromSlash(f))
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return ""
		}
		candidates = append(candidates, filepath.ToSlash(rel))
	} else {
		if stepDir != "" {
			candidates = append(candidates, path.Join(stepDir, f))
		}
		candidates = append(candidates, f)
		if pkgDir != "" && !strings.Contains(f, "/") {
			candidates = append(candidates, path.Join(pkgDir, f))
		}
	}
	for _, p := range candidates {
		if p == "." || strings.HasPrefix(p, "../") {
			continue
		}
		if contains(touched, p) {
			return p
		}
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// goPackageDir is the repository-relative directory of a Go package
// (an import path), read against the module of the step's directory (or
// the root): "" when it is not the module's.
func goPackageDir(root, stepDir, pkg string) string {
	if pkg == "" {
		return ""
	}
	modDir := stepDir
	module := goModule(filepath.Join(root, filepath.FromSlash(modDir), "go.mod"))
	if module == "" {
		modDir, module = "", goModule(filepath.Join(root, "go.mod"))
	}
	switch {
	case module == "":
		return ""
	case pkg == module:
		return path.Clean(path.Join(".", modDir))
	case strings.HasPrefix(pkg, module+"/"):
		return path.Join(modDir, strings.TrimPrefix(pkg, module+"/"))
	}
	return ""
}

// goModule is the module path a go.mod declares, "" if none.
func goModule(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
