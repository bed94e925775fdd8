package orket

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLongTests keeps the Makefile's LONG_TESTS (what make test-long runs
// whole) equal to the tests that run a slice of themselves under -short:
// the Test functions that read testing.Short. A test that reads it
// anywhere else (a helper) would hide from the list, so that is refused
// too.
func TestLongTests(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LONG_TESTS\s*:=\s*(.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no LONG_TESTS")
	}
	listed := strings.Split(strings.TrimSpace(string(m[1])), "|")
	sort.Strings(listed)

	var reading []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !readsShort(fn.Body) {
				continue
			}
			if !strings.HasPrefix(fn.Name.Name, "Test") || fn.Recv != nil {
				t.Errorf("%s: %s reads testing.Short; only a Test function may, so that LONG_TESTS can name it", p, fn.Name.Name)
				continue
			}
			reading = append(reading, fn.Name.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(reading)
	if diff := cmp.Diff(reading, listed); diff != "" {
		t.Errorf("LONG_TESTS in the Makefile (+) and the tests that read testing.Short (-) differ:\n%s", diff)
	}
}

// readsShort reports whether a function body calls testing.Short.
func readsShort(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Short" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "testing" {
				found = true
			}
		}
		return !found
	})
	return found
}
