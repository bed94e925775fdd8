package learn

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/preflight"
)

// TestSourceChecks checks that a port in use or a refused connection
// whose output names no port gets its check from the source the
// traceback points at.
func TestSourceChecks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("invoice/web/server.py", "import socket\n\n\ndef listen(host=\"127.0.0.1\", port=18942):\n    sock = socket.socket()\n    sock.bind((host, port))\n    return sock\n")
	write("invoice/db/conn.py", "import socket\n\nDB_HOST = \"localhost\"\nDB_PORT = 15442\n\n\ndef connect(timeout=1.0):\n    return socket.create_connection((DB_HOST, DB_PORT), timeout=timeout)\n")
	for _, tc := range []struct {
		name   string
		output string
		tags   []string
		want   []preflight.Check
	}{
		{"unittest, port in use", "Traceback (most recent call last):\n  File \"" + root + "/invoice/web/server.py\", line 6, in listen\n    sock.bind((host, port))\nOSError: [Errno 98] Address already in use\n",
			[]string{classify.PortInUse}, []preflight.Check{{Type: preflight.PortFree, Port: 18942}}},
		{"pytest --tb=short, refused", "____ test_store_ping ____\ninvoice/db/conn.py:8: in connect\n    return socket.create_connection((DB_HOST, DB_PORT), timeout=timeout)\nE   ConnectionRefusedError: [Errno 111] Connection refused\n",
			[]string{classify.DBConnectionFailed}, []preflight.Check{{Type: preflight.TCPReachable, Address: "localhost:15442"}}},
		{"a frame outside the repository", "  File \"/usr/lib/python3.11/socket.py\", line 6, in create_connection\nConnectionRefusedError: [Errno 111] Connection refused\n",
			[]string{classify.DBConnectionFailed}, nil},
		{"an untagged refused connection to this machine", "users_test.go:12: users store: dial tcp 127.0.0.1:15432: connect: connection refused\n",
			nil, []preflight.Check{{Type: preflight.TCPReachable, Address: "127.0.0.1:15432"}}},
		{"an untagged Python refusal", "  File \"" + root + "/invoice/db/conn.py\", line 8, in connect\nurllib.error.URLError: <urlopen error [Errno 111] Connection refused>\n",
			nil, []preflight.Check{{Type: preflight.TCPReachable, Address: "localhost:15442"}}},
		{"not an environment failure", "  File \"" + root + "/invoice/web/server.py\", line 6, in listen\nValueError: x\n", nil, nil},
	} {
		got := sourceChecks(root, tc.output, tc.tags, nil)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
