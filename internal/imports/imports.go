// Package imports reads which of a repository's files a source file
// imports, so that a test is known to cover what it imports: a flaky test
// in test/infra.test.js is about src/notify/mailer.js when it imports it,
// though neither its directory nor its name says so.
//
// It reads JavaScript and TypeScript (relative import, export ... from,
// require and import()) and Python (import and from ... import, relative
// ones included). Go needs none of it (a package's tests live beside it);
// other languages import nothing here. It is a reading of the text, not a
// parser: an import inside a string or a comment may be taken for one,
// which costs an advisory at most.
package imports

import (
	"path"
	"slices"
	"strings"

	"github.com/orket/orket/internal/lazyre"
)

// Of returns the repository files file (repository-relative,
// slash-separated) imports, as src says, in the order first imported;
// exists reports whether a repository path is a file.
func Of(file string, src []byte, exists func(string) bool) []string {
	var cands [][]string
	switch path.Ext(file) {
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx":
		cands = scriptImports(file, string(src))
	case ".py":
		cands = pythonImports(file, string(src))
	default:
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, alts := range cands {
		for _, p := range alts {
			if p == file || seen[p] {
				break
			}
			if exists(p) {
				seen[p] = true
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// scriptSpec matches the module a JavaScript or TypeScript statement
// imports.
var scriptSpec = lazyre.New(`(?m)(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]([^'"\n]+)['"]`)

// scriptExts are what a relative specifier without its extension may
// name, in the order a bundler tries them.
var scriptExts = []string{"", ".js", ".ts", ".tsx", ".jsx", ".mjs", ".cjs", "/index.js", "/index.ts"}

// scriptImports are the candidate paths of each relative import of a
// script, most likely first.
func scriptImports(file, src string) [][]string {
	var out [][]string
	for _, m := range scriptSpec().FindAllStringSubmatch(src, -1) {
		spec := m[1]
		if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") {
			continue // a package's, not the repository's
		}
		p, ok := inRepo(path.Join(path.Dir(file), spec))
		if !ok {
			continue
		}
		var alts []string
		for _, ext := range scriptExts {
			alts = append(alts, p+ext)
		}
		// TypeScript imports its own files by their .js names.
		if base, ok := strings.CutSuffix(p, ".js"); ok {
			alts = append(alts, base+".ts", base+".tsx")
		}
		out = append(out, alts)
	}
	return out
}

var (
	pyFrom   = lazyre.New(`(?m)^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)`)
	pyImport = lazyre.New(`(?m)^[ \t]*import[ \t]+([\w., \t]+)`)
)

// pythonImports are the candidate paths of each module a Python file
// imports, in the order of the file: a dotted name is a file or a package
// below the repository's root, or below src/ (the src layout); a relative
// one is below the file's own package.
func pythonImports(file, src string) [][]string {
	type imported struct {
		at   int
		alts []string
	}
	var found []imported
	module := func(at int, base, dotted string) {
		rel := strings.ReplaceAll(dotted, ".", "/")
		var alts []string
		for _, root := range roots(base) {
			if p, ok := inRepo(path.Join(root, rel)); ok && rel != "" {
				alts = append(alts, p+".py", p+"/__init__.py")
			}
		}
		found = append(found, imported{at, alts})
	}
	for _, m := range pyFrom().FindAllStringSubmatchIndex(src, -1) {
		at, from, names := m[0], src[m[2]:m[3]], strings.Trim(src[m[4]:m[5]], "() \t")
		dots := len(from) - len(strings.TrimLeft(from, "."))
		base := ""
		if dots > 0 {
			base = path.Dir(file)
			for i := 1; i < dots; i++ {
				base = path.Dir(base)
			}
			base += "/"
		}
		pkg := from[dots:]
		if pkg != "" {
			module(at, base, pkg)
		}
		// from pkg import name: name may be a module of the package.
		for _, n := range strings.FieldsFunc(names, func(r rune) bool { return r == ',' || r == '\n' }) {
			if n = firstWord(n); n != "" && n != "*" {
				module(at, base, strings.TrimPrefix(pkg+"."+n, "."))
			}
		}
	}
	for _, m := range pyImport().FindAllStringSubmatchIndex(src, -1) {
		for _, n := range strings.Split(src[m[2]:m[3]], ",") {
			if n = firstWord(n); n != "" {
				module(m[0], "", n)
			}
		}
	}
	slices.SortStableFunc(found, func(a, b imported) int { return a.at - b.at })
	out := make([][]string, len(found))
	for i, f := range found {
		out[i] = f.alts
	}
	return out
}

// firstWord is s's first word (a name before its "as ...").
func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// roots are where a module name is looked for: below base for a relative
// import, else the repository's root and src/.
func roots(base string) []string {
	if base != "" {
		return []string{base}
	}
	return []string{".", "src"}
}

// inRepo cleans p and reports whether it stays inside the repository.
func inRepo(p string) (string, bool) {
	p = path.Clean(p)
	if p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return "", false
	}
	return p, true
}
