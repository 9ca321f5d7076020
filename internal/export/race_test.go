//go:build race

package export

func init() { raceEnabled = true }
