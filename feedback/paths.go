package feedback

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orket/orket/internal/lazyre"
)

// Reviewers name what they guard: "do not touch api/openapi.yaml: the API
// team changes the spec". Rejections are clustered by the paths their
// reasons name, across scopes, categories and agents: a concern. A run
// that touches a concern's path (or, without a touch set, whose scope
// holds it) is told, whatever its scope's history.

// AdvisoryPath is the advisory of a path reviewers named.
const AdvisoryPath = "path"

// namedPath matches a path in free text: a word with a slash or a file
// extension ("api/openapi.yaml", "CHANGELOG.md", "pkg/api/").
var namedPath = lazyre.New("(?:^|[\\s`'\"(])((?:[\\w.@-]+/)+[\\w.@-]*|[\\w@-]+\\.(?:ya?ml|json|toml|md|txt|go|py|js|ts|rs|java|sql|lock|cfg|ini|proto|sh))(?:$|[\\s`'\"),;:.!?])")

// NamedPaths returns the paths a reason names, in order, without a
// trailing slash or leading "./".
func NamedPaths(reason string) []string {
	var out []string
	for _, m := range namedPath().FindAllStringSubmatch(reason, -1) {
		p := strings.TrimSuffix(strings.TrimPrefix(m[1], "./"), "/")
		if p != "" && !strings.Contains(p, "://") && !contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// pathConcerns are the advisories of the paths the rejections' reasons
// name that the run touches (rq.touchesPath), the most rejected first;
// seen collects the entries they rest on.
func pathConcerns(rejections []*Entry, rq relation, seen map[string]bool) []Advisory {
	byPath := map[string][]*Entry{}
	var paths []string
	for _, e := range rejections {
		for _, p := range NamedPaths(e.Reason) {
			if byPath[p] == nil {
				paths = append(paths, p)
			}
			byPath[p] = append(byPath[p], e)
		}
	}
	var out []Advisory
	for _, p := range paths {
		es := byPath[p]
		if !rq.touchesPath(p) {
			continue
		}
		a := Advisory{Kind: AdvisoryPath, Item: p, Count: len(es)}
		for _, e := range es {
			if !contains(a.Reasons, e.Reason) {
				a.Reasons = append(a.Reasons, e.Reason)
			}
			a.IDs = append(a.IDs, e.ID)
			seen[e.ID] = true
		}
		latest := es[len(es)-1].Reason
		a.Text = fmt.Sprintf("Reviewers rejected %d change(s) over `%s`: %q", len(es), p, oneLine(latest, 160))
		out = append(out, a)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// touchesPath reports whether the run touches p (or below it), or,
// without a touch set, whether its scope holds p.
func (r relation) touchesPath(p string) bool {
	if len(r.q.Touch) > 0 {
		for _, t := range r.q.Touch {
			if t == p || strings.HasPrefix(t, p+"/") {
				return true
			}
		}
		return false
	}
	return r.holds([]string{p})
}
