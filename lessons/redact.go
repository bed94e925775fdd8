package lessons

import "github.com/orket/orket/redact"

// Redacted replaces a secret in everything orket writes under .orket.
const Redacted = redact.Redacted

// A Redactor removes secrets from text; it is orket's one redactor,
// package redact, under the name lessons has always used.
type Redactor = redact.Redactor

// NewRedactor builds a redactor for an environment (os.Environ form): the
// known shapes of secrets, and the values of variables whose names look
// secret.
func NewRedactor(environ []string) *Redactor {
	return redact.New(redact.Options{Environ: environ})
}
