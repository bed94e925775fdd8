package gitignore

import (
	"fmt"
	"testing"
)

// typical is a root .gitignore of the usual kind, with a nested one.
var typical = append(ParsePatterns([]byte(`# build output
/bin/
/dist/
*.o
*.a
*.so
*.exe
*.test
*.out
*.log
!keep.log
node_modules/
.DS_Store
*.swp
*~
.idea/
.vscode/
coverage/**
!coverage/keep
**/tmp/
/vendor
*.py[cod]
__pycache__/
build-*
.env*
docs/_build/
`), ""), ParsePatterns([]byte("*.gen.go\n/testdata/out/\n"), "internal/store")...)

var typicalPaths = []struct {
	path  string
	isDir bool
}{
	{"cmd/orket/main.go", false},
	{"internal/store/db.go", false},
	{"internal/store/db.gen.go", false},
	{"internal/store/testdata", true},
	{"internal/store/testdata/out", true},
	{"pkg/api/handler_test.go", false},
	{"README.md", false},
	{"node_modules", true},
	{"web/node_modules", true},
	{"bin", true},
	{"server.log", false},
	{"logs/keep.log", false},
	{"a/b/c/d/e/f/g.txt", false},
	{"coverage/keep", false},
	{"x/tmp", true},
	{"lib/module.pyc", false},
	{"build-linux", true},
	{".env.local", false},
	{"go.mod", false},
	{"docs/_build", true},
}

// BenchmarkIgnored is the scanner's cost per directory entry with a
// typical list of 27 patterns.
func BenchmarkIgnored(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e := typicalPaths[i%len(typicalPaths)]
		Ignored(typical, e.path, e.isDir)
	}
}

// BenchmarkMatch is one pattern of each kind against a path it does not
// match and one it matches.
func BenchmarkMatch(b *testing.B) {
	for _, c := range []struct{ line, miss, hit string }{
		{"node_modules", "src/app/index.js", "web/node_modules"},
		{"*.log", "src/app/index.js", "var/log/server.log"},
		{"build-*", "src/app/index.js", "out/build-linux"},
		{"*.py[cod]", "src/app/index.js", "lib/module.pyc"},
		{"/vendor", "src/app/index.js", "vendor"},
		{"docs/_build/", "src/app/index.js", "docs/_build"},
		{"coverage/**", "src/app/index.js", "coverage/a/b.html"},
		{"**/tmp/", "src/app/index.js", "a/b/tmp"},
		{"src/**/*.gen.go", "src/app/index.js", "src/a/b/x.gen.go"},
	} {
		p := ParsePatterns([]byte(c.line), "")[0]
		for _, m := range []struct{ name, path string }{{"miss", c.miss}, {"hit", c.hit}} {
			b.Run(fmt.Sprintf("%s/%s", c.line, m.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p.Match(m.path, true)
				}
			})
		}
	}
}

func BenchmarkParsePatterns(b *testing.B) {
	content := []byte("*.o\n/bin/\n!keep.log\nnode_modules/\ncoverage/**\n*.py[cod]\n")
	b.ReportAllocs()
	for b.Loop() {
		ParsePatterns(content, "a/b")
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		for _, e := range typicalPaths {
			Ignored(typical, e.path, e.isDir)
			typical[len(typical)-1].Match(e.path, e.isDir)
		}
	})
	if allocs != 0 {
		t.Errorf("Ignored and Match allocate %v times per run, want 0", allocs)
	}
}
