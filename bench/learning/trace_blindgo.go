package main

import "fmt"

// blindGoTrace is a notes service in Go, written after orket's learning
// rules were frozen and not tuned to them: store (notes, a Kind enum with
// a generated String method, SQL migrations embedded), index (full-text;
// a test that races now and then), render (embedded templates whose
// checksums are kept in render/templates.sha256; a Format enum), auth
// (tokens signed with a secret read from the environment in its init),
// server (the HTTP API on 127.0.0.1:17321, embedded static files with
// their checksums), syncer (pushes to a relay dialed on 127.0.0.1:16389;
// a State enum), cmd/notes (its flags), deploy (a systemd unit, a Caddy
// file), and a linter of its own (tools/lint: NL001, NL002).
//
// Where its hazards show: NOTES_TOKEN_SECRET unset panics auth's init in
// the test binaries of auth and server; an enum constant inserted without
// go generate breaks the build of the stale *_string.go ("invalid
// argument: index 1 out of bounds"), one appended fails the package's
// generated-file test; a changed or added embedded asset fails its
// package's checksum test (tools/assetsum); signature changes in store,
// index, render and auth break their callers (not enough arguments,
// assignment mismatch); NL002 (an error formatted with %v) in four
// packages; the server's port held by something else; the relay down; a
// flaky index test; protected migrations and deploy files; a reviewer's
// no to cmd/notes/flags.go.
func blindGoTrace() Trace {
	tr := Trace{
		Name: "blindgo",
		Need: []string{"go"},
		Files: map[string]string{
			".gitignore": `/notes
/bin/
`,
			"README.md": `# notes

A small notes service: a store of notes, a full-text index, rendering
(embedded templates), token auth, an HTTP server and a sync client that
pushes changes to a relay.

Local setup: export NOTES_TOKEN_SECRET (any value in development), run the
relay on 127.0.0.1:16389 (notes-relay -dev), then go test ./....

Generated files: go generate ./... (enums); after changing an embedded
asset, go run ./tools/assetsum DIR.
`,
			"auth/auth.go": `// Package auth issues and verifies the API's bearer tokens, signed with
// HMAC-SHA256 under the server's secret.
package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

var secret []byte

func init() {
	s := os.Getenv("NOTES_TOKEN_SECRET")
	if s == "" {
		panic("auth: NOTES_TOKEN_SECRET is not set (see README, local setup)")
	}
	secret = []byte(s)
}

// ErrExpired is returned for a token past its expiry.
var ErrExpired = errors.New("auth: token expired")

func sign(payload string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Issue returns a token for user, valid for ttl.
func Issue(user string, ttl time.Duration) string {
	payload := user + "." + strconv.FormatInt(time.Now().Add(ttl).Unix(), 10)
	return payload + "." + sign(payload)
}

// Verify returns the user a token was issued to.
func Verify(token string) (string, error) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 || !hmac.Equal([]byte(sign(token[:i])), []byte(token[i+1:])) {
		return "", errors.New("auth: bad token")
	}
	user, exp, _ := strings.Cut(token[:i], ".")
	sec, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return "", fmt.Errorf("auth: bad expiry: %w", err)
	}
	if time.Now().Unix() > sec {
		return "", ErrExpired
	}
	return user, nil
}
`,
			"auth/auth_test.go": `package auth

import (
	"errors"
	"testing"
	"time"
)

func TestIssueVerify(t *testing.T) {
	tok := Issue("ada", time.Minute)
	if u, err := Verify(tok); err != nil || u != "ada" {
		t.Fatalf("Verify = %q, %v", u, err)
	}
	if _, err := Verify(tok + "x"); err == nil {
		t.Fatal("a tampered token verified")
	}
	if _, err := Verify(Issue("ada", -time.Hour)); !errors.Is(err, ErrExpired) {
		t.Fatalf("an expired token: %v", err)
	}
}
`,
			"cmd/notes/flags.go": `package main

import (
	"flag"

	"example.com/notes/server"
)

// The command's flags: its public interface, documented in docs/cli.md.
var (
	addr = flag.String("addr", server.DefaultAddr, "the address to serve on")
	data = flag.String("data", "notes.db", "the notes database")
)

var _ = data
`,
			"cmd/notes/main.go": `// Command notes serves the notes API.
package main

import (
	"flag"
	"log"
	"net/http"

	"example.com/notes/server"
	"example.com/notes/store"
)

func main() {
	flag.Parse()
	l, err := server.Listen(*addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("notes: serving on %s", l.Addr())
	log.Fatal(http.Serve(l, server.New(store.New()).Handler()))
}
`,
			"deploy/Caddyfile": `notes.example.com {
	reverse_proxy 127.0.0.1:17321
}
`,
			"deploy/notes.service": `[Unit]
Description=notes API
After=network.target

[Service]
ExecStart=/usr/local/bin/notes -addr 127.0.0.1:17321 -data /var/lib/notes/notes.db
User=notes
MemoryMax=256M
Restart=on-failure

[Install]
WantedBy=multi-user.target
`,
			"docs/cli.md": `# notes(1)

    notes [-addr HOST:PORT] [-data FILE]

-addr: the address to serve on (127.0.0.1:17321).
-data: the notes database (notes.db).
`,
			"go.mod": `module example.com/notes

go 1.22
`,
			"index/index.go": `// Package index is the notes' full-text index: words to note ids.
package index

import (
	"sort"
	"strings"
	"sync"
	"unicode"

	"example.com/notes/store"
)

// An Index maps words to the notes that have them.
type Index struct {
	mu    sync.RWMutex
	words map[string]map[string]bool
}

// New returns an empty index.
func New() *Index { return &Index{words: map[string]map[string]bool{}} }

// Words are the lower-case words of s.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Add indexes a note's title, body and tags.
func (x *Index) Add(n store.Note) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, w := range append(append(Words(n.Title), Words(n.Body)...), n.Tags...) {
		if x.words[w] == nil {
			x.words[w] = map[string]bool{}
		}
		x.words[w][n.ID] = true
	}
}

// Search returns the ids of the notes that have every word of q.
func (x *Index) Search(q string) []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var ids map[string]bool
	for _, w := range Words(q) {
		next := map[string]bool{}
		for id := range x.words[w] {
			if ids == nil || ids[id] {
				next[id] = true
			}
		}
		ids = next
	}
	out := make([]string, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Rebuild indexes every note of s afresh.
func Rebuild(s *store.Store) *Index {
	x := New()
	for _, n := range s.List() {
		x.Add(n)
	}
	return x
}
`,
			"index/index_test.go": `package index

import (
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"

	"example.com/notes/store"
)

func TestSearch(t *testing.T) {
	x := New()
	x.Add(store.Note{ID: "1", Title: "Buy milk", Body: "and bread"})
	x.Add(store.Note{ID: "2", Title: "Read", Body: "the milk report", Tags: []string{"work"}})
	if got := x.Search("milk"); !reflect.DeepEqual(got, []string{"1", "2"}) {
		t.Errorf("Search(milk) = %v", got)
	}
	if got := x.Search("milk work"); !reflect.DeepEqual(got, []string{"2"}) {
		t.Errorf("Search(milk work) = %v", got)
	}
}

// TestRebuildUnderLoad rebuilds while writers add notes. It has failed
// now and then on loaded CI machines since the index got its RWMutex
// (issue #212: the writers' notes land after the rebuild's snapshot).
func TestRebuildUnderLoad(t *testing.T) {
	s := store.New()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s.Put(store.Note{ID: fmt.Sprint(i), Title: "note"})
		}(i)
	}
	wg.Wait()
	if p := os.Getenv("FLAKE"); p != "" {
		if _, err := os.Stat(p); err != nil {
			os.WriteFile(p, nil, 0o644)
			t.Fatalf("rebuild raced with the writers: 2 of 8 notes missing from the index after 50ms")
		}
	}
	if got := Rebuild(s).Search("note"); len(got) != 8 {
		t.Fatalf("rebuild found %d notes, want 8", len(got))
	}
}
`,
			"internal/assetsum/assetsum.go": `// Package assetsum keeps the checksums of a package's embedded assets:
// DIR.sha256 beside DIR lists each file's sha256, as sha256sum does. The
// packages' tests check the embedded files against it, so that a changed
// asset is a reviewed change (tools/assetsum rewrites it).
package assetsum

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// Sums are the sha256 sums of the files of fsys under dir, as sha256sum writes them.
func Sums(fsys fs.FS, dir string) ([]byte, error) {
	var lines []string
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		lines = append(lines, hex.EncodeToString(h[:])+"  "+p)
		return nil
	})
	sort.Strings(lines)
	return []byte(strings.Join(lines, "\n") + "\n"), err
}

// Check compares the files of fsys under dir with the sums file; root is
// dir's path in the repository, for the message.
func Check(fsys fs.FS, dir, sumsFile, root string) error {
	want, err := os.ReadFile(sumsFile)
	if err != nil {
		return err
	}
	listed := map[string]string{}
	s := bufio.NewScanner(bytes.NewReader(want))
	for s.Scan() {
		sum, name, ok := strings.Cut(s.Text(), "  ")
		if ok {
			listed[name] = sum
		}
	}
	got, err := Sums(fsys, dir)
	if err != nil {
		return err
	}
	var bad []string
	for _, l := range strings.Split(strings.TrimSpace(string(got)), "\n") {
		sum, name, _ := strings.Cut(l, "  ")
		switch w, ok := listed[name]; {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: not listed in %s", name, sumsFile))
		case w != sum:
			bad = append(bad, fmt.Sprintf("%s: sha256 %s, %s says %s", name, sum[:12], sumsFile, w[:12]))
		}
		delete(listed, name)
	}
	for name := range listed {
		bad = append(bad, fmt.Sprintf("%s: listed in %s but not embedded", path.Clean(name), sumsFile))
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("embedded assets changed without their checksums:\n\t%s\nrun go run ./tools/assetsum %s after changing an embedded asset", strings.Join(bad, "\n\t"), root)
	}
	return nil
}
`,
			"internal/enumgen/enumgen.go": `// Package enumgen writes String methods for integer enums, like stringer:
// tools/enumgen runs it from go:generate, and the packages' tests check
// that what is checked in is what it writes.
package enumgen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Generate is the source of typ's String method for the package in dir.
func Generate(dir, typ string) ([]byte, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	pkg := ""
	var names []string
	sort.Strings(files)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, "_string.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			return nil, err
		}
		pkg = file.Name.Name
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			inType := false
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); ok {
					inType = id.Name == typ
				} else if vs.Type != nil || len(vs.Values) > 0 {
					inType = false
				}
				if !inType {
					continue
				}
				for _, n := range vs.Names {
					if n.Name != "_" && ast.IsExported(n.Name) {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("enumgen: no constants of type %s in %s", typ, dir)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by \"enumgen -type %s\"; DO NOT EDIT.\n\npackage %s\n\nimport \"strconv\"\n\n", typ, pkg)
	b.WriteString("func _() {\n\t// An \"invalid array index\" compiler error signifies that the constant values have changed.\n\t// Re-run the enumgen command to generate them again.\n\tvar x [1]struct{}\n")
	all := ""
	idx := []string{"0"}
	for i, n := range names {
		fmt.Fprintf(&b, "\t_ = x[%s-%d]\n", n, i)
		all += n
		idx = append(idx, fmt.Sprint(len(all)))
	}
	b.WriteString("}\n\n")
	fmt.Fprintf(&b, "const _%s_name = %q\n\nvar _%s_index = [...]uint16{%s}\n\n", typ, all, typ, strings.Join(idx, ", "))
	fmt.Fprintf(&b, "func (i %s) String() string {\n\tif i < 0 || i >= %s(len(_%s_index)-1) {\n\t\treturn \"%s(\" + strconv.FormatInt(int64(i), 10) + \")\"\n\t}\n\treturn _%s_name[_%s_index[i]:_%s_index[i+1]]\n}\n", typ, typ, typ, typ, typ, typ, typ)
	return b.Bytes(), nil
}

// FileName is the generated file's name for typ.
func FileName(typ string) string { return strings.ToLower(typ) + "_string.go" }
`,
			"orket.yaml": `version: 1
verify:
  default: ci
  profiles:
    ci:
      - {name: vet, run: go vet ./...}
      - {name: notelint, run: go run ./tools/lint ./...}
      - {name: test, run: go test -count=1 ./..., retry: 1}
protect: ['store/migrations/**', 'deploy/**']
sandbox: off
`,
			"render/render.go": `// Package render renders notes as plain text, Markdown or HTML, from the
// templates embedded from render/templates.
package render

import (
	"bytes"
	"embed"
	"fmt"
	"text/template"

	"example.com/notes/store"
)

//go:generate go run ../tools/enumgen -type Format

// Format is an output format.
type Format int

// The formats.
const (
	Plain Format = iota
	Markdown
	HTML
)

//go:embed templates
var templateFS embed.FS

var templates = template.Must(template.ParseFS(templateFS, "templates/*.tmpl"))

// Note renders a note in a format.
func Note(n store.Note, f Format) (string, error) {
	var b bytes.Buffer
	name := map[Format]string{Plain: "note.txt.tmpl", Markdown: "note.md.tmpl", HTML: "note.html.tmpl"}[f]
	if name == "" {
		return "", fmt.Errorf("render: no template for %s", f)
	}
	if err := templates.ExecuteTemplate(&b, name, n); err != nil {
		return "", fmt.Errorf("render %s: %w", n.ID, err)
	}
	return b.String(), nil
}
`,
			"render/render_test.go": `package render

import (
	"os"
	"strings"
	"testing"

	"example.com/notes/internal/assetsum"
	"example.com/notes/internal/enumgen"
	"example.com/notes/store"
)

func TestNote(t *testing.T) {
	got, err := Note(store.Note{ID: "1", Title: "Milk", Body: "2 litres"}, Markdown)
	if err != nil || !strings.HasPrefix(got, "# Milk\n\n2 litres\n") {
		t.Fatalf("Note(Markdown) = %q, %v", got, err)
	}
}

func TestTemplateSums(t *testing.T) {
	if err := assetsum.Check(templateFS, "templates", "templates.sha256", "render/templates"); err != nil {
		t.Fatal(err)
	}
}

func TestFormatGenerated(t *testing.T) {
	want, err := enumgen.Generate(".", "Format")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile("format_string.go")
	if string(got) != string(want) {
		t.Fatalf("format_string.go is out of date: run go generate ./render")
	}
}
`,
			"render/templates/note.html.tmpl": `<article id="{{.ID}}"><h1>{{.Title}}</h1><p>{{.Body}}</p></article>
`,
			"render/templates/note.md.tmpl": `# {{.Title}}

{{.Body}}
{{range .Tags}}#{{.}} {{end}}
`,
			"render/templates/note.txt.tmpl": `{{.Title}}
{{.Body}}
`,
			"server/server.go": `// Package server is the notes HTTP API.
package server

import (
	"embed"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"

	"example.com/notes/auth"
	"example.com/notes/index"
	"example.com/notes/render"
	"example.com/notes/store"
)

// DefaultAddr is where the server listens unless told otherwise.
const DefaultAddr = "127.0.0.1:17321"

//go:embed static
var staticFS embed.FS

// A Server serves the notes.
type Server struct {
	Store *store.Store
	Index *index.Index
}

// New returns a server of the notes in s.
func New(s *store.Store) *Server { return &Server{Store: s, Index: index.Rebuild(s)} }

// Listen opens the server's socket at addr.
func Listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

// Handler is the server's API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/static/", http.FileServer(http.FS(staticFS)))
	mux.HandleFunc("/notes/", s.authed(s.note))
	mux.HandleFunc("/search", s.authed(s.search))
	return mux
}

func (s *Server) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := auth.Verify(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		h(w, r)
	}
}

func (s *Server) note(w http.ResponseWriter, r *http.Request) {
	n, err := s.Store.Get(strings.TrimPrefix(r.URL.Path, "/notes/"))
	if errors.Is(err, store.ErrNotFound) {
		http.NotFound(w, r)
		return
	}
	out, err := render.Note(n, render.HTML)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(out))
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	ids := s.Index.Search(r.URL.Query().Get("q"))
	json.NewEncoder(w).Encode(map[string]any{"ids": ids})
}
`,
			"server/server_test.go": `package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"example.com/notes/auth"
	"example.com/notes/internal/assetsum"
	"example.com/notes/store"
)

func TestListenDefault(t *testing.T) {
	l, err := Listen(DefaultAddr)
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	l.Close()
}

func TestNoteAndSearch(t *testing.T) {
	s := store.New()
	s.Put(store.Note{ID: "n1", Title: "Milk", Body: "two litres"})
	srv := httptest.NewServer(New(s).Handler())
	defer srv.Close()
	tok := auth.Issue("ada", time.Minute)
	for path, want := range map[string]string{"/notes/n1": "<h1>Milk</h1>", "/search?q=milk": "\"n1\""} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s = %d %q, want %q", path, res.StatusCode, body, want)
		}
	}
}

func TestStaticSums(t *testing.T) {
	if err := assetsum.Check(staticFS, "static", "static.sha256", "server/static"); err != nil {
		t.Fatal(err)
	}
}
`,
			"server/static/app.css": `body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 42rem; }
article h1 { font-size: 1.4rem; }
`,
			"server/static/app.js": `document.querySelectorAll('article').forEach((a) => a.classList.add('ready'));
`,
			"store/kind.go": `package store

//go:generate go run ../tools/enumgen -type Kind

// Kind is what sort of note a note is.
type Kind int

// The kinds of notes.
const (
	Text Kind = iota
	Checklist
	Bookmark
)
`,
			"store/migrations.go": `package store

import "embed"

// Migrations are the SQL migrations of the notes database, applied in
// name order; an applied migration is never edited: add the next one.
//
//go:embed migrations/*.sql
var Migrations embed.FS
`,
			"store/migrations/0001_init.sql": `CREATE TABLE notes (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    kind INTEGER NOT NULL DEFAULT 0,
    rev INTEGER NOT NULL,
    saved_at TIMESTAMP NOT NULL
);
`,
			"store/migrations/0002_tags.sql": `CREATE TABLE tags (
    note_id TEXT NOT NULL REFERENCES notes(id),
    tag TEXT NOT NULL,
    PRIMARY KEY (note_id, tag)
);
`,
			"store/store.go": `// Package store keeps the notes: an in-memory map, written through to a
// SQLite file by the server (the migrations under store/migrations).
package store

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// A Note is one note.
type Note struct {
	ID      string
	Title   string
	Body    string
	Kind    Kind
	Tags    []string
	Rev     int
	SavedAt time.Time
}

// ErrNotFound is returned for a note the store does not have.
var ErrNotFound = errors.New("store: note not found")

// A Store holds notes.
type Store struct {
	mu    sync.Mutex
	notes map[string]Note
	now   func() time.Time
}

// New returns an empty store.
func New() *Store { return &Store{notes: map[string]Note{}, now: time.Now} }

// Put saves a note, bumping its revision.
func (s *Store) Put(n Note) (Note, error) {
	if strings.TrimSpace(n.ID) == "" {
		return Note{}, fmt.Errorf("store: note %q has no id", n.Title)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n.Rev = s.notes[n.ID].Rev + 1
	n.SavedAt = s.now()
	s.notes[n.ID] = n
	return n, nil
}

// Get returns the note with id.
func (s *Store) Get(id string) (Note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.notes[id]
	if !ok {
		return Note{}, fmt.Errorf("get %s: %w", id, ErrNotFound)
	}
	return n, nil
}

// Delete removes the note with id.
func (s *Store) Delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.notes[id]; !ok {
		return fmt.Errorf("delete %s: %w", id, ErrNotFound)
	}
	delete(s.notes, id)
	return nil
}

// List returns every note, by id.
func (s *Store) List() []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Note, 0, len(s.notes))
	for _, n := range s.notes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
`,
			"store/store_test.go": `package store

import (
	"errors"
	"os"
	"strings"
	"testing"

	"example.com/notes/internal/enumgen"
)

func TestPutGet(t *testing.T) {
	s := New()
	if _, err := s.Put(Note{ID: "a", Title: "groceries"}); err != nil {
		t.Fatal(err)
	}
	n, err := s.Get("a")
	if err != nil || n.Title != "groceries" || n.Rev != 1 {
		t.Fatalf("Get(a) = %+v, %v", n, err)
	}
	if _, err := s.Get("b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(b) = %v, want ErrNotFound", err)
	}
}

func TestKindGenerated(t *testing.T) {
	want, err := enumgen.Generate(".", "Kind")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile("kind_string.go")
	if string(got) != string(want) {
		t.Fatalf("kind_string.go is out of date: run go generate ./store")
	}
	if s := Bookmark.String(); strings.HasPrefix(s, "Kind(") {
		t.Errorf("Bookmark.String() = %s", s)
	}
}
`,
			"syncer/syncer.go": `// Package syncer pushes the store's changes to the relay, which fans them
// out to the user's other devices.
package syncer

import (
	"bufio"
	"fmt"
	"net"
	"time"

	"example.com/notes/store"
)

//go:generate go run ../tools/enumgen -type State

// State is where a sync session is.
type State int

// The states of a session.
const (
	Idle State = iota
	Pushing
	Done
)

// RelayAddr is the relay's address in development.
const RelayAddr = "127.0.0.1:16389"

// A Client talks to the relay.
type Client struct {
	Addr    string
	Timeout time.Duration
	State   State
}

// Dial connects to the relay.
func (c *Client) Dial() (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", c.Addr, c.Timeout)
	if err != nil {
		return nil, fmt.Errorf("syncer: relay: %w", err)
	}
	return conn, nil
}

// Push sends the notes' ids and revisions to the relay.
func (c *Client) Push(notes []store.Note) error {
	conn, err := c.Dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	c.State = Pushing
	w := bufio.NewWriter(conn)
	for _, n := range notes {
		fmt.Fprintf(w, "PUT %s %d\n", n.ID, n.Rev)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("syncer: push: %w", err)
	}
	c.State = Done
	return nil
}
`,
			"syncer/syncer_test.go": `package syncer

import (
	"os"
	"testing"
	"time"

	"example.com/notes/internal/enumgen"
	"example.com/notes/store"
)

// TestPush needs the development relay (README: local setup).
func TestPush(t *testing.T) {
	c := &Client{Addr: RelayAddr, Timeout: time.Second}
	if err := c.Push([]store.Note{{ID: "n1", Rev: 2}}); err != nil {
		t.Fatal(err)
	}
	if c.State != Done {
		t.Errorf("state after a push = %s, want Done", c.State)
	}
}

func TestStateGenerated(t *testing.T) {
	want, err := enumgen.Generate(".", "State")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile("state_string.go")
	if string(got) != string(want) {
		t.Fatalf("state_string.go is out of date: run go generate ./syncer")
	}
}
`,
			"tools/assetsum/main.go": `// Command assetsum rewrites the checksums of a package's embedded assets:
// assetsum DIR writes DIR.sha256.
package main

import (
	"log"
	"os"
	"path/filepath"

	"example.com/notes/internal/assetsum"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: assetsum DIR")
	}
	dir := filepath.Clean(os.Args[1])
	sums, err := assetsum.Sums(os.DirFS(filepath.Dir(dir)), filepath.Base(dir))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(dir+".sha256", sums, 0o644); err != nil {
		log.Fatal(err)
	}
}
`,
			"tools/enumgen/main.go": `// Command enumgen writes TYPE's String method in the current package:
//
//	//go:generate go run ../tools/enumgen -type Kind
package main

import (
	"flag"
	"log"
	"os"

	"example.com/notes/internal/enumgen"
)

func main() {
	typ := flag.String("type", "", "the enum type")
	flag.Parse()
	src, err := enumgen.Generate(".", *typ)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(enumgen.FileName(*typ), src, 0o644); err != nil {
		log.Fatal(err)
	}
}
`,
			"tools/lint/main.go": `// Command lint checks the notes conventions that go vet does not:
//
//	NL001 every package has a doc comment
//	NL002 an error is wrapped with %w, never formatted with %v
//
// lint ./... checks every package under the current directory but tools/.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	fset := token.NewFileSet()
	var problems []string
	dirs := map[string]bool{}
	documented := map[string]bool{}
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "tools" || path == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			problems = append(problems, err.Error())
			return nil
		}
		dir := filepath.Dir(path)
		dirs[dir] = true
		if f.Doc != nil && f.Name.Name != "main" || f.Name.Name == "main" {
			documented[dir] = true
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Errorf" {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "fmt" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok {
				return true
			}
			format, _ := strconv.Unquote(lit.Value)
			last, ok := call.Args[len(call.Args)-1].(*ast.Ident)
			if ok && last.Name == "err" && strings.HasSuffix(strings.TrimRight(format, ".\n"), "%v") {
				problems = append(problems, fmt.Sprintf("%s: NL002 error formatted with %%v: wrap it with %%w so callers can errors.Is it", fset.Position(call.Pos())))
			}
			return true
		})
		return nil
	})
	for dir := range dirs {
		if !documented[dir] {
			problems = append(problems, fmt.Sprintf("%s: NL001 package has no doc comment", dir))
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "notelint: %d problem(s)\n", len(problems))
		os.Exit(1)
	}
}
`,
		},
		Setup: []string{"go generate ./...", "go run ./tools/assetsum render/templates", "go run ./tools/assetsum server/static", "go vet ./...", "go build ./tools/..."},
		Vault: map[string]string{"NOTES_TOKEN_SECRET": "dev-secret-7f3a"},
		Ports: map[string]int{"api": 17321, "service-relay": 16389},
	}
	// The remedies a competent Go agent knows, by what it is told.
	env := Remedy{Trigger: `NOTES_TOKEN_SECRET`, SetEnv: []string{"NOTES_TOKEN_SECRET"}}
	port := Remedy{Trigger: `17321|(?i)address already in use`, Free: []string{"api"}}
	relay := Remedy{Trigger: `16389|relay`, Start: []string{"service-relay"}}
	regen := func(pkg string) Remedy {
		return Remedy{Trigger: `_string\.go|go generate|enumgen`, Edit: Edit{Run: []string{"go generate ./" + pkg}}}
	}
	resum := func(dir string) Remedy {
		return Remedy{Trigger: `assetsum|\.sha256`, Edit: Edit{Run: []string{"go run ./tools/assetsum " + dir}}}
	}
	// Told of NL002, the agent wraps its error with %w.
	wrap := func(path, old string) Remedy {
		return Remedy{Trigger: `NL002|%w`, Edit: Edit{Replace: []Replacement{{path, old + `: %v", `, old + `: %w", `}}}}
	}
	// Told that an applied migration is protected, the agent adds the
	// next migration instead of editing it.
	migration := func(path, next, sql string) Remedy {
		return Remedy{Trigger: `store/migrations|migrations/\*\*`, Skip: []string{path}, Edit: Edit{Write: map[string]string{next: sql}}}
	}
	deploy := func(path string) Remedy {
		return Remedy{Trigger: `deploy/`, Skip: []string{path}}
	}
	flags := Remedy{Trigger: `flags\.go`, Skip: []string{"cmd/notes/flags.go"}}
	review := &Review{Paths: []string{"cmd/notes/flags.go"}, Reason: "cmd/notes/flags.go is the CLI's public surface: a new flag needs a CLI proposal first, keep it out of feature changes"}
	// A signature change that breaks callers outside the task's scope:
	// the competent fix keeps the old function and adds one.
	sig := func(path, old, new, added string) (Edit, Remedy) {
		return Edit{Replace: []Replacement{{path, old, new}}},
			Remedy{Trigger: `not enough arguments in call|too many arguments in call|assignment mismatch|callers`, Skip: []string{path},
				Edit: Edit{Append: map[string]string{path: added}}}
	}
	addFunc := func(path, name string) Edit {
		return Edit{Append: map[string]string{path: fmt.Sprintf("\n// %s is a helper.\nfunc %s() int { return %d }\n", name, name, len(name))}}
	}
	withFlag := func(path, name, flagName, usage string) Edit {
		e := addFunc(path, name)
		e.Append["cmd/notes/flags.go"] = fmt.Sprintf("\nvar %s = flag.Bool(%q, false, %q)\n\nvar _ = %s\n", flagName, flagName, usage, flagName)
		return e
	}
	insert := func(path, before, name string) Edit {
		return Edit{Replace: []Replacement{{path, "\t" + before + "\n", "\t" + name + "\n\t" + before + "\n"}}}
	}
	appendConst := func(path, last, name string) Edit {
		return Edit{Replace: []Replacement{{path, "\t" + last + "\n)", "\t" + last + "\n\t" + name + "\n)"}}}
	}
	getEdit, getFix := sig("store/store.go", "func (s *Store) Get(id string) (Note, error) {",
		"func (s *Store) Get(id string, rev int) (Note, error) {\n\t_ = rev",
		"\n// GetRev returns the note with id at revision rev (0: the latest).\nfunc (s *Store) GetRev(id string, rev int) (Note, error) { return s.Get(id) }\n")
	searchEdit, searchFix := sig("index/index.go", "func (x *Index) Search(q string) []string {",
		"func (x *Index) Search(q string) ([]string, int) {\n\tids := x.search(q)\n\treturn ids, len(ids)\n}\n\nfunc (x *Index) search(q string) []string {",
		"\n// SearchCount returns the ids of the notes that have every word of q, and how many.\nfunc (x *Index) SearchCount(q string) ([]string, int) {\n\tids := x.Search(q)\n\treturn ids, len(ids)\n}\n")
	noteEdit, noteFix := sig("render/render.go", "func Note(n store.Note, f Format) (string, error) {",
		"func Note(n store.Note, f Format, width int) (string, error) {\n\t_ = width",
		"\n// NoteWidth renders a note in a format, wrapped at width columns.\nfunc NoteWidth(n store.Note, f Format, width int) (string, error) { return Note(n, f) }\n")
	issueEdit, issueFix := sig("auth/auth.go", "func Issue(user string, ttl time.Duration) string {",
		"func Issue(user, device string, ttl time.Duration) string {\n\t_ = device",
		"\n// IssueFor returns a token for user on a device, valid for ttl.\nfunc IssueFor(user, device string, ttl time.Duration) string { return Issue(user, ttl) }\n")
	pingLint := "\n// Ping checks that the relay answers.\nfunc (c *Client) Ping() error {\n\tconn, err := c.Dial()\n\tif err != nil {\n\t\treturn fmt.Errorf(\"syncer: ping: %v\", err)\n\t}\n\treturn conn.Close()\n}\n"
	renameLint := "\n// Rename changes a note's title.\nfunc (s *Store) Rename(id, title string) error {\n\tn, err := s.Get(id)\n\tif err != nil {\n\t\treturn fmt.Errorf(\"store: rename %s: %v\", id, err)\n\t}\n\tn.Title = title\n\t_, err = s.Put(n)\n\treturn err\n}\n"
	exportLint := "package index\n\nimport (\n\t\"fmt\"\n\t\"io\"\n)\n\n// Export writes the index's words and how many notes have each, one a line.\nfunc (x *Index) Export(w io.Writer) error {\n\tx.mu.RLock()\n\tdefer x.mu.RUnlock()\n\tfor word, ids := range x.words {\n\t\tif _, err := fmt.Fprintf(w, \"%s %d\\n\", word, len(ids)); err != nil {\n\t\t\treturn fmt.Errorf(\"index: export %q: %v\", word, err)\n\t\t}\n\t}\n\treturn nil\n}\n"
	configLint := "package server\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\n// ReadConfig reads the server's settings file.\nfunc ReadConfig(path string) ([]byte, error) {\n\tb, err := os.ReadFile(path)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"server: config %s: %v\", path, err)\n\t}\n\treturn b, nil\n}\n"
	pinned := Edit{Replace: []Replacement{{"store/migrations/0001_init.sql", "    saved_at TIMESTAMP NOT NULL\n", "    saved_at TIMESTAMP NOT NULL,\n    pinned BOOLEAN NOT NULL DEFAULT FALSE\n"}}}
	pinned.Append = addFunc("store/store.go", "PinnedFirst").Append
	tagTime := Edit{Replace: []Replacement{{"store/migrations/0002_tags.sql", "    tag TEXT NOT NULL,\n", "    tag TEXT NOT NULL,\n    created_at TIMESTAMP,\n"}}}
	tagTime.Append = addFunc("store/store.go", "TagAge").Append
	memory := Edit{Replace: []Replacement{{"deploy/notes.service", "MemoryMax=256M", "MemoryMax=512M"}}}
	memory.Append = addFunc("server/server.go", "CacheBytes").Append
	gzip := Edit{Replace: []Replacement{{"deploy/Caddyfile", "\treverse_proxy 127.0.0.1:17321\n", "\tencode gzip\n\treverse_proxy 127.0.0.1:17321\n"}}}
	gzip.Append = addFunc("server/server.go", "Compressed").Append
	tr.Tasks = []Task{
		{ID: "t01", Scope: []string{"store"}, Edit: addFunc("store/store.go", "Count")},
		{ID: "t02", Scope: []string{"render"}, Hazard: "env", Unset: []string{"NOTES_TOKEN_SECRET"}, Edit: addFunc("render/render.go", "Wrap"), Remedies: []Remedy{env}},
		{ID: "t03", Scope: []string{"store"}, Hazard: "gen", Edit: insert("store/kind.go", "Checklist", "Drawing"), Remedies: []Remedy{regen("store")}},
		{ID: "t04", Scope: []string{"index"}, Edit: addFunc("index/index.go", "Stopwords")},
		{ID: "t05", Scope: []string{"render"}, Hazard: "embed",
			Edit:     Edit{Replace: []Replacement{{"render/templates/note.html.tmpl", "<h1>{{.Title}}</h1>", "<h1>{{.Title}}</h1><time>{{.SavedAt.Format \"2006-01-02\"}}</time>"}}},
			Remedies: []Remedy{resum("render/templates")}},
		{ID: "t06", Scope: []string{"syncer"}, Hazard: "lint", Edit: Edit{Append: map[string]string{"syncer/syncer.go": pingLint}}, Remedies: []Remedy{wrap("syncer/syncer.go", "ping")}},
		{ID: "t07", Scope: []string{"index"}, Hazard: "service", Down: []string{"service-relay"}, Edit: addFunc("index/index.go", "Vocabulary"), Remedies: []Remedy{relay}},
		{ID: "t08", Scope: []string{"store"}, Hazard: "sig", Edit: getEdit, Remedies: []Remedy{getFix}},
		{ID: "t09", Scope: []string{"render"}, Hazard: "port", Busy: []string{"api"}, Edit: addFunc("render/render.go", "Indent"), Remedies: []Remedy{port}},
		{ID: "t10", Scope: []string{"store"}, Hazard: "protect", Edit: pinned,
			Remedies: []Remedy{migration("store/migrations/0001_init.sql", "store/migrations/0003_pinned.sql", "ALTER TABLE notes ADD COLUMN pinned BOOLEAN NOT NULL DEFAULT FALSE;\n")}},
		{ID: "t11", Scope: []string{"server", "cmd/notes"}, Hazard: "review", Edit: withFlag("server/server.go", "ReadOnly", "readonly", "serve the notes read-only"), Remedies: []Remedy{flags}, Review: review},
		{ID: "t12", Scope: []string{"index"}, Hazard: "flaky", Flaky: true, Edit: addFunc("index/index.go", "Stem")},
		{ID: "t13", Scope: []string{"auth"}, Edit: addFunc("auth/auth.go", "Leeway")},
		{ID: "t14", Scope: []string{"syncer"}, Hazard: "env", Unset: []string{"NOTES_TOKEN_SECRET"}, Edit: addFunc("syncer/syncer.go", "Batch"), Remedies: []Remedy{env}},
		{ID: "t15", Scope: []string{"render"}, Hazard: "gen", Edit: appendConst("render/render.go", "HTML", "Org"), Remedies: []Remedy{regen("render")}},
		{ID: "t16", Scope: []string{"server"}, Hazard: "embed", Edit: Edit{Append: map[string]string{"server/static/app.css": "article time { color: #666; margin-left: .5rem; }\n"}}, Remedies: []Remedy{resum("server/static")}},
		{ID: "t17", Scope: []string{"store"}, Hazard: "lint", Edit: Edit{Append: map[string]string{"store/store.go": renameLint}}, Remedies: []Remedy{wrap("store/store.go", "rename %s")}},
		{ID: "t18", Scope: []string{"store"}, Hazard: "service", Down: []string{"service-relay"}, Edit: addFunc("store/store.go", "Oldest"), Remedies: []Remedy{relay}},
		{ID: "t19", Scope: []string{"index"}, Hazard: "sig", Edit: searchEdit, Remedies: []Remedy{searchFix}},
		{ID: "t20", Scope: []string{"server", "deploy"}, Hazard: "protect", Edit: memory, Remedies: []Remedy{deploy("deploy/notes.service")}},
		{ID: "t21", Scope: []string{"syncer"}, Edit: addFunc("syncer/syncer.go", "Backoff")},
		{ID: "t22", Scope: []string{"index"}, Hazard: "port", Busy: []string{"api"}, Edit: addFunc("index/index.go", "Prefix"), Remedies: []Remedy{port}},
		{ID: "t23", Scope: []string{"index", "cmd/notes"}, Hazard: "review", Edit: withFlag("index/index.go", "Fuzzy", "fuzzy", "match words approximately"), Remedies: []Remedy{flags}, Review: review},
		{ID: "t24", Scope: []string{"server"}, Hazard: "flaky", Flaky: true, Edit: addFunc("server/server.go", "MaxBody")},
		{ID: "t25", Scope: []string{"store"}, Hazard: "env", Unset: []string{"NOTES_TOKEN_SECRET"}, Edit: addFunc("store/store.go", "Newest"), Remedies: []Remedy{env}},
		{ID: "t26", Scope: []string{"syncer"}, Hazard: "gen", Edit: insert("syncer/syncer.go", "Pushing", "Pulling"), Remedies: []Remedy{regen("syncer")}},
		{ID: "t27", Scope: []string{"render"}, Edit: addFunc("render/render.go", "Excerpt")},
		{ID: "t28", Scope: []string{"index"}, Hazard: "lint", Edit: Edit{Write: map[string]string{"index/export.go": exportLint}}, Remedies: []Remedy{wrap("index/export.go", "export %q")}},
		{ID: "t29", Scope: []string{"auth"}, Hazard: "service", Down: []string{"service-relay"}, Edit: addFunc("auth/auth.go", "Rotate"), Remedies: []Remedy{relay}},
		{ID: "t30", Scope: []string{"render"}, Hazard: "sig", Edit: noteEdit, Remedies: []Remedy{noteFix}},
		{ID: "t31", Scope: []string{"syncer"}, Hazard: "port", Busy: []string{"api"}, Edit: addFunc("syncer/syncer.go", "Window"), Remedies: []Remedy{port}},
		{ID: "t32", Scope: []string{"store"}, Hazard: "protect", Edit: tagTime,
			Remedies: []Remedy{migration("store/migrations/0002_tags.sql", "store/migrations/0004_tag_created.sql", "ALTER TABLE tags ADD COLUMN created_at TIMESTAMP;\n")}},
		{ID: "t33", Scope: []string{"render", "cmd/notes"}, Hazard: "review", Edit: withFlag("render/render.go", "Dark", "dark", "render pages in the dark theme"), Remedies: []Remedy{flags}, Review: review},
		{ID: "t34", Scope: []string{"store"}, Edit: addFunc("store/store.go", "Untagged")},
		{ID: "t35", Scope: []string{"render"}, Hazard: "embed", Edit: Edit{Write: map[string]string{"render/templates/note.json.tmpl": "{\"id\": {{printf \"%q\" .ID}}, \"title\": {{printf \"%q\" .Title}}}\n"}}, Remedies: []Remedy{resum("render/templates")}},
		{ID: "t36", Scope: []string{"server"}, Hazard: "lint", Edit: Edit{Write: map[string]string{"server/config.go": configLint}}, Remedies: []Remedy{wrap("server/config.go", "config %s")}},
		{ID: "t37", Scope: []string{"auth"}, Hazard: "sig", Edit: issueEdit, Remedies: []Remedy{issueFix}},
		{ID: "t38", Scope: []string{"syncer"}, Hazard: "flaky", Flaky: true, Edit: addFunc("syncer/syncer.go", "Retries")},
		{ID: "t39", Scope: []string{"index"}, Edit: addFunc("index/index.go", "Synonyms")},
		{ID: "t40", Scope: []string{"server", "deploy"}, Hazard: "protect", Edit: gzip, Remedies: []Remedy{deploy("deploy/Caddyfile")}},
		{ID: "t41", Scope: []string{"syncer", "cmd/notes"}, Hazard: "review", Edit: withFlag("syncer/syncer.go", "Offline", "offline", "do not push to the relay"), Remedies: []Remedy{flags}, Review: review},
		{ID: "t42", Scope: []string{"store"}, Hazard: "gen", Edit: appendConst("store/kind.go", "Bookmark", "Voice"), Remedies: []Remedy{regen("store")}},
		{ID: "t43", Scope: []string{"server"}, Edit: addFunc("server/server.go", "Banner")},
		{ID: "t44", Scope: []string{"auth"}, Edit: addFunc("auth/auth.go", "Audience")},
		{ID: "t45", Scope: []string{"syncer"}, Edit: addFunc("syncer/syncer.go", "Cursor")},
	}
	return tr
}
