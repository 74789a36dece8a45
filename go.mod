module github.com/venom-org/git-venom

go 1.26.8

require github.com/spf13/pflag v1.1.0

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
)

tool github.com/cpuguy83/go-md2man/v2
