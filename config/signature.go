package config

import (
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Signature identifies one version of a file for cheap change detection:
// its resolved path, modification time, size and SHA-256. Hashing makes a
// rewrite that keeps mtime and size (or moves mtime backwards) visible.
type Signature struct {
	Path    string // absolute path
	ModTime time.Time
	Size    int64
	SHA256  [32]byte
	Missing bool // the file does not exist
}

// readSignature returns the signature of the file at path and the bytes it
// hashed, so that a caller parses exactly the content it fingerprinted. A
// missing file is not an error: it yields a Signature with Missing set.
func readSignature(path string) (Signature, []byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Signature{Path: path}, nil, err
	}
	sig := Signature{Path: abs}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		sig.Missing = true
		return sig, nil, nil
	}
	if err != nil {
		return sig, nil, err
	}
	data, err := os.ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) { // deleted between stat and read
		sig.Missing = true
		return sig, nil, nil
	}
	if err != nil {
		return sig, nil, err
	}
	sig.ModTime = fi.ModTime()
	sig.Size = int64(len(data))
	sig.SHA256 = sha256.Sum256(data)
	return sig, data, nil
}

// Equal reports whether s and o describe the same version of the same file.
func (s Signature) Equal(o Signature) bool {
	return s.Path == o.Path && s.Missing == o.Missing && s.ModTime.Equal(o.ModTime) &&
		s.Size == o.Size && s.SHA256 == o.SHA256
}
