//go:build race

package sandbox

// largeFileSize is the size of the files of the read_file memory tests:
// a text head, then a sparse tail of NUL bytes (valid UTF-8, no newline)
// up to this size, which os.Truncate makes without writing it. The race
// detector slows the scan about twentyfold, so its runs use 64 MiB; the
// bound on allocations is the same.
const largeFileSize = 64 << 20
