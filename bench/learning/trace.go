package main

// A Trace is a project and a sequence of agent tasks in it: what each
// task changes, the environment it meets, and what a competent agent does
// when orket's text tells it something. Its labels (Hazard) are for the
// score only: the agent never reads them.
type Trace struct {
	Name string
	// Files are the project's files at the start; Setup runs after they
	// are written and committed (npm install, a first build).
	Files map[string]string
	Setup []string
	// Vault holds the secrets an agent can set once it knows their
	// names (from orket's text).
	Vault map[string]string
	// Ports are the TCP ports the project's tests listen on or dial, by
	// name: a task may hold one (busy) or need one served (a service).
	Ports map[string]int
	Tasks []Task
	// Need names the programs the trace runs (go, python3, node).
	Need []string
}

// A Task is one agent task.
type Task struct {
	ID     string
	Scope  []string
	Hazard string // the hazard it meets ("": none), for the score
	// Env is the environment the task meets: variables of the vault the
	// runner lacks, ports held by something else, services down.
	Unset []string
	Busy  []string // names of Ports something else holds
	Down  []string // names of Ports whose service is not running
	// Flaky makes the project's flaky test fail once (FLAKE=1).
	Flaky bool
	// Edit is what the agent does; Remedies what it does besides (or
	// instead) when orket's text names their trigger.
	Edit     Edit
	Remedies []Remedy
	// Review is a reviewer who rejects a kept change touching these
	// paths, with Reason.
	Review *Review
}

// An Edit changes files of the project.
type Edit struct {
	Write   map[string]string // path → whole new content
	Append  map[string]string // path → text added at the end
	Replace []Replacement
	Run     []string // commands run after the files are written (sh -c)
}

// A Replacement replaces Old by New in Path (the first occurrence).
type Replacement struct{ Path, Old, New string }

// A Remedy is what a competent agent does once orket's text (the
// preflight's JSON, ORKET_ADVISORIES, ORKET_GUARDRAILS) matches Trigger
// (a regular expression).
type Remedy struct {
	Trigger string
	// Before the run: variables set from the vault, held ports freed,
	// services started.
	SetEnv []string
	Free   []string
	Start  []string
	// In the edit: more changes, and paths of the edit left out.
	Edit Edit
	Skip []string
}

// A Review rejects a kept run whose change touched one of Paths.
type Review struct {
	Paths  []string
	Reason string
}
