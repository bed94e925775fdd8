package fsroot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func open(t *testing.T) (*Root, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir
}

// TestNeverThroughSymlinks: no write, read or removal follows a symlink
// in any component, to outside the root or inside it.
func TestNeverThroughSymlinks(t *testing.T) {
	r, dir := open(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "victim"), []byte("precious"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "out"))
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	os.Symlink("real", filepath.Join(dir, "in"))
	os.Symlink(filepath.Join(outside, "victim"), filepath.Join(dir, "file-link"))
	for name, op := range map[string]func() error{
		"write below out":       func() error { return r.WriteFile("out/victim", []byte("x"), 0o644, Options{}) },
		"write below in":        func() error { return r.WriteFile("in/new", []byte("x"), 0o644, Options{}) },
		"mkdir below out":       func() error { return r.MkdirAll("out/d/e", 0o755) },
		"symlink below out":     func() error { return r.Symlink("t", "out/l") },
		"remove below out":      func() error { return r.Remove("out/victim") },
		"removeall below out":   func() error { return r.RemoveAll("out/victim") },
		"read through out":      func() error { _, err := r.ReadFile("out/victim"); return err },
		"read a file symlink":   func() error { _, err := r.ReadFile("file-link"); return err },
		"chmod through symlink": func() error { return r.Chmod("file-link", 0o600) },
		"dotdot":                func() error { return r.WriteFile("../escape", []byte("x"), 0o644, Options{}) },
		"absolute":              func() error { return r.WriteFile("/tmp/escape", []byte("x"), 0o644, Options{}) },
	} {
		t.Run(name, func(t *testing.T) {
			if err := op(); err == nil {
				t.Fatal("no error")
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "victim")); string(b) != "precious" {
		t.Errorf("the file outside changed: %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(outside, "victim")); fi.Mode().Perm() != 0o644 {
		t.Errorf("the file outside changed mode: %v", fi.Mode())
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("something was created outside: %v", entries)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "real")); len(entries) != 0 {
		t.Errorf("something was written through the inside link: %v", entries)
	}
	// Removing the link itself is fine: it is the root's entry.
	if err := r.Remove("out"); err != nil {
		t.Errorf("remove the link itself: %v", err)
	}
}

// TestLongPaths: paths longer than PATH_MAX work, one directory at a time.
func TestLongPaths(t *testing.T) {
	r, dir := open(t)
	seg := strings.Repeat("d", 200)
	var parts []string
	for i := 0; i < 30; i++ {
		parts = append(parts, seg)
	}
	deep := strings.Join(parts, "/") // 6,029 bytes
	if err := r.WriteFile(deep+"/f.txt", []byte("deep"), 0o640, Options{Sync: true}); err != nil {
		t.Fatal(err)
	}
	b, err := r.ReadFile(deep + "/f.txt")
	if err != nil || string(b) != "deep" {
		t.Fatalf("read back: %q, %v", b, err)
	}
	st, err := r.Lstat(deep + "/f.txt")
	if err != nil || st.Mode&0o777 != 0o640 {
		t.Fatalf("lstat: %o, %v", st.Mode, err)
	}
	if err := r.RemoveAll(seg); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left after RemoveAll: %v", entries)
	}
}

// TestWriteIsAtomicAndExact: the mode is exactly what was asked (umask
// does not apply; setgid kept), a failed Check leaves the old file.
func TestWriteIsAtomicAndExact(t *testing.T) {
	r, dir := open(t)
	if err := r.WriteFile("a", []byte("one"), 0o750|os.ModeSetgid, Options{}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "a"))
	if fi.Mode()&(os.ModePerm|os.ModeSetgid) != 0o750|os.ModeSetgid {
		t.Errorf("mode %v, want setgid 0750", fi.Mode())
	}
	refused := errors.New("refused")
	err := r.WriteFile("a", []byte("two"), 0o644, Options{Check: func() error { return refused }})
	if !errors.Is(err, refused) {
		t.Fatalf("write with a failing check: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "one" {
		t.Errorf("a refused write changed the file: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// TestReadDirNames: a directory's names; none for a missing one; a
// symlinked directory is refused, not followed.
func TestReadDirNames(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "d", "a"), nil, 0o644)
	os.Symlink(filepath.Join(dir, "d"), filepath.Join(dir, "link"))
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if names, err := r.ReadDirNames("d"); err != nil || len(names) != 1 || names[0] != "a" {
		t.Errorf("d: %v, %v", names, err)
	}
	if names, err := r.ReadDirNames("missing"); err != nil || names != nil {
		t.Errorf("missing: %v, %v", names, err)
	}
	if _, err := r.ReadDirNames("link"); err == nil {
		t.Error("a symlinked directory was listed")
	}
}
