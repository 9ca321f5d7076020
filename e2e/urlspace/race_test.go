//go:build race

package urlspace_test

func init() { raceEnabled = true }
