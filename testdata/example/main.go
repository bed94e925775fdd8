// Command greeter serves a greeting over HTTP.
package main

import (
	"log"
	"net/http"

	"example.com/greeter/api"
)

func main() {
	http.HandleFunc("/greet", api.Greet)
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
}
