package classify

import (
	"regexp"
	"sync"
)

// lazyRegexp returns a function that compiles expr on its first call and
// returns the same expression after. Compiling every pattern of the
// package when a process starts cost orket a few milliseconds on every
// command, most of which never classify anything.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
