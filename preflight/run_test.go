package preflight

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestRunReal(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "present.yaml"), nil, 0o644)
	env := Env{Root: root, Getenv: func(k string) string { return map[string]string{"SET_VAR": "x", "EMPTY_VAR": ""}[k] }}

	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := held.Addr().(*net.TCPAddr).Port
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	freePort := free.Addr().(*net.TCPAddr).Port
	free.Close()

	for _, tc := range []struct {
		c    Check
		want bool
	}{
		{Check{Type: EnvVarPresent, Name: "SET_VAR"}, true},
		{Check{Type: EnvVarPresent, Name: "EMPTY_VAR"}, false},
		{Check{Type: EnvVarPresent, Name: "UNSET_VAR"}, false},
		{Check{Type: CommandExists, Command: "sh"}, true},
		{Check{Type: CommandExists, Command: "no-such-command-xyz"}, false},
		{Check{Type: FileExists, Path: "present.yaml"}, true},
		{Check{Type: FileExists, Path: "config/app.yaml"}, false},
		{Check{Type: PortFree, Port: heldPort}, false},
		{Check{Type: PortFree, Port: freePort}, true},
		{Check{Type: TCPReachable, Address: "127.0.0.1:" + strconv.Itoa(heldPort)}, true},
		{Check{Type: TCPReachable, Address: "127.0.0.1:" + strconv.Itoa(freePort)}, false},
	} {
		if got := Run(tc.c, env); got.OK != tc.want || got.Detail == "" {
			t.Errorf("%s: ok=%v (%s), want %v", tc.c, got.OK, got.Detail, tc.want)
		}
	}
}

// TestCommandExistsWhereStepsFindIt checks that command_exists finds a
// command where a step's runner would: PATH, then env.Dirs (an npm
// script's node_modules/.bin, a PATH a step's env sets); a path with a
// slash is taken from the repository root.
func TestCommandExistsWhereStepsFindIt(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "web", "node_modules", ".bin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "prettier"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "not-executable"), nil, 0o644)
	os.MkdirAll(filepath.Join(root, "scripts"), 0o755)
	os.WriteFile(filepath.Join(root, "scripts", "gen"), []byte("#!/bin/sh\n"), 0o755)
	for _, tc := range []struct {
		name    string
		command string
		dirs    []string
		want    string // the path found, "" for none
	}{
		{"on PATH", "sh", nil, "*"},
		{"not on PATH, no dirs", "prettier", nil, ""},
		{"in a step's node_modules/.bin", "prettier", []string{filepath.Join(root, "node_modules", ".bin"), bin}, filepath.Join(bin, "prettier")},
		{"not executable", "not-executable", []string{bin}, ""},
		{"a relative dir is not searched", "prettier", []string{"web/node_modules/.bin"}, ""},
		{"a path from the root", "scripts/gen", nil, filepath.Join(root, "scripts", "gen")},
		{"a missing path from the root", "scripts/nope", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Run(Check{Type: CommandExists, Command: tc.command}, Env{Root: root, Dirs: tc.dirs})
			switch {
			case tc.want == "*" && !r.OK, tc.want == "" && r.OK:
				t.Errorf("ok=%v (%s)", r.OK, r.Detail)
			case tc.want != "*" && tc.want != "" && r.Detail != tc.command+" is "+tc.want:
				t.Errorf("detail %q, want %q", r.Detail, tc.command+" is "+tc.want)
			}
		})
	}
}
