//go:build race

package fetch

func init() { raceEnabled = true }
