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
