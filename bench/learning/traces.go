package main

// traces are the benchmark's traces by name.
func traces() map[string]Trace {
	return map[string]Trace{"go": goTrace(), "python": pythonTrace(), "node": nodeTrace()}
}
