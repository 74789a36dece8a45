module github.com/venom-org/git-venom

go 1.26.8

require github.com/spf13/pflag v1.1.0

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/cyphar/filepath-securejoin v0.6.1 // indirect
	github.com/go-git/go-billy/v5 v5.9.2
	github.com/google/renameio/v2 v2.0.2
	github.com/hashicorp/errwrap v1.0.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
)

tool github.com/cpuguy83/go-md2man/v2
