// Package redact is orket's one redactor: everything orket stores under
// .orket (lessons, run records, feedback, memory) passes through it first.
//
// It promises:
//
//   - Secrets of well-known shapes are replaced by [REDACTED]: provider
//     tokens and keys (AWS, GitHub, GitLab, Slack, Stripe, Google,
//     OpenAI, Anthropic, npm, PyPI, Hugging Face, Twilio, SendGrid,
//     Mailgun, Square, Shopify, DigitalOcean, Heroku, Databricks, Azure,
//     Vault and more), JWTs, Authorization and Cookie headers, Bearer
//     tokens, credentials in URLs, key=value pairs whose key names a
//     secret (password=, "client_secret": ..., AccountKey=, _authToken=),
//     the values of flags that name one (--password X, --token=X, mysql
//     -pX), a secret-ish word followed by a long hex or base64 run, and
//     private key blocks (PEM, OpenSSH, PGP; encrypted or not), which are
//     replaced whole however many lines they span.
//   - The values of environment variables whose names look secret, and
//     explicit values (a verify step's own env: from orket.yaml) whatever
//     their names, are replaced wherever they occur (see Options).
//   - The name of a variable is never redacted: "DOCS_DEPLOY_TOKEN:
//     DOCS_DEPLOY_TOKEN must be set", "API_KEY is not set" and an empty
//     "export GITHUB_TOKEN=" stay as they are, so a classifier can still
//     read which variable was missing. A value that is itself the name of
//     an environment variable, or a reference or placeholder ($TOKEN,
//     ${{ secrets.X }}, <token>, ***), is not a secret.
//   - Redaction is line by line and streams: a Writer redacts output of
//     any size in bounded memory and never passes a secret on in clear,
//     however the output is cut into writes, so it can sit in front of a
//     bounded tail and redact before anything is truncated. Its output is
//     exactly what Redact returns for the whole output.
//
// Redaction is a best effort over known shapes, not a proof that no secret
// remains: nothing leaves the machine unless orket sync sends it
// (docs/sync.md), and what it sends is redacted again.
package redact

import (
	"bytes"
	"sort"
	"strings"
	"sync"

	"github.com/orket/orket/internal/lazyre"
)

// Redacted replaces a secret.
const Redacted = "[REDACTED]"

// MinValueLen is the shortest explicit value (Options.Values) that is
// redacted; shorter ones would turn common words into [REDACTED].
// Environment values must be at least MinEnvValueLen long. Values
// shorter than 8 bytes are only redacted where they stand as a whole
// word (a value "test" is redacted in "go test ./..." but not in
// "testing.go").
const (
	MinValueLen    = 4
	MinEnvValueLen = 6
	wordValueLen   = 8
)

// Options says which values, beyond the known shapes, are secrets.
type Options struct {
	// Environ is an environment in os.Environ form. The value of every
	// variable whose name looks secret (it holds PASSWORD, SECRET, TOKEN,
	// API_KEY, CREDENTIAL, ... or a part such as PWD, AUTH, KEY, PAT, DSN;
	// not when its last part says it is a name, path or mode: _FILE,
	// _PATH, _USER, _HOST, _SOCK, ...) and that is at least MinEnvValueLen
	// long is redacted.
	Environ []string
	// Values are redacted whatever they are called: the values of a
	// verify step's own env: map. A value shorter than MinValueLen, a
	// boolean or null word (true, false, yes, no, on, off, null, none),
	// or the name of an environment variable is left alone.
	Values []string
}

// A Redactor removes secrets from text. The zero value and nil redact the
// known shapes only. A Redactor is safe for concurrent use; its Writers
// are not.
type Redactor struct {
	values [][]byte // secret values, longest first
	pf     *prefilter
}

var shapesOnly = sync.OnceValue(func() *prefilter { return newPrefilter(keywords(nil)) })

// New returns a redactor for the known shapes and the values opts names.
func New(opts Options) *Redactor {
	var vals []string
	for _, kv := range opts.Environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !secretName(name) {
			continue
		}
		vals = appendValue(vals, value, MinEnvValueLen)
	}
	for _, v := range opts.Values {
		vals = appendValue(vals, v, MinValueLen)
	}
	return build(vals)
}

// WithValues returns a redactor that also redacts values, on the terms of
// Options.Values; r is unchanged.
func (r *Redactor) WithValues(values ...string) *Redactor {
	var vals []string
	if r != nil {
		for _, v := range r.values {
			vals = append(vals, string(v))
		}
	}
	for _, v := range values {
		vals = appendValue(vals, v, MinValueLen)
	}
	return build(vals)
}

func build(vals []string) *Redactor {
	sort.Slice(vals, func(i, j int) bool {
		if len(vals[i]) != len(vals[j]) {
			return len(vals[i]) > len(vals[j])
		}
		return vals[i] < vals[j]
	})
	r := &Redactor{}
	for i, v := range vals {
		if i > 0 && v == vals[i-1] {
			continue
		}
		r.values = append(r.values, []byte(v))
	}
	if len(r.values) == 0 {
		r.pf = shapesOnly()
	} else {
		r.pf = newPrefilter(keywords(r.values))
	}
	return r
}

// appendValue adds the lines of a secret value (a multi-line value is
// matched line by line) that are long enough and not a mere name.
func appendValue(vals []string, value string, min int) []string {
	for _, line := range strings.Split(value, "\n") {
		line = strings.TrimRight(line, "\r")
		if len(line) < min || envIdent().MatchString(line) || boolWords[strings.ToLower(line)] {
			continue
		}
		vals = append(vals, line)
	}
	return vals
}

// boolWords are values that no one uses as a secret and that occur
// everywhere in output.
var boolWords = map[string]bool{"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true, "null": true, "none": true}

// secretWords make a variable's name secret where they end a part of it
// (PGPASSWORD, GITHUB_TOKEN, but not TOKENIZERS_PARALLELISM);
// secretParts only as a whole part between underscores (AUTH but not
// AUTHOR); notSecretLast, as the last part, say the value is a name, a
// path or a setting about the secret rather than the secret.
var (
	secretWords = lazyre.New(`(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|APIKEY|API_KEY|PRIVATE_?KEY|CREDENTIAL|` +
		`ACCESS_?KEY|ACCOUNT_?KEY|SIGNING_KEY|ENCRYPTION_KEY|MASTER_KEY|CONNECTION_STRING|CONNSTR|WEBHOOK)S?(?:$|[_.-])`)
	secretParts   = map[string]bool{"PWD": true, "PASS": true, "AUTH": true, "KEY": true, "PAT": true, "CREDS": true, "DSN": true, "COOKIE": true, "SIGNATURE": true, "SAS": true, "PRIVATE": true}
	notSecretLast = map[string]bool{"NAME": true, "FILE": true, "PATH": true, "DIR": true, "TYPE": true, "MODE": true,
		"USER": true, "USERNAME": true, "HOST": true, "PORT": true, "REGION": true, "ENABLED": true, "EMAIL": true, "SOCK": true}
)

// secretName reports whether an environment variable's name says its
// value is a secret.
func secretName(name string) bool {
	u := strings.ToUpper(name)
	if u == "PWD" || u == "OLDPWD" {
		return false // the shell's working directories
	}
	parts := strings.FieldsFunc(u, func(c rune) bool { return c == '_' || c == '-' || c == '.' })
	if len(parts) == 0 || len(parts) > 1 && notSecretLast[parts[len(parts)-1]] {
		return false
	}
	if secretWords().MatchString(u) {
		return true
	}
	for _, p := range parts {
		if secretParts[p] {
			return true
		}
	}
	return false
}

func (r *Redactor) prefilter() *prefilter {
	if r == nil || r.pf == nil {
		return shapesOnly()
	}
	return r.pf
}

// Redact returns s with every secret replaced by [REDACTED]. Text with
// nothing to redact is returned as it is, without a copy.
func (r *Redactor) Redact(s string) string {
	if s == "" || r.prefilter().scanString(s).empty() {
		return s
	}
	st := newStream(r, maxLine, hold)
	st.dst = make([]byte, 0, len(s)+len(s)/8)
	st.write([]byte(s))
	st.close()
	return string(st.dst)
}

// All redacts every string of a slice in place and returns it.
func (r *Redactor) All(ss []string) []string {
	for i := range ss {
		ss[i] = r.Redact(ss[i])
	}
	return ss
}

type span struct{ start, end int }

// spans appends the secrets found in win by the rules of set.
func (r *Redactor) spans(win []byte, set ruleSet, out []span) []span {
	for i := range rules {
		if !set.has(i) {
			continue
		}
		ru := &rules[i]
		if ru.find != nil {
			out = ru.find(win, out)
			continue
		}
		cr := ru.re()
		for _, m := range cr.re.FindAllSubmatchIndex(win, -1) {
			s, e := m[2*cr.secret], m[2*cr.secret+1]
			if s < 0 {
				s, e = m[0], m[1] // an alternative without the group
			}
			if cr.not > 0 && m[2*cr.not] >= 0 {
				continue
			}
			if e-s >= 2 && (win[s] == '"' || win[s] == '\'') && win[e-1] == win[s] {
				s, e = s+1, e-1 // a quoted value: keep the quotes
			}
			if s == e {
				continue
			}
			if ru.check != nil && !ru.check(group(win, m, cr.key), group(win, m, cr.sep), win[s:e]) {
				continue
			}
			out = append(out, span{s, e})
		}
	}
	if set.has(valuesRule) && r != nil {
		for _, v := range r.values {
			for off := 0; ; {
				i := bytes.Index(win[off:], v)
				if i < 0 {
					break
				}
				s, e := off+i, off+i+len(v)
				off = s + 1
				if len(v) < wordValueLen && (s > 0 && isAlnum(win[s-1]) && isAlnum(v[0]) || e < len(win) && isAlnum(win[e]) && isAlnum(v[len(v)-1])) {
					continue // inside a longer word
				}
				out = append(out, span{s, e})
			}
		}
	}
	return out
}

// Argv redacts a command line given as separate arguments: each argument
// as text, and an argument that is the value of the one before it when
// the pair reads as a secret (--password X, --token X).
func (r *Redactor) Argv(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Redact(a)
		if i > 0 && out[i] != Redacted {
			pair := argv[i-1] + " " + a
			if r.Redact(pair) != r.Redact(argv[i-1])+" "+out[i] {
				out[i] = Redacted
			}
		}
	}
	return out
}
