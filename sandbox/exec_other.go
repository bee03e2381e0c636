//go:build !linux

package sandbox

// killTagged cannot find a command's detached descendants outside Linux
// (it reads /proc): only the command's process group is killed there.
func killTagged(tag string) error { return errNoProcScan }
