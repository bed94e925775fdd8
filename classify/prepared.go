package classify

import (
	"hash/fnv"
	"regexp/syntax"
	"sync"
)

// A prepared rule is what the classifier knows of its pattern before it
// runs it: the anchors, and the alternatives each searched for alone.
type prepared struct {
	anchors []string
	alts    []alternative
}

// prepare parses the pattern src for its anchors and alternatives.
func prepare(src string) prepared {
	t, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return prepared{}
	}
	return prepared{anchors: anchorsOf(t), alts: splitAlternatives(src, t.MaxCap())}
}

// builtinPrepared is the catalogue prepared, in Builtin's order: from
// preparedTable (prepared_table.go), which TestPreparedTable keeps equal
// to what prepare gives; a rule whose pattern changed since the table was
// written is prepared here. Parsing the catalogue's patterns cost every
// process that classifies 7 ms.
var builtinPrepared = sync.OnceValue(func() []prepared {
	builtin := Builtin()
	p := make([]prepared, len(builtin))
	for i := range builtin {
		src := builtin[i].Pattern.String()
		if i < len(preparedTable) && preparedTable[i].id == builtin[i].ID && preparedTable[i].sum == sourceSum(src) {
			p[i] = preparedTable[i].prepared(src)
			continue
		}
		p[i] = prepare(src)
	}
	return p
})

// A preparedEntry is a rule of the catalogue prepared ahead of time.
type preparedEntry struct {
	id      string
	sum     uint64 // sourceSum of the pattern it was prepared from
	anchors []string
	groups  int // the pattern's capture groups
	alts    []preparedAlt
}

// A preparedAlt is an alternative of a preparedEntry's pattern.
type preparedAlt struct {
	flags      string
	start, end int
	anchors    []string
	groups     int
}

func (e *preparedEntry) prepared(src string) prepared {
	if len(e.alts) == 0 {
		return prepared{anchors: e.anchors}
	}
	alts := make([]alternative, len(e.alts))
	for i, a := range e.alts {
		alts[i] = alternative{span: span{a.flags, a.start, a.end}, anchors: a.anchors, groups: a.groups}
	}
	return prepared{anchors: e.anchors, alts: numbered(src, alts, e.groups)}
}

// sourceSum is a pattern's source hashed (FNV-1a): a table entry whose sum
// differs was prepared from another pattern.
func sourceSum(src string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(src))
	return h.Sum64()
}
