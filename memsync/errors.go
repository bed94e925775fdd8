package memsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/transport"
)

// An UnreachableError reports a remote that could not be reached: no
// network, a refused connection, a timeout, no repository at its address.
// Nothing was changed on either side. With memory.sync: auto the caller
// warns and goes on.
type UnreachableError struct {
	Remote string // the remote's name, or its URL
	URL    string // its URL, without credentials
	Err    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("remote %s unreachable: %s", where(e.Remote, e.URL), oneLine(e.Err))
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// An AuthError reports credentials the remote refused, or none found, or
// an ssh host key that known_hosts does not vouch for.
type AuthError struct {
	Remote string
	URL    string
	Err    error
	// Hint says what was tried and what to do, on one line.
	Hint string
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("remote %s refused the credentials: %s", where(e.Remote, e.URL), oneLine(e.Err))
}

func (e *AuthError) Unwrap() error { return e.Err }

// A ContentionError reports a push that lost the race to other clones
// Attempts times in a row. The local files hold the merge; the next sync
// publishes it.
type ContentionError struct {
	Remote   string
	Attempts int
}

func (e *ContentionError) Error() string {
	return fmt.Sprintf("remote %s kept moving: %d pushes lost the race to other clones (the local memory is merged; sync again)", e.Remote, e.Attempts)
}

// A RefusedError reports a remote that refused to update the memory ref
// for another reason than a race (a hook declined it, the ref is
// protected or hidden): trying again would not help.
type RefusedError struct {
	Remote string
	URL    string
	Status string // what the remote said
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("remote %s refused to update %s: %s", where(e.Remote, e.URL), RefName, oneLine(errors.New(e.Status)))
}

// A NoRemoteError reports a remote name the repository does not define.
type NoRemoteError struct {
	Name  string
	Known []string
}

func (e *NoRemoteError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("no remote %q: the repository has no remotes", e.Name)
	}
	return fmt.Sprintf("no remote %q (the repository has %s)", e.Name, strings.Join(e.Known, ", "))
}

// A FormatError reports a memory ref written by a newer orket.
type FormatError struct {
	Format string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("the remote's %s holds memory format %q, which this orket does not know: upgrade orket", RefName, e.Format)
}

// A DamagedError reports a memory ref whose tree is not one orket wrote
// (a name holding "/", "." or "..", an entry that is neither a file nor a
// directory, more entries than any memory holds): it is refused before
// anything is read from it, and nothing changes on either side. Remote is
// empty when it is this clone's own ref.
type DamagedError struct {
	Remote string
	URL    string
	Commit string // the damaged commit
	Path   string // the tree where it is ("" for the root)
	What   string // what is wrong there
}

func (e *DamagedError) Error() string {
	whose := "this clone's " + RefName
	if e.Remote != "" || e.URL != "" {
		whose = "remote " + where(e.Remote, e.URL) + "'s " + RefName
	}
	at := "its root tree"
	if e.Path != "" {
		at = e.Path + "/"
	}
	return fmt.Sprintf("%s (commit %.12s) is damaged: %s: %s; nothing changed on either side", whose, e.Commit, at, e.What)
}

// A damagedTree is what flatten finds wrong with a tree; the caller
// says whose it is (DamagedError).
type damagedTree struct {
	Path, What string
}

func (e *damagedTree) Error() string { return e.Path + ": " + e.What }

// errStale reports a push whose lease failed: the remote's memory ref had
// moved since it was fetched.
var errStale = errors.New("the remote's memory ref moved")

func where(name, u string) string {
	if name == "" || name == u {
		return u
	}
	return name + " (" + u + ")"
}

func oneLine(err error) string {
	if err == nil {
		return ""
	}
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// displayURL returns a URL fit to show: without a password or token.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil || u.Scheme == "" {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

// classifyErr turns a transport error into the typed error it is.
func classifyErr(remote, u string, err error) error {
	if err == nil {
		return nil
	}
	var ue *UnreachableError
	var ae *AuthError
	var re *RefusedError
	if errors.As(err, &ae) && ae.Remote == "" {
		ae.Remote, ae.URL = remote, u
	}
	if errors.As(err, &re) && re.Remote == "" {
		re.Remote, re.URL = remote, u
	}
	if errors.As(err, &ue) || errors.As(err, &ae) || errors.As(err, &re) || errors.Is(err, errStale) {
		return err
	}
	msg := strings.ToLower(err.Error())
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed),
		strings.Contains(msg, "unable to authenticate"), strings.Contains(msg, "no supported methods remain"),
		strings.Contains(msg, "permission denied (publickey"):
		return &AuthError{Remote: remote, URL: u, Err: err}
	case strings.Contains(msg, "knownhosts") || strings.Contains(msg, "known_hosts") || strings.Contains(msg, "host key"):
		return &AuthError{Remote: remote, URL: u, Err: err,
			Hint: "add the host's key to ~/.ssh/known_hosts (ssh-keyscan HOST >> ~/.ssh/known_hosts, after checking it), as ssh would ask you to"}
	}
	var ne net.Error
	var oe *net.OpError
	var de *net.DNSError
	switch {
	case errors.Is(err, transport.ErrRepositoryNotFound), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne), errors.As(err, &oe), errors.As(err, &de),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		strings.Contains(msg, "connection refused"), strings.Contains(msg, "no such host"),
		strings.Contains(msg, "i/o timeout"), strings.Contains(msg, "network is unreachable"),
		strings.Contains(msg, "does not appear to be a git repository"), strings.Contains(msg, "repository not found"):
		return &UnreachableError{Remote: remote, URL: u, Err: err}
	}
	return err
}
