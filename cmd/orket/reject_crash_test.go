package main

import (
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/internal/fingerprint"
)

// TestRejectSurvivesKills kills orket reject with SIGKILL inside its undo
// (the undo is a transaction) and proves that orket recover puts the tree
// back as the kept run left it, and that the reject can then be made.
//
// Under -short (make test) it kills at two of the five points.
func TestRejectSurvivesKills(t *testing.T) {
	bin := orketBinary(t)
	points := []string{"phase:snapshot", "snapshot-published", "phase:edit", "phase:takeout", "taken-out"}
	if testing.Short() {
		points = []string{"snapshot-published", "taken-out"}
	}
	for _, at := range points {
		t.Run(at, func(t *testing.T) {
			dir := crashRepo(t)
			pre, err := fingerprint.Of(dir)
			if err != nil {
				t.Fatal(err)
			}
			orket := func(env []string, args ...string) *exec.Cmd {
				cmd := exec.Command(bin, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), env...)
				return cmd
			}
			if out, err := orket(nil, "run", "--yes", "--scope", "pkg", "--", "sh", "-c",
				"echo kept > pkg/a.txt; rm pkg/b.txt; mkdir -p pkg/new; echo n > pkg/new/n.txt").CombinedOutput(); err != nil {
				t.Fatalf("the kept run: %v\n%s", err, out)
			}
			post, err := fingerprint.Of(dir)
			if err != nil {
				t.Fatal(err)
			}
			kill := orket([]string{"ORKET_TEST_CRASH_AT=" + at}, "reject", "--reason", "wrong example")
			out, _ := kill.CombinedOutput()
			if kill.ProcessState.String() != "signal: killed" {
				t.Fatalf("orket reject was not killed at %s: %s\n%s", at, kill.ProcessState, out)
			}
			if out, err := orket(nil, "recover").CombinedOutput(); err != nil {
				t.Fatalf("orket recover: %v\n%s", err, out)
			}
			after, err := fingerprint.Of(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(post, after); diff != "" {
				t.Fatalf("after a kill at %s and recover, the tree is not as the kept run left it (-kept +now):\n%s", at, diff)
			}
			if out, err := orket(nil, "reject", "--reason", "wrong example").CombinedOutput(); err != nil {
				t.Fatalf("orket reject after recover: %v\n%s", err, out)
			}
			after, err = fingerprint.Of(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(pre, after); diff != "" {
				t.Errorf("after the reject, the tree is not as before the run (-before +now):\n%s", diff)
			}
		})
	}
}
