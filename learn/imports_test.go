package learn

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestTestImports: a test file's imports are read from the tree as it is
// (a link out of the tree, a directory and a file too big import
// nothing), and no more than maxImportFiles files are read for one run.
func TestTestImports(t *testing.T) {
	r, _ := testRepo(t)
	write := func(rel, s string) {
		p := filepath.Join(r.Root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("src/mailer.js", "export const x = 1;\n")
	imp := "import { x } from '../src/mailer.js';\n"
	for i := 0; i <= maxImportFiles; i++ {
		write(fmt.Sprintf("test/t%02d.test.js", i), imp)
	}
	write("test/big.test.js", imp+string(make([]byte, maxImportRead)))
	outside := filepath.Join(t.TempDir(), "outside.test.js")
	if err := os.WriteFile(outside, []byte(imp), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(r.Root, "test/link.test.js")); err != nil {
		t.Fatal(err)
	}

	covers := testImports(r)
	for _, f := range []string{"test/big.test.js", "test/link.test.js", "test", "test/missing.test.js"} {
		if got := covers(f); got != nil {
			t.Errorf("covers(%s) = %v, want nothing", f, got)
		}
	}
	read := 4
	for i := 0; i <= maxImportFiles; i++ {
		f := fmt.Sprintf("test/t%02d.test.js", i)
		got := covers(f)
		if read < maxImportFiles && (len(got) != 1 || got[0] != "src/mailer.js") {
			t.Errorf("covers(%s) = %v, want [src/mailer.js]", f, got)
		}
		if read >= maxImportFiles && got != nil {
			t.Errorf("covers(%s) = %v after %d files read, want nothing", f, got, read)
		}
		read++
	}
	// A file read before the bound still answers.
	if got := covers("test/t00.test.js"); len(got) != 1 {
		t.Errorf("covers(test/t00.test.js) again = %v", got)
	}
}
