package memsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	gitclient "github.com/go-git/go-git/v5/plumbing/transport/git"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/orket/orket/internal/gitrepo"
)

// A remote is where the memory is fetched from and pushed to.
type remote interface {
	// fetch brings the remote's memory commit, with every object it
	// needs, into the local store and returns it (zero: the remote has
	// no memory yet). haves gives memory commits this clone has.
	fetch(ctx context.Context, local storage.Storer, haves func() []plumbing.Hash) (plumbing.Hash, error)
	// push sets the remote's memory ref to next if it still is old
	// (errStale otherwise), sending the objects the remote lacks.
	push(ctx context.Context, local storage.Storer, old, next plumbing.Hash) error
}

// endpoint is a resolved remote: its name, and where to fetch from and
// push to.
type endpoint struct {
	name     string
	fetchURL string
	pushURL  string
}

// resolveRemote turns Options.Remote (a remote's name, a URL or a path)
// into URLs, as git would: the remote's url (and pushurl), with url.*.
// insteadOf rules applied.
func resolveRemote(o *Options) (*endpoint, error) {
	name := o.Remote
	if name == "" {
		name = "origin"
	}
	cfg, err := o.Repo.ConfigScoped(config.SystemScope)
	if err != nil {
		cfg, err = o.Repo.Config()
	}
	if err != nil {
		return nil, fmt.Errorf("read the repository's git config: %w", err)
	}
	if rc, ok := cfg.Remotes[name]; ok && len(rc.URLs) > 0 {
		ep := &endpoint{name: name, fetchURL: rc.URLs[0], pushURL: rc.URLs[0]}
		if s := cfg.Raw.Section("remote").Subsection(name); s != nil {
			if pu := s.Option("pushurl"); pu != "" {
				ep.pushURL = insteadOf(cfg, pu)
			}
		}
		return ep, nil
	}
	if looksLikeURL(name) {
		u := insteadOf(cfg, name)
		return &endpoint{name: displayURL(name), fetchURL: u, pushURL: u}, nil
	}
	var known []string
	for n := range cfg.Remotes {
		known = append(known, n)
	}
	sort.Strings(known)
	return nil, &NoRemoteError{Name: name, Known: known}
}

func looksLikeURL(s string) bool {
	return strings.Contains(s, "://") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") ||
		strings.HasPrefix(s, "~") || (strings.Contains(s, ":") && !strings.Contains(s, " "))
}

func insteadOf(cfg *config.Config, u string) string {
	var best *config.URL
	for _, rule := range cfg.URLs {
		if strings.HasPrefix(u, rule.InsteadOf) && (best == nil || len(rule.InsteadOf) > len(best.InsteadOf)) {
			best = rule
		}
	}
	if best == nil {
		return u
	}
	return best.ApplyInsteadOf(u)
}

// openRemote returns the remote to fetch from (and one to push to, when
// pushurl differs).
func openRemote(o *Options) (fetchFrom, pushTo remote, ep *endpoint, err error) {
	ep, err = resolveRemote(o)
	if err != nil {
		return nil, nil, nil, err
	}
	mk := func(u string) (remote, error) {
		e, err := transport.NewEndpoint(u)
		if err != nil {
			return nil, fmt.Errorf("remote %s: %w", ep.name, err)
		}
		switch e.Protocol {
		case "file":
			p := e.Path
			if strings.HasPrefix(p, "~/") {
				if home, err := homeDir(&o.Auth); err == nil {
					p = filepath.Join(home, p[2:])
				}
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(o.workTree(), p)
			}
			return &fileRemote{name: ep.name, url: displayURL(u), dir: p}, nil
		case "ssh", "http", "https", "git":
			return newSmartRemote(o, ep.name, u, e), nil
		}
		return nil, &ProtocolError{Remote: ep.name, Protocol: e.Protocol}
	}
	if fetchFrom, err = mk(ep.fetchURL); err != nil {
		return nil, nil, nil, err
	}
	pushTo = fetchFrom
	if ep.pushURL != ep.fetchURL {
		if pushTo, err = mk(ep.pushURL); err != nil {
			return nil, nil, nil, err
		}
	}
	return fetchFrom, pushTo, ep, nil
}

// fileRemote is a repository on this machine's file system. Objects are
// copied between the two object stores, and the ref is updated as git
// does (a lock file beside it, created exclusively, renamed over it), so
// the lease holds against other orkets and against git itself.
type fileRemote struct {
	name, url string
	dir       string
}

func (f *fileRemote) open() (storage.Storer, string, error) {
	r, err := git.PlainOpenWithOptions(f.dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		if errors.Is(err, git.ErrRepositoryNotExists) || errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("no git repository at %s", f.dir)
		}
		return nil, "", &UnreachableError{Remote: f.name, URL: f.url, Err: err}
	}
	fs, ok := r.Storer.(*filesystem.Storage)
	if !ok {
		return nil, "", fmt.Errorf("remote %s: not a repository on disk", f.name)
	}
	return r.Storer, fs.Filesystem().Root(), nil
}

func (f *fileRemote) fetch(ctx context.Context, local storage.Storer, _ func() []plumbing.Hash) (plumbing.Hash, error) {
	st, gitDir, err := f.open()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := readRef(gitDir, RefName)
	if err != nil || h.IsZero() {
		return h, err
	}
	objs, err := missing(st, h, func(x plumbing.Hash) bool { return local.HasEncodedObject(x) == nil })
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("fetch from %s: %w", f.name, err)
	}
	if err := copyObjects(local, st, objs); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("fetch from %s: %w", f.name, err)
	}
	return h, nil
}

func (f *fileRemote) push(ctx context.Context, local storage.Storer, old, next plumbing.Hash) error {
	st, gitDir, err := f.open()
	if err != nil {
		return err
	}
	if cur, err := readRef(gitDir, RefName); err != nil {
		return err
	} else if cur != old {
		return errStale
	}
	objs, err := missing(local, next, func(x plumbing.Hash) bool { return st.HasEncodedObject(x) == nil })
	if err != nil {
		return fmt.Errorf("push to %s: %w", f.name, err)
	}
	if err := copyObjects(st, local, objs); err != nil {
		return fmt.Errorf("push to %s: %w", f.name, err)
	}
	return casRef(ctx, gitDir, RefName, old, next)
}

// readRef reads a ref of the repository at gitDir as git stores it: its
// loose file, else its line in packed-refs; zero when it has none.
func readRef(gitDir, name string) (plumbing.Hash, error) { return gitrepo.ReadRef(gitDir, name) }

// casRef sets a ref from old to next the way git does, or fails with
// errStale when it no longer is old (or another writer holds its lock past
// a short wait).
func casRef(ctx context.Context, gitDir, name string, old, next plumbing.Hash) error {
	err := gitrepo.UpdateRef(ctx, gitDir, name, old, next, gitrepo.RefLog{Msg: "orket sync"})
	var locked *gitrepo.LockedError
	switch {
	case errors.Is(err, gitrepo.ErrStale):
		return errStale
	case errors.As(err, &locked):
		return fmt.Errorf("%w (%v)", errStale, locked)
	}
	return err
}

// smartRemote is a remote reached over ssh, http(s) or git://, through
// go-git's transport with the credentials git would use. Only the memory
// ref is negotiated: its objects, never the project's.
type smartRemote struct {
	o         *Options
	name, url string
	ep        *transport.Endpoint
	tr        transport.Transport
	creds     *credentials
}

func newSmartRemote(o *Options, name, u string, e *transport.Endpoint) *smartRemote {
	s := &smartRemote{o: o, name: name, url: displayURL(u), ep: e}
	switch e.Protocol {
	case "ssh":
		s.tr = gitssh.DefaultClient
	case "git":
		s.tr = gitclient.DefaultClient
	default:
		s.tr = githttp.DefaultClient
	}
	s.creds = newCredentials(o, e)
	return s
}

// withAuth runs op with the remote's credentials, asking for others (git
// credential fill) once when the remote wants them, and tells git's
// credential helpers how those went.
func (s *smartRemote) withAuth(ctx context.Context, op func(transport.AuthMethod) error) error {
	auth, err := s.creds.initial(ctx)
	if err != nil {
		return classifyErr(s.name, s.url, err)
	}
	err = op(auth)
	if isAuthErr(err) && s.creds.canAsk() {
		if auth2, aerr := s.creds.ask(ctx); aerr == nil && auth2 != nil {
			err = op(auth2)
			s.creds.report(ctx, err == nil || !isAuthErr(err))
		}
	} else if err == nil {
		s.creds.report(ctx, true)
	}
	if err != nil {
		err = classifyErr(s.name, s.url, err)
		var ae *AuthError
		if errors.As(err, &ae) && ae.Hint == "" {
			ae.Hint = s.creds.hint()
		}
	}
	return err
}

func isAuthErr(err error) bool {
	return errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed)
}

func (s *smartRemote) fetch(ctx context.Context, local storage.Storer, haves func() []plumbing.Hash) (plumbing.Hash, error) {
	var got plumbing.Hash
	err := s.withAuth(ctx, func(auth transport.AuthMethod) error {
		sess, err := s.tr.NewUploadPackSession(s.ep, auth)
		if err != nil {
			return err
		}
		defer sess.Close()
		ar, err := sess.AdvertisedReferencesContext(ctx)
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			got = plumbing.ZeroHash
			return nil
		}
		if err != nil {
			return err
		}
		h, ok := advertised(ar, RefName)
		got = h
		if !ok || local.HasEncodedObject(h) == nil {
			return nil
		}
		req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
		if ar.Capabilities.Supports(capability.NoProgress) {
			req.Capabilities.Set(capability.NoProgress)
		}
		req.Wants = []plumbing.Hash{h}
		for _, hv := range haves() {
			if local.HasEncodedObject(hv) == nil {
				req.Haves = append(req.Haves, hv)
			}
		}
		resp, err := sess.UploadPack(ctx, req)
		if err != nil {
			return err
		}
		defer resp.Close()
		var r io.Reader = resp
		switch {
		case req.Capabilities.Supports(capability.Sideband64k):
			r = sideband.NewDemuxer(sideband.Sideband64k, resp)
		case req.Capabilities.Supports(capability.Sideband):
			r = sideband.NewDemuxer(sideband.Sideband, resp)
		}
		return storePack(local, r)
	})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return got, nil
}

// looseStorer hides a store's PackfileWriter: a small pack is stored as
// loose objects rather than as one more pack in the user's repository.
type looseStorer struct {
	storer.EncodedObjectStorer
	storer.ReferenceStorer
}

// storePack stores a received pack: loose objects when it is small, a
// pack of its own otherwise.
func storePack(local storage.Storer, r io.Reader) error {
	const small = 4 << 20
	head := make([]byte, small+1)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	if n <= small {
		if n == 0 {
			return nil
		}
		return packfile.UpdateObjectStorage(looseStorer{local, local}, bytes.NewReader(head[:n]))
	}
	return packfile.UpdateObjectStorage(local, io.MultiReader(bytes.NewReader(head[:n]), r))
}

func advertised(ar *packp.AdvRefs, name string) (plumbing.Hash, bool) {
	refs, err := ar.AllReferences()
	if err != nil {
		return plumbing.ZeroHash, false
	}
	ref, err := refs.Reference(plumbing.ReferenceName(name))
	if err != nil || ref.Type() != plumbing.HashReference {
		return plumbing.ZeroHash, false
	}
	return ref.Hash(), true
}

func (s *smartRemote) push(ctx context.Context, local storage.Storer, old, next plumbing.Hash) error {
	return s.withAuth(ctx, func(auth transport.AuthMethod) error {
		sess, err := s.tr.NewReceivePackSession(s.ep, auth)
		if err != nil {
			return err
		}
		defer sess.Close()
		ar, err := sess.AdvertisedReferencesContext(ctx)
		if err != nil {
			return err
		}
		if cur, _ := advertised(ar, RefName); cur != old {
			return errStale
		}
		has, err := remoteHas(local, old)
		if err != nil {
			return err
		}
		objs, err := missing(local, next, has)
		if err != nil {
			return err
		}
		req := packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
		req.Commands = []*packp.Command{{Name: plumbing.ReferenceName(RefName), Old: old, New: next}}
		rd, wr := io.Pipe()
		req.Packfile = rd
		done := make(chan error, 1)
		go func() {
			e := packfile.NewEncoder(wr, local, !ar.Capabilities.Supports(capability.OFSDelta))
			_, err := e.Encode(objs, 10)
			if err != nil {
				done <- wr.CloseWithError(err)
				return
			}
			done <- wr.Close()
		}()
		rs, err := sess.ReceivePack(ctx, req)
		if err != nil && rs == nil {
			rd.Close()
			<-done
			return err
		}
		if err := <-done; err != nil {
			return err
		}
		if rs != nil {
			if rs.UnpackStatus != "" && rs.UnpackStatus != "ok" {
				return fmt.Errorf("the remote could not unpack the memory: %s", rs.UnpackStatus)
			}
			for _, c := range rs.CommandStatuses {
				if c.Status != "ok" {
					if leaseFailed(c.Status) {
						// The ref moved since it was advertised:
						// fetch, merge and try again.
						return fmt.Errorf("%w: %s", errStale, c.Status)
					}
					return &RefusedError{Status: c.Status}
				}
			}
		}
		return nil
	})
}

// remoteHas reports the objects a remote whose memory ref is at tip has
// for certain: the commits of tip's history (see isAncestor) and the
// objects of tip's tree.
func remoteHas(s storer.EncodedObjectStorer, tip plumbing.Hash) (func(plumbing.Hash) bool, error) {
	known := map[plumbing.Hash]bool{}
	if tip.IsZero() {
		return func(plumbing.Hash) bool { return false }, nil
	}
	commit, err := object.GetCommit(s, tip)
	if err != nil {
		return nil, err
	}
	var walk func(h plumbing.Hash) error
	walk = func(h plumbing.Hash) error {
		known[h] = true
		t, err := object.GetTree(s, h)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			if e.Mode.IsFile() {
				known[e.Hash] = true
			} else if !known[e.Hash] {
				if err := walk(e.Hash); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(commit.TreeHash); err != nil {
		return nil, err
	}
	return func(h plumbing.Hash) bool {
		if known[h] {
			return true
		}
		if o, err := s.EncodedObject(plumbing.CommitObject, h); err == nil && o.Type() == plumbing.CommitObject {
			return isAncestor(s, h, tip)
		}
		return false
	}, nil
}

// isAncestor reports whether a is b or in b's history. The walk stops at
// commits a day older than a (clocks differ, not by days), so that a
// commit that is not there costs the recent history, not all of it.
func isAncestor(s storer.EncodedObjectStorer, a, b plumbing.Hash) bool {
	if a.IsZero() || b.IsZero() {
		return a == b
	}
	ca, err := object.GetCommit(s, a)
	if err != nil {
		return false
	}
	floor := ca.Committer.When.Add(-24 * time.Hour)
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{b}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if h == a {
			return true
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := object.GetCommit(s, h)
		if err != nil || c.Committer.When.Before(floor) {
			continue
		}
		queue = append(queue, c.ParentHashes...)
	}
	return false
}

// A ProtocolError reports a remote whose URL names a transport orket
// does not speak.
type ProtocolError struct {
	Remote   string
	Protocol string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("remote %s: protocol %q is not supported (file, ssh, http, https, git are)", e.Remote, e.Protocol)
}

// leaseFailed reports whether a receive-pack status says the ref was not
// where the update expected it (another push won), rather than that the
// remote refused the update (a hook, a protected or hidden ref).
func leaseFailed(status string) bool {
	st := strings.ToLower(status)
	for _, s := range []string{"lock", "failed to update", "stale", "fetch first", "non-fast-forward"} {
		if strings.Contains(st, s) {
			return true
		}
	}
	return false
}
