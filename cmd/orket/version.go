package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
)

// Set by the Makefile with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = ""
)

type versionResult struct {
	Code    orket.Code `json:"code"`
	Version string     `json:"version"`
	Commit  string     `json:"commit"`
	Go      string     `json:"go"`
}

func versionCommand(o *options, result *any) *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print orket's version, commit and Go version",
		UsageText: "orket version",
		Action: func(*cli.Context) error {
			res := versionResult{Code: orket.OK, Version: version, Commit: commit, Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
			if res.Commit == "" {
				res.Commit = "unknown"
				if bi, ok := debug.ReadBuildInfo(); ok {
					for _, s := range bi.Settings {
						if s.Key == "vcs.revision" {
							res.Commit = s.Value
						}
					}
				}
			}
			*result = res
			if !o.json {
				fmt.Fprintf(o.stdout, "orket %s (commit %s, %s)\n", res.Version, res.Commit, res.Go)
			}
			return nil
		},
	}
}
