package guardrails

// Approval signatures with ssh keys, made and checked by ssh-keygen -Y
// as git's commit signing does (gpg.format ssh): the user's own tool,
// the user's key (user.signingkey: a key file, or "key::" and a public
// key whose private half is in the ssh agent), checked against an
// allowed-signers file.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/orket/orket/internal/inert"
)

// SSHKeygen signs and verifies approvals with ssh-keygen.
type SSHKeygen struct {
	Program string // "" is ssh-keygen (gpg.ssh.program)
	// Key is user.signingkey ("": signing fails, saying so); Signer is
	// who the allowed-signers file names the key's owner by (user.email).
	Key    string
	Signer string
	// AllowedSigners returns the allowed-signers file's content and its
	// name for messages (an error: none to check against).
	AllowedSigners func() ([]byte, string, error)
	Timeout        time.Duration // each call of ssh-keygen (0: 2 minutes)
}

var (
	_ Signer   = (*SSHKeygen)(nil)
	_ Verifier = (*SSHKeygen)(nil)
)

// FormatSSH is the format of an ssh-keygen signature, as git's
// gpg.format names it.
const FormatSSH = "ssh"

// Format is FormatSSH.
func (k *SSHKeygen) Format() string { return FormatSSH }

// Principal is k.Signer, which must be set.
func (k *SSHKeygen) Principal() (string, error) {
	if k.Key == "" {
		return "", fmt.Errorf("%w: set git's user.signingkey (and gpg.format ssh)", ErrNoSigner)
	}
	return checkSigner(k.Signer, " \t\r\n\"", "set git's user.email to the name the allowed-signers file gives your key")
}

// Sign signs payload with k.Key (ssh-keygen -Y sign -n orket-guardrails).
func (k *SSHKeygen) Sign(ctx context.Context, payload []byte) (*Signature, error) {
	p, err := k.Principal()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "orket-sign-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	key, agent := k.Key, false
	if lit, ok := strings.CutPrefix(k.Key, "key::"); ok {
		// A public key: its private half is in the agent.
		key, agent = filepath.Join(dir, "key.pub"), true
		if err := os.WriteFile(key, []byte(lit+"\n"), 0o600); err != nil {
			return nil, err
		}
	} else if rest, ok := strings.CutPrefix(key, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			key = filepath.Join(home, rest)
		}
	}
	msg := filepath.Join(dir, "approval")
	if err := os.WriteFile(msg, payload, 0o600); err != nil {
		return nil, err
	}
	args := []string{"-Y", "sign", "-n", SignatureNamespace, "-f", key}
	if agent {
		args = append(args, "-U")
	}
	if _, err := k.run(ctx, nil, append(args, msg)...); err != nil {
		return nil, fmt.Errorf("ssh-keygen -Y sign with %s: %w", inert.Text(k.Key), err)
	}
	sig, err := os.ReadFile(msg + ".sig")
	if err != nil {
		return nil, err
	}
	return &Signature{Format: FormatSSH, Principal: p, Text: string(sig)}, nil
}

// Verify checks that sig is a good signature of payload (ssh-keygen -Y
// check-novalidate: else the text or its approval changed since it was
// signed), then that its key is allowed for sig.Principal (ssh-keygen -Y
// verify against the allowed-signers file).
func (k *SSHKeygen) Verify(ctx context.Context, payload []byte, sig Signature) error {
	dir, err := os.MkdirTemp("", "orket-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sf := filepath.Join(dir, "approval.sig")
	if err := os.WriteFile(sf, []byte(sig.Text), 0o600); err != nil {
		return err
	}
	if _, err := k.run(ctx, payload, "-Y", "check-novalidate", "-n", SignatureNamespace, "-s", sf); err != nil {
		return fmt.Errorf("the text or its approval changed after it was signed (%v)", err)
	}
	if k.AllowedSigners == nil {
		return errors.New("no allowed-signers file to check the signer against")
	}
	allowed, name, err := k.AllowedSigners()
	if err != nil {
		return err
	}
	af := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(af, allowed, 0o600); err != nil {
		return err
	}
	if strings.TrimSpace(sig.Principal) == "" || strings.ContainsAny(sig.Principal, "\r\n") {
		return errors.New("the signature names no signer")
	}
	if _, err := k.run(ctx, payload, "-Y", "verify", "-f", af, "-I", sig.Principal, "-n", SignatureNamespace, "-s", sf); err != nil {
		return fmt.Errorf("its key is not allowed for %s by %s (%v)", inert.Text(sig.Principal), name, err)
	}
	return nil
}

// run runs ssh-keygen with stdin (nil: none), returning its stdout; an
// error carries the first line of what it said.
func (k *SSHKeygen) run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	out, _, err := runSigningTool(ctx, k.Timeout, firstNonEmpty(k.Program, "ssh-keygen"), stdin, "Signing ", args...)
	return out, err
}

// checkSigner returns name, the signer a signature names, unless it is
// blank or holds one of the characters bad: then ErrNoSigner, with the
// hint that says how to set it.
func checkSigner(name, bad, hint string) (string, error) {
	if strings.TrimSpace(name) == "" || strings.ContainsAny(name, bad) {
		return "", fmt.Errorf("%w: %s", ErrNoSigner, hint)
	}
	return name, nil
}

// runSigningTool runs a signing program (ssh-keygen, gpg) for at most
// timeout (0: 2 minutes) with stdin (nil: none), returning its stdout and
// stderr; an error carries the first line of its stderr that does not
// start with skip.
func runSigningTool(ctx context.Context, timeout time.Duration, program string, stdin []byte, skip string, args ...string) ([]byte, []byte, error) {
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		said := err.Error()
		for _, l := range strings.Split(errb.String(), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, skip) {
				said = l
				break
			}
		}
		return out.Bytes(), errb.Bytes(), errors.New(inert.Text(said))
	}
	return out.Bytes(), errb.Bytes(), nil
}
