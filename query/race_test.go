//go:build race

package query_test

func init() { raceEnabled = true }
