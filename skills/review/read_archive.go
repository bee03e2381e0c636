package review

import (
	"archive/zip"
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// ReadArchive reads a .skill package, a ZIP archive of size bytes read
// through r, without unpacking it anywhere; name (the archive's file
// name, never a host path) names the subject. Members are read in name
// order up to MaxFiles; a member whose name is absolute or climbs out of
// the package is an invalid_archive_path reader error, a symlink member
// is recorded with its target, and every member is decompressed at most
// to its byte budget, whatever size its header declares. An archive
// whose central directory is larger than MaxArchiveDirectoryBytes, or
// that is not a ZIP archive, gives an archive_read_failed reader error
// and no files. The error is ctx's when it ends.
func ReadArchive(ctx context.Context, r io.ReaderAt, size int64, name string, limits Limits) (*Snapshot, error) {
	limits = limits.withDefaults()
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	stem := strings.TrimSuffix(base, path.Ext(base))
	s := newSnapshot(Subject{Source: SourceArchive, DisplayRef: base, NameHint: &stem}, limits)
	// The budget covers the end records and the central directory that
	// zip.NewReader reads; member contents are read without it.
	br := &budgetReaderAt{r: r, left: limits.MaxArchiveDirectoryBytes + endRecordsAllowance}
	zr, err := zip.NewReader(br, size)
	if err != nil && !(errors.Is(err, zip.ErrInsecurePath) && zr != nil) {
		s.addError(codeArchiveRead, "", archiveError(err))
		return s.finish(), nil
	}
	br.disarm()
	members := slices.Clone(zr.File)
	slices.SortStableFunc(members, func(a, b *zip.File) int { return strings.Compare(a.Name, b.Name) })
	if len(members) > limits.MaxFiles {
		s.Truncated = true
		s.addError(codeTooManyFiles, "", "Archive member count exceeds the review limit")
		members = members[:limits.MaxFiles]
	}
	var total int64
	for _, m := range members {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if strings.HasSuffix(m.Name, "/") {
			continue
		}
		stop := readMember(s, m, limits, &total)
		if stop {
			break
		}
	}
	return s.finish(), nil
}

// endRecordsAllowance is what zip.NewReader may read to find the end of
// central directory record (its last 64 KiB and a little more) on top of
// the directory itself.
const endRecordsAllowance = 70 << 10

// readMember adds one member to s; stop is set when the total budget is
// spent.
func readMember(s *Snapshot, m *zip.File, limits Limits, total *int64) (stop bool) {
	p, err := NormalizePath(m.Name)
	if err != nil {
		s.addError(codeInvalidArchive, m.Name, err.Error())
		return false
	}
	if m.UncompressedSize64 > uint64(limits.MaxFileBytes) {
		s.addTooLarge(p, int64(min(m.UncompressedSize64, 1<<62)), "Archive member exceeds the per-file review limit")
		return false
	}
	remaining := limits.MaxTotalBytes - *total
	if remaining <= 0 {
		s.Truncated = true
		s.addError(codeTotalSize, p, "Archive total size exceeds the review limit")
		return true
	}
	budget := min(limits.MaxFileBytes, remaining)
	data, err := readBounded(m, budget)
	if err != nil {
		s.addError(codeArchiveMember, p, archiveError(err))
		return false
	}
	if int64(len(data)) > budget {
		s.Truncated = true
		if int64(len(data)) > limits.MaxFileBytes {
			s.Files = append(s.Files, File{Path: p, Kind: KindBinary, Size: int64(len(data))})
			s.addError(codeFileTooLarge, p, "Archive member exceeds the per-file review limit")
			return false
		}
		s.addError(codeTotalSize, p, "Archive total size exceeds the review limit")
		return true
	}
	*total += int64(len(data))
	if m.Mode()&fs.ModeSymlink != 0 {
		s.addSymlink(p, strings.ToValidUTF8(string(data), "\uFFFD"))
		return false
	}
	s.addData(p, data)
	return false
}

// readBounded decompresses at most budget+1 bytes of a member (one more
// than the budget, to tell a member over it).
func readBounded(m *zip.File, budget int64) ([]byte, error) {
	rc, err := m.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, budget+1))
	if err != nil && int64(len(data)) <= budget {
		return nil, err
	}
	return data, nil
}

// archiveError is a ZIP error's text without the "zip: " prefix.
func archiveError(err error) string {
	return strings.TrimPrefix(err.Error(), "zip: ")
}

// errDirectoryTooLarge is the archive_read_failed reason for an archive
// whose central directory is over its budget.
var errDirectoryTooLarge = errors.New("archive directory exceeds the review limit")

// budgetReaderAt fails reads once more than left bytes were read, until
// disarmed.
type budgetReaderAt struct {
	r        io.ReaderAt
	left     int64
	disarmed bool
}

func (b *budgetReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if !b.disarmed {
		if int64(len(p)) > b.left {
			return 0, errDirectoryTooLarge
		}
		b.left -= int64(len(p))
	}
	return b.r.ReadAt(p, off)
}

func (b *budgetReaderAt) disarm() { b.disarmed = true }
