//go:build race

package maintenance

// raceEnabled: the race detector slows our Go code several times over and the SDK's not at all, so
// timing comparisons with the SDK mean nothing under -race.
const raceEnabled = true
