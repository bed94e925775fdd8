module github.com/acme/router/cmd/tool

go 1.22
