package review

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strconv"
)

// PackageDigest is a package's identity independent of where it lies on
// disk: "sha256:" and the hex SHA-256 over one record per file (kind,
// path, size and content digest, NUL-separated), the records in byte
// order, each preceded by its length as 8 big-endian bytes. It is
// DeerFlow's compute_package_digest, so both name the same package with
// the same digest.
func PackageDigest(s *Snapshot) string {
	records := make([][]byte, 0, len(s.Files))
	for _, f := range s.Files {
		kind := f.Kind
		if kind == "" {
			kind = "unknown"
		}
		p := f.Path
		if n, err := NormalizePath(p); err == nil {
			p = n
		}
		rec := bytes.Join([][]byte{[]byte(kind), []byte(p), []byte(strconv.FormatInt(f.Size, 10)), []byte(f.SHA256)}, []byte{0})
		records = append(records, rec)
	}
	slices.SortFunc(records, bytes.Compare)
	h := sha256.New()
	var n [8]byte
	for _, rec := range records {
		binary.BigEndian.PutUint64(n[:], uint64(len(rec)))
		h.Write(n[:])
		h.Write(rec)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
