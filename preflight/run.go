package preflight

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// A Result is a check's outcome.
type Result struct {
	Check
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Source string `json:"source"` // "orket.yaml" or "lesson <id>"
}

// Env is what checks look at: the environment and the repository root
// that relative file paths are taken from.
type Env struct {
	Getenv func(string) string
	Root   string
}

// dialTimeout bounds a tcp_reachable check.
var dialTimeout = time.Second

// Run makes one check. It never changes anything: a port_free check binds
// and closes at once; a tcp_reachable check connects and closes.
func Run(c Check, env Env) Result {
	r := Result{Check: c}
	switch c.Type {
	case EnvVarPresent:
		r.OK = env.Getenv(c.Name) != ""
		r.Detail = c.Name + " is set"
		if !r.OK {
			r.Detail = c.Name + " is not set (or empty)"
		}
	case CommandExists:
		p, err := exec.LookPath(c.Command)
		r.OK = err == nil
		r.Detail = c.Command + " is " + p
		if !r.OK {
			r.Detail = c.Command + " is not on PATH"
		}
	case FileExists:
		p := c.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.Root, p)
		}
		_, err := os.Stat(p)
		r.OK = err == nil
		r.Detail = c.Path + " exists"
		if !r.OK {
			r.Detail = c.Path + " does not exist"
		}
	case PortFree:
		l, err := net.Listen("tcp", ":"+strconv.Itoa(c.Port))
		r.OK = err == nil
		if l != nil {
			l.Close()
		}
		r.Detail = "port " + strconv.Itoa(c.Port) + " is free"
		if !r.OK {
			r.Detail = "port " + strconv.Itoa(c.Port) + " is in use"
		}
	case TCPReachable:
		conn, err := net.DialTimeout("tcp", c.Address, dialTimeout)
		r.OK = err == nil
		if conn != nil {
			conn.Close()
		}
		r.Detail = c.Address + " accepts connections"
		if !r.OK {
			r.Detail = c.Address + " does not accept connections"
		}
	default:
		r.Detail = "unknown check type " + c.Type
	}
	return r
}
