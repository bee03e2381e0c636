//go:build race

package search

// raceEnabled reports a race-detector build, whose sync.Pool drops a
// quarter of what is put in it at random.
const raceEnabled = true
