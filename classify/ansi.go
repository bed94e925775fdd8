package classify

import (
	"strings"

	"github.com/orket/orket/internal/lazyre"
)

// ansiEscape matches the terminal escape sequences tools print when they
// believe they write to a terminal (a pseudo-terminal, FORCE_COLOR in CI):
// CSI sequences (colours, cursor moves, erasing: "\x1b[31m", "\x1b[2K"),
// OSC sequences ended by BEL or ST (hyperlinks, window titles:
// "\x1b]8;;URL\x1b\\"), and the two-byte escapes (charset selection
// "\x1b(B", keypad modes "\x1b="). None of them crosses a line.
var ansiEscape = lazyre.New(`\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[()*+][0-9A-Za-z]|[@-Z\\-_=>])`)

// StripANSI returns s without terminal escape sequences, so that
// "\x1b[31mFAIL\x1b[0m x" reads as "FAIL x". Text without an escape byte
// is returned as it is, without copying.
func StripANSI(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	return ansiEscape().ReplaceAllLiteralString(s, "")
}

// Plain returns output as a terminal shows it, which is how the rules read
// it: without escape sequences (see StripANSI), with "\r\n" as "\n" (a
// pseudo-terminal's or Windows' line ends), and of a line rewritten with
// carriage returns (a progress line, a spinner) only its last text. It
// keeps every line where it was, so line numbers do not change. Text with
// neither an escape byte nor a carriage return is returned as it is.
func Plain(output string) string {
	output = StripANSI(output)
	if strings.IndexByte(output, '\r') < 0 {
		return output
	}
	var b strings.Builder
	b.Grow(len(output))
	for line := range strings.Lines(output) {
		body, nl := strings.CutSuffix(line, "\n")
		body = strings.TrimRight(body, "\r")
		if i := strings.LastIndexByte(body, '\r'); i >= 0 {
			body = body[i+1:]
		}
		b.WriteString(body)
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
