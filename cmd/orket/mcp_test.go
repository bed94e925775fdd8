package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orket/orket/internal/fingerprint"
)

// mcpRepo makes a repository whose verify step fails when pkg/a.txt says
// BROKEN, logging when each verification starts and ends in log.
func mcpRepo(t *testing.T, log string) string {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	shell(t, dir, `
git init -q
mkdir pkg docs
printf 'one\n' > pkg/a.txt
printf 'two\n' > pkg/b.txt
printf 'guide\n' > docs/guide.md
cat > orket.yaml <<'Y'
verify:
  default: check
  profiles:
    check:
      - {name: build, run: "cat pkg/*.txt > /dev/null"}
      - {name: test, run: "echo start $(date +%s%N) >> `+log+`; sleep 0.5; echo end $(date +%s%N) >> `+log+`; if grep -q BROKEN pkg/a.txt; then echo 'FAIL: TestA: pkg/a.txt is BROKEN'; exit 1; fi"}
Y
git add -A
git commit -q -m init
`)
	return dir
}

// connect starts orket mcp in dir as an agent's MCP client would, over
// stdio, and returns the client's session.
func connect(t *testing.T, bin, dir string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "v1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its answer, orket's --json object.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents", tool, len(res.Content))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s answered no JSON object: %v\n%s", tool, err, text)
	}
	return v, res.IsError
}

func fingerprintOf(t *testing.T, dir string) string {
	t.Helper()
	s, err := fingerprint.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func patchOf(path, from, to string) string {
	return fmt.Sprintf("diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-%s\n+%s\n", path, path, path, path, from, to)
}

// TestMCPServer drives orket mcp with the official SDK's client, as an
// agent would: the tools are listed; a passing patch is kept and a
// failing one reverted exactly and learned, the memory then warning of
// it; a patch or a scope outside the server's scope is refused, writing
// nothing; and the memory is a resource.
func TestMCPServer(t *testing.T) {
	bin := orketBinary(t)
	dir := mcpRepo(t, filepath.Join(t.TempDir(), "log"))
	cs := connect(t, bin, dir, "--scope", "pkg", "--agent", "claude")

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"apply_patch", "memory", "preflight", "task", "verify"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}

	// A passing patch is kept.
	v, isErr := call(t, cs, "apply_patch", map[string]any{"patch": patchOf("pkg/b.txt", "two", "three"), "task": "T-1"})
	if isErr || v["code"] != "OK" || v["verdict"] != "APPROVE" {
		t.Fatalf("passing patch: error %v, %v", isErr, v)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pkg/b.txt")); string(b) != "three\n" {
		t.Errorf("pkg/b.txt = %q after a kept patch", b)
	}

	// A failing one is reverted bit for bit, its lesson recorded and
	// its attempt counted.
	before := fingerprintOf(t, dir)
	v, isErr = call(t, cs, "apply_patch", map[string]any{"patch": patchOf("pkg/a.txt", "one", "BROKEN"), "task": "T-2"})
	if !isErr || v["code"] != "E_VERIFY_FAILED_REVERTED" {
		t.Fatalf("failing patch: error %v, %v", isErr, v)
	}
	if a := v["attempt"].(map[string]any); a["rejections"] != 1.0 || a["task"] != "T-2" || a["agent"] != "claude" {
		t.Errorf("attempt %v", a)
	}
	if fingerprintOf(t, dir) != before {
		t.Error("the failing patch was not reverted exactly")
	}
	v, _ = call(t, cs, "task", map[string]any{"task": "T-2"})
	if at := v["Attempts"].([]any); len(at) != 1 || !strings.Contains(at[0].(map[string]any)["summary"].(string), "BROKEN") {
		t.Errorf("task T-2: %v", v)
	}

	// The memory of the scope now warns of it.
	v, isErr = call(t, cs, "memory", map[string]any{"scope": []string{"pkg"}})
	if isErr {
		t.Fatalf("memory: %v", v)
	}
	adv := v["advisories"].([]any)
	if len(adv) == 0 || !strings.Contains(adv[0].(map[string]any)["title"].(string), "BROKEN") {
		t.Errorf("memory advisories: %v", adv)
	}

	// Nothing outside the server's scope: a patch that writes there, and
	// a call that names a wider scope, write nothing.
	v, isErr = call(t, cs, "apply_patch", map[string]any{"patch": patchOf("docs/guide.md", "guide", "hijacked")})
	if !isErr || v["code"] != "E_WRITE_OUT_OF_SCOPE" {
		t.Errorf("patch outside the scope: error %v, %v", isErr, v)
	}
	for _, wide := range [][]string{{"docs"}, {"."}, {"**"}, {"pkg/../docs"}} {
		v, isErr = call(t, cs, "apply_patch", map[string]any{"patch": patchOf("docs/guide.md", "guide", "hijacked"), "scope": wide})
		if !isErr || v["code"] == "OK" {
			t.Errorf("scope %v: error %v, %v", wide, isErr, v)
		}
	}
	if fingerprintOf(t, dir) != before {
		t.Error("a refused call changed the tree")
	}

	// The memory as a resource.
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "orket://memory"})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Contents[0].Text; !strings.Contains(text, "BROKEN") {
		t.Errorf("orket://memory does not warn of the failure:\n%s", text)
	}
}

// TestMCPTwoClients: two agents' servers apply patches at once; the
// repository lock serves them one after the other (their verifications
// never overlap), and both changes are kept.
func TestMCPTwoClients(t *testing.T) {
	bin := orketBinary(t)
	log := filepath.Join(t.TempDir(), "log")
	dir := mcpRepo(t, log)
	a := connect(t, bin, dir, "--scope", "pkg", "--agent", "a")
	b := connect(t, bin, dir, "--scope", "pkg", "--agent", "b")
	var wg sync.WaitGroup
	results := make([]map[string]any, 2)
	for i, cs := range []*mcp.ClientSession{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			file := []string{"pkg/a.txt", "pkg/b.txt"}[i]
			from := []string{"one", "two"}[i]
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "apply_patch",
				Arguments: map[string]any{"patch": patchOf(file, from, from+" more")}})
			if err != nil {
				t.Error(err)
				return
			}
			json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &results[i])
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r["code"] != "OK" {
			t.Errorf("client %d: %v", i, r)
		}
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// start, end, start, end: never two starts in a row.
	var events []string
	var last int64
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		kind, stamp, _ := strings.Cut(line, " ")
		at, _ := strconv.ParseInt(stamp, 10, 64)
		if at < last {
			t.Errorf("log out of order: %s", data)
		}
		last = at
		events = append(events, kind)
	}
	if want := []string{"start", "end", "start", "end"}; !slices.Equal(events, want) {
		t.Errorf("verifications overlapped: %v\n%s", events, data)
	}
}

// TestMCPGlobScope: a server started with a glob scope (pkg/*, the files
// directly in pkg) holds no directory whole: a call may repeat the glob,
// never name a directory or a deeper glob under it.
func TestMCPGlobScope(t *testing.T) {
	bin := orketBinary(t)
	dir := mcpRepo(t, filepath.Join(t.TempDir(), "log"))
	shell(t, dir, "mkdir -p pkg/sub && printf 'deep\\n' > pkg/sub/f.txt && git add -A && git commit -qm sub")
	cs := connect(t, bin, dir, "--scope", "pkg/*")
	before := fingerprintOf(t, dir)
	for _, wide := range [][]string{{"pkg/sub"}, {"pkg/sub/**"}, {"pkg/**"}, {"pkg"}} {
		v, isErr := call(t, cs, "apply_patch", map[string]any{"patch": patchOf("pkg/sub/f.txt", "deep", "widened"), "scope": wide})
		if !isErr || v["code"] != "E_WRITE_OUT_OF_SCOPE" {
			t.Errorf("scope %v under the server's pkg/*: error %v, %v", wide, isErr, v)
		}
	}
	if fingerprintOf(t, dir) != before {
		t.Fatal("a call outside the server's glob scope changed the tree")
	}
	v, isErr := call(t, cs, "apply_patch", map[string]any{"patch": patchOf("pkg/b.txt", "two", "three"), "scope": []string{"pkg/*"}})
	if isErr || v["code"] != "OK" {
		t.Errorf("the server's own glob: error %v, %v", isErr, v)
	}
}
