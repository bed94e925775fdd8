package guardrails

// Approvals. Every version orket writes (an approved proposal, a removal,
// a clash's additions, a rollback) carries an approval record in its
// v<N>.json: who approved it, on which clone, when, and, when
// guardrails.require_signed is on, a signature made with the approver's
// git signing key over the approval's canonical form (ApprovalPayload:
// the agent, the number, the kind, the approval's fields and the exact
// bytes of v<N>.md). Anyone who can push refs/orket/memory can write
// files there, so a version is checked each time it is read to be given
// to an edit command or shown (Store.Check): one without a valid approval
// is unapproved, never the agent's current version, and says why.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SignatureNamespace is the namespace of approval signatures
// (ssh-keygen -Y sign -n): a signature made for anything else (a commit,
// a file) does not verify as an approval.
const SignatureNamespace = "orket-guardrails"

// An Approval is who approved a version, where and when, and the
// signature over it (when signatures are required).
type Approval struct {
	By    string    `json:"by"`
	Clone string    `json:"clone,omitempty"` // the clone it was approved on (Approvals.Clone)
	Time  time.Time `json:"time"`
	// Principal is the signer as the allowed-signers file names them
	// (git's user.email); Format the signature's kind ("ssh").
	Principal string `json:"principal,omitempty"`
	Format    string `json:"format,omitempty"`
	Signature string `json:"signature,omitempty"`
}

// A Signature is a signature made by a Signer.
type Signature struct {
	Format    string // FormatSSH or FormatOpenPGP
	Principal string
	Text      string // armored
}

// A Signer signs approvals with the approver's key.
type Signer interface {
	// Format is the kind of signature it makes ("ssh", "openpgp"),
	// part of what is signed.
	Format() string
	// Principal is who the signatures will name (before signing: it is
	// part of what is signed).
	Principal() (string, error)
	Sign(ctx context.Context, payload []byte) (*Signature, error)
}

// Verifiers checks a signature with the verifier of its format.
type Verifiers map[string]Verifier

// Verify is the Verify of sig's format's verifier.
func (vs Verifiers) Verify(ctx context.Context, payload []byte, sig Signature) error {
	v := vs[sig.Format]
	if v == nil {
		return fmt.Errorf("signatures of format %q cannot be checked here", sig.Format)
	}
	return v.Verify(ctx, payload, sig)
}

// A Verifier checks an approval's signature against the signers the
// repository allows.
type Verifier interface {
	// Verify returns nil when sig is a valid signature of payload by a
	// key allowed for sig.Principal, else an error saying why (one line).
	Verify(ctx context.Context, payload []byte, sig Signature) error
}

// Approvals is how this clone approves versions and checks them.
type Approvals struct {
	Clone    string   // this clone, as approvals name it
	Require  bool     // guardrails.require_signed
	Signer   Signer   // signs new approvals when Require
	Verifier Verifier // checks approvals when Require
}

// ErrNoSigner reports an approval that must be signed with no key to sign
// it with.
var ErrNoSigner = errors.New("guardrails.require_signed is on and no signing key is set")

// ErrSigning reports a signature the signer could not make.
var ErrSigning = errors.New("could not sign the approval")

// ErrUnapproved reports a version without a valid approval where an
// approved one is needed (a rollback's target).
var ErrUnapproved = errors.New("not an approved version")

// canSign fails when an approval must be signed and cannot be, before
// anything is written.
func (s *Store) canSign() error {
	if !s.Approvals.Require {
		return nil
	}
	if s.Approvals.Signer == nil {
		return ErrNoSigner
	}
	_, err := s.Approvals.Signer.Principal()
	return err
}

// ApprovalPayload is what an approval's signature covers: a header of
// quoted fields, a blank line, then the exact bytes of the text. agent and
// n are the directory and file the version is read from, so a signed
// version copied to another number or agent does not verify.
func ApprovalPayload(agent string, n int, kind string, a *Approval, text string) []byte {
	if kind == "" {
		kind = KindApproval
	}
	var b strings.Builder
	b.WriteString("orket guardrails approval v1\n")
	fmt.Fprintf(&b, "agent %s\nversion %d\nkind %s\n", strconv.Quote(agent), n, strconv.Quote(kind))
	fmt.Fprintf(&b, "by %s\nclone %s\ntime %s\nprincipal %s\nformat %s\n", strconv.Quote(a.By), strconv.Quote(a.Clone),
		strconv.Quote(a.Time.UTC().Format(time.RFC3339Nano)), strconv.Quote(a.Principal), strconv.Quote(a.Format))
	fmt.Fprintf(&b, "content_sha256 %s\nlength %d\n\n", sha([]byte(text)), len(text))
	b.WriteString(text)
	return []byte(b.String())
}

// An ApprovalCheck is what a version's approval is worth on this clone.
type ApprovalCheck struct {
	Approved bool   `json:"approved"`
	By       string `json:"by,omitempty"`
	Clone    string `json:"clone,omitempty"`
	// Synced: approved on another clone (it came by orket sync).
	Synced bool `json:"synced"`
	// Signed: its signature verified against the allowed signers;
	// Signer the principal it verified for.
	Signed bool   `json:"signed"`
	Signer string `json:"signer,omitempty"`
	// Edited: the text is not what was approved (allowed without
	// signatures: a person's edit of v<N>.md).
	Edited bool `json:"edited,omitempty"`
	// Why a version is unapproved.
	Why string `json:"why,omitempty"`
}

// sign fills v's approval (whose By and Time are set) for this clone,
// signing it when signatures are required.
func (s *Store) sign(ctx context.Context, v *Version) error {
	a := v.Approval
	a.Clone = s.Approvals.Clone
	if !s.Approvals.Require {
		return nil
	}
	if s.Approvals.Signer == nil {
		return ErrNoSigner
	}
	p, err := s.Approvals.Signer.Principal()
	if err != nil {
		return err
	}
	a.Principal, a.Format = p, s.Approvals.Signer.Format()
	sig, err := s.Approvals.Signer.Sign(ctx, ApprovalPayload(v.Agent, v.Version, v.Kind, a, v.Text))
	if err != nil {
		return fmt.Errorf("%w of v%d: %w", ErrSigning, v.Version, err)
	}
	if sig.Format != a.Format || sig.Principal != a.Principal {
		return fmt.Errorf("sign the approval of v%d: the signer changed its name", v.Version)
	}
	a.Signature = sig.Text
	return nil
}

// checkCache keeps what was verified in this process: a verification
// runs a program.
type checkCache struct {
	mu   sync.Mutex
	seen map[string]ApprovalCheck
}

// Check reports whether version v (read from the agent's directory) is
// approved on this clone, and why not. Without require_signed, a version
// is approved when its approval names who approved it, or, for a version
// written before approvals were recorded, when this clone's history logs
// it as written here. With it, the approval's signature must verify
// against the allowed signers, over the version's text as it is now.
func (s *Store) Check(ctx context.Context, agent string, v *Version) ApprovalCheck {
	a := v.Approval
	if a == nil {
		if s.Approvals.Require {
			return ApprovalCheck{By: v.ApprovedBy, Why: "it has no signed approval (guardrails.require_signed is on)"}
		}
		if v.ApprovedBy != "" && s.loggedHere(agent, v) {
			return ApprovalCheck{Approved: true, By: v.ApprovedBy, Edited: v.Edited}
		}
		return ApprovalCheck{By: v.ApprovedBy, Synced: true, Why: "it has no approval record: it was not approved on this clone, and nothing says who approved it"}
	}
	c := ApprovalCheck{By: a.By, Clone: a.Clone, Synced: a.Clone != s.Approvals.Clone, Edited: v.Edited}
	if strings.TrimSpace(a.By) == "" {
		c.Why = "its approval names no one"
		return c
	}
	if !s.Approvals.Require {
		c.Approved = true
		return c
	}
	if a.Signature == "" {
		c.Why = "its approval is not signed (guardrails.require_signed is on)"
		return c
	}
	if s.Approvals.Verifier == nil {
		c.Why = "signatures cannot be checked on this clone"
		return c
	}
	payload := ApprovalPayload(agent, v.Version, v.Kind, a, v.Text)
	key := sha(payload) + "\x00" + a.Format + "\x00" + a.Signature
	s.checks.mu.Lock()
	got, ok := s.checks.seen[key]
	s.checks.mu.Unlock()
	if ok {
		return got
	}
	if a.Format != FormatSSH && a.Format != FormatOpenPGP {
		c.Why = fmt.Sprintf("its signature is of an unknown format %q", a.Format)
	} else if err := s.Approvals.Verifier.Verify(ctx, payload, Signature{Format: a.Format, Principal: a.Principal, Text: a.Signature}); err != nil {
		c.Why = "its signature does not hold: " + err.Error()
	} else {
		c.Approved, c.Signed, c.Signer, c.Edited = true, true, a.Principal, false
	}
	s.checks.mu.Lock()
	if s.checks.seen == nil {
		s.checks.seen = map[string]ApprovalCheck{}
	}
	s.checks.seen[key] = c
	s.checks.mu.Unlock()
	return c
}

// loggedHere reports whether the agent's history.jsonl holds v's event:
// the version was written on this clone.
func (s *Store) loggedHere(agent string, v *Version) bool {
	id := eventOf(v).ID
	found := false
	s.historyLog(agent).Each(func(line []byte) error {
		if strings.Contains(string(line), id) {
			found = true
		}
		return nil
	})
	return found
}

// An Unapproved version is a kept version newer than the agent's current
// one that is not approved, and why.
type Unapproved struct {
	Version int    `json:"version"`
	Why     string `json:"why"`
}

// Unapproved lists the agent's kept versions newer than version after
// (its current one; 0: none) that are not approved, oldest first. A
// version whose json does not parse is listed too.
func (s *Store) Unapproved(ctx context.Context, agent string, after int) ([]Unapproved, error) {
	ns, err := s.Versions(agent)
	if err != nil {
		return nil, err
	}
	var out []Unapproved
	for _, n := range ns {
		if n <= after {
			continue
		}
		v, err := s.Version(agent, n)
		if err != nil {
			out = append(out, Unapproved{Version: n, Why: err.Error()})
			continue
		}
		if c := s.Check(ctx, agent, v); !c.Approved {
			out = append(out, Unapproved{Version: n, Why: c.Why})
		}
	}
	return out, nil
}
