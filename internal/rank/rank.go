// Package rank orders what was counted for a person to read: the most
// frequent first, ties in a stable order, so that a report or a table of
// counts reads the same on every run.
package rank

import "sort"

// ByCount returns the keys of m, the highest count first, keys of the same
// count in lexical order.
func ByCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}
