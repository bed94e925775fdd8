package redact

import (
	"bytes"
	"regexp"
	"strings"
	"sync"

	"github.com/orket/orket/internal/lazyre"
)

// The rules. Each names the keywords that must occur in a line before its
// expression is tried (matched ASCII case-insensitively by the prefilter)
// and, with a group named s, the part of a match that is the secret; the
// rest of the match (a key name, a scheme, a flag) stays. A check, when
// present, reports whether a candidate is a secret at all.
//
// The provider shapes marked "gitleaks" follow the rules of the same
// names in gitleaks (github.com/gitleaks/gitleaks, config/gitleaks.toml,
// v8.30.1; Copyright (c) 2019 Zachary Rice; MIT License, which permits
// this reuse with the notice kept): their prefix, alphabet and length,
// rewritten for one line of tool output rather than copied.
// docs/lessons.md says why orket keeps its own list instead of the
// dependency.

type rule struct {
	name     string
	keywords []string
	find     func(win []byte, out []span) []span // instead of re, for the rules written as code
	// re returns the rule's expression, compiled on first use: most
	// processes never meet a line with a rule's keyword, and compiling
	// every rule at start cost each orket command about a millisecond.
	re    func() *ruleRe
	check func(key, sep, val []byte) bool
}

// ruleRe is a rule's compiled expression and the submatches it names.
type ruleRe struct {
	re     *regexp.Regexp
	secret int // submatch holding the secret; 0 is the whole match
	key    int // submatch holding a key or flag name, or -1
	sep    int // submatch holding a separator, or -1
	not    int // submatch that, when it takes part, says the match is no secret; or -1
}

// spec is a rule as written in the table below.
type spec struct {
	name     string
	keywords string // space-separated; a final \s stands for a space or a tab
	re       string
	check    func(key, sep, val []byte) bool
}

// The value of a key=value pair or a flag: a quoted string (escapes
// allowed) or a run of bytes up to a space, a quote or a list separator.
const valueRE = `"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s,;&"']+`

var specs = []spec{
	// Provider tokens, recognised by their prefix and alphabet.
	{"aws-access-key-id", "akia asia abia acca a3t", `\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b`, nil},
	{"github-token", "ghp_ gho_ ghu_ ghs_ ghr_", `\bgh[pousr]_[A-Za-z0-9]{30,}\b`, nil},
	{"github-fine-grained-token", "github_pat_", `\bgithub_pat_[A-Za-z0-9_]{20,}\b`, nil},
	{"gitlab-token", "glpat- gldt- glrt- glptt- glcbt- glft- glimt- glagent- gloas- glsoat-", `\bgl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat)-[A-Za-z0-9_-]{20,}`, nil},
	{"slack-token", "xox", `\bxox[abposre]-[A-Za-z0-9-]{10,}`, nil},
	{"slack-webhook", "hooks.slack.com", `hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_-]{20,})`, nil},
	{"stripe-key", "_live_ _test_", `\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}\b`, nil},
	{"stripe-webhook-secret", "whsec_", `\bwhsec_[A-Za-z0-9+/=]{24,}`, nil},
	{"google-api-key", "aiza", `\bAIza[0-9A-Za-z_-]{35}\b`, nil},
	{"google-oauth", "ya29. gocspx- 1//0", `\bya29\.[0-9A-Za-z_-]{20,}|\bGOCSPX-[0-9A-Za-z_-]{20,}|\b1//0[0-9A-Za-z_-]{30,}`, nil},
	{"openai-anthropic-key", "sk-", `\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}\b`, checkRandom},
	{"npm-token", "npm_", `\bnpm_[A-Za-z0-9]{36}\b`, nil},
	{"pypi-token", "pypi-age", `\bpypi-AgE[A-Za-z0-9_-]{40,}`, nil},
	{"huggingface-token", "hf_ api_org_", `\b(?:hf_|api_org_)[A-Za-z0-9]{30,}\b`, nil},
	{"jwt", "eyj", `\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`, nil},
	{"twilio-api-key", "sk", `\bSK[0-9a-fA-F]{32}\b`, nil},                                                             // gitleaks
	{"sendgrid-key", "sg.", `\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}\b`, nil},                                 // gitleaks
	{"mailgun-key", "key-", `\bkey-[0-9a-zA-Z]{32}\b`, nil},                                                            // gitleaks
	{"square-token", "eaaa sq0atp- sq0csp-", `\bEAAA[A-Za-z0-9_-]{60}\b|\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}\b`, nil}, // gitleaks
	{"shopify-token", "shpat_ shpca_ shppa_ shpss_", `\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b`, nil},                    // gitleaks
	{"digitalocean-token", "_v1_", `\bdo[opr]_v1_[a-f0-9]{64}\b`, nil},                                                 // gitleaks
	{"heroku-key", "hrku- heroku", `\bHRKU-[A-Za-z0-9_-]{20,}|(?i:heroku)[^\n]{0,40}?\b(?P<s>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b`, nil},
	{"databricks-token", "dapi", `\bdapi[a-f0-9]{32}(?:-\d)?\b`, nil}, // gitleaks
	// gitleaks azure-ad-client-secret
	{"azure-ad-client-secret", "q~", "(?:^|[\\\\'\"`\\s>=:(,)])(?P<s>[a-zA-Z0-9_~.]{3}\\dQ~[a-zA-Z0-9_~.-]{31,34})(?:$|[\\\\'\"`\\s<),])", nil},
	{"azure-sas", "sharedaccesssignature", `(?i)\bSharedAccessSignature=(?P<s>[^;\s"']+)`, nil},
	{"signed-url", "sig= signature=", `(?i)[?&](?:sig|signature|x-amz-signature|x-goog-signature)=(?P<s>[A-Za-z0-9%+/=_.-]{16,})`, nil},
	{"sentry-token", "sntrys_ sntryu_", `\bsntr[ysu]_[A-Za-z0-9+/=_-]{30,}`, nil},
	{"grafana-token", "glc_ glsa_", `\bgl(?:c|sa)_[A-Za-z0-9+/=_-]{30,}`, nil},
	{"vault-token", "hvs. hvb. hvr.", `\bhv[sbr]\.[A-Za-z0-9_-]{24,}`, nil},
	{"doppler-token", "dp.", `\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{30,}`, nil},
	{"linear-key", "lin_api_", `\blin_api_[A-Za-z0-9]{30,}`, nil},
	{"postman-key", "pmak-", `\bPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}\b`, nil},
	{"newrelic-key", "nrak-", `\bNRAK-[A-Z0-9]{27}\b`, nil},
	{"age-secret-key", "age-secret-key-", `\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b`, nil},
	{"terraform-token", "atlasv1", `\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9=_-]{60,}`, nil},
	{"dockerhub-token", "dckr_pat_", `\bdckr_pat_[A-Za-z0-9_-]{20,}`, nil},
	{"telegram-bot-token", ":aa", `\d{8,10}:AA[A-Za-z0-9_-]{33}\b`, nil},
	{"discord-webhook", "discord", `discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[A-Za-z0-9_-]{30,})`, nil},
	{"atlassian-token", "atatt3", `\bATATT3[A-Za-z0-9_=-]{50,}`, nil},
	{"mapbox-token", "k.eyj", `\b[ps]k\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`, nil},
	{"notion-token", "ntn_ secret_", `\bntn_[A-Za-z0-9]{40,}|\bsecret_[A-Za-z0-9]{43}\b`, nil},
	{"misc-prefixed-token", "sbp_ fo1_ pul- figd_", `\bsbp_[a-f0-9]{40}\b|\bfo1_[A-Za-z0-9_-]{40,}|\bpul-[a-f0-9]{40}\b|\bfigd_[A-Za-z0-9_-]{40,}`, nil},
	// A Docker config ({"auths": ...}) encoded in base64, as in a
	// Kubernetes .dockerconfigjson.
	{"docker-config-base64", "eyjhdxrocyi6 ewogicjhdxrocyi6 ewojimf1dghzijo ewogicagimf1dghzijo", `\b(?:eyJhdXRocyI6|ewogICJhdXRocyI6|ewoJImF1dGhzIjo|ewogICAgImF1dGhzIjo)[A-Za-z0-9+/]*={0,2}`, nil},

	// Credentials in context: headers, URLs, pairs, flags, commands.
	{"authorization-header", "authorization", `(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|bot|apikey|sso-key)\s+(?P<s>[^\s"',]+)`, checkValue},
	{"authorization-header-other", "authorization", `(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:digest|negotiate|ntlm|aws4-hmac-sha256|hmac|signature)\s+(?P<s>[^\n"']+)`, nil},
	{"authorization-header-raw", "authorization", `(?i)\b(?:proxy-)?authorization["']?\s*:\s*["']?(?P<s>[A-Za-z0-9._~+/=-]{16,})`, checkRandom},
	{"bearer-token", "bearer", `(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/-]{8,}=*)`, checkRandom},
	{"cookie-header", "cookie", `(?i)\b(?:set-)?cookie\s*:\s*(?P<s>[^\s"';=]+=[^\n"']*)`, nil},
	{"url-credentials", "://", `(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@"'<>]*:(?P<s>[^@\s/"'<>]+)@`, checkValue},
	{"url-token-user", "://", `(?i)\b(?:https?|git|ssh|git\+https|git\+ssh)://(?P<s>[A-Za-z0-9_.~-]{16,})@`, checkRandom},
	{"json-auth", "auth\"", `(?i)"_?auth"\s*:\s*"(?P<s>[^"\n]+)"`, checkValue},
	{"key-value", "password passwd passphrase pwd secret token credential _auth signature key= key: key\" key' key\\s", "", nil}, // findPairs, checkPair
	{"secret-flag", "-pass storepass keypass -token _token -secret _secret -key _key -apikey _apikey -auth _auth",
		`(?i)(?:^|[\s"'=(])(?P<k>--?(?:[a-z0-9]+[-_])*(?:password|passwd|pass|passphrase|token|secret|api-?key|access-?key|secret-?key|private-?key|client-?secret|auth|storepass|keypass|srcstorepass|deststorepass|passin|passout))(?:=|\s+)(?:pass:)?(?P<s>` + valueRE + `)`, checkFlag},
	{"mysql-password", "mysql mariadb", `(?i:\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlsh|mysqlbinlog|mariadb|mariadb-dump|mariadb-admin))\b[^\n|;&]*?\s-p(?P<s>` + valueRE + `)`, checkFlag},
	{"sshpass-password", "sshpass", `\bsshpass\b[^\n|;&]*?\s-p\s*(?P<s>` + valueRE + `)`, checkFlag},
	{"registry-login-password", "login", `(?i:\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane))\b[^\n|;&]*?\blogin\b[^\n|;&]*?\s-p\s*(?P<s>` + valueRE + `)`, checkFlag},
	{"redis-cli-password", "redis-cli", `\bredis-cli\b[^\n|;&]*?\s-a\s*(?P<s>` + valueRE + `)`, checkFlag},
	{"curl-user", "curl", `(?i:\bcurl\b)[^\n|;&]*?\s(?:-u\s*|--user[=\s]\s*)["']?[^\s:"']*:(?P<s>[^\s"']+)`, checkValue},
	{"netrc-password", "machine", `(?i)\bmachine\s+\S+(?:\s+login\s+\S+)?\s+password\s+(?P<s>\S+)`, checkValue},
	{"openssl-pass", "-pass", `(?:^|[\s"'=])pass:(?P<s>[^\s"']+)`, checkValue},
	// A secret-ish word followed, within a few characters, by a long run
	// of hex or base64: "auth token 3f2a...", "secret is dGhpc2lz...".
	{"keyword-then-run", "token key secret password passwd credential signature", "", nil}, // findRuns, checkRun
}

// The private key blocks, handled apart because they span lines.
var (
	pemBegin = lazyre.New(`-----BEGIN[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)?-----`)
	pemEnd   = lazyre.New(`-----END[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)?-----`)
)

var rules = compile(specs)

// Two pseudo-rules follow the table: a private key block begins, a secret
// value occurs.
var (
	pemRule    = len(rules)
	valuesRule = len(rules) + 1
)

func compile(specs []spec) []rule {
	if len(specs)+2 > maxRules {
		panic("redact: too many rules")
	}
	out := make([]rule, len(specs))
	for i, sp := range specs {
		var kws []string
		for _, kw := range strings.Fields(sp.keywords) {
			if k, ok := strings.CutSuffix(kw, `\s`); ok {
				kws = append(kws, k+" ", k+"\t") // the keyword, then a blank
				continue
			}
			kws = append(kws, kw)
		}
		if sp.re == "" {
			out[i] = rule{name: sp.name, keywords: kws, find: finders[sp.name]}
			if out[i].find == nil {
				panic("redact: no finder for " + sp.name)
			}
			continue
		}
		expr := sp.re
		out[i] = rule{name: sp.name, keywords: kws, check: sp.check, re: sync.OnceValue(func() *ruleRe {
			re := regexp.MustCompile(expr)
			r := &ruleRe{re: re, key: re.SubexpIndex("k"), sep: re.SubexpIndex("sep"), not: re.SubexpIndex("not")}
			if s := re.SubexpIndex("s"); s > 0 {
				r.secret = s
			}
			return r
		})}
	}
	return out
}

func group(b []byte, m []int, i int) []byte {
	if i <= 0 || m[2*i] < 0 {
		return nil
	}
	return b[m[2*i]:m[2*i+1]]
}

// checkValue reports whether a value is a secret rather than a
// placeholder for one.
func checkValue(_, _, val []byte) bool { return !placeholder(unquote(val)) }

// checkRandom reports whether a token-like value looks generated: at
// least two of digits, lower case and upper case letters.
func checkRandom(_, _, val []byte) bool {
	v := unquote(val)
	return !placeholder(v) && classes(v) >= 2
}

// checkPair judges the value of a key=value pair. An empty value (a
// shell's "TOKEN= cmd"), the key's own name, the name of an environment
// variable, a reference ($VAR, ${{ secrets.X }}) or a placeholder is not
// a secret.
func checkPair(key, sep, val []byte) bool {
	if len(sep) > 0 && sep[0] == '=' && len(bytes.TrimSpace(sep)) == 1 && len(sep) > 1 {
		return false // "TOKEN= next-word": the value is empty
	}
	v := unquote(val)
	if nestedPair().Match(v) || urlValue().Match(v) {
		return false // the pair or URL inside is judged by its own rules
	}
	return !placeholder(v) && !sameName(key, v)
}

// checkFlag judges the value after a flag that names a secret: another
// flag, the flag's own name or a placeholder is not one.
func checkFlag(key, _, val []byte) bool {
	v := unquote(val)
	if len(v) > 0 && v[0] == '-' {
		return false
	}
	return !placeholder(v) && !sameName(key, v)
}

// checkRun judges a long run after a secret-ish word: it must look
// generated (hex with digits and letters, or base64 with digits and both
// cases), and a digest (sha256:...) is not a secret.
func checkRun(gap, _, val []byte) bool {
	g := bytes.ToLower(gap)
	for _, d := range []string{"sha1:", "sha256:", "sha512:", "md5:", "fingerprint"} {
		if bytes.Contains(g, []byte(d)) {
			return false
		}
	}
	v := bytes.TrimRight(val, "=")
	hex := true
	for _, c := range v {
		if !isHex(c) {
			hex = false
			break
		}
	}
	digit, lower, upper := charClasses(v)
	if hex {
		return digit && (lower || upper)
	}
	return digit && lower && upper
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// classes counts the character classes of v: digits, lower and upper
// case letters.
func classes(v []byte) int {
	digit, lower, upper := charClasses(v)
	n := 0
	for _, b := range []bool{digit, lower, upper} {
		if b {
			n++
		}
	}
	return n
}

// charClasses reports whether v holds an ASCII digit, a lower case letter
// and an upper case letter.
func charClasses(v []byte) (digit, lower, upper bool) {
	for _, c := range v {
		switch {
		case '0' <= c && c <= '9':
			digit = true
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		}
	}
	return digit, lower, upper
}

// unquote strips one pair of matching quotes.
func unquote(v []byte) []byte {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

var (
	nestedPair = lazyre.New(`^[A-Za-z_][A-Za-z0-9_.-]*=[^=]`)
	urlValue   = lazyre.New(`^[A-Za-z][A-Za-z0-9+.-]*://`)
	envIdent   = lazyre.New(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)
	envRef     = lazyre.New(`^(?:\$\{.*\}|\$\(.*|\$[A-Z_][A-Z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%|\{\{.*\}\}|<.*>|\[.*\])$`)
)

// notSecretWords are values that fill a secret's place in messages and
// examples without being one.
var notSecretWords = map[string]bool{
	"null": true, "nil": true, "none": true, "undefined": true, "true": true, "false": true,
	"empty": true, "required": true, "missing": true, "invalid": true, "expired": true,
	"unset": true, "redacted": true, "hidden": true, "masked": true, "string": true,
	"str": true, "value": true, "yes": true, "no": true, "on": true, "off": true,
}

// placeholder reports whether a value stands for a secret without being
// one: empty, an environment variable's name (ALL_CAPS_WITH_UNDERSCORES),
// a reference ($VAR, ${VAR}, ${{ secrets.X }}, $(cmd), %VAR%, <token>),
// what was already redacted,
// a mask (***, xxxx, ...), a YAML block indicator (|, >-) or a word such
// as "null" or "required".
func placeholder(v []byte) bool {
	if t := bytes.TrimRight(v, ")]}>.,"); len(t) < len(v) && len(t) > 0 && placeholder(t) {
		return true // "null}", "$TOKEN)"
	}
	if len(v) == 0 || envIdent().Match(v) || envRef().Match(v) {
		return true
	}
	if v[0] == '<' || bytes.HasPrefix(v, []byte("${")) || bytes.HasPrefix(v, []byte("$(")) || bytes.HasPrefix(v, []byte("{{")) ||
		bytes.HasPrefix(v, []byte(Redacted)) || bytes.Contains(v, []byte("...")) || bytes.Contains(v, []byte("…")) {
		return true
	}
	if len(bytes.Trim(v, "|>+-")) == 0 {
		return true // a YAML block scalar: the value is on the next lines
	}
	same := true
	for _, c := range v {
		if c != v[0] {
			same = false
			break
		}
	}
	if same && bytes.IndexByte([]byte("*xX.#-_"), v[0]) >= 0 {
		return true
	}
	return notSecretWords[strings.ToLower(string(v))]
}

// sameName reports whether a value is the key's own name ("TOKEN: TOKEN
// must be set", "--token TOKEN").
func sameName(key, v []byte) bool {
	k := bytes.Trim(key, `"'-$ `)
	return len(k) > 0 && bytes.EqualFold(k, v)
}

// keywords lists each rule's keywords, then the pseudo-rules'.
func keywords(values [][]byte) [][]string {
	kws := make([][]string, len(rules)+2)
	for i, r := range rules {
		kws[i] = r.keywords
	}
	kws[pemRule] = []string{"-----begin"}
	for _, v := range values {
		kws[valuesRule] = append(kws[valuesRule], strings.ToLower(string(v)))
	}
	return kws
}
