package learn

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/preflight"
)

// A server that cannot bind, or a client whose service is down, often
// says only "[Errno 98] Address already in use" or "[Errno 111]
// Connection refused": the port is in the source the traceback points at
// (def listen(host="127.0.0.1", port=18942): ... sock.bind((host, port))).
// sourceChecks reads it there, so that the lesson has a check to make.

var (
	// frameLine matches a stack frame that names a file and a line:
	// Python's File "x.py", line 12; pytest's x.py:12: in f; a Node or Go
	// frame's x.js:12:5 or x.go:12.
	frameLine = lazyre.New(`(?m)File "([^"]+)", line (\d+)|^([\w./-]+\.py):(\d+): in |\(?((?:/|\./)?[\w./@-]+\.(?:m?js|cjs|ts|go)):(\d+)(?::\d+)?\)?\s*(?:\+0x|$)`)
	// portAssign is a port named in source: port=18942, PORT: 18942,
	// self.port = 18942, listen(18942).
	portAssign = lazyre.New(`(?i)\b\w*port\w*\s*(?:=|:)\s*(\d{2,5})\b|\blisten\(\s*(\d{2,5})\b`)
	hostAssign = lazyre.New(`(?i)\b\w*host\w*\s*(?:=|:)\s*["']([\w.-]+)["']`)
	// inUse and refused say a port is taken, or a service is down, in
	// any runtime's words.
	inUse   = lazyre.New(`(?i)address already in use|EADDRINUSE`)
	refused = lazyre.New(`(?i)connection refused|ECONNREFUSED`)
	// localRefused is a refused connection to this machine, with its
	// address.
	localRefused = lazyre.New(`dial tcp (127\.0\.0\.1|localhost|\[::1\]):(\d+): connect: connection refused|ECONNREFUSED (127\.0\.0\.1|::1|localhost):(\d+)\b`)
	// funcHeader starts a function in the languages frames come from.
	funcHeader = lazyre.New(`^\s*(?:async\s+)?(?:def|function|func)\b|^\s*(?:export\s+)?(?:const|let)\s+\w+\s*=\s*(?:async\s*)?\(`)
)

// sourceChecks returns the checks of an environment failure (a port in
// use, a refused connection: tagged, or said in any runtime's words)
// that the classification did not give: a refused connection to this
// machine's address as the output names it, else the port (and host)
// read from the repository files of its stack frames (the innermost
// first).
func sourceChecks(root, output string, tags []string, have []preflight.Check) []preflight.Check {
	plain := classify.Plain(output)
	wantPort := (contains(tags, classify.PortInUse) || inUse().MatchString(plain)) && !hasCheck(have, preflight.PortFree)
	wantAddr := (contains(tags, classify.DBConnectionFailed) || refused().MatchString(plain)) && !hasCheck(have, preflight.TCPReachable)
	switch {
	case !wantPort && !wantAddr:
		return nil
	case wantPort && !contains(tags, classify.PortInUse):
		// A port in use that no rule tagged: the port the output or the
		// source names.
		if port := classify.PortFromContext(plain, ""); port > 0 {
			return []preflight.Check{{Type: preflight.PortFree, Port: port}}
		}
	case wantAddr:
		// A refused connection to this machine names its address.
		if m := localRefused().FindStringSubmatch(plain); m != nil {
			return []preflight.Check{{Type: preflight.TCPReachable, Address: m[1] + m[3] + ":" + m[2] + m[4]}}
		}
	}
	frames := frameLine().FindAllStringSubmatch(plain, -1)
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		file, line := f[1]+f[3]+f[5], f[2]+f[4]+f[6]
		n, err := strconv.Atoi(line)
		if err != nil {
			continue
		}
		src := repoFile(root, file)
		if src == nil {
			continue
		}
		port, host := portNear(src, n)
		if port == 0 {
			continue
		}
		if wantPort {
			return []preflight.Check{{Type: preflight.PortFree, Port: port}}
		}
		if host == "" || host == "0.0.0.0" {
			host = "127.0.0.1"
		}
		return []preflight.Check{{Type: preflight.TCPReachable, Address: host + ":" + strconv.Itoa(port)}}
	}
	return nil
}

// repoFile returns the lines of a file of the repository a frame names
// (absolute under root, or relative to it), nil for any other (the
// standard library, site-packages, node_modules).
func repoFile(root, file string) []string {
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || strings.HasPrefix(rel, "..") || strings.Contains(rel, "site-packages") || strings.Contains(rel, "node_modules") {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) > 1<<20 {
		return nil
	}
	return strings.Split(string(b), "\n")
}

// portNear finds the port (and host) the code at line n (1-based) uses:
// in the function around it first, then anywhere in the file.
func portNear(lines []string, n int) (int, string) {
	if n < 1 || n > len(lines) {
		return 0, ""
	}
	start := n - 1
	for start > 0 && !funcHeader().MatchString(lines[start]) {
		start--
	}
	for _, text := range []string{strings.Join(lines[start:n], "\n"), strings.Join(lines, "\n")} {
		if port := firstPort(portAssign(), text); port > 0 {
			host := ""
			if m := hostAssign().FindStringSubmatch(text); m != nil {
				host = m[1]
			}
			return port, host
		}
	}
	return 0, ""
}

func firstPort(re *regexp.Regexp, text string) int {
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		for _, g := range m[1:] {
			if p, err := strconv.Atoi(g); err == nil && p > 0 && p < 65536 {
				return p
			}
		}
	}
	return 0
}

func hasCheck(checks []preflight.Check, typ string) bool {
	for _, c := range checks {
		if c.Type == typ {
			return true
		}
	}
	return false
}
