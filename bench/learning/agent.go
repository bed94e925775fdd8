package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// The scripted agent: orket runs this program as the edit command. It
// knows its task's edit and the remedies a competent agent knows, and
// applies a remedy only when the text orket gave it (what preflight
// said, ORKET_ADVISORIES, ORKET_GUARDRAILS) names its trigger.

type agentState struct {
	Task      Task   `json:"task"`
	Preflight string `json:"preflight"`
	Applied   []int  `json:"applied,omitempty"`
}

func writeState(dir string, i int, t Task, preflight string) (string, error) {
	b, err := json.Marshal(agentState{Task: t, Preflight: preflight})
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, ".git", fmt.Sprintf("agent-%d.json", i))
	return p, os.WriteFile(p, b, 0o644)
}

func readApplied(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var st agentState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, err
	}
	return st.Applied, nil
}

// told is all the text orket gave the agent.
func told(st agentState) string {
	text := st.Preflight
	for _, v := range []string{"ORKET_ADVISORIES", "ORKET_GUARDRAILS"} {
		if p := os.Getenv(v); p != "" {
			if b, err := os.ReadFile(p); err == nil {
				text += "\n" + string(b)
			}
		}
	}
	return text
}

func matches(trigger, text string) bool {
	return trigger != "" && regexp.MustCompile(trigger).MatchString(text)
}

func agentMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: learning agent STATE")
		return 2
	}
	b, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var st agentState
	if err := json.Unmarshal(b, &st); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	text := told(st)
	edit := st.Task.Edit
	var extra []Edit
	skip := map[string]bool{}
	for k, rem := range st.Task.Remedies {
		if len(rem.Skip) == 0 && isEmpty(rem.Edit) || !matches(rem.Trigger, text) {
			continue
		}
		st.Applied = append(st.Applied, k)
		for _, s := range rem.Skip {
			skip[s] = true
		}
		extra = append(extra, rem.Edit)
	}
	if err := apply(edit, skip); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		return 1
	}
	for _, e := range extra {
		if err := apply(e, nil); err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			return 1
		}
	}
	if b, err := json.Marshal(st); err == nil {
		os.WriteFile(args[0], b, 0o644)
	}
	return 0
}

func isEmpty(e Edit) bool {
	return len(e.Write) == 0 && len(e.Append) == 0 && len(e.Replace) == 0 && len(e.Run) == 0
}

// apply makes an edit in the working directory, leaving out the paths
// of skip.
func apply(e Edit, skip map[string]bool) error {
	for _, p := range sortedKeys(e.Write) {
		if skip[p] {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(e.Write[p]), 0o644); err != nil {
			return err
		}
	}
	for _, p := range sortedKeys(e.Append) {
		if skip[p] {
			continue
		}
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		_, err = f.WriteString(e.Append[p])
		f.Close()
		if err != nil {
			return err
		}
	}
	for _, r := range e.Replace {
		if skip[r.Path] {
			continue
		}
		b, err := os.ReadFile(r.Path)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), r.Old) {
			return fmt.Errorf("%s: no %q to replace", r.Path, r.Old)
		}
		if err := os.WriteFile(r.Path, []byte(strings.Replace(string(b), r.Old, r.New, 1)), 0o644); err != nil {
			return err
		}
	}
	for _, c := range e.Run {
		cmd := exec.Command("sh", "-c", c)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
	}
	return nil
}
