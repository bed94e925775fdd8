package learn

import (
	"strings"

	"github.com/orket/orket"
	"github.com/orket/orket/scope"
)

// ResolveScopes makes scope patterns given on a command line, relative to
// the directory wd as git pathspecs are (":/" names the root),
// repository-relative; one that climbs out of the work tree is E_USAGE.
func ResolveScopes(repo *orket.Repo, wd string, given []string) ([]string, error) {
	scopes, err := scope.ResolveFrom(repo.Root, wd, given)
	if err != nil {
		return nil, &orket.Error{Code: orket.EUsage, Err: err, Msg: err.Error(),
			Hint: "scopes are relative to the current directory, as git pathspecs are (:/ for the repository root)"}
	}
	return scopes, nil
}

// A ServerScope bounds every call a long-running server (orket mcp)
// serves: a call's scope lies inside it.
type ServerScope struct{ scope scope.Scope }

// NewServerScope is the server scope of repository-relative patterns.
func NewServerScope(patterns []string) (*ServerScope, error) {
	sc, err := scope.Parse(patterns)
	if err != nil {
		return nil, orket.Errorf(orket.EUsage, "scopes are repository-relative directories or globs such as pkg/api", "%v", err)
	}
	return &ServerScope{scope: sc}, nil
}

// Patterns are the server scope's patterns.
func (s *ServerScope) Patterns() []string { return s.scope.Patterns() }

// Narrow is a call's scope: the server's when the call names none; each
// pattern it names must lie inside the server's (see scope.Scope.Holds),
// or the call is E_WRITE_OUT_OF_SCOPE.
func (s *ServerScope) Narrow(given []string) ([]string, error) {
	if len(given) == 0 {
		return s.scope.Patterns(), nil
	}
	for _, p := range given {
		if err := scope.Check(p); err != nil {
			return nil, orket.Errorf(orket.EUsage, "scopes are repository-relative directories or globs such as pkg/api", "%v", err)
		}
		if !s.scope.Holds(p) {
			return nil, orket.Errorf(orket.EWriteOutOfScope, "name a scope inside the server's: "+strings.Join(s.scope.Patterns(), ", "),
				"scope %q is not inside the server's scope", p)
		}
	}
	return given, nil
}
