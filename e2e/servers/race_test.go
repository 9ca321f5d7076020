//go:build race

package servers_test

func init() { raceEnabled = true }
