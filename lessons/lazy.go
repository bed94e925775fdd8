package lessons

import (
	"regexp"
	"sync"
)

// lazyRegexp returns a function that compiles expr on its first call and
// returns the same expression after: compiling the package's patterns when
// a process starts cost every orket command, most of which never use them.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
