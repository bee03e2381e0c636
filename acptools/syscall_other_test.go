//go:build !unix

package acptools

import "os"

func syscallZero() os.Signal { return os.Interrupt }
