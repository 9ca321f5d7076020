module github.com/gentlecrawl/gentlecrawl/bench

go 1.26.0

replace github.com/gentlecrawl/gentlecrawl => ../

require (
	github.com/gentlecrawl/gentlecrawl v0.0.0-00010101000000-000000000000
	github.com/temoto/robotstxt v1.1.2
)
