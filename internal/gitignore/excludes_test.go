package gitignore

import "testing"

// TestExcludesFile: where git looks for the global ignore file.
func TestExcludesFile(t *testing.T) {
	t.Setenv("HOME", "/home/ana")
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	for configured, want := range map[string]string{
		"":                "/xdg/git/ignore",
		"~/.gitignore_g":  "/home/ana/.gitignore_g",
		"/etc/gitignore":  "/etc/gitignore",
		"relative/ignore": "/work/tree/relative/ignore", // git runs at the top of the work tree
	} {
		if got := ExcludesFile(configured, "/work/tree"); got != want {
			t.Errorf("ExcludesFile(%q) = %q, want %q", configured, got, want)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	if got := ExcludesFile("", "/work/tree"); got != "/home/ana/.config/git/ignore" {
		t.Errorf("without XDG_CONFIG_HOME: %q", got)
	}
}
