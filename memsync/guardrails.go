package memsync

// Guardrail versions merge by number. Each (agent, N) is one version: the
// pair v<N>.md and v<N>.json. Against the version this clone last synced
// (the base):
//
//   - a version only one side has is taken;
//   - a version only one side changed since the base takes that side's;
//   - two versions with the same text (.md) and different metadata
//     (.json) are one version: the winner below is kept, no clash;
//   - two versions with different texts are a clash: the winner keeps the
//     number, and the other is kept as a proposal in the proposals log (a
//     record of type version_clash holding both), for a person to review.
//
// The winner is the version created first (created_at of its .json; one
// without is later than any), then the one whose content hashes lower: the
// same on every clone, whichever side is local.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"github.com/orket/orket/internal/rawjson"
	"github.com/orket/orket/store"
)

// A version is one guardrails version's files.
type version struct {
	md, js []byte // nil: the file is absent
}

func (v *version) present() bool { return v != nil && (v.md != nil || v.js != nil) }

func (v *version) equal(w *version) bool {
	return bytes.Equal(v.md, w.md) && (v.md == nil) == (w.md == nil) &&
		bytes.Equal(v.js, w.js) && (v.js == nil) == (w.js == nil)
}

// created is the version's created_at, or the largest time when it has
// none.
func (v *version) created() time.Time {
	var t time.Time
	if v.js != nil && json.Valid(v.js) {
		rawjson.Object(bytes.TrimSpace(v.js), func(key, val []byte) {
			if string(key) == "created_at" {
				if s, ok := rawjson.String(val); ok {
					t, _ = time.Parse(time.RFC3339Nano, s)
				}
			}
		})
	}
	if t.IsZero() {
		return time.Unix(1<<62, 0)
	}
	return t
}

func (v *version) sum() [32]byte {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(len(v.md))))
	h.Write([]byte{0})
	h.Write(v.md)
	h.Write(v.js)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// wins reports whether v keeps the number against w.
func (v *version) wins(w *version) bool {
	cv, cw := v.created(), w.created()
	if !cv.Equal(cw) {
		return cv.Before(cw)
	}
	sv, sw := v.sum(), w.sum()
	return bytes.Compare(sv[:], sw[:]) < 0
}

// A versionKey names a version.
type versionKey struct {
	Agent string
	N     int
}

// A Clash is a version number two clones wrote with different texts.
type Clash struct {
	Agent    string `json:"agent"`
	Version  int    `json:"version"`
	Proposal string `json:"proposal"` // the id of its record in memory/proposals.jsonl
}

// mergeVersions merges the versions of the base, this clone and the
// remote. It returns the merged versions and, for each clash, its record
// for the proposals log.
func mergeVersions(base, local, remote map[versionKey]*version) (map[versionKey]*version, []Clash, [][]byte) {
	keys := map[versionKey]bool{}
	for _, m := range []map[versionKey]*version{local, remote} {
		for k, v := range m {
			if v.present() {
				keys[k] = true
			}
		}
	}
	sorted := make([]versionKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Agent != sorted[j].Agent {
			return sorted[i].Agent < sorted[j].Agent
		}
		return sorted[i].N < sorted[j].N
	})
	out := map[versionKey]*version{}
	var clashes []Clash
	var recs [][]byte
	for _, k := range sorted {
		l, r, b := local[k], remote[k], base[k]
		switch {
		case !l.present():
			out[k] = r
		case !r.present(), l.equal(r):
			out[k] = l
		case b.present() && l.equal(b):
			out[k] = r
		case b.present() && r.equal(b):
			out[k] = l
		default:
			win, lose := l, r
			if r.wins(l) {
				win, lose = r, l
			}
			out[k] = win
			if !bytes.Equal(l.md, r.md) {
				rec, id := clashRecord(k, win, lose)
				clashes = append(clashes, Clash{Agent: k.Agent, Version: k.N, Proposal: id})
				recs = append(recs, rec)
			}
		}
	}
	return out, clashes, recs
}

// ClashType is the type of the proposals log's records that keep a
// clashing guardrails version.
const ClashType = "version_clash"

type clashSide struct {
	Text     string          `json:"md"`
	Metadata json.RawMessage `json:"json,omitempty"`
}

// clashRecord is the proposals log's record of a clash: the same bytes on
// every clone that finds it, so it is one record however many find it.
func clashRecord(k versionKey, win, lose *version) ([]byte, string) {
	sw, sl := win.sum(), lose.sum()
	h := sha256.Sum256(append(sw[:], sl[:]...))
	id := "clash-" + k.Agent + "-v" + strconv.Itoa(k.N) + "-" + hex.EncodeToString(h[:6])
	side := func(v *version) clashSide {
		s := clashSide{Text: string(v.md)}
		if v.js != nil {
			var buf bytes.Buffer
			if json.Compact(&buf, v.js) == nil {
				s.Metadata = buf.Bytes()
			} else {
				s.Metadata, _ = json.Marshal(string(v.js))
			}
		}
		return s
	}
	rec := struct {
		Schema     string    `json:"schema_version"`
		ID         string    `json:"id"`
		Type       string    `json:"type"`
		Time       string    `json:"time,omitempty"`
		Agent      string    `json:"agent"`
		Status     string    `json:"status"`
		Version    int       `json:"version"`
		LessonText string    `json:"lesson_text"`
		Kept       clashSide `json:"kept"`
		Clashing   clashSide `json:"clashing"`
	}{
		Schema: store.ProposalSchema, ID: id, Type: ClashType, Agent: k.Agent, Status: "proposed", Version: k.N,
		LessonText: "Two clones wrote guardrails v" + strconv.Itoa(k.N) + " of " + k.Agent +
			" with different texts; the first kept the number, the other is proposed here for review.",
		Kept: side(win), Clashing: side(lose),
	}
	// The later of the two creation times: a time both clones agree on.
	latest := time.Time{}
	for _, v := range []*version{win, lose} {
		if c := v.created(); c.Year() < 10000 && c.After(latest) {
			latest = c
		}
	}
	if !latest.IsZero() {
		rec.Time = latest.UTC().Format(time.RFC3339Nano)
	}
	b, _ := json.Marshal(rec)
	return b, id
}

// newestVersions returns the keys of the newest max versions of each
// agent (all when max is 0).
func newestVersions(vs map[versionKey]*version, max int) map[versionKey]bool {
	byAgent := map[string][]int{}
	for k, v := range vs {
		if v.present() {
			byAgent[k.Agent] = append(byAgent[k.Agent], k.N)
		}
	}
	out := map[versionKey]bool{}
	for a, ns := range byAgent {
		sort.Sort(sort.Reverse(sort.IntSlice(ns)))
		if max > 0 && len(ns) > max {
			ns = ns[:max]
		}
		for _, n := range ns {
			out[versionKey{a, n}] = true
		}
	}
	return out
}
