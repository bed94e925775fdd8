package orket

import "testing"

// TestDeniedPath: the path a refused write names, as the usual tools
// print it.
func TestDeniedPath(t *testing.T) {
	for line, want := range map[string]string{
		"sh: 1: cannot create ../x: Permission denied":                                "../x",
		"sh: 1: cannot create /tmp/outside-x: Permission denied":                      "/tmp/outside-x",
		"touch: cannot touch '/home/u/.ssh/x': Permission denied":                     "/home/u/.ssh/x",
		"cp: cannot create regular file '../adv.md': Permission denied":               "../adv.md",
		"mkdir: cannot create directory ‘/opt/x’: Permission denied":                  "/opt/x",
		"PermissionError: [Errno 13] Permission denied: '/etc/x.conf'":                "/etc/x.conf",
		"open /var/lib/x/y.json: permission denied":                                   "/var/lib/x/y.json",
		"ln: failed to create hard link 'pkg/l' => '../x': Invalid cross-device link": "../x",
		"error: something else: Permission denied":                                    "",
	} {
		if got := deniedPath(line); got != want {
			t.Errorf("deniedPath(%q) = %q, want %q", line, got, want)
		}
	}
}
