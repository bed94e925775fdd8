package redact

// Shapes is the secrets table, for the end-to-end test in redact_test.
var Shapes = func() (out []struct{ Name, Line, Secret string }) {
	for _, s := range shapes {
		out = append(out, struct{ Name, Line, Secret string }{s.name, s.line, s.secret})
	}
	return out
}()
