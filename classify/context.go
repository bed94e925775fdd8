package classify

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/preflight"
)

// listenPhrases are where an output names the port a server meant to
// listen on, when the words that say the address is in use do not: the
// banner printed before binding (Django's "Starting development server
// at http://127.0.0.1:8000/"), the source line of a traceback
// (s.bind(("127.0.0.1", 8000))), "on port 8000", or an address anywhere
// on the line that says so (socat's "bind(5, {AF=2 127.0.0.1:8000}, 16):
// Address already in use").
var listenPhrases = lazyre.New(`(?i)(?:starting (?:development )?server at|listening on|listen(?:ing)? at|serving (?:http )?on|running on|bind(?:ing)? (?:to|on)|server (?:at|on)|started (?:server )?on|available (?:at|on)|local:)\s+(?:https?://)?(?:[\w.-]+|\[[0-9a-fA-F:]*\])?:(\d{2,5})\b|\.bind\(\(\s*["'][^"']*["']\s*,\s*(\d{2,5})\s*\)\)|\b(?:on|at) port (\d{2,5})\b|(?m)^[^\n]*?\b(?:\d{1,3}(?:\.\d{1,3}){3}|localhost|\[[0-9a-fA-F:]*\]):(\d{2,5})\b[^\n]*(?i:address already in use|EADDRINUSE)`)

// listenWords are lower-case literals one of which every match of
// listenPhrases holds.
var listenWords = []string{"server at", "listen", "serving", "running on", "bind", "server on", "started", "available", "local:", "port ", "in use", "eaddrinuse"}

// commandPorts are how a command line says which port to listen on, in
// the order they are tried: a flag (--port 8000, -p 8000, --bind
// 127.0.0.1:8000), Django's runserver and Python's http.server argument,
// PORT=8000, socat's TCP-LISTEN:8000, netcat's -l [host] 8000, a
// listen(8000) call, host:port, and last a bare number of four or five
// digits standing alone as an argument (serve.py 8000). Each is tried on
// the whole command before the next, so an explicit flag wins over a
// number met earlier.
var commandPorts = []func() *regexp.Regexp{
	lazyre.New(`(?:^|\s)(?:--port|--http-port|--listen-port|-p|-P)(?:=|\s+)(\d{2,5})(?:\s|$)`),
	lazyre.New(`(?:--bind|-b|--listen|--address|--addr|runserver|-S)(?:=|\s+)(?:[\w.-]*|\[[0-9a-fA-F:]*\]):(\d{2,5})\b|\brunserver\s+(?:--\S+\s+)*(\d{2,5})(?:\s|$)`),
	lazyre.New(`\bhttp\.server\s+(\d{2,5})\b|\bPORT=(\d{2,5})\b|(?i:TCP\d?-LISTEN):(\d{2,5})\b|\blisten\(\s*(\d{2,5})\s*[,)]`),
	lazyre.New(`(?:^|\s)-l\s+(?:[\w.-]+\s+)?(\d{2,5})(?:\s|$)`),
	lazyre.New(`\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]):(\d{2,5})\b`),
	lazyre.New(`\s(\d{4,5})(?:\s|$)`),
}

// addContextChecks adds the checks a rule could not take from its own
// match: for a port in use without a port_free check, the port that the
// rest of the output or the step's command line names.
func addContextChecks(res *Result, output, command string) {
	if !slices.Contains(res.Tags, PortInUse) || slices.ContainsFunc(res.Checks, func(ch preflight.Check) bool { return ch.Type == preflight.PortFree }) {
		return
	}
	port := PortFromContext(output, command)
	if port == 0 {
		return
	}
	res.Checks = append(res.Checks, preflight.Check{Type: preflight.PortFree, Port: port})
	if res.Subject == "" {
		res.Subject = strconv.Itoa(port)
	}
}

// PortFromContext returns the port a server that failed with "address
// already in use" meant to listen on, when the line saying so does not
// name it: from the output's banner or traceback (see listenPhrases),
// else from the step's command line (see commandPorts); 0 when neither
// names one. The step's tracked configuration (a Procfile, a compose
// file, an orket.yaml env) is not read here.
func PortFromContext(output, command string) int {
	// Line by line, and only lines with a word of listenPhrases: the
	// phrases do not cross lines, and a long output costs a scan.
	for _, line := range strings.Split(output, "\n") {
		if !containsAny(strings.ToLower(line), listenWords) {
			continue
		}
		if p := firstPort(listenPhrases().FindStringSubmatch(line)); p > 0 {
			return p
		}
	}
	for _, re := range commandPorts {
		if p := firstPort(re().FindStringSubmatch(command)); p > 0 {
			return p
		}
	}
	return 0
}

func firstPort(m []string) int {
	for _, g := range m[min(1, len(m)):] {
		if g == "" {
			continue
		}
		if p, err := strconv.Atoi(g); err == nil && p >= 1 && p <= 65535 {
			return p
		}
	}
	return 0
}
