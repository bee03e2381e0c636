package config

import (
	"os"
	"time"
)

// settleTime is how long before a read a file's modification and change
// times must lie for its stamp to stand for the content read: a write
// within the same tick of the file system's clock as the read may leave
// every stamp field as it was (git's "racily clean" files). Two seconds
// covers the coarsest common clock (FAT's); a file changed that recently
// is read and hashed again at every check until it is older.
const settleTime = 2 * time.Second

// fileStamp is what a stat says of a file's version: size, modification
// and change times and, where the system has them, device and inode. A
// rewrite changes the change time (which, unlike the modification time,
// cannot be set back), and a replacement by rename changes the inode.
type fileStamp struct {
	size         int64
	mtime, ctime int64 // Unix nanoseconds; ctime 0 where the system has none
	dev, ino     uint64
}

// stampOf returns the stamp of the file at path; ok is false when it
// cannot be had (the file is missing or unreadable, or the system gives
// no change time), and the caller then reads the file.
func stampOf(path string) (st fileStamp, ok bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileStamp{}, false
	}
	st = fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	return st, sysStamp(fi, &st)
}

// settled reports whether st describes a file last changed at least
// settleTime before readAt, so that a later change must alter st.
func (st fileStamp) settled(readAt time.Time) bool {
	limit := readAt.Add(-settleTime).UnixNano()
	return st.mtime < limit && st.ctime < limit
}
