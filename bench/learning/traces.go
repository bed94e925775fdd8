package main

// traces are the benchmark's traces by name. blindgo and blindpy were
// written after the learning rules were frozen, not tuned to them.
func traces() map[string]Trace {
	return map[string]Trace{"go": goTrace(), "python": pythonTrace(), "node": nodeTrace(),
		"blindgo": blindGoTrace(), "blindpy": blindPyTrace()}
}
