package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
	"github.com/orket/orket/internal/inert"
	"github.com/orket/orket/learn"
)

// mcpCommand is orket mcp: the engine as tools of a Model Context Protocol
// server on stdio, for an agent that speaks MCP.
func mcpCommand(o *options, result *any) *cli.Command {
	var agent, profile string
	return &cli.Command{
		Name:      "mcp",
		Usage:     "serve orket to an agent over the Model Context Protocol (stdio)",
		UsageText: "orket mcp --scope S [--scope S]... [--agent A] [--profile P]",
		Description: `mcp serves the engine to a coding agent as MCP tools on standard input and
output: apply a patch as a transaction, verify the tree, preflight a scope,
read the memory, read a task's attempts; and the agent's memory and
guardrails as resources. Every call is bounded by the server's --scope (or
orket.yaml's scope): a call may name a narrower scope, never a wider one.
Starting the server is the person's consent to the runs it makes. Runs take
the repository lock (waiting for it), record their runs and lessons, and
count attempts as orket run does. See docs/integrations.md.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "scope", Usage: "the paths every call may write at most, `PATH` (a directory or doublestar glob; repeatable)"},
			&cli.StringFlag{Name: "agent", Usage: "the agent the calls are made for (default: ORKET_AGENT, else default)", Destination: &agent},
			&cli.StringFlag{Name: "profile", Usage: "the verify `PROFILE` of calls that name none (default: verify.default)", Destination: &profile},
		},
		Action: noArgs(func(c *cli.Context) error {
			s, err := newMCPServer(o, c.StringSlice("scope"), orDefault(agent, o.getenv("ORKET_AGENT")), profile)
			if err != nil {
				return err
			}
			return s.serve(c.Context)
		}),
	}
}

// An mcpServer answers an agent's tool calls with the same use cases as
// the command line: each call reads orket.yaml afresh, and a run is
// orket.Execute with learning, as orket run's is.
type mcpServer struct {
	// mu serves one call at a time: the SDK runs each on a goroutine of
	// its own, and the repository handle is not shared between them.
	// (Two servers on one repository wait on its lock.)
	mu      sync.Mutex
	o       *options
	repo    *orket.Repo
	scope   *learn.ServerScope // what every call may write, at most
	agent   string
	profile string
}

func newMCPServer(o *options, scopes []string, agent, profile string) (*mcpServer, error) {
	r, cfg, err := repoAndConfig(o)
	if err != nil {
		return nil, err
	}
	resolved, err := resolveScopes(r, scopes)
	if err != nil {
		return nil, err
	}
	if len(resolved) == 0 {
		resolved = cfg.Scope
	}
	if len(resolved) == 0 {
		return nil, orket.Errorf(orket.EScopeRequired, "start the server with --scope DIR (or set scope: in orket.yaml): it bounds every call",
			"orket mcp needs a scope")
	}
	sc, err := learn.NewServerScope(resolved)
	if err != nil {
		return nil, err
	}
	return &mcpServer{o: o, repo: r, scope: sc, agent: agent, profile: profile}, nil
}

// serve answers on stdin and stdout until the client closes them. Nothing
// else is written to stdout: it is the protocol's.
func (s *mcpServer) serve(ctx context.Context) error {
	server := mcp.NewServer(&mcp.Implementation{Name: "orket", Version: version}, &mcp.ServerOptions{
		Instructions: "orket makes each change a transaction: apply_patch applies a unified diff within scope " +
			strings.Join(s.scope.Patterns(), ", ") + ", verifies it and keeps it or puts the tree back exactly. " +
			"Read the memory tool (or the orket://memory resource) before planning; read a failed call's steps, " +
			"lessons and attempt before retrying; stop when the code is E_ESCALATED or E_BASELINE_RED.",
	})
	mcp.AddTool(server, &mcp.Tool{Name: "apply_patch", Description: "Apply a unified diff (git diff or diff -u) as a transaction: " +
		"it may write only inside the scope, the verify profile runs, and the change is kept if every required step passes, " +
		"else the tree is put back exactly and the failure is learned. Returns the run record (code, steps, advisories, attempt, lessons)."},
		s.applyPatch)
	mcp.AddTool(server, &mcp.Tool{Name: "verify", Description: "Run the verify profile on the tree as it is (nothing is written); " +
		"returns the run record."}, s.verify)
	mcp.AddTool(server, &mcp.Tool{Name: "preflight", Description: "Before an edit: the past failures that apply to a scope " +
		"and the preflight checks they suggest, run now."}, s.preflight)
	mcp.AddTool(server, &mcp.Tool{Name: "memory", Description: "What to read before planning work in a scope: approved guardrails, " +
		"the agent memory, the patterns of past rejections, earlier reviews of the scope, advisories and failed checks."}, s.memory)
	mcp.AddTool(server, &mcp.Tool{Name: "task", Description: "Where this agent stands on a task: its consecutive rejections, " +
		"escalation, and each rejected attempt's failed step and summary."}, s.task)
	server.AddResource(&mcp.Resource{URI: "orket://memory", Name: "memory", MIMEType: "text/markdown",
		Description: "what the agent should read before planning, for the server's scope"}, s.memoryResource)
	server.AddResource(&mcp.Resource{URI: "orket://guardrails", Name: "guardrails", MIMEType: "text/markdown",
		Description: "the agent's guardrails a person approved"}, s.guardrailsResource)
	t := &mcp.IOTransport{Reader: io.NopCloser(s.o.stdin), Writer: nopWriteCloser{s.o.rawStdout}}
	err := server.Run(ctx, t)
	if ctx.Err() != nil || err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.ErrClosedPipe) {
		return nil // the client went away: the server's work is done
	}
	return orket.Errorf(orket.EUsage, "orket mcp is started by an MCP client, which speaks JSON-RPC on its stdin and stdout", "orket mcp: %v", err)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// The tools' inputs. Every scope is repository-relative and must lie
// inside the server's.
type (
	patchInput struct {
		Patch   string   `json:"patch" jsonschema:"the change, as a unified diff (git diff, or diff -u)"`
		Scope   []string `json:"scope,omitempty" jsonschema:"the paths the patch may write, inside the server's scope (default: the server's scope)"`
		Profile string   `json:"profile,omitempty" jsonschema:"the verify profile (default: the server's)"`
		Task    string   `json:"task,omitempty" jsonschema:"the piece of work across attempts, such as an issue id (default: the scope and profile)"`
		Commit  string   `json:"commit,omitempty" jsonschema:"on success, commit exactly the change with this message"`
	}
	verifyInput struct {
		Profile string `json:"profile,omitempty" jsonschema:"the verify profile (default: the server's)"`
		Base    string `json:"base,omitempty" jsonschema:"take the touch set as the diff from this revision to the tree"`
	}
	scopeInput struct {
		Scope []string `json:"scope,omitempty" jsonschema:"the area of the coming work, inside the server's scope (default: the server's scope)"`
		Touch []string `json:"touch,omitempty" jsonschema:"paths the coming edit means to change"`
	}
	taskInput struct {
		Task string `json:"task" jsonschema:"the task, as the runs name it"`
	}
)

func (s *mcpServer) env() orket.Env {
	return orket.Env{Environ: s.o.environ(), Getenv: s.o.getenv, Now: s.o.now}
}

// run makes one run as orket run does, waiting for the repository lock:
// calls from two clients are served one after the other.
func (s *mcpServer) run(ctx context.Context, edit orket.Edit, scopes []string, profile, task, commit string) (*mcp.CallToolResult, error) {
	cfg, err := loadConfigQuiet(s.o, s.repo)
	if err != nil {
		return toolResult(nil, err), nil
	}
	req := orket.Request{Repo: s.repo, Config: cfg, Edit: edit, Scope: scopes, Profile: orDefault(profile, s.profile),
		Agent: s.agent, Task: task, AutoConfirm: true, Wait: true, Commit: commit, Env: s.env(), Learner: learn.Loop{}}
	rec, err := orket.Execute(ctx, req, mcpObserver{o: s.o})
	if rec != nil {
		return toolResult(rec, err), nil
	}
	return toolResult(nil, err), nil
}

func (s *mcpServer) applyPatch(ctx context.Context, _ *mcp.CallToolRequest, in patchInput) (*mcp.CallToolResult, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	scopes, err := s.scope.Narrow(in.Scope)
	if err != nil {
		return toolResult(nil, err), nil, nil
	}
	edit, err := orket.ReadPatch("mcp", strings.NewReader(in.Patch))
	if err != nil {
		return toolResult(nil, err), nil, nil
	}
	res, err := s.run(ctx, edit, scopes, in.Profile, in.Task, in.Commit)
	return res, nil, err
}

func (s *mcpServer) verify(ctx context.Context, _ *mcp.CallToolRequest, in verifyInput) (*mcp.CallToolResult, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.run(ctx, orket.VerifyOnly{Base: in.Base}, s.scope.Patterns(), in.Profile, "", "")
	return res, nil, err
}

func (s *mcpServer) preflight(_ context.Context, _ *mcp.CallToolRequest, in scopeInput) (*mcp.CallToolResult, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	scopes, err := s.scope.Narrow(in.Scope)
	if err != nil {
		return toolResult(nil, err), nil, nil
	}
	cfg, err := loadConfigQuiet(s.o, s.repo)
	if err != nil {
		return toolResult(nil, err), nil, nil
	}
	res, err := learn.Preflight(learn.PreflightRequest{Repo: s.repo, Config: cfg, Scope: scopes, Touch: in.Touch, Profile: s.profile, Env: s.env()})
	return toolResult(res, err), nil, nil
}

func (s *mcpServer) memoryView(scopes []string) (*learn.MemoryView, error) {
	cfg, err := loadConfigQuiet(s.o, s.repo)
	if err != nil {
		return nil, err
	}
	return learn.Memory(learn.MemoryQuery{Repo: s.repo, Config: cfg, Agent: s.agent, Scope: scopes, Env: s.env()})
}

func (s *mcpServer) memory(_ context.Context, _ *mcp.CallToolRequest, in scopeInput) (*mcp.CallToolResult, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	scopes, err := s.scope.Narrow(in.Scope)
	if err != nil {
		return toolResult(nil, err), nil, nil
	}
	v, err := s.memoryView(scopes)
	return toolResult(v, err), nil, nil
}

// A taskView is the task tool's answer.
type taskView struct {
	Code     orket.Code         `json:"code"`
	Status   []learn.TaskStatus `json:"status"`
	Attempts []orket.PreviousAttempt
}

func (s *mcpServer) task(_ context.Context, _ *mcp.CallToolRequest, in taskInput) (*mcp.CallToolResult, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in.Task == "" {
		return toolResult(nil, orket.Errorf(orket.EUsage, "name the task, as the runs name it", "task: no task named")), nil, nil
	}
	cfg, err := loadConfigQuiet(s.o, s.repo)
	if err != nil {
		return toolResult(nil, err), nil, nil
	}
	status, err := learn.ListTasks(s.repo, cfg, in.Task, s.agent)
	if err != nil {
		return toolResult(nil, err), nil, nil
	}
	st, err := learn.Verdicts(s.repo).State(in.Task, s.agent)
	if err != nil {
		return toolResult(nil, err), nil, nil
	}
	v := taskView{Code: orket.OK, Status: status, Attempts: []orket.PreviousAttempt{}}
	for _, e := range st.Attempts {
		v.Attempts = append(v.Attempts, orket.PreviousAttempt{RunID: e.RunID, Verdict: e.Verdict, Score: e.Score,
			FailedStep: e.FailedStep, Tags: e.Tags, Summary: e.Summary})
	}
	return toolResult(v, nil), nil, nil
}

func (s *mcpServer) memoryResource(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.memoryView(s.scope.Patterns())
	if err != nil {
		return nil, fmt.Errorf("%s", orket.Describe(err).Line())
	}
	return markdownResource("orket://memory", v.Markdown()), nil
}

func (s *mcpServer) guardrailsResource(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.memoryView(s.scope.Patterns())
	if err != nil {
		return nil, fmt.Errorf("%s", orket.Describe(err).Line())
	}
	text := "No guardrails approved for agent " + s.agent + " yet.\n"
	if g := v.Guardrails; g != nil && g.Version > 0 {
		text = g.Text
	}
	return markdownResource("orket://guardrails", text), nil
}

func markdownResource(uri, text string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}
}

// toolResult is a tool's answer: the JSON object orket's --json prints
// (a run's record, or the outcome's code, error and hint), an error for
// the agent to read when the outcome is not OK.
func toolResult(v any, err error) *mcp.CallToolResult {
	code := orket.OK
	if err != nil {
		p := orket.Describe(err)
		code = p.Code
		if !carriesOutcome(v) {
			v = errorObject(p)
		}
	}
	b, jerr := json.MarshalIndent(v, "", "  ")
	if jerr != nil {
		b = []byte(fmt.Sprintf(`{"code":%q,"error":%q}`, orket.EInternal, "encode result: "+jerr.Error()))
		code = orket.EInternal
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, IsError: code != orket.OK}
}

// mcpObserver hears a run for the server's log, standard error: its
// warnings, one inert line each.
type mcpObserver struct {
	orket.NopObserver
	o *options
}

func (m mcpObserver) Warn(msg string) { fmt.Fprintln(m.o.stderr, "orket: warning: "+inert.Text(msg)) }
