package main

// traces are the benchmark's traces by name. blindgo and blindpy were
// written after the learning rules were frozen, not tuned to them.
// blind2go and blind2node were written after the rules were frozen too,
// by someone who did not read the rules (nor orket's retrieval and
// learning code): only the benchmark's own code, for the format.
// blind3py was written the same way: after the rules were frozen, by
// someone who did not read them.
func traces() map[string]Trace {
	return map[string]Trace{"go": goTrace(), "python": pythonTrace(), "node": nodeTrace(),
		"blindgo": blindGoTrace(), "blindpy": blindPyTrace(),
		"blind2go": blind2GoTrace(), "blind2node": blind2NodeTrace(),
		"blind3py": blind3PyTrace()}
}
