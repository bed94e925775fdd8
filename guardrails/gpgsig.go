package guardrails

// Approval signatures with OpenPGP keys, made and checked by gpg as git's
// commit signing does by default (gpg.format openpgp): the user's own
// gpg and key (user.signingkey, else the key of their user.email), checked
// against the public keys a file of the repository holds (gpg --export
// --armor), in a keyring of their own: a key in the user's keyring is
// not allowed for being there.

import (
	"bufio"
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

// GPG signs and verifies approvals with gpg.
type GPG struct {
	Program string // "" is gpg (gpg.openpgp.program, gpg.program)
	// Key is user.signingkey ("": gpg's key for Signer); Signer is the
	// e-mail address the key's user id holds (user.email).
	Key    string
	Signer string
	// AllowedKeys returns the allowed public keys (armored) and their
	// name for messages (an error: none to check against).
	AllowedKeys func() ([]byte, string, error)
	Timeout     time.Duration // each call of gpg (0: 2 minutes)
}

var (
	_ Signer   = (*GPG)(nil)
	_ Verifier = (*GPG)(nil)
)

// FormatOpenPGP is the format of a gpg signature, as git's gpg.format
// names it.
const FormatOpenPGP = "openpgp"

// Format is FormatOpenPGP.
func (g *GPG) Format() string { return FormatOpenPGP }

// Principal is g.Signer, which must be set.
func (g *GPG) Principal() (string, error) {
	return checkSigner(g.Signer, " \t\r\n\"<>", "set git's user.email to the address of your key's user id")
}

// Sign makes a detached, armored signature of payload with g.Key (gpg
// --detach-sign --local-user), as git commit -S does.
func (g *GPG) Sign(ctx context.Context, payload []byte) (*Signature, error) {
	p, err := g.Principal()
	if err != nil {
		return nil, err
	}
	key := g.Key
	if key == "" {
		key = "<" + p + ">"
	}
	out, status, err := g.runIn(ctx, "", payload, "--detach-sign", "--armor", "--local-user", key)
	if err != nil {
		return nil, fmt.Errorf("gpg --detach-sign with %s: %w", inert.Text(key), err)
	}
	if !bytes.Contains(status, []byte("[GNUPG:] SIG_CREATED ")) {
		return nil, fmt.Errorf("gpg --detach-sign with %s made no signature", inert.Text(key))
	}
	return &Signature{Format: FormatOpenPGP, Principal: p, Text: string(out)}, nil
}

// Verify checks, in a keyring holding only the allowed keys, that sig is
// a good signature of payload by one of them (else the text or its
// approval changed since it was signed, or the key is not allowed), by a
// key neither expired nor revoked, whose user ids hold sig.Principal.
func (g *GPG) Verify(ctx context.Context, payload []byte, sig Signature) error {
	if strings.TrimSpace(sig.Principal) == "" || strings.ContainsAny(sig.Principal, "\r\n") {
		return errors.New("the signature names no signer")
	}
	if g.AllowedKeys == nil {
		return errors.New("no allowed keys to check the signer against")
	}
	allowed, name, err := g.AllowedKeys()
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "orket-gpg-")
	if err != nil {
		return err
	}
	defer func() {
		// The agent gpg may have started for this keyring ends with it.
		exec.Command("gpgconf", "--homedir", home, "--kill", "all").Run() //nolint:errcheck // best effort: it also ends when its directory goes
		os.RemoveAll(home)
	}()
	keyring := &GPG{Program: g.Program, Timeout: g.Timeout}
	if _, _, err := keyring.runIn(ctx, home, allowed, "--import"); err != nil {
		return fmt.Errorf("read the allowed keys %s: %v", name, err)
	}
	sf := filepath.Join(home, "approval.asc")
	if err := os.WriteFile(sf, []byte(sig.Text), 0o600); err != nil {
		return err
	}
	_, status, _ := keyring.runIn(ctx, home, payload, "--verify", sf, "-")
	fpr := ""
	for _, f := range statusLines(status) {
		switch f[0] {
		case "BADSIG":
			return errors.New("the text or its approval changed after it was signed")
		case "ERRSIG", "NO_PUBKEY":
			return fmt.Errorf("its key is not among the allowed keys %s", name)
		case "EXPKEYSIG", "EXPSIG":
			return errors.New("its key or signature has expired")
		case "REVKEYSIG":
			return errors.New("its key was revoked")
		case "VALIDSIG":
			// A binary signature (class 00) of the bytes as they are, not
			// a text one, which holds for other line endings too.
			if len(f) > 9 && f[9] == "00" {
				fpr = f[1]
			}
		}
	}
	if fpr == "" {
		return errors.New("gpg found no valid signature")
	}
	// The key that made it must be the principal's.
	list, _, err := keyring.runIn(ctx, home, nil, "--with-colons", "--list-keys", fpr)
	if err != nil {
		return fmt.Errorf("list the signing key %s: %v", fpr, err)
	}
	for _, l := range strings.Split(string(list), "\n") {
		if f := strings.Split(l, ":"); len(f) > 9 && f[0] == "uid" && uidAddress(f[1], f[9], sig.Principal) {
			return nil
		}
	}
	return fmt.Errorf("its key (%s) is not allowed for %s by %s: no user id of it holds that address", fpr, inert.Text(sig.Principal), name)
}

// uidAddress reports whether a user id (gpg --with-colons: its validity
// and its text, \x3a for a colon) is valid and its address, the one in
// its last angle brackets, is addr, case aside.
func uidAddress(validity, uid, addr string) bool {
	switch validity {
	case "r", "e", "i": // revoked, expired, invalid
		return false
	}
	uid = strings.ReplaceAll(uid, `\x3a`, ":")
	i, j := strings.LastIndexByte(uid, '<'), strings.LastIndexByte(uid, '>')
	return i >= 0 && j == len(uid)-1 && strings.EqualFold(uid[i+1:j], addr)
}

// statusLines are the fields of gpg's --status-fd lines.
func statusLines(status []byte) [][]string {
	var out [][]string
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "[GNUPG:] "); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				out = append(out, f)
			}
		}
	}
	return out
}

// runIn runs gpg (in keyring home unless "") with stdin (nil: none),
// without asking anything on a terminal, returning its stdout and its
// status lines; an error carries the first line of what it said.
func (g *GPG) runIn(ctx context.Context, home string, stdin []byte, args ...string) ([]byte, []byte, error) {
	base := []string{"--batch", "--no-tty", "--status-fd=2"}
	if home != "" {
		// A keyring of the allowed keys alone: being there is what
		// allows a key.
		base = append(base, "--homedir", home, "--trust-model", "always")
	}
	return runSigningTool(ctx, g.Timeout, firstNonEmpty(g.Program, "gpg"), stdin, "[GNUPG:]", append(base, args...)...)
}
