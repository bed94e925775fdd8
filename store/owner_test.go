package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyStoreNamesTheState: no Go file outside this package (tests
// aside) spells a path of the state directory or a schema string; they
// use this package's names, so that the layout has one owner.
func TestOnlyStoreNamesTheState(t *testing.T) {
	var names []string
	for _, n := range []string{LessonsFile, EvaluationsFile, TasksFile, FeedbackFile, ProposalsFile, ExposuresFile,
		VotesFile, MemoryFile, PassingDir, GuardrailsDir, RejectedDir, RejectedDone, RunsDir, EscalationsDir, HistoryFile} {
		if strings.ContainsAny(n, "/.") { // "runs" or "rejected" alone are words too
			names = append(names, regexp.QuoteMeta(n))
		}
	}
	state := regexp.MustCompile(`^(\.orket(/|$)|(` + strings.Join(names, "|") + `)$)`)
	schema := regexp.MustCompile(`^(orket\.[a-z_]+|core_pillars/[a-z_]+)/v[0-9]+$`)
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || d.Name() == "store" || strings.HasPrefix(d.Name(), ".") && p != ".." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if state.MatchString(s) || schema.MatchString(s) {
				t.Errorf("%s: %q names the state directory's layout; use package store's name for it", fset.Position(lit.Pos()), s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
