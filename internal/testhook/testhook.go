// Package testhook lets tests stop orket at named points of a transaction
// (to prove that a crash there loses nothing). The shipped binary never
// sets a hook: only tests call Set, so Point costs one nil check.
package testhook

import "sync/atomic"

var hook atomic.Pointer[func(point string)]

// Set installs fn, called at every point; nil removes it.
func Set(fn func(point string)) {
	if fn == nil {
		hook.Store(nil)
		return
	}
	hook.Store(&fn)
}

// Point marks a named point of a transaction.
func Point(name string) {
	if fn := hook.Load(); fn != nil {
		(*fn)(name)
	}
}
