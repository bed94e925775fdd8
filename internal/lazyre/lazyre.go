// Package lazyre compiles a package-level regular expression the first
// time it is used instead of when the program starts: every command of
// orket starts the same binary, and most never use most expressions.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call (panicking,
// as regexp.MustCompile does, if it does not compile) and returns the
// same *regexp.Regexp on every call.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
