package learn

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNamesWord(t *testing.T) {
	for _, tc := range []struct {
		name, text, word string
		want             bool
	}{
		{"env macro", `let d = env!("WALKDIR_FIXTURES");`, "WALKDIR_FIXTURES", true},
		{"longer name", `os.environ["WALKDIR_FIXTURES_DIR"]`, "WALKDIR_FIXTURES", false},
		{"prefix", `MY_WALKDIR_FIXTURES=1`, "WALKDIR_FIXTURES", false},
		{"second occurrence", `X_WALKDIR_FIXTURES WALKDIR_FIXTURES`, "WALKDIR_FIXTURES", true},
		{"port in address", `addr: 127.0.0.1:5432`, "5432", true},
		{"port inside a number", `timeout: 154320`, "5432", false},
		{"at the end", `PORT=8080`, "8080", true},
		{"empty word", `anything`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := namesWord([]byte(tc.text), tc.word); got != tc.want {
				t.Errorf("namesWord(%q, %q) = %v, want %v", tc.text, tc.word, got, tc.want)
			}
		})
	}
}

// TestTreeEvidence searches a real repository's tracked files as the work
// tree holds them: untracked, binary and oversized files are no evidence.
func TestTreeEvidence(t *testing.T) {
	repo, _ := testRepo(t)
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(repo.Root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("src/conf.py", "DSN = os.environ['CLICK_TEST_DSN']\nPORT = 5432\n")
	write("src/blob.bin", "BINARY_VAR\x00\x01")
	write("src/big.txt", "BIG_VAR "+strings.Repeat("x", maxEvidenceFile))
	sh(t, repo.Root, "git add src && git commit -q -m src")
	write("src/untracked.py", "UNTRACKED_VAR\n")
	// The work tree, not the index, is read: a staged file changed since
	// names what it holds now.
	write("pkg/a.txt", "NOW_VAR\n")

	got := treeEvidence(repo, []string{"CLICK_TEST_DSN", "5432", "BINARY_VAR", "BIG_VAR", "UNTRACKED_VAR", "NOW_VAR", "one", "WALKDIR_FIXTURES"})
	want := map[string]string{"CLICK_TEST_DSN": "src/conf.py", "5432": "src/conf.py", "NOW_VAR": "pkg/a.txt"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("treeEvidence (-want +got):\n%s", diff)
	}
}

// BenchmarkTreeEvidence measures the search for a variable no tracked file
// names (the worst case: every file is read) in a repository of 5,000
// source files of about 4 KiB, 20 MiB in all.
func BenchmarkTreeEvidence(b *testing.B) {
	repo, _ := testRepo(b)
	line := strings.Repeat("x", 60) + " = os.environ.get('SOME_OTHER_NAME', 8080)\n"
	body := strings.Repeat(line, 4096/len(line))
	for d := 0; d < 100; d++ {
		dir := filepath.Join(repo.Root, "src", fmt.Sprintf("pkg%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 50; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("mod%02d.py", f)), []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	sh(b, repo.Root, "git add src && git commit -q -m src")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := treeEvidence(repo, []string{"WALKDIR_FIXTURES", "5432"}); len(got) != 0 {
			b.Fatalf("found %v", got)
		}
	}
}
