package gitignore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// worldCases are hand-written trees with the paths git ignores in them,
// written down by hand and confirmed by git in TestWorlds. The first ones
// are the cases where go-git's plumbing/format/gitignore disagrees with git.
var worldCases = []struct {
	name  string
	w     world
	want  []string // ignored paths, sorted
	wantU []string // untracked files and links git shows, sorted
}{
	{
		name: "trailing /** leaves the directory itself, so a negation re-includes",
		w: world{
			entries: []string{"data/keep.txt", "data/x.txt", "data/sub/y", "other/data/z"},
			ignore:  map[string]string{"": "data/**\n!data/keep.txt\n"},
		},
		want:  []string{"data/sub", "data/sub/y", "data/x.txt"},
		wantU: []string{".gitignore", "data/keep.txt", "other/data/z"},
	},
	{
		name: "an excluded directory cannot be re-entered",
		w: world{
			entries: []string{"data/keep.txt", "data/x.txt"},
			ignore:  map[string]string{"": "data/\n!data/keep.txt\n"},
		},
		want:  []string{"data", "data/keep.txt", "data/x.txt"},
		wantU: []string{".gitignore"},
	},
	{
		name: "class negated with ! and with ^",
		w: world{
			entries: []string{"b.c", "b.o", "b.h", "x.txt", "s/b.a", "s/b.o"},
			ignore:  map[string]string{"": "*.[!o]\n", "s": "*.[^o]\n"},
		},
		want:  []string{"b.c", "b.h", "s/b.a"},
		wantU: []string{".gitignore", "b.o", "s/.gitignore", "s/b.o", "x.txt"},
	},
	{
		name: "escaped # and !, a comment, and a lone !",
		w: world{
			entries: []string{"#hash", "!bang", "#c", "c"},
			ignore:  map[string]string{"": "\\#hash\n\\!bang\n#c\n!\n"},
		},
		want:  []string{"!bang", "#hash"},
		wantU: []string{"#c", ".gitignore", "c"},
	},
	{
		name: "trailing spaces trimmed unless escaped, tabs kept",
		w: world{
			entries: []string{"a", "a ", "b", "b ", "c\t", "c"},
			ignore:  map[string]string{"": "a  \nb\\ \nc\t\n"},
		},
		want:  []string{"a", "b ", "c\t"},
		wantU: []string{".gitignore", "a ", "b", "c"},
	},
	{
		name: "negations at several depths, the deepest file wins",
		w: world{
			entries: []string{"x.log", "sub/keep.log", "sub/other.log", "sub/deeper/keep.log", "sub/deeper/x.log"},
			ignore: map[string]string{
				"":           "*.log\n",
				"sub":        "!keep.log\n",
				"sub/deeper": "keep.log\n",
			},
		},
		want:  []string{"sub/deeper/keep.log", "sub/deeper/x.log", "sub/other.log", "x.log"},
		wantU: []string{".gitignore", "sub/.gitignore", "sub/deeper/.gitignore", "sub/keep.log"},
	},
	{
		name: "a slash anchors to the directory of the file",
		w: world{
			entries: []string{"build/o", "src/build/o", "doc/a.txt", "doc/sub/b.txt", "src/gen/g", "src/x/gen/g"},
			ignore: map[string]string{
				"":    "/build\ndoc/*.txt\n",
				"src": "/gen\n",
			},
		},
		want:  []string{"build", "build/o", "doc/a.txt", "src/gen", "src/gen/g"},
		wantU: []string{".gitignore", "doc/sub/b.txt", "src/.gitignore", "src/build/o", "src/x/gen/g"},
	},
	{
		name: "leading and middle **",
		w: world{
			entries: []string{"a/b", "a/x/b", "a/x/y/b", "b/a/b", "foo", "x/foo", "x/y/foo/z"},
			ignore:  map[string]string{"": "a/**/b\n**/foo\n"},
		},
		want:  []string{"a/b", "a/x/b", "a/x/y/b", "foo", "x/foo", "x/y/foo", "x/y/foo/z"},
		wantU: []string{".gitignore", "b/a/b"},
	},
	{
		name: "trailing slash: directories only, never a file or a symlink",
		w: world{
			entries: []string{"x/build", "y/build/o", "z/build@"},
			ignore:  map[string]string{"": "build/\n"},
		},
		want:  []string{"y/build", "y/build/o"},
		wantU: []string{".gitignore", "x/build", "z/build"},
	},
	{
		name: "POSIX classes, ] first, ranges, escapes in a class",
		w: world{
			entries: []string{"1a", "a1", "]x", "b.txt", "d.txt", "-", "\\", "["},
			ignore:  map[string]string{"": "[[:digit:]]*\n[]]x\n[a-c].txt\n[\\-]\n[\\\\]\n[[]\n"},
		},
		want:  []string{"-", "1a", "[", "\\", "]x", "b.txt"},
		wantU: []string{".gitignore", "a1", "d.txt"},
	},
	{
		name: "core.excludesFile, then info/exclude, then .gitignore",
		w: world{
			entries: []string{"a.tmp", "b.tmp", "c.tmp", "x.tmp"},
			global:  "*.tmp\n!a.tmp\n!c.tmp\n",
			exclude: "a.tmp\n",
			ignore:  map[string]string{"": "!b.tmp\n"},
		},
		want:  []string{"a.tmp", "x.tmp"},
		wantU: []string{".gitignore", "b.tmp", "c.tmp"},
	},
	{
		name: "the XDG default excludes file",
		w: world{
			entries:   []string{"a.swp", "b"},
			global:    "*.swp\n",
			globalXDG: true,
		},
		want:  []string{"a.swp"},
		wantU: []string{"b"},
	},
	{
		name: "an anchored literal prefix before ** makes it a directory wildcard",
		w: world{
			entries: []string{"foo/bar", "foo/x/y/bar", "fooX/bar", "foo/barX", "xfoo/bar"},
			ignore:  map[string]string{"": "foo**/bar\n"},
		},
		want:  []string{"foo/bar", "foo/x/y/bar", "fooX/bar"},
		wantU: []string{".gitignore", "foo/barX", "xfoo/bar"},
	},
	{
		name: "** before an escaped slash needs one directory",
		w: world{
			entries: []string{"b", "x/b", "x/y/b"},
			ignore:  map[string]string{"": "**\\/b\n"},
		},
		want:  []string{"x/b", "x/y/b"},
		wantU: []string{".gitignore", "b"},
	},
	{
		name: "byte order mark, CRLF, no final newline, NUL ends a line",
		w: world{
			entries: []string{"a.o", "keep.o", "c", "d"},
			ignore:  map[string]string{"": "\xef\xbb\xbf*.o\r\n!keep.o\r\nc\x00junk\r\nd"},
		},
		want:  []string{"a.o", "c", "d"},
		wantU: []string{".gitignore", "keep.o"},
	},
	{
		name: "a .gitignore that ignores itself, and everything but one directory",
		w: world{
			entries: []string{"a", "keep/x", "other/y", "sub/z"},
			ignore:  map[string]string{"": "/*\n!/keep/\n!/sub/\n", "sub": ".gitignore\n"},
		},
		want:  []string{".gitignore", "a", "other", "other/y", "sub/.gitignore"},
		wantU: []string{"keep/x", "sub/z"},
	},
	{
		name: "a nested file's basename patterns stay below it",
		w: world{
			entries: []string{"a/x.o", "b/x.o"},
			ignore:  map[string]string{"a": "*.o\n"},
		},
		want:  []string{"a/x.o"},
		wantU: []string{"a/.gitignore", "b/x.o"},
	},
	{
		name: "* and ? do not cross a slash in anchored patterns",
		w: world{
			entries: []string{"a/b/c", "a/c", "a/bc", "ab/c"},
			ignore:  map[string]string{"": "a/*c\na?c\n"},
		},
		want:  []string{"a/bc", "a/c"},
		wantU: []string{".gitignore", "a/b/c", "ab/c"},
	},
	{
		name: "unclosed class and unknown class name match nothing",
		w: world{
			entries: []string{"[a", "a", "b"},
			ignore:  map[string]string{"": "[a\n[[:foo:]]\n"},
		},
		wantU: []string{".gitignore", "[a", "a", "b"},
	},
}

// TestWorlds checks this package against the hand-written answers, and
// the answers against git.
func TestWorlds(t *testing.T) {
	for _, c := range worldCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := build(t, c.w)
			want := verdict{Ignored: c.want, Untracked: c.wantU}
			if diff := cmp.Diff(want, ourVerdict(t, b)); diff != "" {
				t.Errorf("this package (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, gitVerdict(t, b)); diff != "" {
				t.Errorf("git (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePatterns(t *testing.T) {
	type parsed struct {
		Line, Base string
		Kind       kind
		Lit, Glob  string
		Neg, Dir   bool
	}
	cases := []struct {
		name    string
		content string
		base    string
		want    []parsed
	}{
		{"literal basename", "foo\n", "", []parsed{{Line: "foo", Kind: basenameLiteral, Glob: "foo"}}},
		{"suffix", "*.o\n", "a/b/", []parsed{{Line: "*.o", Base: "a/b", Kind: basenameSuffix, Glob: ".o"}}},
		{"prefix", "foo*/\n", "", []parsed{{Line: "foo*/", Kind: basenamePrefix, Glob: "foo", Dir: true}}},
		{"glob", "!*.[!o]\n", "", []parsed{{Line: "!*.[!o]", Kind: basenameGlob, Glob: "*.[!o]", Neg: true}}},
		{"anchored literal", "/build/\n", "", []parsed{{Line: "/build/", Kind: pathLiteral, Lit: "build", Dir: true}}},
		{"anchored glob", "doc/**/x\n", "", []parsed{{Line: "doc/**/x", Kind: pathGlob, Lit: "doc/", Glob: "**/x"}}},
		{"leading ** before a literal", "**/foo", "", []parsed{{Line: "**/foo", Kind: basenameLiteral, Glob: "foo"}}},
		{"leading ** before a suffix", "/**/*.o/", "", []parsed{{Line: "/**/*.o/", Kind: basenameSuffix, Glob: ".o", Dir: true}}},
		{"leading ** before a glob", "**/a*b", "", []parsed{{Line: "**/a*b", Kind: pathGlob, Glob: "**/a*b"}}},
		{"leading ** before a path", "**/a/b", "", []parsed{{Line: "**/a/b", Kind: pathGlob, Glob: "**/a/b"}}},
		{"escapes are globs", "\\#a\n\\!b\n", "", []parsed{
			{Line: "\\#a", Kind: basenameGlob, Glob: "\\#a"},
			{Line: "\\!b", Kind: basenameGlob, Glob: "\\!b"},
		}},
		{"comments, blanks and never-matching lines dropped", "#x\n\n   \n!\n/\n!/\n\r\n", "", nil},
		{"trailing spaces", "a \\  \nb\\\\  \nc \\", "", []parsed{
			{Line: "a \\ ", Kind: basenameGlob, Glob: "a \\ "},
			{Line: "b\\\\", Kind: basenameGlob, Glob: "b\\\\"},
			{Line: "c \\", Kind: basenameGlob, Glob: "c \\"},
		}},
		{"a # after a space is not a comment", " #x\n", "", []parsed{{Line: " #x", Kind: basenameLiteral, Glob: " #x"}}},
		{"BOM only at the start", "\xef\xbb\xbfa\n\xef\xbb\xbfb\n", "", []parsed{
			{Line: "a", Kind: basenameLiteral, Glob: "a"},
			{Line: "\xef\xbb\xbfb", Kind: basenameLiteral, Glob: "\xef\xbb\xbfb"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []parsed
			for _, p := range ParsePatterns([]byte(c.content), c.base) {
				got = append(got, parsed{
					Line: p.String(), Base: p.Base(), Kind: p.kind, Lit: p.lit, Glob: p.glob,
					Neg: p.flags&flagNegative != 0, Dir: p.flags&flagMustBeDir != 0,
				})
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("ParsePatterns(%q, %q) (-want +got):\n%s", c.content, c.base, diff)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		line, base, path string
		isDir            bool
		want             Result
	}{
		{"foo", "", "a/b/foo", false, Exclude},
		{"!foo", "", "foo", true, Include},
		{"foo", "a", "b/foo", false, NoMatch}, // outside the base
		{"foo", "a", "a", true, NoMatch},      // the base itself
		{"foo", "a", "a/foo", false, Exclude},
		{"foo/", "", "foo", false, NoMatch},
		{"foo/", "", "x/foo", true, Exclude},
		{"/foo", "a", "a/foo", false, Exclude},
		{"/foo", "a", "a/x/foo", false, NoMatch},
		{"x/foo", "a", "a/x/foo", false, Exclude},
		{"x/foo", "a", "ab/x/foo", false, NoMatch},
		{"data/**", "", "data", true, NoMatch},
		{"data/**", "", "data/a/b", false, Exclude},
		{"*.o", "", "x.o", false, Exclude},
		{"*.o", "", "x.o/y", false, NoMatch},
		{"*.o", "", ".o", false, Exclude},
		{"a*", "", "x/abc", false, Exclude},
		{"a*", "", "ab/x", false, NoMatch},
		{"a?c", "", "a/c", false, NoMatch},
		{"a[/]c", "", "a/c", false, NoMatch},
		{"*", "", "a/b", true, Exclude},
		{"**", "", "a/b", true, Exclude},
		{"a/**/", "", "a/b", false, NoMatch},
		{"a/**/", "", "a/b", true, Exclude},
	}
	for _, c := range cases {
		t.Run(c.line+" "+c.path, func(t *testing.T) {
			ps := ParsePatterns([]byte(c.line), c.base)
			if len(ps) != 1 {
				t.Fatalf("ParsePatterns(%q) gave %d patterns", c.line, len(ps))
			}
			if diff := cmp.Diff(c.want, ps[0].Match(c.path, c.isDir)); diff != "" {
				t.Errorf("Match(%q, %v) with %q in %q (-want +got):\n%s", c.path, c.isDir, c.line, c.base, diff)
			}
		})
	}
}

func TestIgnoredLastMatchWins(t *testing.T) {
	ps := append(ParsePatterns([]byte("*.log\n!keep.log\n"), ""), ParsePatterns([]byte("keep.log\n!*.log\n"), "sub")...)
	cases := []struct {
		path string
		want bool
	}{
		{"a.log", true},
		{"keep.log", false},
		{"sub/a.log", false},
		{"sub/keep.log", false},
		{"x/keep.log", false},
		{"other", false},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			if diff := cmp.Diff(c.want, Ignored(ps, c.path, false)); diff != "" {
				t.Errorf("Ignored(%q) (-want +got):\n%s", c.path, diff)
			}
		})
	}
}
