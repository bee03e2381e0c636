package vpath

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// pair is one host base and the virtual path it stands for.
type pair struct {
	host, virtual string
}

// maskPairs returns the host→virtual pairs of a thread, longest host path
// first: every root, the thread's user-data folder as /mnt/user-data, and
// the symlink-resolved spelling of each host path when it differs (so
// that /private/var/... on macOS, or a home reached through a symlink, is
// masked too).
func (l *Layout) maskPairs(user, thread string) []pair {
	roots, err := l.Roots(user, thread)
	if err != nil {
		return nil
	}
	tp, _ := l.ThreadPaths(user, thread)
	var out []pair
	add := func(host, virtual string) {
		out = append(out, pair{host, virtual})
		if real, err := filepath.EvalSymlinks(host); err == nil && real != host {
			out = append(out, pair{real, virtual})
		}
	}
	for _, r := range roots {
		add(r.Host, r.Virtual)
	}
	add(tp.UserData, UserData)
	if l.skillsPath != "" {
		add(l.skillsPath, l.skillsRoot)
	}
	slices.SortStableFunc(out, func(a, b pair) int { return cmp.Compare(len(b.host), len(a.host)) })
	return slices.CompactFunc(out, func(a, b pair) bool { return a == b })
}

// Mask replaces every host path of the thread's roots in text by its
// virtual path, longest host path first, on segment boundaries: a base
// matches only when followed by the end of the text, a separator, or a
// character that cannot continue a file name, so a sibling folder such as
// ".../threads/t1-backup" is left alone. Use it on anything the agent
// reads (command output, listings, error messages).
func (l *Layout) Mask(user, thread, text string) string {
	return replaceBases(text, l.maskPairs(user, thread), true)
}

// MaskFolder replaces the host folder host (and its symlink-resolved
// spelling) in text by virtual, with the boundary rules of
// [Layout.Mask]. It is for folders outside any thread, such as the
// global ACP workspace used by a call without a valid thread.
func MaskFolder(text, host, virtual string) string {
	pairs := []pair{{host, virtual}}
	if real, err := filepath.EvalSymlinks(host); err == nil && real != host {
		pairs = append(pairs, pair{real, virtual})
		slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(len(b.host), len(a.host)) })
	}
	return replaceBases(text, pairs, true)
}

// Masker is [Layout.Mask] for one thread with its host paths (and their
// symlink-resolved spellings) computed once. It is immutable and safe for
// concurrent use; make a new one if the thread's folders are re-linked.
type Masker struct {
	pairs []pair
}

// Masker returns the masker of (user, thread).
func (l *Layout) Masker(user, thread string) *Masker {
	return &Masker{pairs: l.maskPairs(user, thread)}
}

// Mask replaces the thread's host paths in text, as [Layout.Mask].
func (m *Masker) Mask(text string) string { return replaceBases(text, m.pairs, true) }

// ToVirtual returns the virtual path of a host path under one of the
// thread's roots (lexically, or after resolving symlinks), and false when
// it is under none.
func (l *Layout) ToVirtual(user, thread, hostPath string) (string, bool) {
	if !filepath.IsAbs(hostPath) {
		return "", false
	}
	hostPath = filepath.Clean(hostPath)
	pairs := l.maskPairs(user, thread)
	candidates := []string{hostPath}
	if real, err := realpath(hostPath, 0); err == nil && real != hostPath {
		candidates = append(candidates, real)
	}
	for _, c := range candidates {
		for _, p := range pairs {
			if underHost(c, p.host) {
				rest := filepath.ToSlash(strings.TrimPrefix(c, p.host))
				return path.Clean(p.virtual + "/" + rest), true
			}
		}
	}
	return "", false
}

// ToHostText replaces every virtual root in text (a shell command, or the
// content of a file a host command will read) by its host folder, longest
// root first, on segment boundaries. The bare /mnt/user-data becomes the
// thread's user-data folder.
func (l *Layout) ToHostText(user, thread, text string) string {
	if !strings.Contains(text, "/mnt") && !l.hasMountPrefix(text) {
		return text
	}
	roots, err := l.Roots(user, thread)
	if err != nil {
		return text
	}
	tp, _ := l.ThreadPaths(user, thread)
	pairs := make([]pair, 0, len(roots)+1)
	for _, r := range roots {
		pairs = append(pairs, pair{host: r.Virtual, virtual: r.Host}) // reversed roles
	}
	pairs = append(pairs, pair{host: UserData, virtual: tp.UserData})
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(len(b.host), len(a.host)) })
	return replaceBases(text, pairs, true)
}

func (l *Layout) hasMountPrefix(text string) bool {
	for _, m := range l.mounts {
		if strings.Contains(text, m.ContainerPath) {
			return true
		}
	}
	return false
}

// replaceBases scans text once and, at each position, replaces the first
// (longest) base of pairs that starts there and ends on a segment
// boundary. A single pass means a replacement is never matched again.
// With leftBoundary, a base must also not continue a longer path or word
// on its left (so "/x/home/..." does not match a base "/home/...").
func replaceBases(text string, pairs []pair, leftBoundary bool) string {
	if len(pairs) == 0 || text == "" {
		return text
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '/')
		if j < 0 {
			break
		}
		i += j
		if leftBoundary && i > 0 && isNameByte(text[i-1]) {
			i++
			continue
		}
		matched := false
		for _, p := range pairs {
			if !strings.HasPrefix(text[i:], p.host) {
				continue
			}
			end := i + len(p.host)
			if end < len(text) && !boundaryAfter(text[end]) && !strings.HasSuffix(p.host, "/") {
				continue
			}
			if b.Len() == 0 {
				b.Grow(len(text))
			}
			b.WriteString(text[last:i])
			b.WriteString(p.virtual)
			last, i, matched = end, end, true
			break
		}
		if !matched {
			i++
		}
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// boundaryAfter reports whether c, right after a base, ends the base as a
// path segment.
func boundaryAfter(c byte) bool {
	return c == '/' || c == '\\' || !isNameByte(c)
}

// isNameByte reports whether c can be part of a file name in the texts we
// mask (letters, digits, and the punctuation common in names).
func isNameByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c == '_' || c == '-' || c == '.' || c == '~' || c == '+' || c == '@' || c == '%':
		return true
	case c >= 0x80:
		return true
	}
	return false
}

// PathlessError returns err's text without the path an OS error
// (*fs.PathError, *os.LinkError) names, for a message that must not show
// a host path; other errors keep their text.
func PathlessError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Op + ": " + le.Err.Error()
	}
	return err.Error()
}
