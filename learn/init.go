package learn

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

// An InitResult is orket init: the orket.yaml written, the steps
// detected and those left out, and every file written.
type InitResult struct {
	Code     orket.Code `json:"code"`
	Config   string     `json:"config"`
	Detected []string   `json:"detected"`
	Profile  string     `json:"profile"`
	Steps    []InitStep `json:"steps"`
	// Skipped lists the manifests and Makefile test targets found and left
	// out of the profile, each with its reason.
	Skipped []config.Skip `json:"skipped"`
	// Missing lists the programs the steps run that are not where the
	// steps would find them.
	Missing []MissingTool `json:"missing"`
	// Runtimes lists the runtime versions the manifests ask for, and
	// those installed.
	Runtimes []RuntimeCheck `json:"runtimes"`
	Wrote    []string       `json:"wrote"`
}

// An InitStep is a verify step as orket init wrote it.
type InitStep struct {
	Name    string `json:"name"`
	Run     string `json:"run"`
	Dir     string `json:"dir,omitempty"`
	Timeout string `json:"timeout,omitempty"` // as orket.yaml spells it: 5m, 90s
	// Note says what in the project's own configuration chose the
	// command (init only).
	Note string `json:"note,omitempty"`
}

// Init writes file (orket.yaml) with the verify profile detected from the
// repository, and .orket/.gitignore; an existing file is left alone unless
// force. It says which programs the steps run are missing, and asks the
// runtimes the manifests name for their versions (node --version, python3
// --version, rustc --version, go version) to compare them with what the
// project asks for.
func Init(r *txn.Repo, file string, force bool) (*InitResult, error) {
	if _, err := os.Lstat(file); err == nil && !force {
		return nil, orket.Errorf(orket.EUsage, "pass --force to overwrite it", "%s already exists; left untouched", r.DisplayPath(file))
	}
	det, err := config.Detect(r.Root)
	if err != nil {
		return nil, &orket.Error{Code: orket.EInternal, Err: err, Msg: "detect verify steps: " + err.Error(), Hint: "check the repository's permissions"}
	}
	data := config.Render(det)
	if _, err := config.Parse(data, file); err != nil {
		return nil, &orket.Error{Code: orket.EInternal, Err: err, Msg: "init produced an invalid orket.yaml: " + err.Error(),
			Hint: "this is a bug in orket; please report it with the repository layout"}
	}
	res := &InitResult{Code: orket.OK, Config: r.DisplayPath(file), Detected: det.Found, Profile: "quick", Steps: []InitStep{}, Skipped: det.Skipped}
	if res.Detected == nil {
		res.Detected = []string{}
	}
	if res.Skipped == nil {
		res.Skipped = []config.Skip{}
	}
	for _, s := range det.Steps {
		res.Steps = append(res.Steps, InitStep{Name: s.Name, Run: s.Command(), Dir: s.Dir, Note: det.Notes[s.Name]})
	}
	res.Missing = missingTools(r.Root, det)
	res.Runtimes = checkRuntimes(r.Root, det)
	if err := writeFile(file, data); err != nil {
		return nil, writeError(file, err)
	}
	res.Wrote = append(res.Wrote, r.DisplayPath(file))
	ignore := filepath.Join(r.Root, store.Dir, store.IgnoreFile)
	if _, err := os.Lstat(ignore); errors.Is(err, os.ErrNotExist) || force {
		if err := writeFile(ignore, []byte(store.InitIgnore)); err != nil {
			return nil, writeError(ignore, err)
		}
		res.Wrote = append(res.Wrote, r.DisplayPath(ignore))
	}
	return res, nil
}

func writeError(file string, err error) error {
	return &orket.Error{Code: orket.EInternal, Err: err, Msg: "write " + file + ": " + unwrapPathError(err),
		Hint: "check the directory's permissions and free space"}
}

func unwrapPathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// writeFile writes a file of the user's atomically (temporary file, fsync,
// rename), never through a symlink in its last component.
func writeFile(name string, data []byte) error {
	root, err := fsroot.MkdirOpen(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer root.Close()
	return root.WriteFile(filepath.Base(name), data, 0o644, fsroot.Options{Sync: true})
}
