package txn

import (
	"os"
	"path/filepath"
	"testing"
)

// IgnoredPath judges by the rules the snapshot read, whether or not the
// path exists, and never calls a tracked path or its directories ignored.
func TestIgnoredPath(t *testing.T) {
	gitEnv(t)
	dir := t.TempDir()
	sh(t, dir, `git init -q
mkdir -p src/pkg build web/node_modules/x
printf '/target\nbuild/\n__pycache__/\nnode_modules/\n*.log\n!keep.log\n' > .gitignore
printf 'out/\n' > src/.gitignore
echo x > src/pkg/a.py
echo tracked > build/tracked.txt
echo x > web/node_modules/x/i.js
git add .gitignore src web
git add -f build/tracked.txt web/node_modules/x/i.js
git commit -qm init
mkdir -p .git/info && printf 'local/\n' > .git/info/exclude`)
	r := open(t, dir)
	tx := begin(t, r, "ignoredpath")
	defer tx.Close()
	// Written after the snapshot: not the rules it judges by.
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("src/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := tx.Snapshot()
	for _, c := range []struct {
		path string
		dir  bool
		want bool
	}{
		{"target", true, true},
		{"target/debug/.cargo-lock", false, true},
		{"sub/target", true, false}, // /target is anchored at the root
		{"src/pkg/__pycache__", true, true},
		{"src/pkg/__pycache__/a.cpython-311.pyc", false, true},
		{"src/out", true, true}, // src's own .gitignore
		{"out", true, false},
		{"build", true, false}, // ignored, but it holds a tracked file
		{"build/tracked.txt", false, false},
		{"build/new.o", false, true},
		{"web/node_modules/.cache", true, true}, // node_modules is ignored: so is all of it
		{"web/node_modules/x/i.js", false, false},
		{"a.log", false, true},
		{"keep.log", false, false},
		{"local", true, true}, // info/exclude
		{"src", true, false},
		{"src/pkg/a.py", false, false},
		{".git/x", false, false},
		{"../x", false, false},
		{"/etc/passwd", false, false},
		{"", true, false},
	} {
		if got := s.IgnoredPath(c.path, c.dir); got != c.want {
			t.Errorf("IgnoredPath(%q, %v) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
}
