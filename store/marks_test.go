package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDueForPrune: a log is pruned once past its floor, then again only
// after it grew by an eighth, when the retention settings changed, or a
// day later when it has an age bound.
func TestDueForPrune(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log.jsonl")
	write := func(n int) {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(strings.Repeat("x", n))
		f.Close()
	}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	due := func(bound int, age time.Duration, at time.Time) bool { return DueForPrune(p, 500, bound, age, at) }
	if due(10, 90*day, now) {
		t.Error("a missing log is due")
	}
	write(400)
	if due(10, 0, now) {
		t.Error("a log under its floor, without an age bound, is due")
	}
	// With an age bound, a small log is pruned by age, at most daily.
	if !due(10, 90*day, now) {
		t.Error("a log under its floor, never pruned, is not due by age")
	}
	PrunedAt(p, 10, 90*day, now.Add(-time.Hour))
	if due(10, 90*day, now) || !due(10, 90*day, now.Add(day)) {
		t.Error("a small log is not due by age once a day exactly")
	}
	os.Remove(p + ".pruned")
	write(600) // 1000
	if !due(10, 90*day, now) {
		t.Error("a log past its floor, never pruned, is not due")
	}
	PrunedAt(p, 10, 90*day, now)
	write(100) // 1100: not an eighth more
	if due(10, 90*day, now.Add(time.Hour)) {
		t.Error("due again after growing by a tenth")
	}
	if !due(5, 90*day, now.Add(time.Hour)) || !due(10, 30*day, now.Add(time.Hour)) {
		t.Error("not due when the bound or the age changed")
	}
	if !due(10, 90*day, now.Add(day)) {
		t.Error("not due a day after the last prune, with an age bound")
	}
	if due(10, 0, now.Add(2*day)) != true {
		t.Error("not due when the age bound was removed") // a change of setting
	}
	PrunedAt(p, 10, 0, now)
	if due(10, 0, now.Add(30*day)) {
		t.Error("due by time without an age bound")
	}
	write(140) // 1240: an eighth more than 1100
	if !due(10, 0, now) {
		t.Error("not due after growing by an eighth")
	}
}
