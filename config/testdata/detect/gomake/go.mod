module github.com/acme/router

go 1.22
