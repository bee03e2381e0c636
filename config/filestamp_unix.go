//go:build linux || openbsd || darwin || freebsd || netbsd

package config

import (
	"io/fs"
	"syscall"
)

// sysStamp adds the change time, device and inode of fi to st.
func sysStamp(fi fs.FileInfo, st *fileStamp) bool {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	st.ctime = ctimeOf(sys)
	st.dev, st.ino = uint64(sys.Dev), uint64(sys.Ino)
	return true
}
