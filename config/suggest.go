package config

// Suggest returns the known name closest to s (at most two edits away),
// or "": for "did you mean" hints.
func Suggest(s string, known []string) string { return suggest(s, known) }
