package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/txn"
)

type initResult struct {
	Code     orket.Code `json:"code"`
	Config   string     `json:"config"`
	Detected []string   `json:"detected"`
	Profile  string     `json:"profile"`
	Steps    []stepView `json:"steps"`
	Wrote    []string   `json:"wrote"`
}

type stepView struct {
	Name string `json:"name"`
	Run  string `json:"run"`
	Dir  string `json:"dir,omitempty"`
}

func initCommand(o *options, result *any) *cli.Command {
	var force bool
	return &cli.Command{
		Name:      "init",
		Usage:     "write orket.yaml with verify profiles detected from the repository",
		UsageText: "orket init [--force]",
		Description: `init looks for go.mod, package.json scripts, Cargo.toml, Python test
configuration and a Makefile test target (at the root and two levels below)
and writes orket.yaml with a "quick" profile of the steps they imply, plus
.orket/.gitignore so orket's local state stays out of commits.
An existing orket.yaml is left alone unless --force is given.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing orket.yaml", Destination: &force, DisableDefaultText: true},
		},
		Action: func(c *cli.Context) error {
			res, err := runInit(o, force)
			if res != nil {
				*result = res
			}
			return err
		},
	}
}

func runInit(o *options, force bool) (*initResult, error) {
	r, err := openRepo(o)
	if err != nil {
		return nil, err
	}
	file, _ := configPath(o, r)
	if _, err := os.Lstat(file); err == nil && !force {
		return nil, orket.Errorf(orket.EUsage, "pass --force to overwrite it", "%s already exists; left untouched", rel(r, file))
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
	res := &initResult{Code: orket.OK, Config: rel(r, file), Detected: det.Found, Profile: "quick", Steps: []stepView{}}
	if res.Detected == nil {
		res.Detected = []string{}
	}
	for _, s := range det.Steps {
		res.Steps = append(res.Steps, stepView{Name: s.Name, Run: s.Command(), Dir: s.Dir})
	}
	if err := writeFile(file, data); err != nil {
		return nil, writeError(file, err)
	}
	res.Wrote = append(res.Wrote, rel(r, file))
	ignore := filepath.Join(r.Root, ".orket", ".gitignore")
	if _, err := os.Lstat(ignore); errors.Is(err, os.ErrNotExist) || force {
		if err := writeFile(ignore, []byte(config.GitIgnore)); err != nil {
			return nil, writeError(ignore, err)
		}
		res.Wrote = append(res.Wrote, rel(r, ignore))
	}
	if !o.json && !o.quiet {
		printInit(o, res)
	}
	return res, nil
}

func printInit(o *options, res *initResult) {
	w := o.stdout
	if len(res.Steps) == 0 {
		fmt.Fprintf(w, "wrote %s with a placeholder step: nothing to run was detected\n", res.Config)
		fmt.Fprintf(w, "next: edit verify.profiles.quick in %s (orket schema lists every key)\n", res.Config)
		return
	}
	fmt.Fprintf(w, "wrote %s: profile %s, detected from %s\n", res.Config, res.Profile, strings.Join(res.Detected, ", "))
	for _, s := range res.Steps {
		where := ""
		if s.Dir != "" {
			where = "  (in " + s.Dir + ")"
		}
		fmt.Fprintf(w, "  %-16s %s%s\n", s.Name, s.Run, where)
	}
	for _, f := range res.Wrote[1:] {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
}

// rel shows a path relative to the repository root when it is inside it.
func rel(r *txn.Repo, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if rp, err := filepath.Rel(r.Root, abs); err == nil && !strings.HasPrefix(rp, "..") {
		return filepath.ToSlash(rp)
	}
	return p
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
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := fsroot.Open(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.WriteFile(filepath.Base(name), data, 0o644, fsroot.Options{Sync: true})
}
