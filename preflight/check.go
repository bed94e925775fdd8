// Package preflight holds the checks orket makes before touching anything:
// a variable is set, a command exists, a file exists, a port is free, an
// address answers. Checks come from lessons (extracted from past failure
// output) and from orket.yaml; they are advisory unless strict mode is on.
package preflight

import (
	"fmt"
	"net"
	"strconv"
)

// The check types.
const (
	EnvVarPresent = "env_var_present"
	CommandExists = "command_exists"
	FileExists    = "file_exists"
	PortFree      = "port_free"
	TCPReachable  = "tcp_reachable"
)

// Types lists every check type, in documentation order.
var Types = []string{EnvVarPresent, CommandExists, FileExists, PortFree, TCPReachable}

// A Check is one precondition, as stored in lessons and orket.yaml. Exactly
// the field its type needs is set.
type Check struct {
	Type    string `json:"type"`
	Name    string `json:"name,omitempty"`    // env_var_present
	Command string `json:"command,omitempty"` // command_exists
	Path    string `json:"path,omitempty"`    // file_exists, repository-relative or absolute
	Port    int    `json:"port,omitempty"`    // port_free
	Address string `json:"address,omitempty"` // tcp_reachable, host:port
}

// Field returns the name of the field a check type needs, or "" for an
// unknown type.
func Field(typ string) string {
	switch typ {
	case EnvVarPresent:
		return "name"
	case CommandExists:
		return "command"
	case FileExists:
		return "path"
	case PortFree:
		return "port"
	case TCPReachable:
		return "address"
	}
	return ""
}

// Validate reports whether c is well formed: a known type with its field set
// to a plausible value.
func (c Check) Validate() error {
	switch c.Type {
	case EnvVarPresent:
		if c.Name == "" {
			return fmt.Errorf("%s check needs name", c.Type)
		}
	case CommandExists:
		if c.Command == "" {
			return fmt.Errorf("%s check needs command", c.Type)
		}
	case FileExists:
		if c.Path == "" {
			return fmt.Errorf("%s check needs path", c.Type)
		}
	case PortFree:
		if c.Port < 1 || c.Port > 65535 {
			return fmt.Errorf("%s check needs port between 1 and 65535, not %d", c.Type, c.Port)
		}
	case TCPReachable:
		host, port, err := net.SplitHostPort(c.Address)
		if err != nil || host == "" {
			return fmt.Errorf("%s check needs address as host:port, not %q", c.Type, c.Address)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("%s check needs a port between 1 and 65535 in %q", c.Type, c.Address)
		}
	case "":
		return fmt.Errorf("check needs type (one of %v)", Types)
	default:
		return fmt.Errorf("unknown check type %q (one of %v)", c.Type, Types)
	}
	return nil
}

// String describes the check the way people say it.
func (c Check) String() string {
	switch c.Type {
	case EnvVarPresent:
		return "environment variable " + c.Name + " is set"
	case CommandExists:
		return "command " + c.Command + " is on PATH"
	case FileExists:
		return "file " + c.Path + " exists"
	case PortFree:
		return "port " + strconv.Itoa(c.Port) + " is free"
	case TCPReachable:
		return c.Address + " accepts TCP connections"
	}
	return c.Type
}
