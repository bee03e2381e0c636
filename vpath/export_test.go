package vpath

// MaxPathLen lets the external fuzz test tell an over-long path from a
// refused one.
const MaxPathLen = maxPathLen
