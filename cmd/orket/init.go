package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

type initResult struct {
	Code     orket.Code `json:"code"`
	Config   string     `json:"config"`
	Detected []string   `json:"detected"`
	Profile  string     `json:"profile"`
	Steps    []stepView `json:"steps"`
	// Skipped lists the manifests and Makefile test targets found and left
	// out of the profile, each with its reason.
	Skipped []config.Skip `json:"skipped"`
	Wrote   []string      `json:"wrote"`
}

type stepView struct {
	Name    string `json:"name"`
	Run     string `json:"run"`
	Dir     string `json:"dir,omitempty"`
	Timeout string `json:"timeout,omitempty"` // as orket.yaml spells it: 5m, 90s
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
An ecosystem's own test command (go test ./..., npm run test, cargo test,
pytest) wins over a Makefile test target in the same directory; manifests
in example, sample and demo directories are left out. init lists what it
left out and why ("skipped" under --json), and proposes, as a comment,
protect: globs for the tests, lint configs and CI of what it found.
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
	res := &initResult{Code: orket.OK, Config: rel(r, file), Detected: det.Found, Profile: "quick", Steps: []stepView{}, Skipped: det.Skipped}
	if res.Detected == nil {
		res.Detected = []string{}
	}
	if res.Skipped == nil {
		res.Skipped = []config.Skip{}
	}
	for _, s := range det.Steps {
		res.Steps = append(res.Steps, stepView{Name: s.Name, Run: s.Command(), Dir: s.Dir})
	}
	if err := writeFile(file, data); err != nil {
		return nil, writeError(file, err)
	}
	res.Wrote = append(res.Wrote, rel(r, file))
	ignore := filepath.Join(r.Root, store.Dir, store.IgnoreFile)
	if _, err := os.Lstat(ignore); errors.Is(err, os.ErrNotExist) || force {
		if err := writeFile(ignore, []byte(store.InitIgnore)); err != nil {
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
	} else {
		fmt.Fprintf(w, "wrote %s: profile %s, detected from %s\n", res.Config, res.Profile, strings.Join(res.Detected, ", "))
		var rows [][]string
		for _, s := range res.Steps {
			row := []string{s.Name, s.Run}
			if s.Dir != "" {
				row = append(row, "(in "+s.Dir+")")
			}
			rows = append(rows, row)
		}
		for _, line := range alignedLines(rows) {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintln(w, "skipped:")
		var rows [][]string
		for _, s := range res.Skipped {
			rows = append(rows, []string{s.Path, s.Reason})
		}
		for _, line := range alignedLines(rows) {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	if len(res.Steps) == 0 {
		fmt.Fprintf(w, "next: edit verify.profiles.quick in %s (orket schema lists every key)\n", res.Config)
	}
	for _, f := range res.Wrote[1:] {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
}

// alignedLines lays rows out as columns two spaces apart, each column as
// wide as its widest cell (in runes), without trailing blanks; a row may
// have fewer cells than others.
func alignedLines(rows [][]string) []string {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	lines := make([]string, len(rows))
	for r, row := range rows {
		var b strings.Builder
		for i, cell := range row {
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		lines[r] = b.String()
	}
	return lines
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
