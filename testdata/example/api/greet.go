// Package api holds the greeter's HTTP handlers.
package api

import (
	"fmt"
	"net/http"
)

// Greeting returns the greeting for name.
func Greeting(name string) string {
	if name == "" {
		name = "world"
	}
	return fmt.Sprintf("Hello, %s!", name)
}

// Greet answers GET /greet?name=...
func Greet(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintln(w, Greeting(r.URL.Query().Get("name")))
}
