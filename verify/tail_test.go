package verify

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// referenceTail is the tail's contract, computed from the whole output.
func referenceTail(all []byte, maxLines, maxBytes int) string {
	b := all
	if len(b) > maxBytes {
		b = b[len(b)-maxBytes:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i+1 < len(b) {
			b = b[i+1:]
		} else {
			for len(b) > 0 && !utf8.RuneStart(b[0]) {
				b = b[1:]
			}
		}
	}
	lines := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' && i != len(b)-1 {
			lines++
			if lines == maxLines {
				b = b[i+1:]
				break
			}
		}
	}
	return string(b)
}

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		name         string
		writes       []string
		lines, bytes int
		want         string
	}{
		{"fits", []string{"a\nb\n"}, 10, 100, "a\nb\n"},
		{"line cap", []string{"1\n2\n3\n4\n"}, 2, 100, "3\n4\n"},
		{"byte cap cuts on a line", []string{"aaaa\nbbbb\ncccc\n"}, 10, 8, "cccc\n"},
		{"no final newline", []string{"x\ny\nz"}, 2, 100, "y\nz"},
		{"one long line cut on a character", []string{"ééééé"}, 10, 5, "éé"},
		{"many small writes", []string{"a", "b\n", "c", "d\n", "e", "f\n"}, 2, 100, "cd\nef\n"},
		{"wraps the ring", []string{"0123456789\n", "abcdefghij\n", "ABCDEFGHIJ\n"}, 10, 15, "ABCDEFGHIJ\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := NewTail(tc.lines, tc.bytes)
			total := 0
			for _, w := range tc.writes {
				tl.Write([]byte(w))
				total += len(w)
			}
			if got := tl.String(); got != tc.want {
				t.Errorf("tail %q, want %q", got, tc.want)
			}
			if tl.Total() != int64(total) {
				t.Errorf("total %d, want %d", tl.Total(), total)
			}
		})
	}
}

// FuzzTail checks the ring buffer against the contract for any output cut
// into any writes.
func FuzzTail(f *testing.F) {
	f.Add([]byte("line one\nline two\nthird\n"), uint8(3), uint8(2), uint16(16))
	f.Add([]byte("ééé\nxx\n"), uint8(1), uint8(5), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, chunk, maxLines uint8, maxBytes uint16) {
		if maxLines == 0 || maxBytes == 0 {
			return
		}
		tl := NewTail(int(maxLines), int(maxBytes))
		step := int(chunk) + 1
		for i := 0; i < len(data); i += step {
			tl.Write(data[i:min(len(data), i+step)])
		}
		if got, want := tl.String(), referenceTail(data, int(maxLines), int(maxBytes)); got != want {
			t.Fatalf("tail %q, want %q", got, want)
		}
		if tl.Total() != int64(len(data)) {
			t.Fatalf("total %d, want %d", tl.Total(), len(data))
		}
	})
}
