//go:build race

package invariant

// Race reports whether the race detector is on: the tests then run fewer
// seeds.
const Race = true
