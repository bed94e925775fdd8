// Package lazyre compiles regular expressions on first use. Compiling
// every pattern of orket's packages when a process starts cost a few
// milliseconds on every command, most of which never use them.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call and
// returns the same expression after; it panics, as regexp.MustCompile,
// on an expression that does not compile.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
