package memsync

// Credentials are the ones git would use, found the way git finds them:
//
//   - ssh: the keys of the ssh agent (SSH_AUTH_SOCK), then the private
//     keys ssh would try (the IdentityFile of ~/.ssh/config for the host,
//     else ~/.ssh/id_ed25519, id_ecdsa, id_rsa; keys with a passphrase
//     only through the agent); the user of the URL, else ~/.ssh/config's
//     User, else the login; the host's key checked against
//     $SSH_KNOWN_HOSTS, else ~/.ssh/known_hosts and
//     /etc/ssh/ssh_known_hosts: an unknown host is refused, never added.
//   - http(s): a user and password in the URL; else the
//     http.<url>.extraheader git is configured with (what
//     actions/checkout leaves for the job's token); else none, and when
//     the remote asks for them, git's own credential helpers through
//     `git credential fill` (the one place orket runs git: only git knows
//     the helpers a user configured), told afterwards whether they worked
//     (approve or reject). git is not allowed to prompt unless
//     Auth.Interactive.

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
)

// Auth says where credentials come from; its zero value finds them as git
// would.
type Auth struct {
	// Home replaces the home directory (~/.ssh).
	Home string
	// KnownHosts replaces the known_hosts files.
	KnownHosts []string
	// IdentityFiles replaces the private keys tried after the agent.
	IdentityFiles []string
	// NoAgent leaves the ssh agent alone.
	NoAgent bool
	// Interactive lets git's credential helpers prompt on the terminal.
	Interactive bool
	// Credential replaces `git credential <action>` (fill, approve,
	// reject): given git's key=value attributes, it returns fill's.
	Credential func(ctx context.Context, action string, attrs map[string]string) (map[string]string, error)
	// DialTimeout bounds connecting to an ssh remote (default 20s).
	DialTimeout time.Duration
}

func homeDir(a *Auth) (string, error) {
	if a.Home != "" {
		return a.Home, nil
	}
	return os.UserHomeDir()
}

// credentials are a remote's, as they were found and tried.
type credentials struct {
	o     *Options
	ep    *transport.Endpoint
	tried []string
	asked map[string]string // what git credential fill gave
	used  bool
}

func newCredentials(o *Options, e *transport.Endpoint) *credentials {
	return &credentials{o: o, ep: e}
}

// initial returns the credentials to try first.
func (c *credentials) initial(ctx context.Context) (transport.AuthMethod, error) {
	switch c.ep.Protocol {
	case "ssh":
		return c.sshAuth()
	case "http", "https":
		if c.ep.User != "" || c.ep.Password != "" {
			c.tried = append(c.tried, "the user and password in the URL")
			return &githttp.BasicAuth{Username: c.ep.User, Password: c.ep.Password}, nil
		}
		if a := c.extraHeader(); a != nil {
			return a, nil
		}
	}
	return nil, nil
}

func (c *credentials) canAsk() bool {
	return (c.ep.Protocol == "http" || c.ep.Protocol == "https") && c.asked == nil
}

// ask runs git credential fill.
func (c *credentials) ask(ctx context.Context) (transport.AuthMethod, error) {
	attrs := c.attrs()
	out, err := c.credential(ctx, "fill", attrs)
	c.asked = map[string]string{}
	if err != nil {
		c.tried = append(c.tried, "git credential fill ("+oneLine(err)+")")
		return nil, err
	}
	c.asked = out
	if out["password"] == "" {
		c.tried = append(c.tried, "git credential fill (no credentials)")
		return nil, errors.New("no credentials")
	}
	c.tried = append(c.tried, "git's credential helpers")
	c.used = true
	return &githttp.BasicAuth{Username: out["username"], Password: out["password"]}, nil
}

// report tells git's credential helpers whether what they gave worked.
func (c *credentials) report(ctx context.Context, ok bool) {
	if !c.used {
		return
	}
	action := "reject"
	if ok {
		action = "approve"
	}
	attrs := c.attrs()
	for k, v := range c.asked {
		attrs[k] = v
	}
	c.credential(ctx, action, attrs)
	c.used = false
}

func (c *credentials) attrs() map[string]string {
	a := map[string]string{"protocol": c.ep.Protocol, "host": c.ep.Host}
	if c.ep.Port > 0 && !(c.ep.Protocol == "https" && c.ep.Port == 443) && !(c.ep.Protocol == "http" && c.ep.Port == 80) {
		a["host"] = c.ep.Host + ":" + strconv.Itoa(c.ep.Port)
	}
	if p := strings.TrimPrefix(c.ep.Path, "/"); p != "" {
		a["path"] = p
	}
	return a
}

func (c *credentials) credential(ctx context.Context, action string, attrs map[string]string) (map[string]string, error) {
	if c.o.Auth.Credential != nil {
		return c.o.Auth.Credential(ctx, action, attrs)
	}
	return gitCredential(ctx, c.o.workTree(), action, attrs, c.o.Auth.Interactive)
}

// gitCredential runs `git credential <action>` in dir.
func gitCredential(ctx context.Context, dir, action string, attrs map[string]string, interactive bool) (map[string]string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("git is not installed, so its credential helpers cannot be asked")
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var in bytes.Buffer
	for _, k := range []string{"protocol", "host", "path", "username", "password"} {
		if v, ok := attrs[k]; ok {
			fmt.Fprintf(&in, "%s=%s\n", k, v)
		}
	}
	in.WriteString("\n")
	cmd := exec.CommandContext(ctx, "git", "credential", action)
	cmd.Dir = dir
	cmd.Stdin = &in
	cmd.Env = os.Environ()
	if !interactive {
		cmd.Env = append(cmd.Env, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			return nil, fmt.Errorf("git credential %s: %s", action, strings.SplitN(msg, "\n", 2)[0])
		}
		return nil, fmt.Errorf("git credential %s: %w", action, err)
	}
	res := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			res[k] = v
		}
	}
	return res, nil
}

// extraHeader returns the credentials of an Authorization header git is
// configured to send to this URL (http.<url>.extraheader).
func (c *credentials) extraHeader() transport.AuthMethod {
	cfg, err := c.o.Repo.ConfigScoped(config.SystemScope)
	if err != nil {
		return nil
	}
	u := c.ep.String()
	var headers []string
	sec := cfg.Raw.Section("http")
	headers = append(headers, sec.Options.GetAll("extraheader")...)
	best := -1
	for _, sub := range sec.Subsections {
		if httpURLMatches(sub.Name, u) && len(sub.Name) > best {
			if hs := sub.Options.GetAll("extraheader"); len(hs) > 0 {
				headers, best = append(headers, hs...), len(sub.Name)
			}
		}
	}
	for i := len(headers) - 1; i >= 0; i-- {
		name, val, ok := strings.Cut(headers[i], ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "authorization") {
			continue
		}
		scheme, cred, _ := strings.Cut(strings.TrimSpace(val), " ")
		switch strings.ToLower(scheme) {
		case "basic":
			raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
			if err != nil {
				continue
			}
			user, pass, _ := strings.Cut(string(raw), ":")
			c.tried = append(c.tried, "the Authorization header of git's http.extraheader")
			return &githttp.BasicAuth{Username: user, Password: pass}
		case "bearer":
			c.tried = append(c.tried, "the bearer token of git's http.extraheader")
			return &githttp.TokenAuth{Token: strings.TrimSpace(cred)}
		}
	}
	return nil
}

// httpURLMatches is git's http.<url>.* matching, simplified: same scheme
// and host, and the config's path a prefix of the URL's at a slash.
func httpURLMatches(pattern, u string) bool {
	p := strings.TrimSuffix(pattern, "/")
	if !strings.HasPrefix(u, p) {
		return false
	}
	rest := u[len(p):]
	return rest == "" || rest[0] == '/'
}

// hint says what was tried, for an AuthError.
func (c *credentials) hint() string {
	switch c.ep.Protocol {
	case "ssh":
		return "tried " + strings.Join(c.tried, ", ") + "; add a key the remote accepts to the ssh agent or ~/.ssh"
	case "http", "https":
		if len(c.tried) == 0 {
			return "no credentials found: configure a git credential helper, or (in CI) the job's token as an http.extraheader (actions/checkout does)"
		}
		return "tried " + strings.Join(c.tried, ", ") + "; check the token's write access to the repository"
	}
	return ""
}

// sshAuth builds the ssh credentials: agent keys, then key files, and
// the host key check against known_hosts.
func (c *credentials) sshAuth() (gitssh.AuthMethod, error) {
	home, _ := homeDir(&c.o.Auth)
	usr := c.sshUser()
	agentSigners := c.agentSigners(usr)
	fileSigners := c.fileSigners(c.identityFiles(home))
	if len(c.tried) == 0 {
		c.tried = append(c.tried, "no ssh agent and no key in "+filepath.Join(home, ".ssh"))
	}
	hostKey, algos, err := c.hostKeyCheck(home)
	if err != nil {
		return nil, err
	}
	timeout := c.o.Auth.DialTimeout
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	return &sshAuth{user: usr, agent: agentSigners, keys: fileSigners, hostKey: hostKey,
		algos: algos, timeout: timeout}, nil
}

// sshConfig returns the value of key for the remote's host in the user's
// ssh config, or "" when there is none or Auth.Home replaces the home
// directory.
func (c *credentials) sshConfig(key string) string {
	if gitssh.DefaultSSHConfig == nil || c.o.Auth.Home != "" {
		return ""
	}
	return gitssh.DefaultSSHConfig.Get(c.ep.Host, key)
}

// sshUser is the user to log in as: the URL's, else the ssh config's,
// else the current user's.
func (c *credentials) sshUser() string {
	usr := c.ep.User
	if usr == "" {
		usr = c.sshConfig("User")
	}
	if usr == "" {
		if u, err := user.Current(); err == nil {
			usr = u.Username
		}
	}
	return usr
}

// agentSigners returns the ssh agent's keys as a callback, or nil when
// there is no agent or Auth.NoAgent is set.
func (c *credentials) agentSigners(usr string) func() ([]ssh.Signer, error) {
	if !c.o.Auth.NoAgent && os.Getenv("SSH_AUTH_SOCK") != "" {
		if a, err := gitssh.NewSSHAgentAuth(usr); err == nil {
			c.tried = append(c.tried, "the ssh agent's keys")
			return a.Callback
		}
	}
	return nil
}

// identityFiles names the private key files to try: Auth.IdentityFiles,
// else the ssh config's IdentityFile and the usual keys in ~/.ssh.
func (c *credentials) identityFiles(home string) []string {
	files := c.o.Auth.IdentityFiles
	if files == nil {
		if f := c.sshConfig("IdentityFile"); f != "" && f != "~/.ssh/identity" {
			if strings.HasPrefix(f, "~/") {
				f = filepath.Join(home, f[2:])
			}
			files = append(files, f)
		}
		for _, n := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			files = append(files, filepath.Join(home, ".ssh", n))
		}
	}
	return files
}

// fileSigners reads the private keys of files, skipping those that are
// missing, unreadable or protected by a passphrase.
func (c *credentials) fileSigners(files []string) []ssh.Signer {
	var signers []ssh.Signer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s, err := ssh.ParsePrivateKey(b)
		if err != nil {
			var pm *ssh.PassphraseMissingError
			if errors.As(err, &pm) {
				c.tried = append(c.tried, f+" (has a passphrase: add it to the ssh agent)")
			}
			continue
		}
		signers = append(signers, s)
		c.tried = append(c.tried, f)
	}
	return signers
}

// hostKeyCheck returns the check of the host's key against the
// known_hosts files and the key algorithms they hold for the host.
// Without a known_hosts file the check refuses every key.
func (c *credentials) hostKeyCheck(home string) (ssh.HostKeyCallback, []string, error) {
	known := c.o.Auth.KnownHosts
	if known == nil {
		if env := os.Getenv("SSH_KNOWN_HOSTS"); env != "" {
			known = filepath.SplitList(env)
		} else {
			known = []string{filepath.Join(home, ".ssh", "known_hosts"), "/etc/ssh/ssh_known_hosts"}
		}
	}
	var existing []string
	for _, f := range known {
		if _, err := os.Stat(f); err == nil {
			existing = append(existing, f)
		}
	}
	addr := c.sshAddr()
	if len(existing) == 0 {
		// Refused when the host shows its key, so that a host that is
		// not there is reported as such first.
		return func(string, net.Addr, ssh.PublicKey) error {
			return fmt.Errorf("no known_hosts file (%s) to check the host key of %s against", strings.Join(known, ", "), addr)
		}, nil, nil
	}
	db, err := gitssh.NewKnownHostsDb(existing...)
	if err != nil {
		return nil, nil, &AuthError{Err: fmt.Errorf("read known_hosts: %w", err)}
	}
	return db.HostKeyCallback(), db.HostKeyAlgorithms(addr), nil
}

// sshAddr is the host and port to connect to: the URL's, or the ssh
// config's Hostname and Port, port 22 by default.
func (c *credentials) sshAddr() string {
	host, port := c.ep.Host, c.ep.Port
	if h := c.sshConfig("Hostname"); h != "" {
		host = h
		if p, err := strconv.Atoi(c.sshConfig("Port")); err == nil {
			port = p
		}
	}
	if port <= 0 {
		port = 22
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// sshAuth is go-git's ssh AuthMethod over several sources of keys.
type sshAuth struct {
	user    string
	agent   func() ([]ssh.Signer, error)
	keys    []ssh.Signer
	hostKey ssh.HostKeyCallback
	algos   []string
	timeout time.Duration
}

func (a *sshAuth) Name() string   { return "ssh-public-keys" }
func (a *sshAuth) String() string { return "user: " + a.user + ", name: " + a.Name() }

func (a *sshAuth) ClientConfig() (*ssh.ClientConfig, error) {
	signers := func() ([]ssh.Signer, error) {
		var out []ssh.Signer
		if a.agent != nil {
			if s, err := a.agent(); err == nil {
				out = append(out, s...)
			}
		}
		return append(out, a.keys...), nil
	}
	return &ssh.ClientConfig{
		User:              a.user,
		Auth:              []ssh.AuthMethod{ssh.PublicKeysCallback(signers)},
		HostKeyCallback:   a.hostKey,
		HostKeyAlgorithms: a.algos,
		Timeout:           a.timeout,
	}, nil
}
