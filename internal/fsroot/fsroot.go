// Package fsroot writes and reads files beneath one directory without ever
// following a symbolic link: every path is resolved component by component
// inside the root (openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, or a
// walk of O_NOFOLLOW directory opens where the kernel lacks openat2). A
// path that would pass through a symlink, or climb out with "..", fails
// with an error wrapping ErrEscapes; nothing outside the root is ever
// touched, whatever an edit made of the tree.
//
// Writes are atomic: a temporary file in the same directory, written,
// fsynced when asked, and renamed over the name.
package fsroot

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// ErrEscapes reports a path that would leave the root or pass through a
// symbolic link.
var ErrEscapes = errors.New("path passes through a symlink or leaves the root")

// A Root is a directory that paths are resolved beneath.
type Root struct {
	dir string
	fd  int
}

// Open opens dir as a root.
func Open(dir string) (*Root, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return &Root{dir: dir, fd: fd}, nil
}

// MkdirOpen is Open for a directory orket writes into: dir, with any
// parent it lacks, is made first (0755).
func MkdirOpen(dir string) (*Root, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return Open(dir)
}

// Close releases the root's descriptor.
func (r *Root) Close() error { return unix.Close(r.fd) }

// Dir returns the root's directory.
func (r *Root) Dir() string { return r.dir }

var noOpenat2 struct {
	once sync.Once
	yes  bool
}

// split checks a slash path relative to the root and returns its parent
// directory and base name.
func split(rel string) (dir, base string, err error) {
	if rel == "" || strings.HasPrefix(rel, "/") || path.Clean(rel) != rel || rel == "." {
		return "", "", fmt.Errorf("%q: %w", rel, ErrEscapes)
	}
	for _, c := range strings.Split(rel, "/") {
		if c == ".." {
			return "", "", fmt.Errorf("%q: %w", rel, ErrEscapes)
		}
	}
	dir, base = path.Split(rel)
	return strings.TrimSuffix(dir, "/"), base, nil
}

// openDir opens the directory rel ("" for the root itself) without
// following symlinks.
func (r *Root) openDir(rel string) (int, error) {
	if rel == "" {
		// A descriptor of its own (not a dup: a dup shares the offset of
		// a directory being read).
		return unix.Openat(r.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	noOpenat2.once.Do(func() {
		_, err := unix.Openat2(r.fd, ".", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC})
		noOpenat2.yes = errors.Is(err, unix.ENOSYS)
	})
	if !noOpenat2.yes && len(rel) < unix.PathMax {
		fd, err := unix.Openat2(r.fd, rel, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		return fd, r.pathErr("open", rel, err)
	}
	// Without openat2, or for a path longer than the kernel takes in one
	// call (PATH_MAX): one directory at a time.
	fd, err := unix.Dup(r.fd)
	if err != nil {
		return -1, err
	}
	for _, c := range strings.Split(rel, "/") {
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			err = notDirOrLink(fd, c, err)
			unix.Close(fd)
			return -1, r.pathErr("open", rel, err)
		}
		unix.Close(fd)
		fd = next
	}
	return fd, nil
}

// notDirOrLink tells apart the two reasons a directory open with
// O_NOFOLLOW fails on an existing name: a symlink (ELOOP, reported as an
// escape) or something that is not a directory (ENOTDIR).
func notDirOrLink(dirfd int, name string, err error) error {
	if !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) {
		return err
	}
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return unix.ENOTDIR
	}
	return unix.ELOOP
}

func (r *Root) pathErr(op, rel string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return &os.PathError{Op: op, Path: rel, Err: ErrEscapes}
	}
	return &os.PathError{Op: op, Path: rel, Err: err}
}

// at opens rel's parent directory and calls fn with it and rel's base name.
func (r *Root) at(op, rel string, fn func(dirfd int, base string) error) error {
	dir, base, err := split(rel)
	if err != nil {
		return &os.PathError{Op: op, Path: rel, Err: ErrEscapes}
	}
	fd, err := r.openDir(dir)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return r.pathErr(op, rel, fn(fd, base))
}

// OpenDir opens the directory rel ("" for the root) for reading, never
// through a symlink, whatever the length of rel.
func (r *Root) OpenDir(rel string) (*os.File, error) {
	if rel != "" {
		if _, _, err := split(rel); err != nil {
			return nil, &os.PathError{Op: "open", Path: rel, Err: ErrEscapes}
		}
	}
	fd, err := r.openDir(rel)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path.Join(r.dir, rel)), nil
}

// ReadDirNames lists the names in directory rel, opened beneath the root
// without following symlinks; a missing directory has none.
func (r *Root) ReadDirNames(rel string) ([]string, error) {
	d, err := r.OpenDir(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// RemoveAll removes rel and everything below it, never following a
// symlink (a symlink is removed, not what it points to). A missing rel
// is not an error.
func (r *Root) RemoveAll(rel string) error {
	return r.at("remove", rel, func(dfd int, base string) error {
		return removeAllAt(dfd, base)
	})
}

func removeAllAt(dfd int, name string) error {
	err := unix.Unlinkat(dfd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return err
	}
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(fd), name)
	// Read a batch, remove it, read again from the start: removing while
	// reading would skip entries.
	for {
		names, _ := d.Readdirnames(1024)
		if len(names) == 0 {
			break
		}
		for _, n := range names {
			if err := removeAllAt(fd, n); err != nil {
				d.Close()
				return err
			}
		}
		if _, err := d.Seek(0, io.SeekStart); err != nil {
			d.Close()
			return err
		}
	}
	d.Close()
	err = unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// Lstat returns what rel is, without following a final symlink.
func (r *Root) Lstat(rel string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := r.at("lstat", rel, func(fd int, base string) error {
		return unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	})
	return st, err
}

// Readlink returns a symlink's target.
func (r *Root) Readlink(rel string) (string, error) {
	var target string
	err := r.at("readlink", rel, func(fd int, base string) error {
		buf := make([]byte, 4096)
		for {
			n, err := unix.Readlinkat(fd, base, buf)
			if err != nil {
				return err
			}
			if n < len(buf) {
				target = string(buf[:n])
				return nil
			}
			buf = make([]byte, 2*len(buf))
		}
	})
	return target, err
}

// Open opens the regular file rel for reading; a symlink is refused.
func (r *Root) Open(rel string) (*os.File, error) {
	var f *os.File
	err := r.at("open", rel, func(fd int, base string) error {
		nfd, err := unix.Openat(fd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		f = os.NewFile(uintptr(nfd), path.Join(r.dir, rel))
		return nil
	})
	return f, err
}

// ReadFile reads the regular file rel.
func (r *Root) ReadFile(rel string) ([]byte, error) {
	f, err := r.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// MkdirAll creates rel and its missing parents with perm (before umask).
// An existing component that is not a directory (a symlink included)
// fails.
func (r *Root) MkdirAll(rel string, perm fs.FileMode) error {
	if rel == "" {
		return nil
	}
	if _, _, err := split(rel); err != nil {
		return &os.PathError{Op: "mkdir", Path: rel, Err: ErrEscapes}
	}
	fd, err := unix.Dup(r.fd)
	if err != nil {
		return err
	}
	done := ""
	for _, c := range strings.Split(rel, "/") {
		done = path.Join(done, c)
		if err := unix.Mkdirat(fd, c, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(fd)
			return r.pathErr("mkdir", done, err)
		}
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			err = notDirOrLink(fd, c, err)
			unix.Close(fd)
			return r.pathErr("mkdir", done, err)
		}
		unix.Close(fd)
		fd = next
	}
	return unix.Close(fd)
}

// Options of a write.
type Options struct {
	Sync bool // fsync the file and its directory
	// GitLock writes through "<name>.lock", as git does for refs and the
	// index, so a git process running beside orket sees the file locked.
	// A stale lock is replaced (orket holds the repository lock), unless
	// LockHeld is set.
	GitLock bool
	// LockHeld, with GitLock, is called when the lock exists, with the
	// number of times it was found so (from 1): nil tries again, after
	// whatever wait it chose; an error fails the write with that error,
	// the lock left to whoever holds it.
	LockHeld func(tries int) error
	// Check, if set, is called once the new content is written and
	// (with GitLock) the lock is held, just before the rename: an error
	// leaves the file as it was. It makes a write a compare-and-swap.
	Check func() error
}

// TempPrefix starts the name of the temporary file an atomic write
// (WriteFrom, Symlink) makes beside its target and renames onto it; a
// process killed in between leaves it behind.
const TempPrefix = ".orket-tmp-"

// WriteFile writes data to rel atomically with the permission bits perm
// (exactly: umask does not apply), creating missing parent directories.
func (r *Root) WriteFile(rel string, data []byte, perm fs.FileMode, o Options) error {
	return r.WriteFrom(rel, perm, o, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFrom writes what fn writes to rel, atomically, with perm.
func (r *Root) WriteFrom(rel string, perm fs.FileMode, o Options, fn func(io.Writer) error) error {
	dir, _, err := split(rel)
	if err != nil {
		return &os.PathError{Op: "write", Path: rel, Err: ErrEscapes}
	}
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return r.at("write", rel, func(dfd int, base string) error {
		tmp := TempPrefix + randHex()
		if o.GitLock {
			tmp = base + ".lock"
		}
		const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
		fd, err := unix.Openat(dfd, tmp, flags, 0o600)
		for tries := 1; errors.Is(err, unix.EEXIST) && o.GitLock; tries++ {
			switch {
			case o.LockHeld != nil:
				if herr := o.LockHeld(tries); herr != nil {
					return herr
				}
			case tries > 1:
				return err
			default:
				unix.Unlinkat(dfd, tmp, 0)
			}
			fd, err = unix.Openat(dfd, tmp, flags, 0o600)
		}
		if err != nil {
			return err
		}
		f := os.NewFile(uintptr(fd), tmp)
		err = fn(f)
		if err == nil {
			err = fchmodExact(fd, perm)
		}
		if err == nil && o.Sync {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil && o.Check != nil {
			err = o.Check()
		}
		if err == nil {
			err = unix.Renameat(dfd, tmp, dfd, base)
		}
		if err != nil {
			unix.Unlinkat(dfd, tmp, 0)
			return err
		}
		if o.Sync {
			return unix.Fsync(dfd)
		}
		return nil
	})
}

// fchmodExact sets the permission and set-id/sticky bits of perm.
func fchmodExact(fd int, perm fs.FileMode) error { return unix.Fchmod(fd, unixMode(perm)) }

// Symlink makes rel a symlink to target, atomically replacing what was
// there (a file or symlink).
func (r *Root) Symlink(target, rel string) error {
	dir, _, err := split(rel)
	if err != nil {
		return &os.PathError{Op: "symlink", Path: rel, Err: ErrEscapes}
	}
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return r.at("symlink", rel, func(dfd int, base string) error {
		tmp := TempPrefix + randHex()
		if err := unix.Symlinkat(target, dfd, tmp); err != nil {
			return err
		}
		if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
			unix.Unlinkat(dfd, tmp, 0)
			return err
		}
		return nil
	})
}

// Chmod sets the mode bits of the file rel (never through a symlink).
func (r *Root) Chmod(rel string, perm fs.FileMode) error {
	return r.at("chmod", rel, func(dfd int, base string) error {
		fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_PATH, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		// fchmod does not take an O_PATH descriptor; the /proc alias
		// of the descriptor names the very file opened.
		return fchmodatPath(fd, perm)
	})
}

func fchmodatPath(fd int, perm fs.FileMode) error {
	return unix.Fchmodat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unixMode(perm), 0)
}

// FileMode is the fs.FileMode of the kernel's mode bits p (as a stat
// gives them): its permission, set-id and sticky bits; unixMode the other
// way round.
func FileMode(p uint32) fs.FileMode {
	m := fs.FileMode(p & 0o777)
	if p&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if p&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if p&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// unixMode is perm's permission, set-id and sticky bits as the kernel
// spells them.
func unixMode(perm fs.FileMode) uint32 {
	mode := uint32(perm.Perm())
	if perm&fs.ModeSetuid != 0 {
		mode |= unix.S_ISUID
	}
	if perm&fs.ModeSetgid != 0 {
		mode |= unix.S_ISGID
	}
	if perm&fs.ModeSticky != 0 {
		mode |= unix.S_ISVTX
	}
	return mode
}

// Remove removes the file or symlink rel; a missing file is not an error.
func (r *Root) Remove(rel string) error {
	err := r.at("remove", rel, func(dfd int, base string) error {
		err := unix.Unlinkat(dfd, base, 0)
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a missing parent: nothing to remove
	}
	return err
}

// Rmdir removes the directory rel if it is empty; it reports whether it
// did. A directory that is not empty, or missing, is left and not an error.
func (r *Root) Rmdir(rel string) (bool, error) {
	removed := false
	err := r.at("rmdir", rel, func(dfd int, base string) error {
		err := unix.Unlinkat(dfd, base, unix.AT_REMOVEDIR)
		switch {
		case err == nil:
			removed = true
			return nil
		case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTEMPTY), errors.Is(err, unix.EEXIST), errors.Is(err, unix.ENOTDIR):
			return nil
		}
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return removed, err
}

// RemoveEmptyParents removes rel's parent directories that are empty,
// deepest first, stopping at the first that is not.
func (r *Root) RemoveEmptyParents(rel string) {
	for d := path.Dir(rel); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if ok, err := r.Rmdir(d); !ok || err != nil {
			return
		}
	}
}

func randHex() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
