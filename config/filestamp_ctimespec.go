//go:build darwin || freebsd || netbsd

package config

import "syscall"

func ctimeOf(s *syscall.Stat_t) int64 { return s.Ctimespec.Nano() }
