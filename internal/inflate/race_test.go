//go:build race

package inflate

func init() { raceEnabled = true }
