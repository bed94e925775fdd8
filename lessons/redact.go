package lessons

import (
	"regexp"
	"sort"
	"strings"
)

// Redacted replaces a secret in everything orket writes under .orket.
const Redacted = "[REDACTED]"

var secretShapes = []struct {
	re   *regexp.Regexp
	repl string // what replaces a match ($1: a key name or scheme kept)
}{
	{regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`), Redacted},
	{regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), Redacted},                                // AWS access key ids
	{regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}\b`), Redacted},                               // GitHub tokens
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}\b`), Redacted},                             // GitHub fine-grained tokens
	{regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}\b`), Redacted},                                 // GitLab
	{regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}\b`), Redacted},                            // Slack
	{regexp.MustCompile(`\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}\b`), Redacted},              // Stripe
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`), Redacted},                                    // Google API keys
	{regexp.MustCompile(`\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b`), Redacted},                     // OpenAI, Anthropic
	{regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`), Redacted},                                      // npm
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), Redacted}, // JWTs
	{regexp.MustCompile(`(?i)(\bauthorization:\s*(?:bearer|basic|token)\s+)[^\s"']+`), "${1}" + Redacted},
	{regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@"']+:)[^@\s/"']+(@)`), "${1}" + Redacted + "${2}"}, // credentials in URLs
	{regexp.MustCompile(`(?i)(\b[\w.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)["']?\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&"']+)`), "${1}" + Redacted},
}

var secretEnvName = regexp.MustCompile(`(?i)secret|token|passw|pwd|api_?key|private|credential|auth|session|cookie|signature|dsn`)

// A Redactor removes secrets from text: the shapes of well-known tokens
// and keys, credentials in URLs, password=-style pairs, private key
// blocks, and the values of environment variables whose names look
// secret.
type Redactor struct {
	values []string // secret environment values, longest first
}

// NewRedactor builds a redactor for an environment (os.Environ form).
func NewRedactor(environ []string) *Redactor {
	r := &Redactor{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < 6 || !secretEnvName.MatchString(name) {
			continue
		}
		r.values = append(r.values, value)
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	return r
}

// Redact returns s with every secret replaced by [REDACTED].
func (r *Redactor) Redact(s string) string {
	if s == "" {
		return s
	}
	for _, v := range r.values {
		s = strings.ReplaceAll(s, v, Redacted)
	}
	for _, sh := range secretShapes {
		s = sh.re.ReplaceAllString(s, sh.repl)
	}
	return s
}

// All redacts every string of a slice in place and returns it.
func (r *Redactor) All(ss []string) []string {
	for i := range ss {
		ss[i] = r.Redact(ss[i])
	}
	return ss
}
