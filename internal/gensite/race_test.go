//go:build race

package gensite

const raceEnabled = true
