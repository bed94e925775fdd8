package lessons

import (
	"strings"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/internal/lazyre"
)

// StripANSI removes terminal escape sequences (colours, cursor moves,
// OSC titles and links) from s: tools colour their errors; a lesson stores
// and shows the text, never the codes. It is classify.StripANSI, the one
// stripper orket has, under the name the lessons' readers use.
func StripANSI(s string) string { return classify.StripANSI(s) }

// stripAll applies StripANSI to every element of l, in place.
func stripAll(l []string) []string {
	for i := range l {
		l[i] = StripANSI(l[i])
	}
	return l
}

// errorFile matches a source location at the start of an error line or
// after a space or quote: path:line[:col], path:[line,col],
// path(line,col), path line:col or "path", line N, where the path has a
// file extension.
var errorFile = lazyre.New(`(?:^|[\s"'(\[])(/?(?:[\w@.+~-]+/)*[\w@.+~-]*[\w-]\.[A-Za-z]\w{0,9})(?::\[?\d+|\(\d+[,:]\d+\)| \d+:\d+|", line \d+)`)

// hostSuffixes end names that are hosts, not files (db.internal:5432).
var hostSuffixes = map[string]bool{"com": true, "org": true, "net": true, "io": true, "internal": true, "local": true,
	"localhost": true, "localdomain": true, "lan": true, "svc": true, "cluster": true}

// ErrorFile returns the file an error line names ("pkg/api/x.go" in
// "pkg/api/x.go:12:3: undefined: Foo", "src/app.ts" in
// "src/app.ts(3,7): error TS2322: ..."), or "" when it names none.
func ErrorFile(line string) string {
	for _, m := range errorFile().FindAllStringSubmatch(line, 4) {
		f := strings.TrimPrefix(m[1], "./")
		// A host:port is not a file.
		if !strings.Contains(f, "/") && hostSuffixes[f[strings.LastIndexByte(f, '.')+1:]] {
			continue
		}
		return f
	}
	return ""
}

// fileNear returns the file named by the first error line in output or
// by one of the few lines after it (a failed Go test prints its file on
// the line after "--- FAIL"), or "".
func fileNear(output, first string) string {
	lines := strings.Split(output, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != first && !strings.Contains(l, first) {
			continue
		}
		for j := i; j < len(lines) && j <= i+nearLines; j++ {
			if f := ErrorFile(lines[j]); f != "" {
				return f
			}
		}
		return ""
	}
	return ""
}

// nearLines is how far after a first error fileNear looks.
const nearLines = 5
