package config

import (
	"path"
	"slices"
	"strings"

	"github.com/orket/orket/internal/lazyre"
)

var simpleCommandSep = lazyre.New(`&&|\|\||[;|\n]`)

// rewriter returns the first simple command of a command line (a script
// body, a Makefile recipe) that rewrites the files it checks — a fixer or
// formatter in its writing mode: eslint --fix, prettier --write, gofmt -w,
// black without --check, cargo fmt without --check, ruff check when the
// project's ruff configuration sets fix = true (ruffFixes) — or "" when
// there is none. A verify step must only look: orket reverts a failed
// edit, but a step that rewrites files changes what it verifies.
func rewriter(cmdline string, ruffFixes bool) string {
	for _, simple := range simpleCommandSep().Split(cmdline, -1) {
		if rewrites(strings.Fields(simple), ruffFixes) {
			return strings.Join(strings.Fields(simple), " ")
		}
	}
	return ""
}

// rewrites reports whether one simple command rewrites files.
func rewrites(words []string, ruffFixes bool) bool {
	words = withoutRunners(words)
	if len(words) == 0 {
		return false
	}
	c := simpleCommand{
		prog: strings.TrimPrefix(path.Base(strings.Trim(words[0], `"'`)), "@"), // @eslint, $(MAKE)'s names
		args: words[1:],
	}
	// Any tool's writing flags.
	if c.has("--fix", "--write", "--apply", "--apply-unsafe", "--in-place", "--unsafe-fixes") &&
		!c.has("--no-fix", "--check", "--dry-run", "--fix-dry-run") {
		return true
	}
	if slices.ContainsFunc(c.args, func(a string) bool {
		return strings.Contains(a, "spotlessApply") || strings.Contains(a, "spotless:apply")
	}) {
		return true
	}
	return c.toolRewrites(ruffFixes)
}

// withoutRunners drops a simple command's leading assignments and
// runners: FOO=1 npx eslint, pnpm exec prettier, poetry run black,
// python -m black, go run mvdan.cc/gofumpt.
func withoutRunners(words []string) []string {
	for len(words) > 0 {
		w := words[0]
		switch {
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "-"),
			w == "npx", w == "bunx", w == "exec", w == "env", w == "command", w == "@":
			words = words[1:]
		case (w == "pnpm" || w == "yarn" || w == "bun" || w == "npm") && len(words) > 1 && (words[1] == "exec" || words[1] == "dlx" || words[1] == "x"):
			words = words[2:]
		case (w == "poetry" || w == "uv" || w == "pipenv" || w == "hatch" || w == "pdm") && len(words) > 1 && words[1] == "run":
			words = words[2:]
		case (w == "python" || w == "python3") && len(words) > 2 && words[1] == "-m":
			words = words[2:]
		case w == "go" && len(words) > 2 && words[1] == "run":
			words = append([]string{path.Base(words[2])}, words[3:]...)
		default:
			return words
		}
	}
	return words
}

// A simpleCommand is the program a simple command runs and its
// arguments.
type simpleCommand struct {
	prog string
	args []string
}

// has reports whether any of flags is among the arguments, alone or with
// a value other than false.
func (c simpleCommand) has(flags ...string) bool {
	return slices.ContainsFunc(c.args, func(a string) bool {
		for _, f := range flags {
			if a == f || strings.HasPrefix(a, f+"=") && !strings.HasSuffix(a, "=false") {
				return true
			}
		}
		return false
	})
}

// sub reports whether the arguments begin with the subcommand words s,
// in order.
func (c simpleCommand) sub(s ...string) bool {
	return len(c.args) >= len(s) && slices.Equal(c.args[:len(s)], s)
}

// toolRewrites reports whether the command rewrites files by what its
// program is known to do in its writing mode.
func (c simpleCommand) toolRewrites(ruffFixes bool) bool {
	args, has, sub := c.args, c.has, c.sub
	switch c.prog {
	case "gofmt", "goimports", "gofumpt", "shfmt", "prettier", "golines":
		return has("-w")
	case "clang-format", "yapf", "autopep8", "autoflake":
		return has("-i")
	case "sed", "perl": // -i, -i.bak, perl -pi
		return slices.ContainsFunc(args, func(a string) bool {
			return strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i") && (c.prog == "perl" || strings.HasPrefix(a, "-i"))
		}) || has("--in-place")
	case "black", "blue":
		return !has("--check", "--diff")
	case "isort":
		return !has("--check", "--check-only", "-c", "--diff")
	case "rustfmt":
		return !has("--check")
	case "ruff":
		if sub("format") {
			return !has("--check", "--diff")
		}
		// ruff check, or ruff PATH as older versions spelled it.
		legacy := len(args) > 0 && !strings.HasPrefix(args[0], "-") &&
			!slices.Contains([]string{"check", "rule", "config", "linter", "clean", "version", "server", "analyze"}, args[0])
		return (sub("check") || legacy) && ruffFixes && !has("--no-fix", "--diff", "--watch")
	case "cargo":
		return sub("fmt") && !has("--check") || sub("fix")
	case "go":
		return sub("fmt") || sub("fix") || sub("generate") || sub("mod", "tidy") && !has("-diff")
	case "terraform", "tofu":
		return sub("fmt") && !has("-check")
	case "npm", "pnpm", "yarn":
		return sub("audit", "fix") || sub("pkg", "fix")
	case "dotnet":
		return sub("format") && !has("--verify-no-changes")
	case "golangci-lint":
		return sub("fmt") && !has("--diff", "-d")
	case "biome":
		return false // biome writes only with --write or --apply, above
	}
	return false
}
