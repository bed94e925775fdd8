package inert

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/quick"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ name, in, text, block string }{
		{"plain", "pkg/api/x.go", "pkg/api/x.go", "pkg/api/x.go"},
		{"unicode", "überzeugend — ok", "überzeugend — ok", "überzeugend — ok"},
		{"window title", "a\x1b]0;pwned\x07b", `a\x1b]0;pwned\x07b`, `a\x1b]0;pwned\x07b`},
		{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"osc 52", "\x1b]52;c;cm0gLXJmIH4K\x1b\\", `\x1b]52;c;cm0gLXJmIH4K\x1b\`, `\x1b]52;c;cm0gLXJmIH4K\x1b\`},
		{"c1 csi", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
		{"del", "a\x7fb", `a\u007fb`, `a\u007fb`},
		{"bidi override", "evil\u202egp.exe", `evil\u202egp.exe`, `evil\u202egp.exe`},
		{"invalid utf-8", "a\xffb", `a\xffb`, `a\xffb`},
		{"lines", "one\ntwo\tthree", `one\ntwo\tthree`, "one\ntwo\tthree"},
		{"crlf", "one\r\ntwo\r", `one\r\ntwo\r`, "one\ntwo\\r"},
		{"overwrite", "ok\rFAIL", `ok\rFAIL`, `ok\rFAIL`},
		{"backslash kept", `C:\x1b`, `C:\x1b`, `C:\x1b`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Text(c.in); got != c.text {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
			}
			if got := Block(c.in); got != c.block {
				t.Errorf("Block(%q) = %q, want %q", c.in, got, c.block)
			}
		})
	}
}

// TestNothingInterpretable: whatever the input, the output of Text has no
// byte a terminal acts on and is valid UTF-8 without C1 controls.
func TestNothingInterpretable(t *testing.T) {
	f := func(s string) bool {
		out := Text(s)
		if !utf8.ValidString(out) {
			return false
		}
		for _, r := range out {
			if r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
				return false
			}
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 5000}); err != nil {
		t.Fatal(err)
	}
}

func FuzzText(f *testing.F) {
	f.Add("a\x1b]0;x\x07\u009b\xff\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := Block(s)
		if strings.ContainsAny(out, "\x1b\x07\r\x00") || !utf8.ValidString(out) {
			t.Fatalf("Block(%q) = %q", s, out)
		}
		if Text(out) != strings.ReplaceAll(strings.ReplaceAll(out, "\n", `\n`), "\t", `\t`) {
			t.Fatalf("Text of Block(%q) escapes more than lines and tabs", s)
		}
	})
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write([]byte("touched (1): \x1b]0;t\x07x\n"))
	w.Allow("\x1b[32m", "\x1b[0m", "\r\x1b[K")
	w.Write([]byte("\x1b[32mok\x1b[0m \x1b[2Jgone\r\x1b[K\r\n"))
	// A character split between two writes is whole again.
	w.Write([]byte("caf\xc3"))
	w.Write([]byte("\xa9 \xc2"))
	w.Write([]byte("\x9b\n"))
	w.Write([]byte("end \xe2\x80"))
	w.Flush()
	want := "touched (1): \\x1b]0;t\\x07x\n\x1b[32mok\x1b[0m \\x1b[2Jgone\r\x1b[K\ncafé \\u009b\nend \\xe2\\x80"
	if got := buf.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestWriterKeepsJSON: JSON passed through a Writer decodes to the same
// value (its \u escapes are JSON's).
func TestWriterKeepsJSON(t *testing.T) {
	in := map[string]string{"name": "a\u009b\u007f\u202eb\x1b", "t": "x\ny"}
	j, _ := json.MarshalIndent(in, "", "  ")
	var buf bytes.Buffer
	NewWriter(&buf).Write(j)
	var out map[string]string
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	if out["name"] != in["name"] || out["t"] != in["t"] {
		t.Errorf("got %q", out)
	}
	if bytes.ContainsAny(buf.Bytes(), "\u009b\u007f\u202e") {
		t.Errorf("raw control characters left: %q", buf.Bytes())
	}
}
