package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

var (
	id1 = plumbing.NewHash("1111111111111111111111111111111111111111")
	id2 = plumbing.NewHash("2222222222222222222222222222222222222222")
	id3 = plumbing.NewHash("3333333333333333333333333333333333333333")
)

// TestRefs: a ref is read loose, else packed; deleted from both; written
// over a lock left behind.
func TestRefs(t *testing.T) {
	dir := t.TempDir()
	const name = "refs/orket/x"
	if h, err := ReadRef(dir, name); err != nil || !h.IsZero() {
		t.Fatalf("no ref: %v %v", h, err)
	}
	packed := id1.String() + " refs/heads/main\n" + id2.String() + " " + name + "\n^" + id3.String() + "\n"
	os.WriteFile(filepath.Join(dir, "packed-refs"), []byte("# pack-refs with: peeled\n"+packed), 0o644)
	if h, _ := ReadRef(dir, name); h != id2 {
		t.Errorf("packed: %v", h)
	}
	os.MkdirAll(filepath.Join(dir, "refs", "orket"), 0o755)
	os.WriteFile(filepath.Join(dir, name+".lock"), []byte("left behind"), 0o644)
	if err := WriteRef(dir, name, id3, RefLog{}); err != nil {
		t.Fatal(err)
	}
	if h, _ := ReadRef(dir, name); h != id3 {
		t.Errorf("loose: %v", h)
	}
	if err := DeleteRef(dir, name); err != nil {
		t.Fatal(err)
	}
	if h, _ := ReadRef(dir, name); !h.IsZero() {
		t.Errorf("deleted: %v", h)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "packed-refs"))
	if string(b) != "# pack-refs with: peeled\n"+id1.String()+" refs/heads/main\n" {
		t.Errorf("packed-refs: %q", b)
	}
}

// TestUpdateRef: the compare-and-swap fails when the ref moved, waits for
// another writer's lock, and lets one of two racing writers win.
func TestUpdateRef(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const name = "refs/orket/memory"
	if err := UpdateRef(ctx, dir, name, plumbing.ZeroHash, id1, RefLog{}); err != nil {
		t.Fatal(err)
	}
	if err := UpdateRef(ctx, dir, name, id2, id3, RefLog{}); !errors.Is(err, ErrStale) {
		t.Errorf("moved ref: %v", err)
	}
	lock := filepath.Join(dir, name+".lock")
	os.WriteFile(lock, nil, 0o644)
	go func() {
		time.Sleep(50 * time.Millisecond)
		os.Remove(lock)
	}()
	if err := UpdateRef(ctx, dir, name, id1, id2, RefLog{}); err != nil {
		t.Errorf("a lock released soon: %v", err)
	}
	os.WriteFile(lock, nil, 0o644)
	var le *LockedError
	if err := UpdateRef(ctx, dir, name, id2, id3, RefLog{}); !errors.As(err, &le) {
		t.Errorf("a lock held: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := UpdateRef(cctx, dir, name, id2, id3, RefLog{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	os.Remove(lock)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, next := range []plumbing.Hash{id1, id3} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = UpdateRef(ctx, dir, name, id2, next, RefLog{})
		}()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Errorf("racing writers: %v, %v", errs[0], errs[1])
	}
}
