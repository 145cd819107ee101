//go:build race

package handlers

// raceEnabled: the race detector is on (it makes moving 1 GiB through loopback take minutes).
func init() { raceEnabled = true }
