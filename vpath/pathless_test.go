package vpath_test

import (
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/antlerhq/antler/vpath"
)

func TestPathlessError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"path error", &fs.PathError{Op: "open", Path: "/home/u/.antler/x", Err: fs.ErrPermission}, "open: permission denied"},
		{"link error", &os.LinkError{Op: "rename", Old: "/home/a", New: "/home/b", Err: fs.ErrExist}, "rename: file already exists"},
		{"wrapped path error", errors.Join(errors.New("save"), &fs.PathError{Op: "write", Path: "/srv/y", Err: fs.ErrClosed}), "write: file already closed"},
		{"other error", errors.New("agent name taken"), "agent name taken"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := vpath.PathlessError(tc.err); got != tc.want {
				t.Errorf("PathlessError = %q, want %q", got, tc.want)
			}
		})
	}
}
