module github.com/acme/router/_examples/rest

go 1.22
