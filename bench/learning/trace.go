package main

// A Trace is a project and a sequence of agent tasks in it: what each
// task changes, the environment it meets, and what a competent agent does
// when orket's text tells it something. Its labels (Hazard) are for the
// score only: the agent never reads them. Traces are data: one YAML file
// a trace in traces/ (see traces.go); the fields' YAML names are the
// tags below, and a field left out is empty.
type Trace struct {
	Name string `yaml:"name"`
	// Need names the programs the trace runs (go, python3, node).
	Need []string `yaml:"need,omitempty"`
	// Vault holds the secrets an agent can set once it knows their
	// names (from orket's text).
	Vault map[string]string `yaml:"vault,omitempty"`
	// Ports are the TCP ports the project's tests listen on or dial, by
	// name: a task may hold one (busy) or need one served (a service).
	Ports map[string]int `yaml:"ports,omitempty"`
	// Files are the project's files at the start; Setup runs after they
	// are written and committed (npm install, a first build).
	Files map[string]string `yaml:"files,omitempty"`
	Setup []string          `yaml:"setup,omitempty"`
	Tasks []Task            `yaml:"tasks"`
}

// A Task is one agent task.
type Task struct {
	ID     string   `yaml:"id"`
	Scope  []string `yaml:"scope,omitempty"`
	Hazard string   `yaml:"hazard,omitempty"` // the hazard it meets ("": none), for the score
	// Env is the environment the task meets: variables of the vault the
	// runner lacks, ports held by something else, services down.
	Unset []string `yaml:"unset,omitempty"`
	Busy  []string `yaml:"busy,omitempty"` // names of Ports something else holds
	Down  []string `yaml:"down,omitempty"` // names of Ports whose service is not running
	// Flaky makes the project's flaky test fail once (FLAKE=1).
	Flaky bool `yaml:"flaky,omitempty"`
	// Edit is what the agent does; Remedies what it does besides (or
	// instead) when orket's text names their trigger.
	Edit     Edit     `yaml:"edit,omitempty"`
	Remedies []Remedy `yaml:"remedies,omitempty"`
	// Review is a reviewer who rejects a kept change touching these
	// paths, with Reason.
	Review *Review `yaml:"review,omitempty"`
}

// An Edit changes files of the project.
type Edit struct {
	Write   map[string]string `yaml:"write,omitempty"`  // path → whole new content
	Append  map[string]string `yaml:"append,omitempty"` // path → text added at the end
	Replace []Replacement     `yaml:"replace,omitempty"`
	Run     []string          `yaml:"run,omitempty"` // commands run after the files are written (sh -c)
}

// A Replacement replaces Old by New in Path (the first occurrence).
type Replacement struct {
	Path string `yaml:"path"`
	Old  string `yaml:"old"`
	New  string `yaml:"new"`
}

// A Remedy is what a competent agent does once orket's text (the
// preflight's JSON, ORKET_ADVISORIES, ORKET_GUARDRAILS) matches Trigger
// (a regular expression).
type Remedy struct {
	Trigger string `yaml:"trigger"`
	// Before the run: variables set from the vault, held ports freed,
	// services started.
	SetEnv []string `yaml:"set_env,omitempty"`
	Free   []string `yaml:"free,omitempty"`
	Start  []string `yaml:"start,omitempty"`
	// In the edit: more changes, and paths of the edit left out.
	Edit Edit     `yaml:"edit,omitempty"`
	Skip []string `yaml:"skip,omitempty"`
}

// A Review rejects a kept run whose change touched one of Paths.
type Review struct {
	Paths  []string `yaml:"paths"`
	Reason string   `yaml:"reason"`
}
