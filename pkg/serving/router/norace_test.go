//go:build !race

package router

// raceEnabled says whether the tests run under the race detector.
const raceEnabled = false
