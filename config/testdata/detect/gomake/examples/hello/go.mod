module github.com/acme/router/examples/hello

go 1.22
