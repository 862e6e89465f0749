module nerve.dev/nerve/examples/go-engine

go 1.19

require nerve.dev/nerve v0.0.0

// The package from this source tree (go/); an engine outside it requires nerve.dev/nerve as
// installed (/usr/share/gocode/src/nerve.dev/nerve from the .deb) or vendored.
replace nerve.dev/nerve => ../../go
