//go:build !race

package maintenance

// raceEnabled: see race_test.go.
const raceEnabled = false
